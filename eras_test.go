package mcpadapter

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
)

// requestLog records the method and path of every HTTP request reaching h.
type requestLog struct {
	mu   sync.Mutex
	reqs []string
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.reqs = append(l.reqs, r.Method+" "+r.URL.Path)
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *requestLog) saw(req string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.reqs, req)
}

func TestSSEFallback(t *testing.T) {
	tests := []struct {
		name     string
		path     string // appended to the test server's URL
		sseOnly  bool   // testserver.SSEOnly (404 at /mcp, 405 at /), else testserver.SSE (400 to Streamable POSTs)
		mode     Mode
		disable  bool
		wantErr  bool
		wantHint string // in the error
		wantPath string // the SSE GET that served the session
	}{
		{name: "405 same URL", sseOnly: true, path: "/", wantPath: "GET /"},
		{name: "404 then /mcp to /sse", sseOnly: true, path: "/mcp", wantPath: "GET /sse"},
		{name: "auto ignores 400", path: "/", wantErr: true, wantHint: "Mode: ModeLegacy"},
		{name: "legacy falls back on 400", path: "/", mode: ModeLegacy, wantPath: "GET /"},
		{name: "legacy 404", sseOnly: true, path: "/mcp", mode: ModeLegacy, wantPath: "GET /sse"},
		{name: "disabled", sseOnly: true, path: "/", disable: true, wantErr: true},
		{name: "modern never falls back", sseOnly: true, path: "/", mode: ModeModern, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testserver.Full(testserver.Options{})
			var srv *httptest.Server
			if tt.sseOnly {
				srv = s.SSEOnly(t)
			} else {
				srv = s.SSE(t)
			}
			var log requestLog
			proxy := httptest.NewServer(log.wrap(proxyTo(srv.URL)))
			t.Cleanup(proxy.Close)
			a := newAdapter(t, Config{Servers: map[string]Server{"sse": {URL: proxy.URL + tt.path, Mode: tt.mode, DisableSSEFallback: tt.disable}}})
			ts, err := a.ListTools(t.Context())
			if tt.wantErr {
				var se *ServerError
				if !errors.As(err, &se) {
					t.Fatalf("ListTools() error = %v, want a *ServerError", err)
				}
				if log.saw("GET /") || log.saw("GET /sse") {
					t.Fatalf("SSE was tried: %v", log.reqs)
				}
				if !strings.Contains(err.Error(), tt.wantHint) {
					t.Fatalf("ListTools() error = %v, want it to say %q", err, tt.wantHint)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ts.Lookup("sse__get_weather") == nil {
				t.Fatalf("ListTools() = %v", toolNames(ts))
			}
			if !log.saw(tt.wantPath) {
				t.Fatalf("requests %v, want %q", log.reqs, tt.wantPath)
			}
			info, _ := a.ServerInfo(t.Context(), "sse")
			if info.Era != EraLegacy {
				t.Fatalf("era over SSE = %s, want legacy", info.Era)
			}
		})
	}
}

// proxyTo forwards every request to target, streaming the response.
func proxyTo(target string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				w.Write(buf[:n])
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
			}
			if err != nil {
				return
			}
		}
	})
}

func TestHeadersStayWithTheirServer(t *testing.T) {
	one := testserver.Full(testserver.Options{})
	two := testserver.Full(testserver.Options{})
	u1, u2 := one.StreamableHTTP(t, true).URL, two.StreamableHTTP(t, false).URL
	base := &http.Client{}
	a := newAdapter(t, Config{Servers: map[string]Server{
		"one": {URL: u1, Headers: map[string]string{"Authorization": "Bearer one", "X-Tenant": "a"}, HTTPClient: base},
		"two": {URL: u2, Headers: map[string]string{"X-Other": "b"}, HTTPClient: base},
	}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one__echo", "two__echo"} {
		if _, err := ts.Lookup(name).Invoke(t.Context(), map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	h1, h2 := one.LastHTTPHeader(), two.LastHTTPHeader()
	if h1.Get("Authorization") != "Bearer one" || h1.Get("X-Tenant") != "a" || h1.Get("X-Other") != "" {
		t.Errorf("server one got headers %v", h1)
	}
	if h2.Get("Authorization") != "" || h2.Get("X-Tenant") != "" || h2.Get("X-Other") != "b" {
		t.Errorf("server two got headers %v", h2)
	}
	if base.Transport != nil {
		t.Errorf("the caller's http.Client was mutated: Transport = %v", base.Transport)
	}
}

// staticToken is an OAuth handler with a fixed bearer token.
type staticToken string

func (s staticToken) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: string(s)}), nil
}

func (s staticToken) Authorize(context.Context, *http.Request, *http.Response) error {
	return errors.New("no interactive authorization in tests")
}

func TestOAuth(t *testing.T) {
	s := testserver.Full(testserver.Options{})
	url := s.StreamableHTTP(t, true).URL
	a := newAdapter(t, Config{Servers: map[string]Server{"auth": {URL: url, OAuth: staticToken("tok-1")}}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Lookup("auth__echo").Invoke(t.Context(), map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	if got := s.LastHTTPHeader().Get("Authorization"); got != "Bearer tok-1" {
		t.Fatalf("Authorization = %q, want the OAuth token", got)
	}
}

// TestReconnect: an SSE server ends its session. Without Server.Retry
// the server stays down, and the errors say which setting would dial it
// again; with it, the next discovery dials again and returns new tools,
// while the old ones stay bound to the dead session. (A Streamable HTTP
// session the server forgot is started anew without a policy:
// TestSessionRecovery.)
func TestReconnect(t *testing.T) {
	for _, withPolicy := range []bool{false, true} {
		t.Run(map[bool]string{false: "no policy", true: "policy"}[withPolicy], func(t *testing.T) {
			s := testserver.Full(testserver.Options{})
			srv := Server{URL: s.SSE(t).URL, Mode: ModeLegacy}
			if withPolicy {
				srv.Retry = &RetryPolicy{MaxAttempts: 3, Delay: time.Millisecond}
			}
			a := newAdapter(t, Config{Servers: map[string]Server{"h": srv}})
			ts, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			echo := ts.Lookup("h__echo")
			s.KillSessions()
			<-echo.conn.done
			_, err = echo.Invoke(t.Context(), map[string]any{"text": "x"})
			var se *ServerError
			if !errors.As(err, &se) {
				t.Fatalf("call on a lost session: error = %v, want a *ServerError", err)
			}
			fresh, err := a.ListTools(t.Context())
			if !withPolicy {
				if !errors.As(err, &se) || !strings.Contains(err.Error(), "Server.Retry") {
					t.Fatalf("ListTools() after the session died: error = %v, want a *ServerError naming Server.Retry", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ListTools() after reconnect: %v", err)
			}
			if _, err := fresh.Lookup("h__echo").Invoke(t.Context(), map[string]any{"text": "x"}); err != nil {
				t.Fatalf("new tool after reconnect: %v", err)
			}
			// The old tool stays bound to the dead session.
			if _, err := echo.Invoke(t.Context(), map[string]any{"text": "x"}); !errors.As(err, &se) {
				t.Fatalf("old tool after reconnect: error = %v, want a *ServerError", err)
			}
		})
	}
}

// syncBuffer is a concurrency-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestStdioStderrGoesToLogger(t *testing.T) {
	var logs syncBuffer
	// A bad kind makes the child print to stderr and exit.
	srv := stdioServer(t, "modern")
	srv.Env["MCPADAPTER_TESTSERVER"] = "bogus-kind"
	a := newAdapter(t, Config{
		Servers: map[string]Server{"bad": srv},
		Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	_, err := a.ListTools(t.Context())
	var se *ServerError
	if !errors.As(err, &se) || se.Server != "bad" {
		t.Fatalf("ListTools() error = %v, want a *ServerError for bad", err)
	}
	a.Close() // stderr is copied until the process is reaped
	if got := logs.String(); !strings.Contains(got, "server=bad") || !strings.Contains(got, "bogus-kind") {
		t.Fatalf("logs = %q, want the server's stderr", got)
	}
}

// TestCustomStreamableTransport: a Server.Transport may return go-sdk's
// Streamable HTTP transport. The adapter passes it to the SDK unwrapped, as
// it does its own: the SDK recognises its connection behind the session to
// open the standalone stream and to send the negotiated version in the
// Mcp-Protocol-Version header of every later request.
func TestCustomStreamableTransport(t *testing.T) {
	srv := testserver.Full(testserver.Options{Legacy: true}).StreamableHTTP(t, false)
	var (
		mu       sync.Mutex
		gets     int
		versions []string
	)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.Method == http.MethodGet {
			gets++
		}
		if r.Method == http.MethodPost {
			versions = append(versions, r.Header.Get("Mcp-Protocol-Version"))
		}
		mu.Unlock()
		proxyTo(srv.URL).ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	a := newAdapter(t, Config{Servers: map[string]Server{"s": {
		Mode: ModeLegacy,
		Transport: func(context.Context) (mcp.Transport, error) {
			return &mcp.StreamableClientTransport{Endpoint: proxy.URL}, nil
		},
	}}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Lookup("s__get_weather").Invoke(t.Context(), map[string]any{"city": "Paris"}); err != nil {
		t.Fatal(err)
	}
	a.Close()
	mu.Lock()
	defer mu.Unlock()
	if gets == 0 {
		t.Error("no standalone stream (GET) was opened")
	}
	if len(versions) < 3 || slices.ContainsFunc(versions[1:], func(v string) bool { return v != "2025-11-25" }) {
		t.Errorf("Mcp-Protocol-Version of the POSTs = %q, want 2025-11-25 on every one after initialize", versions)
	}
}

func TestPrebuiltClient(t *testing.T) {
	s := testserver.Full(testserver.Options{})
	var asked []string
	var mu sync.Mutex
	client := mcp.NewClient(&mcp.Implementation{Name: "mine", Version: "9"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"date": "2026-12-24"}}, nil
		},
	})
	// A probe, inside whatever middleware the adapter adds, counts the
	// adapter's layers: one per concern.
	adapterLayers := []string{
		"github.com/mcpadapter/mcpadapter.eraPolicy.func1",
		"github.com/mcpadapter/mcpadapter.sdkCacheSlots.func1",
		"github.com/mcpadapter/mcpadapter.requestLogLevel.func1",
	}
	var layers atomic.Int32
	client.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				pcs := make([]uintptr, 64)
				frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
				n := int32(0)
				for f, more := frames.Next(); more; f, more = frames.Next() {
					if slices.Contains(adapterLayers, f.Function) {
						n++
					}
				}
				layers.Store(n)
			}
			return next(ctx, method, req)
		}
	})
	srv := memServer(s, ModeAuto)
	srv.Client = client
	a := newAdapter(t, Config{Servers: map[string]Server{"b": srv}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The client's own multi-round-trip handling and handler answer the booking.
	res, err := ts.Lookup("b__book_table").Invoke(t.Context(), map[string]any{"party": 4})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), "2026-12-24") || len(asked) != 1 {
		t.Fatalf("Invoke() = %q with handler calls %v; want the prebuilt client's answer", res.Text(), asked)
	}
	// Later dials, by this Adapter or others, reuse the client without
	// stacking middleware (checked by the probe).
	a.Close()
	for range 3 {
		b := newAdapter(t, Config{Servers: map[string]Server{"b": srv}})
		if _, err := b.ListTools(t.Context()); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	ts, err = a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Lookup("b__get_weather").Invoke(t.Context(), map[string]any{"city": "Paris"}); err != nil {
		t.Fatal(err)
	}
	if got := layers.Load(); got != int32(len(adapterLayers)) {
		t.Fatalf("a tools/call went through %d layers of the adapter's middleware, want %d", got, len(adapterLayers))
	}
}

var goroutineID = regexp.MustCompile(`^goroutine (\d+) `)

// goroutines returns the stacks of the live goroutines by id.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if m := goroutineID.FindStringSubmatch(g); m != nil {
			out[m[1]] = g
		}
	}
	return out
}

// checkNoLeaks fails when goroutines started after before, other than the
// HTTP client's idle connections and the process-wide stdio watcher, are still running. Goroutines end
// asynchronously after Close returns (the SDK's readers see their pipes
// close), so it polls for a bounded time, like goleak.
func checkNoLeaks(t *testing.T, before map[string]string) {
	t.Helper()
	var leaked []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		leaked = leaked[:0]
		for id, stack := range goroutines() {
			if _, ok := before[id]; ok || strings.Contains(stack, "net/http.(*persistConn)") ||
				strings.Contains(stack, "testing.(*T).Run") || strings.Contains(stack, "checkNoLeaks") ||
				strings.Contains(stack, "net/http/httptest") || strings.Contains(stack, "net/http.(*Server)") || strings.Contains(stack, "net/http.(*conn).serve") ||
				strings.Contains(stack, "internal/stdio.(*procWatcher)") { // process-wide, started once
				continue
			}
			leaked = append(leaked, stack)
		}
		if len(leaked) == 0 {
			return
		}
	}
	t.Fatalf("%d goroutines left after Close:\n%s", len(leaked), strings.Join(leaked, "\n\n"))
}

func TestCloseLeavesNoGoroutine(t *testing.T) {
	mem := testserver.Full(testserver.Options{})
	http1 := testserver.Full(testserver.Options{})
	url := http1.StreamableHTTP(t, false).URL
	before := goroutines()
	a, err := New(Config{Servers: map[string]Server{
		"mem":   memServer(mem, ModeAuto),
		"stdio": stdioServer(t, "legacy"),
		"http":  {URL: url},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mem__echo", "stdio__echo", "http__echo"} {
		if _, err := ts.Lookup(name).Invoke(t.Context(), map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	mem.KillSessions() // the in-memory server side is the test's, not the adapter's
	checkNoLeaks(t, before)
}
