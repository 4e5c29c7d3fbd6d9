package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain lets the test binary run as a stdio server: testserver kinds,
// and faultserver kinds for the fault tests.
func TestMain(m *testing.M) { faultserver.Main(m) }

// newAdapter builds an Adapter over cfg and closes it when the test ends.
func newAdapter(t testing.TB, cfg Config) *Adapter {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// memServer is an in-memory server entry for s.
func memServer(s *testserver.Server, mode Mode) Server {
	return Server{Transport: s.Transport(), Mode: mode}
}

// stdioServer is a stdio server entry running the test binary as kind.
func stdioServer(t testing.TB, kind string) Server {
	cmd, args, env := testserver.Command(t, kind)
	return Server{Command: cmd, Args: args, Env: env}
}

func toolNames(ts Toolset) []string {
	var names []string
	for _, tool := range ts {
		names = append(names, tool.Name())
	}
	return names
}

// TestNewValidates: each problem of a configuration is a *ConfigError
// naming its server (none for the top level) and its field, with a text
// that says both.
func TestNewValidates(t *testing.T) {
	ok := testserver.New(testserver.Options{}).Transport()
	tests := []struct {
		name          string
		cfg           Config
		server, field string
		want          string
	}{
		{"empty name", Config{Servers: map[string]Server{"": {Transport: ok}}}, "", "", "empty server name"},
		{"separator in name", Config{Servers: map[string]Server{"a__b": {Transport: ok}}}, "a__b", "", `must not contain "__"`},
		{"no target", Config{Servers: map[string]Server{"x": {}}}, "x", "", "exactly one of URL, Command or Transport"},
		{"two targets", Config{Servers: map[string]Server{"x": {URL: "http://h/mcp", Command: "srv"}}}, "x", "", "(2 are)"},
		{"file URL", Config{Servers: map[string]Server{"x": {URL: "file:///bin/sh"}}}, "x", "URL", `scheme "file" is not http or https`},
		{"path as URL", Config{Servers: map[string]Server{"x": {URL: "./server.py"}}}, "x", "URL", "missing http:// or https://?"},
		{"URL without scheme", Config{Servers: map[string]Server{"x": {URL: "localhost:8080/mcp"}}}, "x", "URL", "missing http:// or https://?"},
		{"URL without host", Config{Servers: map[string]Server{"x": {URL: "http:///mcp"}}}, "x", "URL", "has no host"},
		{"bad mode", Config{Servers: map[string]Server{"x": {Transport: ok, Mode: "future"}}}, "x", "Mode", `unknown mode "future"`},
		{"negative server timeout", Config{Servers: map[string]Server{"x": {Transport: ok, DefaultToolTimeout: -1}}}, "x", "DefaultToolTimeout", "negative"},
		{"negative timeout", Config{DefaultToolTimeout: -1, Servers: map[string]Server{"x": {Transport: ok}}}, "", "DefaultToolTimeout", "negative"},
		{"negative dial timeout", Config{DialTimeout: -1}, "", "DialTimeout", "negative"},
		{"negative idle timeout", Config{PrincipalIdleTimeout: -1}, "", "PrincipalIdleTimeout", "negative"},
		{"negative cap", Config{MaxPrincipalConns: -1}, "", "MaxPrincipalConns", "negative"},
		{"bad filter", Config{Filter: Filter{Allow: []string{"["}}}, "", "Filter", `pattern "["`},
		{"bad filter", Config{Servers: map[string]Server{"x": {Transport: ok}}, Filter: Filter{Deny: []string{"["}}}, "", "Filter", `pattern "["`},
		{"negative delay", Config{Servers: map[string]Server{"x": {Command: "srv", Retry: &RetryPolicy{Delay: -1}}}}, "x", "Retry", "negative Delay"},
		{"args on URL", Config{Servers: map[string]Server{"x": {URL: "http://h/mcp", Args: []string{"-v"}}}}, "x", "Args", "applies to stdio servers"},
		{"dir on Transport", Config{Servers: map[string]Server{"x": {Transport: ok, Dir: "/tmp"}}}, "x", "Dir", "applies to stdio servers"},
		{"headers on Command", Config{Servers: map[string]Server{"x": {Command: "srv", Headers: map[string]string{"A": "b"}}}}, "x", "Headers", "applies to HTTP servers"},
		{"HeadersFor on Command", Config{Servers: map[string]Server{"x": {Command: "srv", HeadersFor: bearer}}}, "x", "HeadersFor", "applies to HTTP servers"},
		{"bad log level", Config{Servers: map[string]Server{"x": {Transport: ok, LogLevel: "verbose"}}}, "x", "LogLevel", `unknown level "verbose"`},
		{"short State.Key", Config{State: StateOptions{RequireKey: true, Key: []byte("short")}}, "", "State.Key", "State.RequireKey wants at least 32"},
		{"old keys alone", Config{State: StateOptions{OldKeys: [][]byte{[]byte("k")}}}, "", "State.OldKeys", "without a State.Key"},
		{"negative State.MaxAge", Config{State: StateOptions{MaxAge: -1}}, "", "State.MaxAge", "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Server != tt.server || ce.Field != tt.field || ce.File != "" {
				t.Fatalf("New() error = %v (%T), want a *ConfigError of server %q, field %q", err, err, tt.server, tt.field)
			}
			text := err.Error()
			if !strings.Contains(text, tt.want) ||
				tt.server != "" && !strings.Contains(text, strconv.Quote(tt.server)) ||
				tt.field != "" && !strings.Contains(text, "field "+tt.field) {
				t.Fatalf("New() error = %v, want it to name server %q and field %q and say %q", err, tt.server, tt.field, tt.want)
			}
		})
	}
	// Every problem is reported at once, in a stable order: the top
	// level's, then each server's.
	_, err := New(Config{DialTimeout: -1, Servers: map[string]Server{"a": {}, "b__c": {Transport: ok}}})
	want := []string{"field DialTimeout", `server "a"`, `server "b__c"`}
	if lines := strings.Split(fmt.Sprint(err), "\n"); len(lines) != len(want) {
		t.Fatalf("New() error = %v, want the %d problems", err, len(want))
	} else {
		for i, line := range lines {
			if !strings.Contains(line, want[i]) {
				t.Errorf("New() problem %d = %q, want it to name %s", i, line, want[i])
			}
		}
	}
	// A URL's secrets stay out of the error.
	_, err = New(Config{Servers: map[string]Server{"x": {URL: "http://user:sk-secret@/mcp"}}})
	if err == nil || strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("New() error = %v, want no password", err)
	}
}

func TestNewOpensNothing(t *testing.T) {
	s := testserver.New(testserver.Options{}).AddWeather()
	a := newAdapter(t, Config{Servers: map[string]Server{"w": memServer(s, ModeAuto)}})
	if s.Dials() != 0 {
		t.Fatalf("dials after New = %d, want 0", s.Dials())
	}
	if _, err := a.ListTools(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s.Dials() != 1 {
		t.Fatalf("dials after ListTools = %d, want 1", s.Dials())
	}
}

// TestTransports reaches a real go-sdk server over every transport.
func TestTransports(t *testing.T) {
	tests := []struct {
		name    string
		server  func(t *testing.T) Server
		wantEra Era
	}{
		{"in-memory modern", func(t *testing.T) Server {
			return memServer(testserver.Full(testserver.Options{}), ModeAuto)
		}, EraModern},
		{"in-memory legacy", func(t *testing.T) Server {
			return memServer(testserver.Full(testserver.Options{Legacy: true}), ModeAuto)
		}, EraLegacy},
		{"stdio modern", func(t *testing.T) Server { return stdioServer(t, "modern") }, EraModern},
		{"stdio legacy", func(t *testing.T) Server { return stdioServer(t, "legacy") }, EraLegacy},
		{"streamable stateless", func(t *testing.T) Server {
			return Server{URL: testserver.Full(testserver.Options{}).StreamableHTTP(t, true).URL}
		}, EraModern},
		{"streamable stateful", func(t *testing.T) Server {
			return Server{URL: testserver.Full(testserver.Options{}).StreamableHTTP(t, false).URL}
		}, EraLegacy},
		{"sse", func(t *testing.T) Server {
			return Server{URL: testserver.Full(testserver.Options{}).SSEOnly(t).URL}
		}, EraLegacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": tt.server(t)}})
			ts, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			tool := ts.Lookup("srv__get_weather")
			if tool == nil {
				t.Fatalf("ListTools() = %v, want srv__get_weather", toolNames(ts))
			}
			res, err := tool.Invoke(t.Context(), map[string]any{"city": "Paris"})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Text(); !strings.Contains(got, "Paris") {
				t.Errorf("Invoke() text = %q, want the city", got)
			}
			info, err := a.ServerInfo(t.Context(), "srv")
			if err != nil {
				t.Fatal(err)
			}
			if info.Era != tt.wantEra || info.Name != "test-server" || info.Version != "1.0.0" {
				t.Errorf("ServerInfo() = %+v, want era %s and the server's identity", info, tt.wantEra)
			}
		})
	}
}

// TestEras checks the era matrix, on the wire: which handshake the server saw.
func TestEras(t *testing.T) {
	tests := []struct {
		mode       Mode
		legacy     bool
		wantEra    Era
		wantErr    error
		wantDisc   bool // server/discover reached the server
		wantInit   bool // initialize reached the server
		noDiscover bool
	}{
		{mode: ModeAuto, wantEra: EraModern, wantDisc: true},
		{mode: ModeAuto, legacy: true, noDiscover: true, wantEra: EraLegacy, wantDisc: true, wantInit: true},
		{mode: ModeModern, wantEra: EraModern, wantDisc: true},
		{mode: ModeModern, legacy: true, noDiscover: true, wantErr: ErrLegacyOnly, wantDisc: true},
		{mode: ModeLegacy, wantEra: EraLegacy, wantInit: true},
		{mode: ModeLegacy, legacy: true, wantEra: EraLegacy, wantInit: true},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s client/legacy server %v", cmpOr(string(tt.mode), "auto"), tt.legacy)
		t.Run(name, func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: tt.legacy, NoDiscover: tt.noDiscover}).AddWeather()
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, tt.mode)}})
			info, err := a.ServerInfo(t.Context(), "srv")
			if tt.wantErr != nil {
				var se *ServerError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &se) || se.Server != "srv" {
					t.Fatalf("ServerInfo() error = %v, want a *ServerError wrapping %v", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if info.Era != tt.wantEra {
				t.Fatalf("Era = %s, want %s", info.Era, tt.wantEra)
			}
			if got := s.Count("server/discover") > 0; got != tt.wantDisc {
				t.Errorf("server/discover sent = %v, want %v (counts %v)", got, tt.wantDisc, s.Counts())
			}
			if got := s.Count("initialize") > 0; got != tt.wantInit {
				t.Errorf("initialize sent = %v, want %v (counts %v)", got, tt.wantInit, s.Counts())
			}
		})
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func TestModernRefusesStatefulHTTP(t *testing.T) {
	url := testserver.Full(testserver.Options{}).StreamableHTTP(t, false).URL
	a := newAdapter(t, Config{Servers: map[string]Server{"srv": {URL: url, Mode: ModeModern}}})
	_, err := a.ListTools(t.Context())
	if !errors.Is(err, ErrLegacyOnly) {
		t.Fatalf("ListTools() error = %v, want ErrLegacyOnly", err)
	}
}

// TestModernFailureIsNotLegacy: in ModeModern a server/discover that fails
// for a reason of its own (a server down, refused credentials) is reported
// as that, not as a legacy-only server.
func TestModernFailureIsNotLegacy(t *testing.T) {
	for _, code := range []int{http.StatusUnauthorized, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "no", code)
			}))
			t.Cleanup(srv.Close)
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": {URL: srv.URL, Mode: ModeModern}}})
			_, err := a.ListTools(t.Context())
			if err == nil || errors.Is(err, ErrLegacyOnly) || !strings.Contains(err.Error(), fmt.Sprint(code)) {
				t.Fatalf("ListTools() error = %v, want HTTP %d named and no ErrLegacyOnly", err, code)
			}
		})
	}
}

func TestSetLoggingLevel(t *testing.T) {
	legacy := testserver.Full(testserver.Options{Legacy: true})
	modern := testserver.Full(testserver.Options{})
	a := newAdapter(t, Config{Servers: map[string]Server{
		"legacy": memServer(legacy, ModeAuto),
		"modern": memServer(modern, ModeAuto),
	}})
	if err := a.SetLoggingLevel(t.Context(), "legacy", "debug"); err != nil {
		t.Fatalf("SetLoggingLevel(legacy) = %v", err)
	}
	if legacy.Count("logging/setLevel") != 1 {
		t.Errorf("legacy server got %d logging/setLevel, want 1", legacy.Count("logging/setLevel"))
	}
	if err := a.SetLoggingLevel(t.Context(), "modern", "debug"); !errors.Is(err, ErrModernServer) {
		t.Fatalf("SetLoggingLevel(modern) = %v, want ErrModernServer", err)
	}
}

func TestLogLevelSentToModernServers(t *testing.T) {
	s := testserver.Full(testserver.Options{})
	srv := memServer(s, ModeAuto)
	srv.LogLevel = "warning"
	a := newAdapter(t, Config{Servers: map[string]Server{"srv": srv}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Lookup("srv__echo").Invoke(t.Context(), map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	if got := s.LastMeta("echo")[mcp.MetaKeyLogLevel]; got != "warning" {
		t.Fatalf("request _meta log level = %v, want warning (meta %v)", got, s.LastMeta("echo"))
	}
}

// TestParallelDiscovery checks that discovery dials its servers at once:
// each server's dial waits until every server's dial has started, so dials
// made one after another never get past the first.
func TestParallelDiscovery(t *testing.T) {
	const n = 5
	var started atomic.Int32
	all := make(chan struct{})
	servers := map[string]Server{}
	for i := range n {
		s := memServer(testserver.New(testserver.Options{}).AddWeather(), ModeAuto)
		dial := s.Transport
		s.Transport = func(ctx context.Context) (mcp.Transport, error) {
			if started.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
				return dial(ctx)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		servers["s"+strconv.Itoa(i)] = s
	}
	a := newAdapter(t, Config{Servers: servers})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	ts, err := a.ListTools(ctx)
	if err != nil {
		t.Fatalf("ListTools: %v (%d of %d dials started: dials are not parallel)", err, started.Load(), n)
	}
	if len(ts) != n {
		t.Fatalf("got %d tools, want %d", len(ts), n)
	}
}

func TestConcurrentFirstUseDialsOnce(t *testing.T) {
	var servers []*testserver.Server
	cfg := Config{Servers: map[string]Server{}}
	for i := range 3 {
		s := testserver.New(testserver.Options{ConnectDelay: 20 * time.Millisecond}).AddWeather()
		servers = append(servers, s)
		cfg.Servers["s"+strconv.Itoa(i)] = memServer(s, ModeAuto)
	}
	a := newAdapter(t, cfg)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			if _, err := a.ListTools(t.Context()); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, s := range servers {
		if s.Dials() != 1 {
			t.Errorf("server %d dialed %d times, want 1", i, s.Dials())
		}
	}
}

// failingServer is a server entry whose dial always fails.
func failingServer(dials *int, mu *sync.Mutex) Server {
	return Server{Transport: func(ctx context.Context) (mcp.Transport, error) {
		mu.Lock()
		*dials++
		mu.Unlock()
		return nil, errors.New("connection refused")
	}}
}

func TestOnConnectionError(t *testing.T) {
	var mu sync.Mutex
	t.Run("nil fails naming every server", func(t *testing.T) {
		var d1, d2 int
		good := testserver.New(testserver.Options{}).AddWeather()
		a := newAdapter(t, Config{Servers: map[string]Server{
			"bad1": failingServer(&d1, &mu), "bad2": failingServer(&d2, &mu), "good": memServer(good, ModeAuto),
		}})
		_, err := a.ListTools(t.Context())
		if err == nil {
			t.Fatal("ListTools() succeeded, want an error")
		}
		for _, name := range []string{"bad1", "bad2"} {
			if !strings.Contains(err.Error(), strconv.Quote(name)) {
				t.Errorf("error %q does not name %s", err, name)
			}
		}
		var se *ServerError
		if !errors.As(err, &se) {
			t.Errorf("error %v is not a *ServerError", err)
		}
	})
	t.Run("ignore skips and remembers", func(t *testing.T) {
		var dials int
		good := testserver.New(testserver.Options{}).AddWeather()
		var seen []string
		a := newAdapter(t, Config{
			Servers: map[string]Server{"bad": failingServer(&dials, &mu), "good": memServer(good, ModeAuto)},
			OnConnectionError: func(server string, err error) error {
				mu.Lock()
				seen = append(seen, server)
				mu.Unlock()
				return nil
			},
		})
		for _, mode := range []CacheMode{CacheUse, CacheRefresh, CacheUse} {
			ts, err := a.ListTools(t.Context(), WithCacheMode(mode))
			if err != nil {
				t.Fatal(err)
			}
			if got := toolNames(ts); len(got) != 1 || got[0] != "good__get_weather" {
				t.Fatalf("ListTools() = %v", got)
			}
		}
		if dials != 1 || len(seen) != 1 {
			t.Fatalf("failed server dialed %d times, callback called %v; want 1 and once", dials, seen)
		}
		a.Close()
		if _, err := a.ListTools(t.Context()); err != nil {
			t.Fatal(err)
		}
		if dials != 2 {
			t.Fatalf("after Close the failed server was dialed %d times in all, want 2", dials)
		}
	})
	t.Run("callback error fails", func(t *testing.T) {
		var dials int
		sentinel := errors.New("stop")
		a := newAdapter(t, Config{
			Servers:           map[string]Server{"bad": failingServer(&dials, &mu)},
			OnConnectionError: func(string, error) error { return sentinel },
		})
		if _, err := a.ListTools(t.Context()); !errors.Is(err, sentinel) {
			t.Fatalf("ListTools() error = %v, want the callback's", err)
		}
	})
	t.Run("the caller's context ending before any answer is no server failure", func(t *testing.T) {
		slow := testserver.New(testserver.Options{ConnectDelay: time.Hour}).AddWeather()
		var called bool
		a := newAdapter(t, Config{
			Servers:           map[string]Server{"slow": memServer(slow, ModeAuto)},
			OnConnectionError: func(string, error) error { called = true; return nil },
		})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if got, err := a.ListTools(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("ListTools(cancelled) = %v, %v; want context.Canceled, not an empty catalog", toolNames(got), err)
		}
		ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if got, err := a.ListTools(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ListTools(deadline) = %v, %v; want context.DeadlineExceeded, not an empty catalog", toolNames(got), err)
		}
		if called {
			t.Fatal("OnConnectionError was called for the caller's own context")
		}
	})
	t.Run("auth failures are retried", func(t *testing.T) {
		s := testserver.Full(testserver.Options{})
		ts := s.StreamableHTTP(t, true)
		s.SetHTTPStatus(401)
		a := newAdapter(t, Config{
			Servers:           map[string]Server{"auth": {URL: ts.URL}},
			OnConnectionError: IgnoreConnectionErrors,
		})
		got, err := a.ListTools(t.Context())
		if err != nil || len(got) != 0 {
			t.Fatalf("ListTools() = %v, %v; want no tools, no error", toolNames(got), err)
		}
		s.SetHTTPStatus(0)
		got, err = a.ListTools(t.Context())
		if err != nil || len(got) == 0 {
			t.Fatalf("ListTools() after the token was fixed = %v, %v; want the tools", toolNames(got), err)
		}
	})
}

func TestNames(t *testing.T) {
	a1 := testserver.New(testserver.Options{}).AddWeather()
	a2 := testserver.New(testserver.Options{}).AddWeather()
	t.Run("prefixed", func(t *testing.T) {
		a := newAdapter(t, Config{Servers: map[string]Server{"one": memServer(a1, ModeAuto), "two": memServer(a2, ModeAuto)}})
		ts, err := a.ListTools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(toolNames(ts), ","); got != "one__get_weather,two__get_weather" {
			t.Fatalf("ListTools() = %s", got)
		}
		if tool := ts[0]; tool.Server() != "one" || tool.MCPName() != "get_weather" {
			t.Fatalf("Server, MCPName = %q, %q", tool.Server(), tool.MCPName())
		}
		sets, err := a.ListToolsets(t.Context())
		if err != nil || len(sets) != 2 || len(sets["one"]) != 1 || len(sets["two"]) != 1 {
			t.Fatalf("ListToolsets() = %v, %v", sets, err)
		}
		sel, err := a.ListTools(t.Context(), FromServers("two"))
		if err != nil || strings.Join(toolNames(sel), ",") != "two__get_weather" {
			t.Fatalf("ListTools(FromServers(two)) = %v, %v", toolNames(sel), err)
		}
		if _, err := a.ListTools(t.Context(), FromServers("nope")); !errors.Is(err, ErrUnknownServer) {
			t.Fatalf("ListTools(FromServers(nope)) error = %v, want ErrUnknownServer", err)
		}
	})
	t.Run("raw duplicates", func(t *testing.T) {
		a := newAdapter(t, Config{ToolName: rawToolNames, Servers: map[string]Server{"one": memServer(a1, ModeAuto), "two": memServer(a2, ModeAuto)}})
		_, err := a.ListTools(t.Context())
		if !errors.Is(err, ErrDuplicateToolName) || !strings.Contains(err.Error(), `"one"`) || !strings.Contains(err.Error(), `"two"`) {
			t.Fatalf("ListTools() error = %v, want ErrDuplicateToolName naming both servers", err)
		}
		// Each set alone is fine, and so is a selection of one server.
		if _, err := a.ListToolsets(t.Context()); err != nil {
			t.Fatalf("ListToolsets() = %v", err)
		}
		if _, err := a.ListTools(t.Context(), FromServers("one")); err != nil {
			t.Fatalf("ListTools(FromServers(one)) = %v", err)
		}
	})
	t.Run("case duplicates", func(t *testing.T) {
		s := testserver.New(testserver.Options{})
		s.AddTool("Lookup")
		s.AddTool("lookup")
		a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}})
		if _, err := a.ListTools(t.Context()); !errors.Is(err, ErrDuplicateToolName) {
			t.Fatalf("ListTools() error = %v, want ErrDuplicateToolName", err)
		}
	})
}

func serverPID(t *testing.T, ts Toolset, name string) int {
	t.Helper()
	res, err := ts.Lookup(name).Invoke(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Text()))
	if err != nil {
		t.Fatalf("pid tool answered %q", res.Text())
	}
	return pid
}

func TestClose(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"p": stdioServer(t, "modern")}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	pid := serverPID(t, ts, "p__pid")
	if pid == os.Getpid() {
		t.Fatal("the pid tool ran in the test process")
	}
	if err := a.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close() = %v", err)
	}
	if !processGone(pid) {
		t.Fatalf("stdio server %d still running after Close", pid)
	}
	if _, err := ts.Lookup("p__echo").Invoke(t.Context(), map[string]any{"text": "x"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("old tool after Close: error = %v, want ErrClosed", err)
	}
	fresh, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if fresh.Lookup("p__pid") == ts.Lookup("p__pid") {
		t.Fatal("ListTools after Close returned the old tools")
	}
	if pid2 := serverPID(t, fresh, "p__pid"); pid2 == pid {
		t.Fatalf("fresh tools reached the old process %d", pid)
	}
}

func TestCloseCancelsInFlight(t *testing.T) {
	s := testserver.Full(testserver.Options{})
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := ts.Lookup("s__slow").Invoke(context.Background(), nil)
		errc <- err
	}()
	<-s.SlowStarted()
	a.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("in-flight call after Close: error = %v, want ErrClosed", err)
	}
}

func TestRestart(t *testing.T) {
	for _, withPolicy := range []bool{false, true} {
		t.Run(fmt.Sprintf("policy=%v", withPolicy), func(t *testing.T) {
			srv := stdioServer(t, "modern")
			if withPolicy {
				srv.Retry = &RetryPolicy{MaxAttempts: 2}
			}
			a := newAdapter(t, Config{Servers: map[string]Server{"p": srv}})
			ts, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			pid := serverPID(t, ts, "p__pid")
			session, err := a.Session(t.Context(), "p")
			if err != nil {
				t.Fatal(err)
			}
			_, err = ts.Lookup("p__exit").Invoke(t.Context(), nil)
			var se *ServerError
			if !errors.As(err, &se) || se.Server != "p" {
				t.Fatalf("call on a dying server: error = %v, want a *ServerError", err)
			}
			session.Wait() // the adapter notices the death too
			fresh, err := a.ListTools(t.Context())
			if !withPolicy {
				if !errors.As(err, &se) {
					t.Fatalf("ListTools() after the server died: error = %v, want a *ServerError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ListTools() after restart: %v", err)
			}
			if pid2 := serverPID(t, fresh, "p__pid"); pid2 == pid {
				t.Fatal("restarted server has the old pid")
			}
			// Old tools stay bound to the dead connection.
			if _, err := ts.Lookup("p__pid").Invoke(t.Context(), nil); !errors.As(err, &se) {
				t.Fatalf("old tool after restart: error = %v, want a *ServerError", err)
			}
		})
	}
}

func TestResources(t *testing.T) {
	with := testserver.Full(testserver.Options{PageSize: 2})
	without := testserver.New(testserver.Options{NoResources: true}).AddWeather()
	a := newAdapter(t, Config{Servers: map[string]Server{"with": memServer(with, ModeAuto), "without": memServer(without, ModeAuto)}})
	res, err := a.ListResources(t.Context(), "with")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(testserver.ResourceURIs()) {
		t.Fatalf("ListResources() = %d resources, want %d", len(res), len(testserver.ResourceURIs()))
	}
	tmpl, err := a.ListResourceTemplates(t.Context(), "with")
	if err != nil || len(tmpl) == 0 {
		t.Fatalf("ListResourceTemplates() = %v, %v", tmpl, err)
	}
	read, err := a.ReadResource(t.Context(), "with", res[0].URI)
	if err != nil || len(read.Contents) == 0 {
		t.Fatalf("ReadResource() = %v, %v", read, err)
	}
	none, err := a.ListResources(t.Context(), "without")
	if err != nil || none == nil || len(none) != 0 {
		t.Fatalf("ListResources(without) = %v, %v; want an empty list", none, err)
	}
	noneT, err := a.ListResourceTemplates(t.Context(), "without")
	if err != nil || len(noneT) != 0 {
		t.Fatalf("ListResourceTemplates(without) = %v, %v; want an empty list", noneT, err)
	}
	if _, err := a.ListResources(t.Context(), "nope"); !errors.Is(err, ErrUnknownServer) {
		t.Fatalf("ListResources(nope) error = %v, want ErrUnknownServer", err)
	}
}

func TestEmptyConfig(t *testing.T) {
	a := newAdapter(t, Config{})
	ts, err := a.ListTools(t.Context())
	if err != nil || len(ts) != 0 {
		t.Fatalf("ListTools() on no servers = %v, %v; want none and no error", toolNames(ts), err)
	}
}

func TestNilTransport(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"nil": {Transport: func(context.Context) (mcp.Transport, error) { return nil, nil }}}})
	_, err := a.ListTools(t.Context())
	var se *ServerError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "nil transport") {
		t.Fatalf("ListTools() error = %v, want a *ServerError about the nil transport", err)
	}
}

// TestDuplicatesFoldLikeTheExecutor: langchaingo's executor looks tools up
// by strings.ToUpper, where "ſ" (long s) and "s" are the same name. (The
// default name policy replaces "ſ"; a ToolName policy may keep it.)
func TestDuplicatesFoldLikeTheExecutor(t *testing.T) {
	s := testserver.New(testserver.Options{})
	s.AddTool("aſ")
	s.AddTool("as")
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)},
		ToolName: func(_, tool string) string { return tool }})
	if _, err := a.ListTools(t.Context()); !errors.Is(err, ErrDuplicateToolName) {
		t.Fatalf("ListTools() error = %v, want ErrDuplicateToolName", err)
	}
}

func TestIsAuthFailure(t *testing.T) {
	notFound := &httpStatusError{code: 404, err: errors.New("not found")}
	unauthorized := &httpStatusError{code: 401, err: errors.New("unauthorized")}
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{notFound, false},
		{unauthorized, true},
		{&httpStatusError{code: 403, err: errors.New("forbidden")}, true},
		{serverError("s", "dial", unauthorized), true},
		// A fallback to SSE joins the Streamable 404 and the SSE 401.
		{serverError("s", "dial", errors.Join(fmt.Errorf("streamable: %w", notFound), fmt.Errorf("SSE: %w", unauthorized))), true},
		{errors.Join(notFound, errors.New("other")), false},
	}
	for _, tt := range tests {
		if got := isAuthFailure(tt.err); got != tt.want {
			t.Errorf("isAuthFailure(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestRestartCustomTransport: a custom transport may use Restart (or
// Reconnect) to be dialed again after its session died.
func TestRestartCustomTransport(t *testing.T) {
	s := testserver.Full(testserver.Options{})
	srv := memServer(s, ModeAuto)
	srv.Retry = &RetryPolicy{MaxAttempts: 1}
	a := newAdapter(t, Config{Servers: map[string]Server{"m": srv}})
	if _, err := a.ListTools(t.Context()); err != nil {
		t.Fatal(err)
	}
	session, err := a.Session(t.Context(), "m")
	if err != nil {
		t.Fatal(err)
	}
	s.KillSessions()
	session.Wait()
	if _, err := a.ListTools(t.Context(), WithCacheMode(CacheRefresh)); err != nil {
		t.Fatalf("ListTools() after the session died: %v", err)
	}
	if s.Dials() != 2 {
		t.Fatalf("dials = %d, want 2", s.Dials())
	}
}

// TestCloseDuringDial: Close cancels a dial in progress and waits for it.
func TestCloseDuringDial(t *testing.T) {
	s := testserver.New(testserver.Options{ConnectDelay: time.Minute}).AddWeather()
	dialing := make(chan struct{})
	before := goroutines()
	a, err := New(Config{Servers: map[string]Server{"slow": {Transport: func(ctx context.Context) (mcp.Transport, error) {
		close(dialing)
		return s.Transport()(ctx)
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := a.ListTools(context.Background())
		errc <- err
	}()
	<-dialing
	a.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("ListTools() during Close: error = %v, want ErrClosed", err)
	}
	s.KillSessions()
	checkNoLeaks(t, before)
}
