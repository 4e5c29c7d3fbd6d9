package mcpadapter

// Fault tests: servers that die, hang, answer slowly or send what they
// should not (internal/testing/faultserver), and the safety rules (URLs never run,
// commands never through a shell, credentials never cross servers, URLs of
// elicitations never opened). Each test names the fault it pins; the
// closing report of issue 8 tabulates them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// faultWait bounds every call of the fault tests: a hang the adapter should
// have prevented then fails the test instead of stalling the suite.
const faultWait = 30 * time.Second

// bigResult is the size of the oversized results (50 MB).
const bigResult = 50 << 20

// A peerTarget is one way to reach a raw fault peer.
type peerTarget struct {
	name   string
	http   bool // a URL server: per-request failures never cost the connection
	server func(t *testing.T, p *faultserver.Peer, kind string) Server
}

// peerTargets reach a raw peer over an in-memory pipe (a custom
// *mcp.IOTransport), stdio (a process of kind), and Streamable HTTP with
// JSON or event-stream answers. Every target has a re-dial policy, so that
// a test can check the adapter is usable after a fault that costs the
// connection.
var peerTargets = []peerTarget{
	{"pipe", false, func(t *testing.T, p *faultserver.Peer, _ string) Server {
		return Server{Transport: p.Transport(), Retry: &RetryPolicy{MaxAttempts: 2}}
	}},
	{"stdio", false, func(t *testing.T, _ *faultserver.Peer, kind string) Server {
		cmd, args, env := faultserver.Command(t, kind)
		return Server{Command: cmd, Args: args, Env: env, Retry: &RetryPolicy{MaxAttempts: 2}}
	}},
	{"http-json", true, func(t *testing.T, p *faultserver.Peer, _ string) Server {
		return Server{URL: testserver.Serve(t, p.HTTPHandler(false)).URL, Retry: &RetryPolicy{MaxAttempts: 2}}
	}},
	{"http-sse", true, func(t *testing.T, p *faultserver.Peer, _ string) Server {
		return Server{URL: testserver.Serve(t, p.HTTPHandler(true)).URL, Retry: &RetryPolicy{MaxAttempts: 2}}
	}},
}

// faultCtx returns a context bounded by faultWait.
func faultCtx(t *testing.T) context.Context { return faultCtxWithin(t, faultWait) }

// faultCtxWithin returns a context bounded by d, or faultWait when d is 0.
func faultCtxWithin(t *testing.T, d time.Duration) context.Context {
	if d <= 0 {
		d = faultWait
	}
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// checkUsable wants the tool name of ts to answer want to args, as a sign
// that the adapter is usable after a fault. When lost, the fault cost the
// connection: the call must first fail with a *ServerError naming server,
// and a new discovery must bring the server back.
func checkUsable(t *testing.T, a *Adapter, ts Toolset, server, name string, args map[string]any, want string, lost bool) {
	t.Helper()
	res, err := lookup(t, ts, name).Invoke(faultCtx(t), args)
	if lost {
		checkServerErr(t, err, server)
		if ts, err = a.ListTools(faultCtx(t)); err != nil {
			t.Fatalf("ListTools() after the connection was lost: %v", err)
		}
		res, err = lookup(t, ts, name).Invoke(faultCtx(t), args)
	}
	if err != nil || res.Text() != want {
		t.Fatalf("%s after the fault = %q, %v; want %q", name, res.Text(), err, want)
	}
}

// checkServerErr fails unless err is a *ServerError naming server.
func checkServerErr(t *testing.T, err error, server string) *ServerError {
	t.Helper()
	var se *ServerError
	if !errors.As(err, &se) || se.Server != server {
		t.Fatalf("error = %v (%T), want a *ServerError naming %q", err, err, server)
	}
	return se
}

// logsTo returns a logger writing text records to buf.
func logsTo(buf *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestFaultAnswers sends every misbehaving answer of the raw peer over every
// transport: the call concerned fails with a *ServerError naming the server
// (or succeeds when the fault can be repaired), no call hangs, and the
// adapter is usable afterwards: on the same connection when only the call
// was lost, after a re-dial when the connection was.
func TestFaultAnswers(t *testing.T) {
	type lost int
	const (
		never   lost = iota // the connection survives on every transport
		streams             // pipe and stdio lose it; HTTP fails only the request
	)
	tests := []struct {
		tool    string
		args    map[string]any
		timeout time.Duration // call deadline; 0: faultWait
		want    string        // text of a successful result, or
		wantErr string        // a substring of the error
		wantIs  error         // an error the failure must wrap
		httpErr bool          // stdio and pipe repair the fault: only HTTP fails
		lost    lost
	}{
		{tool: faultserver.ToolOK, want: "ok"},
		{tool: faultserver.ToolSlow, args: map[string]any{"ms": 20}, want: "slow ok"},
		{tool: faultserver.ToolSlow, args: map[string]any{"ms": 60000}, timeout: 200 * time.Millisecond, wantIs: context.DeadlineExceeded},
		{tool: faultserver.ToolHang, timeout: 200 * time.Millisecond, wantIs: context.DeadlineExceeded},
		{tool: faultserver.ToolMalformed, wantErr: "malformed message from server"},
		{tool: faultserver.ToolNoise, want: "ok", wantErr: "malformed message from server", httpErr: true},
		// A batch, which the SDK cannot decode from one line, event or
		// JSON body: the adapter reads it one message at a time.
		{tool: faultserver.ToolBatch, want: "batched"},
		{tool: faultserver.ToolGarbage, wantErr: "malformed message from server", lost: streams},
		{tool: faultserver.ToolNullID, wantErr: "invalid JSON-RPC message", lost: streams},
		{tool: faultserver.ToolUnknownContent, want: "before\n[unsupported content type \"video\"]\nafter"},
		{tool: faultserver.ToolDeep, args: map[string]any{"depth": 2000}, wantErr: "nests deeper than the 1000 levels"},
		{tool: faultserver.ToolDie, wantErr: "", lost: streams},
		{tool: faultserver.ToolBig, args: map[string]any{"size": bigResult}, wantIs: ErrMessageTooLarge},
		{tool: faultserver.ToolBig, args: map[string]any{"size": bigResult, "idLast": true}, wantIs: ErrMessageTooLarge},
	}
	for _, target := range peerTargets {
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				name := tt.tool
				if tt.args["idLast"] == true {
					name += "_idLast"
				}
				if tt.timeout > 0 {
					name += "_deadline"
				}
				t.Run(name, func(t *testing.T) {
					p := faultserver.NewPeer(faultserver.PeerOptions{Tools: faultserver.BasicCatalog()})
					a := newAdapter(t, Config{Servers: map[string]Server{"f": target.server(t, p, faultserver.KindRaw+":basic")}})
					ts, err := a.ListTools(faultCtx(t))
					if err != nil {
						t.Fatal(err)
					}
					ctx := faultCtxWithin(t, tt.timeout)
					start := time.Now()
					res, err := lookup(t, ts, "f__"+tt.tool).Invoke(ctx, tt.args)
					if tt.timeout > 0 && time.Since(start) > tt.timeout+5*time.Second {
						t.Errorf("the call returned %v after its deadline", time.Since(start)-tt.timeout)
					}
					wantOK := tt.want != "" && (!tt.httpErr || !target.http)
					switch {
					case wantOK:
						if err != nil {
							t.Fatalf("Invoke() error = %v, want %q", err, tt.want)
						}
						if got := res.Text(); got != tt.want {
							t.Fatalf("Invoke() = %q, want %q", got, tt.want)
						}
					default:
						checkServerErr(t, err, "f")
						if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
							t.Fatalf("Invoke() error = %v, want it to wrap %v", err, tt.wantIs)
						}
						if !strings.Contains(err.Error(), tt.wantErr) {
							t.Fatalf("Invoke() error = %v, want it to say %q", err, tt.wantErr)
						}
					}
					checkUsable(t, a, ts, "f", "f__ok", nil, "ok", tt.lost == streams && !target.http)
				})
			}
		})
	}
}

// TestFaultCatalog lists the raw peer's catalog over every transport: tool
// names with spaces, dots, slashes and non-ASCII letters are passed through
// unchanged; odd but decodable schemas are kept; a huge description is
// kept; descriptors the SDK cannot decode (a schema nested deeper than its
// decoder allows, annotations of the wrong type) are dropped and logged,
// without losing the other tools.
func TestFaultCatalog(t *testing.T) {
	for _, target := range peerTargets {
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			var logs syncBuffer
			p := faultserver.NewPeer(faultserver.PeerOptions{})
			a := newAdapter(t, Config{
				Servers: map[string]Server{"f": target.server(t, p, faultserver.KindRaw)},
				Logger:  logsTo(&logs),
			})
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			dropped := []string{faultserver.ToolSchemaDeep, faultserver.ToolBadAnnotations}
			for _, raw := range faultserver.Catalog() {
				var d struct{ Name string }
				json.Unmarshal([]byte(raw), &d)
				tool := ts.Lookup(SafeToolName("f__"+d.Name, maxToolNameLength)) // tools.go
				if slices.Contains(dropped, d.Name) {
					if tool != nil {
						t.Errorf("tool %q was listed; want it dropped", d.Name)
					}
					if !strings.Contains(logs.String(), "tool="+d.Name) {
						t.Errorf("logs do not name the dropped tool %q:\n%s", d.Name, logs.String())
					}
					continue
				}
				if tool == nil {
					t.Errorf("tool %q is missing from %q", d.Name, toolNames(ts))
					continue
				}
				if tool.MCPName() != d.Name {
					t.Errorf("MCPName() = %q, want %q", tool.MCPName(), d.Name)
				}
			}
			if got := len(lookup(t, ts, "f__"+faultserver.ToolHugeDescription).Description()); got < faultserver.HugeDescriptionBytes {
				t.Errorf("huge description has %d bytes, want %d", got, faultserver.HugeDescriptionBytes)
			}
			for _, name := range append(slices.Clone(faultserver.Names), faultserver.ToolSchemaString, faultserver.ToolSchemaMissing) {
				res, err := lookup(t, ts, SafeToolName("f__"+name, maxToolNameLength)).Invoke(faultCtx(t), nil)
				if err != nil || res.Text() != "called "+name {
					t.Errorf("Invoke(%q) = %q, %v; want the server to see the name unchanged", name, res.Text(), err)
				}
			}
			if got := lookup(t, ts, "f__"+faultserver.ToolSchemaString).Parameters(); got["type"] != "object" {
				t.Errorf("Parameters() of a string schema = %v, want an object schema", got)
			}
		})
	}
}

// TestFaultRepeatedCursor pins the pagination guard: a server that names
// the same next cursor forever fails discovery with a *ServerError instead
// of looping, and the other servers are still listed when it is skipped.
func TestFaultRepeatedCursor(t *testing.T) {
	for _, target := range peerTargets[:2] {
		t.Run(target.name, func(t *testing.T) {
			p := faultserver.NewPeer(faultserver.PeerOptions{RepeatCursor: true, Tools: faultserver.BasicCatalog()})
			kind := faultserver.KindRaw + ":repeatcursor,basic"
			healthy := memServer(testserver.New(testserver.Options{}).AddWeather(), ModeAuto)
			a := newAdapter(t, Config{Servers: map[string]Server{"loop": target.server(t, p, kind), "ok": healthy}})
			_, err := a.ListTools(faultCtx(t))
			checkServerErr(t, err, "loop")
			if !strings.Contains(err.Error(), "repeated cursor") {
				t.Fatalf("ListTools() error = %v, want it to name the repeated cursor", err)
			}
			b := newAdapter(t, Config{
				Servers:           map[string]Server{"loop": target.server(t, p, kind), "ok": healthy},
				OnConnectionError: IgnoreConnectionErrors,
			})
			ts, err := b.ListTools(faultCtx(t))
			if err != nil || ts.Lookup("ok__get_weather") == nil {
				t.Fatalf("ListTools() with the loop skipped = %q, %v; want the healthy server's tools", toolNames(ts), err)
			}
		})
	}
}

// TestFaultHangingList: a server that never answers tools/list costs the
// caller its own deadline and nothing else.
func TestFaultHangingList(t *testing.T) {
	p := faultserver.NewPeer(faultserver.PeerOptions{HangList: true})
	healthy := memServer(testserver.New(testserver.Options{}).AddWeather(), ModeAuto)
	a := newAdapter(t, Config{
		Servers:           map[string]Server{"hang": {Transport: p.Transport()}, "ok": healthy},
		OnConnectionError: IgnoreConnectionErrors,
	})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	ts, err := a.ListTools(ctx)
	if err != nil || ts.Lookup("ok__get_weather") == nil {
		t.Fatalf("ListTools() = %q, %v; want the healthy server's tools", toolNames(ts), err)
	}
}

// TestFaultHangingHandshake: a server that never answers the handshake
// fails discovery when the caller's context ends (the dial itself goes on,
// shared, under the adapter's lifetime), other servers are listed, Close
// returns at once, and nothing is left running.
func TestFaultHangingHandshake(t *testing.T) {
	for _, target := range peerTargets[:3] {
		t.Run(target.name, func(t *testing.T) {
			before := goroutines()
			p := faultserver.NewPeer(faultserver.PeerOptions{HangHandshake: true})
			healthy := testserver.Full(testserver.Options{})
			a, err := New(Config{
				Servers: map[string]Server{
					"hang": target.server(t, p, faultserver.KindRaw+":hanghandshake"),
					"ok":   memServer(healthy, ModeAuto),
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err = a.ListTools(ctx)
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("ListTools() took %v with a 300ms deadline", elapsed)
			}
			se := checkServerErr(t, err, "hang")
			if !errors.Is(se, context.DeadlineExceeded) {
				t.Fatalf("ListTools() error = %v, want the caller's deadline", err)
			}
			// A second caller joins the same dial and leaves on its own ctx.
			ctx2, cancel2 := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel2()
			if _, err := a.Session(ctx2, "hang"); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Session() error = %v, want the caller's deadline", err)
			}
			// The healthy server works meanwhile.
			if _, err := a.ServerInfo(faultCtx(t), "ok"); err != nil {
				t.Fatal(err)
			}
			start = time.Now()
			if err := a.Close(); err != nil {
				t.Fatalf("Close() = %v", err)
			}
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("Close() took %v with a dial in flight", elapsed)
			}
			healthy.KillSessions()
			p.Wait()
			checkNoLeaks(t, before)
		})
	}
}

// TestFaultDialTimeout: a handshake that never ends is abandoned after
// dialTimeout even when no caller has a deadline (fake clock).
func TestFaultDialTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := faultserver.NewPeer(faultserver.PeerOptions{HangHandshake: true})
		a, err := New(Config{Servers: map[string]Server{"hang": {Transport: p.Transport()}}})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = a.ListTools(context.Background())
		checkServerErr(t, err, "hang")
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no handshake within") {
			t.Fatalf("ListTools() error = %v, want the dial timeout", err)
		}
		if got := time.Since(start); got != dialTimeout {
			t.Errorf("ListTools() failed after %v, want %v", got, dialTimeout)
		}
		a.Close()
		p.Wait()
	})
}

// TestFaultSDKServer runs the go-sdk fault server's tools over in-memory,
// stdio and HTTP: a server dying mid-call, a handler that ignores
// cancellation, a slow answer past the deadline, endless load shedding.
func TestFaultSDKServer(t *testing.T) {
	targets := []struct {
		name   string
		server func(t *testing.T, s *faultserver.Server) Server
		http   bool
	}{
		{"memory", func(t *testing.T, s *faultserver.Server) Server {
			return Server{Transport: s.Transport(), Retry: &RetryPolicy{MaxAttempts: 2}}
		}, false},
		{"stdio", func(t *testing.T, _ *faultserver.Server) Server {
			cmd, args, env := faultserver.Command(t, faultserver.KindSDK)
			return Server{Command: cmd, Args: args, Env: env, Retry: &RetryPolicy{MaxAttempts: 2}}
		}, false},
		{"http", func(t *testing.T, s *faultserver.Server) Server {
			return Server{URL: s.StatelessHTTP(t, false).URL, Retry: &RetryPolicy{MaxAttempts: 2}}
		}, true},
	}
	tests := []struct {
		tool    string
		args    map[string]any
		timeout time.Duration
		want    error
		lost    bool // the connection is lost (not over HTTP)
	}{
		{tool: "die", lost: true},
		{tool: "hang", timeout: 200 * time.Millisecond, want: context.DeadlineExceeded},
		{tool: "sleep", args: map[string]any{"ms": 60000}, timeout: 200 * time.Millisecond, want: context.DeadlineExceeded},
		{tool: "shed_forever", timeout: 500 * time.Millisecond, want: context.DeadlineExceeded},
	}
	for _, target := range targets {
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				t.Run(tt.tool, func(t *testing.T) {
					s := faultserver.New(faultserver.Options{})
					srv := target.server(t, s)
					t.Cleanup(s.Unhang) // before the servers close: they wait for handlers
					a := newAdapter(t, Config{Servers: map[string]Server{"f": srv}})
					ts, err := a.ListTools(faultCtx(t))
					if err != nil {
						t.Fatal(err)
					}
					ctx := faultCtxWithin(t, tt.timeout)
					_, err = lookup(t, ts, "f__"+tt.tool).Invoke(ctx, tt.args)
					checkServerErr(t, err, "f")
					if tt.want != nil && !errors.Is(err, tt.want) {
						t.Fatalf("Invoke() error = %v, want %v", err, tt.want)
					}
					checkUsable(t, a, ts, "f", "f__echo", map[string]any{"text": "x"}, "x", tt.lost && !target.http)
				})
			}
		})
	}
}

// TestFaultEndlessInputRounds: a server that asks for input forever is cut
// off at the round cap when a handler answers inline, over stdio too.
func TestFaultEndlessInputRounds(t *testing.T) {
	var asked atomic.Int32
	srv := stdioServer(t, "modern")
	a := newAdapter(t, Config{
		Servers: map[string]Server{"f": srv},
		ElicitationHandler: func(context.Context, ElicitationRequest) (Answer, error) {
			asked.Add(1)
			return Answer{Action: Accept, Content: map[string]any{"ok": true}}, nil
		},
	})
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = lookup(t, ts, "f__ask_forever").Invoke(faultCtx(t), nil)
	checkServerErr(t, err, "f")
	if !strings.Contains(err.Error(), fmt.Sprintf("more than %d", maxRounds)) {
		t.Fatalf("Invoke() error = %v, want the round cap", err)
	}
	if got := asked.Load(); got != maxRounds {
		t.Errorf("handler asked %d times, want %d", got, maxRounds)
	}
	if _, err := lookup(t, ts, "f__echo").Invoke(faultCtx(t), map[string]any{"text": "x"}); err != nil {
		t.Fatalf("echo after the round cap: %v", err)
	}
}

// TestFaultOversizeSDK sends an oversized result from go-sdk servers over
// every transport: the call fails with ErrMessageTooLarge inside a
// *ServerError, and the connection lives on, except in memory, where the
// SDK's own 16 MiB cap ends the connection (and a re-dial brings it back).
// The bound is 1 MiB except in memory (the SDK's encoder is slow under the
// race detector); TestFaultAnswers sends 50 MB from the raw peer.
func TestFaultOversizeSDK(t *testing.T) {
	targets := []struct {
		name   string
		server func(t *testing.T, s *faultserver.Server) Server
		lost   bool // the SDK's own cap: 16 MiB, connection lost
	}{
		{"memory", func(t *testing.T, s *faultserver.Server) Server {
			return Server{Transport: s.Transport(), Retry: &RetryPolicy{MaxAttempts: 2}}
		}, true},
		{"stdio", func(t *testing.T, _ *faultserver.Server) Server { return stdioServer(t, "modern") }, false},
		{"http-sse", func(t *testing.T, s *faultserver.Server) Server {
			return Server{URL: s.StatelessHTTP(t, false).URL}
		}, false},
		{"http-json", func(t *testing.T, s *faultserver.Server) Server {
			return Server{URL: s.StatelessHTTP(t, true).URL}
		}, false},
		{"legacy-sse", func(t *testing.T, s *faultserver.Server) Server {
			return Server{URL: s.SSE(t).URL, Mode: ModeLegacy}
		}, false},
	}
	for _, target := range targets {
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			s := faultserver.New(faultserver.Options{})
			limit, size := 1<<20, 2<<20
			if target.lost {
				limit, size = 0, defaultMaxMessageBytes+1<<10
			}
			a := newAdapter(t, Config{MaxMessageBytes: int64(limit), Servers: map[string]Server{"f": target.server(t, s)}})
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			_, err = lookup(t, ts, "f__big").Invoke(faultCtx(t), map[string]any{"size": size})
			checkServerErr(t, err, "f")
			if !errors.Is(err, ErrMessageTooLarge) {
				t.Fatalf("Invoke() error = %v, want ErrMessageTooLarge", err)
			}
			checkUsable(t, a, ts, "f", "f__echo", map[string]any{"text": "x"}, "x", target.lost)
		})
	}
}

// TestMaxMessageBytesNamed: the error of a message over the bound names
// the setting that changes it, as the error of a listing over it does
// (server-filesystem's read_text_file of a 22 MB file said only "server
// message too large").
func TestMaxMessageBytesNamed(t *testing.T) {
	for _, target := range peerTargets {
		t.Run(target.name, func(t *testing.T) {
			p := faultserver.NewPeer(faultserver.PeerOptions{Tools: faultserver.BasicCatalog()})
			a := newAdapter(t, Config{MaxMessageBytes: 64 << 10, Servers: map[string]Server{"f": target.server(t, p, faultserver.KindRaw+":basic")}})
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			_, err = lookup(t, ts, "f__"+faultserver.ToolBig).Invoke(faultCtx(t), map[string]any{"size": 128 << 10})
			if !errors.Is(err, ErrMessageTooLarge) || !strings.Contains(err.Error(), "Config.MaxMessageBytes") {
				t.Fatalf("Invoke(128 KiB) error = %v, want ErrMessageTooLarge naming Config.MaxMessageBytes", err)
			}
		})
	}
}

// TestMaxMessageBytes: the option bounds results both ways: a small bound
// fails calls over it on every transport (on the SDK's in-memory transport
// after decoding) and only those; a bound over 16 MiB lets a larger result
// through on stdio and from InMemory, where the SDK's command and
// in-memory transports would have refused it.
func TestMaxMessageBytes(t *testing.T) {
	t.Run("small", func(t *testing.T) {
		const limit = 64 << 10
		s := faultserver.New(faultserver.Options{})
		p := faultserver.NewPeer(faultserver.PeerOptions{Tools: []string{faultserver.Descriptor(faultserver.ToolBig)}})
		a := newAdapter(t, Config{MaxMessageBytes: limit, Servers: map[string]Server{
			"mem":   {Transport: s.Transport()},
			"inmem": InMemory(s.Server.Server),
			"pipe":  {Transport: p.Transport()},
			"stdio": stdioServer(t, "modern"),
			"http":  {URL: s.StatelessHTTP(t, false).URL},
		}})
		ts, err := a.ListTools(faultCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"mem__big", "inmem__big", "pipe__big", "stdio__big", "http__big"} {
			server, _, _ := strings.Cut(name, "__")
			_, err := lookup(t, ts, name).Invoke(faultCtx(t), map[string]any{"size": limit + 1})
			checkServerErr(t, err, server)
			if !errors.Is(err, ErrMessageTooLarge) || !strings.Contains(err.Error(), strconv.Itoa(limit)) {
				t.Fatalf("%s(%d bytes) error = %v, want ErrMessageTooLarge naming the bound", name, limit+1, err)
			}
			res, err := lookup(t, ts, name).Invoke(faultCtx(t), map[string]any{"size": 100})
			if err != nil || len(res.Text()) != 100 {
				t.Fatalf("%s(100 bytes) = %d bytes, %v", name, len(res.Text()), err)
			}
		}
	})
	t.Run("large stdio", func(t *testing.T) {
		const size = defaultMaxMessageBytes + 1<<20
		a := newAdapter(t, Config{MaxMessageBytes: 2 * defaultMaxMessageBytes, Servers: map[string]Server{"f": peerTargets[1].server(t, nil, faultserver.KindRaw+":basic")}})
		ts, err := a.ListTools(faultCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		res, err := lookup(t, ts, "f__"+faultserver.ToolBig).Invoke(faultCtx(t), map[string]any{"size": size})
		if err != nil || len(res.Text()) != size {
			t.Fatalf("Invoke(%d bytes) = %d bytes, %v; want it whole", size, len(res.Text()), err)
		}
	})
	t.Run("large in memory", func(t *testing.T) {
		const size = defaultMaxMessageBytes + 1<<20
		a := newAdapter(t, Config{MaxMessageBytes: 2 * defaultMaxMessageBytes, Servers: map[string]Server{"f": InMemory(testserver.Full(testserver.Options{}).Server)}})
		ts, err := a.ListTools(faultCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		res, err := lookup(t, ts, "f__big").Invoke(faultCtx(t), map[string]any{"size": size})
		if err != nil || len(res.Text()) != size {
			t.Fatalf("Invoke(%d bytes) = %d bytes, %v; want it whole", size, len(res.Text()), err)
		}
	})
}

// TestURLIsNeverExecuted: New refuses every URL that is not http(s), so
// nothing named by a URL can be run.
func TestURLIsNeverExecuted(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{
		"./server.sh", "server.sh", script, "file://" + script, "file:///bin/sh",
		"sh -c 'touch " + marker + "'", "javascript:alert(1)", "data:text/plain,hi",
		"ftp://example.com/mcp", "http:/no-host", "//example.com/mcp", "ws://example.com/mcp",
	} {
		if _, err := New(Config{Servers: map[string]Server{"u": {URL: u}}}); err == nil || !strings.Contains(err.Error(), `"u"`) {
			t.Errorf("New(URL %q) error = %v, want a rejection naming the server", u, err)
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a URL ran the script (stat marker: %v)", err)
	}
}

// TestCommandIsNeverAShell: Command is a program name, never a shell line,
// and Args are passed as they are.
func TestCommandIsNeverAShell(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "x")
	tests := []struct {
		name string
		srv  Server
	}{
		{"command line", Server{Command: "echo hi; touch " + marker}},
		{"pipe", Server{Command: "true | touch " + marker}},
		{"args", Server{Command: "echo", Args: []string{"hi;", "touch", marker, "$(touch " + marker + ")", "`touch " + marker + "`"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdapter(t, Config{Servers: map[string]Server{"c": tt.srv}})
			_, err := a.ListTools(faultCtx(t))
			checkServerErr(t, err, "c")
			a.Close()
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a shell ran (stat marker: %v)", err)
			}
		})
	}
}

// TestCredentialsStayWithTheirServer extends TestHeadersStayWithTheirServer
// to OAuth tokens, SSE servers, redirects and SSE endpoints on another
// origin: a server's Headers and tokens reach that server's origin only.
func TestCredentialsStayWithTheirServer(t *testing.T) {
	plainRec := &faultserver.Recorder{Next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return testserver.Full(testserver.Options{}).Server
	}, &mcp.StreamableHTTPOptions{Stateless: true})}
	plain := testserver.Serve(t, plainRec)

	oauthSrv := testserver.Full(testserver.Options{})
	oauthRec := &faultserver.Recorder{Next: proxyTo(oauthSrv.StreamableHTTP(t, true).URL)}
	oauth := testserver.Serve(t, oauthRec)

	sseSrv := testserver.Full(testserver.Options{})
	sseRec := &faultserver.Recorder{Next: proxyTo(sseSrv.SSEOnly(t).URL)}
	sse := testserver.Serve(t, sseRec)

	// A server that sends every POST to the plain server.
	redirect := testserver.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	// An SSE server whose message endpoint is on another origin, a sink
	// that refuses every message (so that the dial fails at once).
	sinkRec := &faultserver.Recorder{Next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusBadRequest)
	})}
	sink := testserver.Serve(t, sinkRec)
	foreign := testserver.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "use SSE", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/message?sessionid=x\n\n", sink.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))

	a := newAdapter(t, Config{
		Servers: map[string]Server{
			"oauth":    {URL: oauth.URL, OAuth: staticToken("tok-oauth"), Headers: map[string]string{"X-Key": "key-oauth"}},
			"sse":      {URL: sse.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer tok-sse", "X-Key": "key-sse"}},
			"plain":    {URL: plain.URL},
			"redirect": {URL: redirect.URL, OAuth: staticToken("tok-redirect"), Headers: map[string]string{"X-Key": "key-redirect"}},
			"foreign":  {URL: foreign.URL, Mode: ModeLegacy, Headers: map[string]string{"X-Key": "key-foreign", "Authorization": "Bearer tok-foreign"}},
		},
		OnConnectionError: IgnoreConnectionErrors,
	})
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"oauth__echo", "sse__echo", "plain__echo"} {
		if _, err := lookup(t, ts, name).Invoke(faultCtx(t), map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if tool := ts.Lookup("redirect__echo"); tool != nil {
		tool.Invoke(faultCtx(t), map[string]any{"text": "x"})
	}
	if len(sinkRec.Requests()) == 0 {
		t.Fatal("the foreign SSE server's endpoint was never posted to")
	}
	if ts.Lookup("redirect__echo") == nil {
		t.Fatal("the redirected server was not reached")
	}
	owners := map[string]*faultserver.Recorder{"oauth": oauthRec, "sse": sseRec, "plain": plainRec, "sink": sinkRec}
	secrets := map[string][]string{
		"oauth":    {"tok-oauth", "key-oauth"},
		"sse":      {"tok-sse", "key-sse"},
		"redirect": {"tok-redirect", "key-redirect"},
		"foreign":  {"tok-foreign", "key-foreign"},
	}
	for owner, values := range secrets {
		for server, rec := range owners {
			for _, v := range values {
				got := rec.SawHeaderValue(v)
				if want := server == owner; got != want {
					t.Errorf("server %q saw %q (of %q): %v, want %v", server, v, owner, got, want)
				}
			}
		}
	}
}

// TestElicitationURLNeverOpened: URL-mode elicitation requests are surfaced
// (an Interrupt, or the handler's request), never fetched, whether the
// user accepts or not, in both eras.
func TestElicitationURLNeverOpened(t *testing.T) {
	page := &faultserver.Recorder{}
	consent := testserver.Serve(t, page).URL + "/consent"
	for _, legacy := range []bool{false, true} {
		t.Run(eraLabel(legacy), func(t *testing.T) {
			s := faultserver.New(faultserver.Options{Options: testserver.Options{Legacy: legacy}, ConsentURL: consent})
			var seen []ElicitationRequest
			handlerAdapter := newAdapter(t, Config{
				Servers: map[string]Server{"f": memServer(s.Server, ModeAuto)},
				ElicitationHandler: func(_ context.Context, r ElicitationRequest) (Answer, error) {
					seen = append(seen, r)
					return Answer{Action: Accept}, nil
				},
			})
			ts, err := handlerAdapter.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			res, err := lookup(t, ts, "f__consent").Invoke(faultCtx(t), nil)
			if err != nil || res.Text() != "consent accept" {
				t.Fatalf("Invoke() with a handler = %q, %v", res.Text(), err)
			}
			if len(seen) != 1 || seen[0].Mode != "url" || seen[0].URL != consent {
				t.Fatalf("handler saw %+v, want one URL request for %s", seen, consent)
			}
			if !legacy {
				b := newAdapter(t, Config{Servers: map[string]Server{"f": memServer(s.Server, ModeAuto)}})
				ts, err := b.ListTools(faultCtx(t))
				if err != nil {
					t.Fatal(err)
				}
				_, err = lookup(t, ts, "f__consent").Invoke(faultCtx(t), nil)
				var intr *Interrupt
				if !errors.As(err, &intr) || len(intr.Requests) != 1 || intr.Requests[0].URL != consent || intr.Requests[0].Mode != "url" {
					t.Fatalf("Invoke() error = %v, want an Interrupt carrying the URL", err)
				}
				res, err := b.Resume(faultCtx(t), intr, Answered(map[string]Answer{"consent": {Action: Accept}}))
				if err != nil || res.Text() != "consent accept" {
					t.Fatalf("Resume() = %q, %v", res.Text(), err)
				}
			}
			if got := page.Requests(); len(got) != 0 {
				t.Fatalf("the consent page was fetched: %v", got)
			}
		})
	}
}

// eraLabel names an era in subtest names.
func eraLabel(legacy bool) string {
	if legacy {
		return "legacy"
	}
	return "modern"
}

// waitEnded polls (bounded) until the process pid has ended.
func waitEnded(t *testing.T, pid int, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if processEnded(pid) {
			return
		}
	}
	t.Errorf("%s (pid %d) still running", what, pid)
}

// TestFaultCloseLeavesNothing closes an adapter with calls hanging in
// flight (in memory and over HTTP) and a stdio server with a child process
// of its own: every call returns ErrClosed, no goroutine is left, and
// neither the server nor its child survives. (TestFaultHangingHandshake
// checks the same after a dial left hanging.)
func TestFaultCloseLeavesNothing(t *testing.T) {
	s := faultserver.New(faultserver.Options{})
	url := s.StatelessHTTP(t, false).URL
	t.Cleanup(s.Unhang) // before the server closes: it waits for handlers
	cmd, args, env := faultserver.Command(t, faultserver.KindSDK)
	before := goroutines()
	a, err := New(Config{
		Servers: map[string]Server{
			"mem":   {Transport: s.Transport()},
			"http":  {URL: url},
			"stdio": {Command: cmd, Args: args, Env: env},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	res, err := lookup(t, ts, "stdio__grandchild").Invoke(faultCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(res.Text())
	if err != nil {
		t.Fatalf("grandchild answered %q", res.Text())
	}
	server := serverPID(t, ts, "stdio__pid")
	errc := make(chan error, 2)
	for _, name := range []string{"mem__hang", "http__hang"} {
		go func() {
			_, err := lookup(t, ts, name).Invoke(context.Background(), nil)
			errc <- err
		}()
		<-s.Hanging()
	}
	if err := a.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	for range 2 {
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Errorf("hanging call after Close: error = %v, want ErrClosed", err)
		}
	}
	s.Unhang()
	s.KillSessions()
	checkNoLeaks(t, before)
	waitEnded(t, server, "stdio server")
	waitEnded(t, child, "the stdio server's child")
}

// TestFaultHugeID: an answer whose id is a number the SDK cannot decode
// (1e400) answers no call; it is dropped and logged, and the connection
// lives on (the SDK alone would lose it).
func TestFaultHugeID(t *testing.T) {
	for _, target := range peerTargets {
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			var logs syncBuffer
			p := faultserver.NewPeer(faultserver.PeerOptions{Tools: faultserver.BasicCatalog()})
			a := newAdapter(t, Config{Logger: logsTo(&logs), Servers: map[string]Server{"f": target.server(t, p, faultserver.KindRaw+":basic")}})
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			_, err = lookup(t, ts, "f__"+faultserver.ToolHugeID).Invoke(faultCtxWithin(t, time.Second), nil)
			if err == nil {
				t.Fatal("Invoke() = nil error, want the call to fail")
			}
			checkUsable(t, a, ts, "f", "f__ok", nil, "ok", false)
			if !strings.Contains(logs.String(), "is not a number the SDK decodes") {
				t.Errorf("logs do not say why the answer was dropped:\n%s", logs.String())
			}
		})
	}
}

// TestFaultNoiseLines: a line of a stdio server's stray output that cannot
// be a JSON-RPC message, though it starts with a bracket (the log lines
// of mcp-hello-world's add tool, "[Mock SDK Server] Executing add tool
// ...") or is a JSON object without a member of JSON-RPC's (a log record
// printed on stdout), is skipped like any other banner, over stdio and a
// pipe: the call gets its answer and the connection lives. It cost the
// connection.
func TestFaultNoiseLines(t *testing.T) {
	lines := []string{
		"[Mock SDK Server] Executing add tool with a=1, b=2",
		"[INFO] 2026-12-07 started",
		"[ 1.234] ready",
		`{"level":30,"time":1765000000000,"pid":7,"msg":"tool called"}`, // a pino log record
	}
	for _, target := range peerTargets {
		if target.http {
			continue // lines are a stream's
		}
		t.Run(target.name, func(t *testing.T) {
			p := faultserver.NewPeer(faultserver.PeerOptions{Tools: faultserver.BasicCatalog()})
			var logs syncBuffer
			a := newAdapter(t, Config{Servers: map[string]Server{"f": target.server(t, p, faultserver.KindRaw+":basic")}, Logger: logsTo(&logs)})
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range lines {
				res, err := lookup(t, ts, "f__"+faultserver.ToolNoise).Invoke(faultCtx(t), map[string]any{"line": line})
				if err != nil || res.Text() != "ok" {
					t.Fatalf("after the line %q: Invoke = %v, %v; want ok", line, res, err)
				}
			}
			if n := a.Status().Servers["f"].DialAttempts; n != 1 {
				t.Errorf("DialAttempts = %d, want 1 (the connection lives)", n)
			}
			if got := strings.Count(logs.String(), "skipped server output that is not JSON-RPC"); got != len(lines) {
				t.Errorf("%d lines logged as skipped, want %d:\n%s", got, len(lines), logs.String())
			}
		})
	}
}
