package mcpadapter

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// pipelineEras are the two eras, as server modes of the adapter.
var pipelineEras = []struct {
	name string
	mode Mode
}{{"modern", ModeModern}, {"legacy", ModeLegacy}}

// progressEverywhere is the Middleware that reports the progress of every
// call to f, with the call's context (WithProgress's doc).
func progressEverywhere(f func(context.Context, Progress)) Middleware {
	return func(next CallHandler) CallHandler {
		return func(ctx context.Context, req *CallRequest) (*Result, error) {
			return next(WithProgress(ctx, func(p Progress) { f(ctx, p) }), req)
		}
	}
}

func TestProgress(t *testing.T) {
	for _, era := range pipelineEras {
		t.Run(era.name, func(t *testing.T) {
			all := make(chan Progress, 10)
			mine := make(chan Progress, 10)
			type key struct{}
			a := newAdapter(t, Config{
				Servers: map[string]Server{"s": memServer(testserver.Full(testserver.Options{}), era.mode)},
				Middleware: []Middleware{progressEverywhere(func(ctx context.Context, p Progress) {
					if ctx.Value(key{}) != "caller" {
						t.Errorf("the progress middleware did not get the caller's context")
					}
					all <- p
				})},
			})
			tool := lookupTool(t, a, "s__progress")
			ctx := context.WithValue(t.Context(), key{}, "caller")
			ctx = WithProgress(ctx, func(p Progress) { mine <- p })
			res, err := tool.Invoke(ctx, nil)
			if err != nil || res.Text() != "done" {
				t.Fatalf("Invoke = %v, %v", res, err)
			}
			// Progress sent just before the answer may be handled just after it.
			wait, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			for i := range 2 {
				var p, q Progress
				for _, ch := range []chan Progress{all, mine} {
					select {
					case p = <-ch:
					case <-wait.Done():
						t.Fatalf("notification %d did not arrive", i+1)
					}
					if q == (Progress{}) {
						q = p
					}
				}
				want := Progress{Server: "s", Tool: "s__progress", MCPName: "progress", CallID: q.CallID, Progress: float64(i + 1), Total: 2, Message: "working"}
				if q != want || q.CallID == "" || p != q {
					t.Errorf("notification %d = %+v (per call %+v), want %+v with a call id", i, q, p, want)
				}
			}
			// A call made without listeners sends no progress token.
			quiet := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(testserver.Full(testserver.Options{}), era.mode)}})
			if _, err := lookupTool(t, quiet, "s__progress").Invoke(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// tickingServer is a go-sdk server whose tool "tick" reports progress n
// times, every step of (simulated) work, then answers "ticked".
func tickingServer(n int, step time.Duration) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "ticking", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "tick", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range n {
				select {
				case <-time.After(step):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				if token := req.Params.GetProgressToken(); token != nil {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i + 1), Total: float64(n)}); err != nil {
						return nil, err
					}
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ticked"}}}, nil
		})
	return s
}

// inMemoryServer is a Server entry for a go-sdk server in memory.
func inMemoryServer(s *mcp.Server, mode Mode) Server {
	return Server{Mode: mode, Transport: func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := s.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}
}

func TestProgressResetsTimeout(t *testing.T) {
	// A call that takes 5 steps of 150ms, reporting progress after each,
	// under a 200ms tool timeout: it succeeds only when the timeout counts
	// idle time. Time is synctest's: the test takes no wall time.
	tests := []struct {
		name    string
		max     time.Duration
		wantErr bool
	}{
		{"timeout since start", 0, true},
		{"timeout since last progress", time.Hour, false},
		{"hard maximum", 500 * time.Millisecond, true},
	}
	for _, era := range pipelineEras {
		for _, tt := range tests {
			t.Run(era.name+"/"+tt.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					a, err := New(Config{
						Servers:            map[string]Server{"s": inMemoryServer(tickingServer(5, 150*time.Millisecond), era.mode)},
						DefaultToolTimeout: 200 * time.Millisecond,
						MaxToolTimeout:     tt.max,
					})
					if err != nil {
						t.Fatal(err)
					}
					defer a.Close()
					tool := lookupTool(t, a, "s__tick")
					res, err := tool.Invoke(t.Context(), nil)
					if tt.wantErr {
						if !errors.Is(err, context.DeadlineExceeded) {
							t.Fatalf("Invoke = %v, %v; want a deadline error", res, err)
						}
						return
					}
					if err != nil || res.Text() != "ticked" {
						t.Fatalf("Invoke = %v, %v; want ticked", res, err)
					}
				})
			})
		}
	}
}

func TestMiddleware(t *testing.T) {
	for _, era := range pipelineEras {
		t.Run(era.name, func(t *testing.T) {
			srv := testserver.Full(testserver.Options{})
			var seen []CallRequest
			var mu sync.Mutex
			record := func(next CallHandler) CallHandler {
				return func(ctx context.Context, req *CallRequest) (*Result, error) {
					mu.Lock()
					seen = append(seen, *req)
					mu.Unlock()
					return next(ctx, req)
				}
			}
			var observed error
			rewrite := func(next CallHandler) CallHandler {
				return func(ctx context.Context, req *CallRequest) (*Result, error) {
					switch req.Args["mode"] {
					case "rewrite":
						req.Args = map[string]any{"text": "rewritten"}
						req.Meta = map[string]any{"tenant": "t-1"}
					case "invalid":
						req.Args = map[string]any{"text": 42} // the schema wants a string
					case "short":
						return &Result{Content: []Block{{Type: BlockText, Text: "answered by the hook"}}}, nil
					case "replace":
						req.Args = map[string]any{"text": "x"}
						res, err := next(ctx, req)
						if err != nil {
							return nil, err
						}
						return &Result{Content: []Block{{Type: BlockText, Text: "replaced: " + res.Text()}}}, nil
					}
					res, err := next(ctx, req)
					observed = err
					return res, err
				}
			}
			a := newAdapter(t, Config{
				Servers:    map[string]Server{"s": memServer(srv, era.mode)},
				Middleware: []Middleware{record, rewrite},
			})
			echo := lookupTool(t, a, "s__echo")

			res, err := echo.Invoke(t.Context(), map[string]any{"mode": "rewrite"})
			if err != nil || !strings.Contains(res.Text(), "rewritten") {
				t.Fatalf("rewritten call = %v, %v", res, err)
			}
			if got := srv.LastArgs("echo"); got["text"] != "rewritten" || got["mode"] != nil {
				t.Errorf("server got %v, want the rewritten arguments", got)
			}
			if got := srv.LastMeta("echo"); got["tenant"] != "t-1" {
				t.Errorf("server got _meta %v, want tenant t-1", got)
			}

			runs := srv.Runs("echo")
			res, err = echo.Invoke(t.Context(), map[string]any{"mode": "invalid"})
			if err != nil || !res.IsError || !strings.Contains(res.Text(), "do not match its input schema") {
				t.Fatalf("invalid rewrite = %v, %v; want a model-visible schema error", res, err)
			}
			res, err = echo.Invoke(t.Context(), map[string]any{"mode": "short"})
			if err != nil || res.Text() != "answered by the hook" {
				t.Fatalf("short circuit = %v, %v", res, err)
			}
			if srv.Runs("echo") != runs {
				t.Errorf("the server ran echo %d times for an invalid rewrite and a short circuit, want 0", srv.Runs("echo")-runs)
			}
			res, err = echo.Invoke(t.Context(), map[string]any{"mode": "replace"})
			if err != nil || res.Text() != "replaced: x" {
				t.Fatalf("replaced result = %v, %v", res, err)
			}

			// Errors reach the middleware: a closed adapter.
			fail := lookupTool(t, a, "s__rpc_error")
			if _, err := fail.Invoke(t.Context(), nil); err == nil || observed == nil || !errors.Is(err, observed) {
				t.Errorf("Invoke error %v, middleware observed %v", err, observed)
			}

			// The request describes the call; a model's call id comes through.
			msgs, err := Toolset{echo}.HandleToolCalls(t.Context(), &llms.ContentChoice{ToolCalls: []llms.ToolCall{{
				ID: "call-from-model", Type: "function",
				FunctionCall: &llms.FunctionCall{Name: "s__echo", Arguments: `{"text":"hi"}`},
			}}})
			if err != nil || len(msgs) == 0 {
				t.Fatalf("HandleToolCalls = %v, %v", msgs, err)
			}
			mu.Lock()
			defer mu.Unlock()
			last := seen[len(seen)-1]
			if last.Server != "s" || last.Tool != "s__echo" || last.MCPName != "echo" || last.CallID != "call-from-model" {
				t.Errorf("middleware saw %+v, want server s, tool s__echo, MCP name echo, call id call-from-model", last)
			}
			if first := seen[0]; first.CallID == "" || first.CallID == last.CallID {
				t.Errorf("an Invoke got call id %q, want one of its own", first.CallID)
			}
		})
	}
}

// ctxHandler records the records it handles and the context of each.
type ctxHandler struct {
	mu      sync.Mutex
	records []slog.Record
	ctxs    []context.Context
}

func (h *ctxHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	h.ctxs = append(h.ctxs, ctx)
	return nil
}
func (h *ctxHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *ctxHandler) WithGroup(string) slog.Handler      { return h }

func TestCallLogRecord(t *testing.T) {
	for _, era := range pipelineEras {
		t.Run(era.name, func(t *testing.T) {
			h := &ctxHandler{}
			a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(testserver.Full(testserver.Options{}), era.mode)}, Logger: slog.New(h)})
			tool := lookupTool(t, a, "s__fail")
			type key struct{}
			ctx := context.WithValue(t.Context(), key{}, "trace-42")
			if _, err := tool.Invoke(ctx, nil); err != nil {
				t.Fatal(err)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			n := 0
			for i, r := range h.records {
				if r.Message != "mcpadapter: tool call" {
					continue
				}
				n++
				if h.ctxs[i].Value(key{}) != "trace-42" {
					t.Error("the call's record was not logged with the caller's context")
				}
				attrs := map[string]string{}
				r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
				if attrs["server"] != "s" || attrs["tool"] != "s__fail" || attrs["isError"] != "true" || attrs["rounds"] != "1" || attrs["duration"] == "" || attrs["call"] == "" {
					t.Errorf("call record attributes = %v", attrs)
				}
			}
			if n != 1 {
				t.Errorf("%d call records, want 1", n)
			}
		})
	}
}

// warnings is a slog handler that signals each warning on a channel.
type warnings chan string

func (w warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w warnings) Handle(_ context.Context, r slog.Record) error {
	select {
	case w <- r.Message:
	default:
	}
	return nil
}
func (w warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w warnings) WithGroup(string) slog.Handler      { return w }

func TestProgressFloodBounded(t *testing.T) {
	// A server floods progress at a progress listener that blocks: what waits is
	// bounded, the rest is dropped and logged, and the call is held up by the
	// callback running only (it has no deadline), not by those queued.
	synctest.Test(t, func(t *testing.T) {
		const flood = 2000
		s := mcp.NewServer(&mcp.Implementation{Name: "flood", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "flood", InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				for i := range flood {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i)}); err != nil {
						return nil, err
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "flooded"}}}, nil
			})
		release := make(chan struct{})
		var delivered atomic.Int64
		warned := make(warnings, 16)
		a, err := New(Config{
			Servers: map[string]Server{"s": inMemoryServer(s, ModeLegacy)},
			Logger:  slog.New(warned),
			Middleware: []Middleware{progressEverywhere(func(context.Context, Progress) {
				if delivered.Add(1) == 1 {
					<-release
				}
			})},
		})
		if err != nil {
			t.Fatal(err)
		}
		invoked := make(chan string, 1)
		go func() {
			res, err := lookupTool(t, a, "s__flood").Invoke(t.Context(), nil)
			if err != nil {
				invoked <- err.Error()
				return
			}
			invoked <- res.Text()
		}()
		wait, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		for msg := ""; !strings.Contains(msg, "dropped progress"); {
			select {
			case msg = <-warned:
			case <-wait.Done():
				t.Fatal("no warning about dropped progress notifications")
			}
		}
		synctest.Wait()           // the flood read: the call waits for its callbacks
		time.Sleep(progressStall) // fake time: they did not keep up, those queued are dropped
		synctest.Wait()
		select {
		case got := <-invoked:
			t.Fatalf("Invoke returned %q while its callback ran", got)
		default:
		}
		close(release)
		if got := <-invoked; got != "flooded" {
			t.Fatalf("Invoke = %q, want the answer", got)
		}
		a.Close() // ends the delivery goroutine; nothing is delivered after
		if n := delivered.Load(); n > notifyQueueSize+1 {
			t.Errorf("%d progress notifications delivered, want at most %d (the rest dropped)", n, notifyQueueSize+1)
		}
	})
}

// TestMiddlewareNilResult: a middleware that returns (nil, nil) fails the
// call with an error naming its place in Config.Middleware, in every call
// path, instead of handing a caller a nil result with a nil error.
func TestMiddlewareNilResult(t *testing.T) {
	srv := testserver.Full(testserver.Options{})
	pass := func(next CallHandler) CallHandler { return next }
	broken := func(next CallHandler) CallHandler {
		return func(context.Context, *CallRequest) (*Result, error) { return nil, nil }
	}
	a := newAdapter(t, Config{
		Servers:    map[string]Server{"s": memServer(srv, ModeAuto)},
		Middleware: []Middleware{pass, broken},
	})
	echo := lookupTool(t, a, "s__echo")
	check := func(path string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "Config.Middleware[1] returned neither a result nor an error") {
			t.Errorf("%s: error = %v, want one naming Config.Middleware[1]", path, err)
		}
	}
	res, err := echo.Invoke(t.Context(), map[string]any{"text": "hi"})
	if res != nil {
		t.Errorf("Invoke result = %v, want nil with the error", res)
	}
	check("Invoke", err)
	out, err := echo.Call(t.Context(), `{"text":"hi"}`)
	if out != "" {
		t.Errorf("Call = %q, want no observation", out)
	}
	check("Call", err)
	_, err = Toolset{echo}.HandleToolCalls(t.Context(), &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		mcpadaptertest.ToolCall("c1", "s__echo", `{"text":"hi"}`),
	}})
	check("HandleToolCalls", err)
}
