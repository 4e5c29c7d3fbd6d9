package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cacheEras are the two protocol eras, for every behaviour of the cache that
// differs between them: only modern sessions have the SDK's own list cache.
var cacheEras = []struct {
	name   string
	legacy bool // a legacy-only test server
	want   Era
}{
	{"modern", false, EraModern},
	{"legacy", true, EraLegacy},
}

// checkEra fails the test unless server negotiated want.
func checkEra(t *testing.T, a *Adapter, server string, want Era) {
	t.Helper()
	info, err := a.ServerInfo(t.Context(), server)
	if err != nil {
		t.Fatal(err)
	}
	if info.Era != want {
		t.Fatalf("server %q negotiated %s, want %s", server, info.Era, want)
	}
}

// intercept installs a receiving middleware on s that hands every request
// of method to h; h calls next to run the server's own handler (after
// editing req, if it likes) and may edit or replace the result.
func intercept(s *testserver.Server, method string, h func(ctx context.Context, req mcp.Request, next func() (mcp.Result, error)) (mcp.Result, error)) {
	s.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, m string, req mcp.Request) (mcp.Result, error) {
			if m != method {
				return next(ctx, m, req)
			}
			return h(ctx, req, func() (mcp.Result, error) { return next(ctx, m, req) })
		}
	})
}

// hiddenTools makes a server leave tools out of tools/list without telling
// its clients (no list_changed): a server that changed while a catalog was
// cached.
type hiddenTools struct {
	mu    sync.Mutex
	names map[string]bool
}

// hideTools installs a hiddenTools on s, hiding names.
func hideTools(s *testserver.Server, names ...string) *hiddenTools {
	h := &hiddenTools{}
	h.set(names...)
	intercept(s, "tools/list", func(ctx context.Context, req mcp.Request, next func() (mcp.Result, error)) (mcp.Result, error) {
		res, err := next()
		if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
			h.mu.Lock()
			lr.Tools = slices.DeleteFunc(slices.Clone(lr.Tools), func(t *mcp.Tool) bool { return h.names[t.Name] })
			h.mu.Unlock()
		}
		return res, err
	})
	return h
}

// set replaces the hidden names.
func (h *hiddenTools) set(names ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.names = map[string]bool{}
	for _, n := range names {
		h.names[n] = true
	}
}

// logSignal is a slog.Handler that signals each record with message msg.
type logSignal struct {
	msg string
	ch  chan struct{}
}

func newLogSignal(msg string) *logSignal { return &logSignal{msg: msg, ch: make(chan struct{}, 64)} }

func (h *logSignal) Enabled(context.Context, slog.Level) bool { return true }
func (h *logSignal) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logSignal) WithGroup(string) slog.Handler            { return h }
func (h *logSignal) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return nil
}

// wait blocks until the next signal.
func (h *logSignal) wait(t *testing.T) {
	t.Helper()
	select {
	case <-h.ch:
	case <-t.Context().Done():
		t.Fatalf("no %q log record", h.msg)
	}
}

// mustList is ListTools that fails the test on error and returns the names.
func mustList(t *testing.T, a *Adapter, mode CacheMode) (Toolset, string) {
	t.Helper()
	ts, err := a.ListTools(t.Context(), WithCacheMode(mode))
	if err != nil {
		t.Fatalf("ListTools(%q): %v", mode, err)
	}
	return ts, strings.Join(toolNames(ts), ",")
}

// TestCacheModes walks one catalog through every mode and its TTL, counting
// the tools/list requests the server receives. The server changes its list
// without list_changed (hiddenTools), so only the mode decides what is seen.
// On modern sessions the counts prove that Refresh and Bypass go past the
// SDK's own list cache.
func TestCacheModes(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy, TTLMs: 60000}).AddWeather()
				s.AddTool("extra")
				hidden := hideTools(s, "extra")
				a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
				checkEra(t, a, "srv", era.want)

				const without, with = "srv__get_weather", "srv__extra,srv__get_weather"
				steps := []struct {
					name      string
					change    func()
					mode      CacheMode
					want      string
					wantLists int
				}{
					{"cold use", nil, CacheUse, without, 1},
					{"use again", nil, CacheUse, without, 1},
					{"use while the server changed silently", func() { hidden.set() }, CacheUse, without, 1},
					{"refresh", nil, CacheRefresh, with, 2},
					{"use after refresh", nil, CacheUse, with, 2},
					{"bypass", func() { hidden.set("extra") }, CacheBypass, without, 3},
					{"use after bypass serves the stored catalog", nil, CacheUse, with, 3},
					{"use just before the TTL ends", func() { time.Sleep(59 * time.Second) }, CacheUse, with, 3},
					{"use after the TTL", func() { time.Sleep(2 * time.Second) }, CacheUse, without, 4},
				}
				for _, step := range steps {
					if step.change != nil {
						step.change()
					}
					_, got := mustList(t, a, step.mode)
					if got != step.want || s.Count("tools/list") != step.wantLists {
						t.Fatalf("%s: ListTools(%q) = %s after %d tools/list; want %s after %d",
							step.name, step.mode, got, s.Count("tools/list"), step.want, step.wantLists)
					}
				}
			})
		})
	}
}

// TestCacheTTLZero: a server that sends no ttlMs (or 0) is asked every time.
func TestCacheTTLZero(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: era.legacy}).AddWeather()
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
			checkEra(t, a, "srv", era.want)
			for i := 1; i <= 3; i++ {
				mustList(t, a, CacheUse)
				if got := s.Count("tools/list"); got != i {
					t.Fatalf("after %d ListTools: %d tools/list, want %d", i, got, i)
				}
			}
		})
	}
}

// TestCachePageTTL: a catalog is fresh as long as its least fresh page.
func TestCachePageTTL(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy, TTLMs: 60000, PageSize: 1}).AddWeather()
				s.AddTool("extra")
				intercept(s, "tools/list", func(ctx context.Context, req mcp.Request, next func() (mcp.Result, error)) (mcp.Result, error) {
					res, err := next()
					if lr, ok := res.(*mcp.ListToolsResult); ok && lr.NextCursor == "" {
						lr.TTLMs = 1000 // the last page expires first
					}
					return res, err
				})
				a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
				mustList(t, a, CacheUse)
				mustList(t, a, CacheUse)
				if got := s.Count("tools/list"); got != 2 {
					t.Fatalf("two pages, then a cached use: %d tools/list, want 2", got)
				}
				time.Sleep(1001 * time.Millisecond)
				mustList(t, a, CacheUse)
				if got := s.Count("tools/list"); got != 4 {
					t.Fatalf("after the last page's TTL: %d tools/list, want 4", got)
				}
			})
		})
	}
}

// gate makes a server's handling of method wait for open (and signal each
// arrival on arrived, buffered) after computing its result.
type gate struct {
	arrived chan struct{}
	open    chan struct{}
}

func newGate(s *testserver.Server, method string) *gate {
	g := &gate{arrived: make(chan struct{}, 64), open: make(chan struct{})}
	intercept(s, method, func(ctx context.Context, req mcp.Request, next func() (mcp.Result, error)) (mcp.Result, error) {
		res, err := next()
		g.arrived <- struct{}{}
		select {
		case <-g.open:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return res, err
	})
	return g
}

// TestCacheConcurrentColdFetch: twenty concurrent ListTools on a cold cache
// send one tools/list per server, and all get the same tools. The servers
// send no TTL, so nothing but the deduplication can save a request.
func TestCacheConcurrentColdFetch(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				servers := map[string]*testserver.Server{}
				gates := map[string]*gate{}
				cfg := Config{Servers: map[string]Server{}}
				for _, name := range []string{"one", "two"} {
					s := testserver.New(testserver.Options{Legacy: era.legacy}).AddWeather()
					servers[name], gates[name] = s, newGate(s, "tools/list")
					cfg.Servers[name] = memServer(s, ModeAuto)
				}
				a := newAdapter(t, cfg)
				for name := range servers {
					checkEra(t, a, name, era.want) // dial first: only the listing is concurrent
				}
				const callers = 20
				results := make([]Toolset, callers)
				var wg sync.WaitGroup
				for i := range callers {
					wg.Go(func() {
						ts, err := a.ListTools(t.Context())
						if err != nil {
							t.Error(err)
						}
						results[i] = ts
					})
				}
				synctest.Wait() // every caller waits on a fetch held by a gate
				for _, g := range gates {
					close(g.open)
				}
				wg.Wait()
				for name, s := range servers {
					if got := s.Count("tools/list"); got != 1 {
						t.Errorf("server %q got %d tools/list, want 1", name, got)
					}
				}
				for i, ts := range results {
					if len(ts) != 2 || ts[0] != results[0][0] || ts[1] != results[0][1] {
						t.Fatalf("caller %d got %v, want the same tools as caller 0 (%v)", i, toolNames(ts), toolNames(results[0]))
					}
				}
			})
		})
	}
}

// TestCacheAbandonedFetch: a tools/list the server never answers costs the
// callers sharing it their own deadlines, no more. The fetch goes on while
// anyone waits (the caller with the later deadline does not start another);
// when the last one gives up the server is told to cancel, and the next
// ListTools asks again instead of joining the lost fetch.
func TestCacheAbandonedFetch(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy, TTLMs: 60000}).AddWeather()
				var lists atomic.Int32
				abandoned := make(chan struct{})
				intercept(s, "tools/list", func(ctx context.Context, req mcp.Request, next func() (mcp.Result, error)) (mcp.Result, error) {
					if lists.Add(1) == 1 {
						<-ctx.Done() // never answered: only the client's cancellation ends it
						close(abandoned)
						return nil, ctx.Err()
					}
					return next()
				})
				a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
				checkEra(t, a, "srv", era.want)

				errc := make(chan error, 2)
				for _, d := range []time.Duration{time.Second, 2 * time.Second} {
					go func() {
						ctx, cancel := context.WithTimeout(context.Background(), d)
						defer cancel()
						_, err := a.ListTools(ctx)
						errc <- err
					}()
				}
				for range 2 {
					if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("ListTools() = %v, want its own deadline exceeded", err)
					}
				}
				<-abandoned
				ts, err := a.ListTools(context.Background())
				if err != nil || len(ts) != 1 {
					t.Fatalf("ListTools() after the lost fetch = %v, %v; want the weather tool", toolNames(ts), err)
				}
				if got := lists.Load(); got != 2 {
					t.Fatalf("%d tools/list, want 2 (the lost one, then a new one)", got)
				}
			})
		})
	}
}

// TestCacheListChanged: a list_changed notification on a live session
// invalidates the cached tool list, whatever the TTL. Modern sessions get it
// only through the SDK's subscription (subscriptions/listen), in memory and
// over stateless HTTP alike.
func TestCacheListChanged(t *testing.T) {
	tests := []struct {
		name   string
		server func(t *testing.T, s *testserver.Server) Server
		legacy bool
		want   Era
	}{
		{"modern in memory", func(t *testing.T, s *testserver.Server) Server { return memServer(s, ModeAuto) }, false, EraModern},
		{"legacy in memory", func(t *testing.T, s *testserver.Server) Server { return memServer(s, ModeAuto) }, true, EraLegacy},
		{"modern stateless HTTP", func(t *testing.T, s *testserver.Server) Server {
			return Server{URL: s.StreamableHTTP(t, true).URL}
		}, false, EraModern},
		{"legacy stateful HTTP", func(t *testing.T, s *testserver.Server) Server {
			return Server{URL: s.StreamableHTTP(t, false).URL}
		}, false, EraLegacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: tt.legacy, TTLMs: 60000}).AddWeather()
			changed := newLogSignal("mcpadapter: tool list changed")
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": tt.server(t, s)}, Logger: slog.New(changed)})
			checkEra(t, a, "srv", tt.want)
			before, _ := mustList(t, a, CacheUse)
			s.AddTool("added")
			changed.wait(t)
			after, got := mustList(t, a, CacheUse)
			if got != "srv__added,srv__get_weather" || s.Count("tools/list") != 2 {
				t.Fatalf("ListTools() after list_changed = %s after %d tools/list; want the new tool after 2", got, s.Count("tools/list"))
			}
			if after.Lookup("srv__get_weather") != before[0] {
				t.Error("the unchanged tool got a new *Tool")
			}
			mustList(t, a, CacheUse)
			if got := s.Count("tools/list"); got != 2 {
				t.Fatalf("the new list is not cached: %d tools/list, want 2", got)
			}
		})
	}
}

// TestCacheListChangedDuringFetch: a list fetched before a list_changed is
// returned to its callers but not stored, so the next use asks again.
func TestCacheListChangedDuringFetch(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy, TTLMs: 60000}).AddWeather()
				g := newGate(s, "tools/list")
				a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
				checkEra(t, a, "srv", era.want)
				done := make(chan string)
				go func() {
					_, got := mustList(t, a, CacheUse)
					done <- got
				}()
				<-g.arrived             // the server has computed the old list
				s.AddTool("late")       // list_changed, after the SDK's debounce
				time.Sleep(time.Second) // past the debounce
				synctest.Wait()         // the adapter has handled it
				close(g.open)
				if got := <-done; got != "srv__get_weather" {
					t.Fatalf("the fetch in flight returned %s, want the list it asked for", got)
				}
				if _, got := mustList(t, a, CacheUse); got != "srv__get_weather,srv__late" {
					t.Fatalf("ListTools() after list_changed = %s, want the new tool (the old list was stored)", got)
				}
				if got := s.Count("tools/list"); got != 2 {
					t.Fatalf("%d tools/list, want 2", got)
				}
			})
		})
	}
}

// TestCacheIdentity: unchanged descriptors give the same *Tool values, in
// every mode; a changed descriptor gives a new one and leaves the one handed
// out as it was; each caller owns its Toolset.
func TestCacheIdentity(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: era.legacy}).AddWeather()
			s.AddTool("stable")
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
			checkEra(t, a, "srv", era.want)
			first, _ := mustList(t, a, CacheUse)
			for _, mode := range []CacheMode{CacheUse, CacheRefresh, CacheBypass} {
				again, _ := mustList(t, a, mode)
				for i := range first {
					if again[i] != first[i] {
						t.Fatalf("ListTools(%q)[%d] is a new *Tool for an unchanged descriptor", mode, i)
					}
				}
			}

			oldWeather := first.Lookup("srv__get_weather")
			oldDesc := oldWeather.Descriptor().Description
			s.Server.AddTool(&mcp.Tool{Name: "get_weather", Description: "Changed.", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "new"}}}, nil
				})
			changed, _ := mustList(t, a, CacheUse)
			newWeather := changed.Lookup("srv__get_weather")
			if newWeather == oldWeather || newWeather.Description() != "Changed." {
				t.Fatalf("changed descriptor: got the same *Tool %v or description %q", newWeather == oldWeather, newWeather.Description())
			}
			if changed.Lookup("srv__stable") != first.Lookup("srv__stable") {
				t.Fatal("the unchanged tool got a new *Tool when another one changed")
			}
			if oldWeather.Descriptor().Description != oldDesc || !strings.Contains(oldWeather.Description(), oldDesc) {
				t.Fatalf("the *Tool handed out changed: %q", oldWeather.Description())
			}
			if got := strings.Join(toolNames(first), ","); got != "srv__get_weather,srv__stable" || first[0] != oldWeather {
				t.Fatalf("an earlier Toolset changed: %s", got)
			}
			// The old wrapper still calls the server (the tool by that name).
			if res, err := oldWeather.Invoke(t.Context(), map[string]any{"city": "Oslo"}); err != nil || res.Text() != "new" {
				t.Fatalf("old tool Invoke() = %v, %v", res, err)
			}
		})
	}
}

// TestCacheCallerOwnsSlices: a caller may change the slice it got; the next
// caller's list, served from the same cache entry, is unaffected.
func TestCacheCallerOwnsSlices(t *testing.T) {
	s := testserver.New(testserver.Options{TTLMs: 60000}).AddWeather().AddResources()
	a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
	for range 3 { // a fetch, then the cache twice
		sets, err := a.ListToolsets(t.Context())
		if err != nil || len(sets["srv"]) != 1 || sets["srv"][0] == nil {
			t.Fatalf("ListToolsets() = %v, %v", sets, err)
		}
		sets["srv"][0] = nil
		rs, err := a.ListResources(t.Context(), "srv")
		if err != nil || len(rs) == 0 || rs[0] == nil {
			t.Fatalf("ListResources() = %v, %v", rs, err)
		}
		rs[0] = nil
		ts, err := a.ListResourceTemplates(t.Context(), "srv")
		if err != nil || len(ts) == 0 || ts[0] == nil {
			t.Fatalf("ListResourceTemplates() = %v, %v", ts, err)
		}
		ts[0] = nil
	}
	if s.Count("tools/list") != 1 || s.Count("resources/list") != 1 || s.Count("resources/templates/list") != 1 {
		t.Fatalf("counts %v, want one request of each list", s.Counts())
	}
}

// TestCachePagination: every page is collected past the SDK's cache (the
// server sees its own cursors), and a server that repeats a cursor or never
// ends fails the listing with an error naming it.
func TestCachePagination(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel() // a thousand pages take a while under -race
			t.Run("pages", func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy, PageSize: 2}).AddWeather()
				for i := range 4 {
					s.AddTool("t" + strconv.Itoa(i))
				}
				a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
				checkEra(t, a, "srv", era.want)
				for _, mode := range []CacheMode{CacheUse, CacheRefresh, CacheBypass} {
					ts, _ := mustList(t, a, mode)
					if len(ts) != 5 {
						t.Fatalf("ListTools(%q) = %v, want 5 tools", mode, toolNames(ts))
					}
				}
				if got := s.Count("tools/list"); got != 9 {
					t.Fatalf("%d tools/list, want 3 pages × 3 listings", got)
				}
			})
			tests := []struct {
				name      string
				next      func(n int) string // the nextCursor of the n-th page (from 1)
				want      string
				wantLists int
				modes     []CacheMode
			}{
				{"repeated cursor", func(n int) string { return "again" }, `server repeated cursor "again"`, 2, []CacheMode{CacheUse, CacheBypass}},
				{"a cursor from two pages back", func(n int) string { return strconv.Itoa(n % 2) }, `server repeated cursor "1"`, 3, []CacheMode{CacheUse, CacheBypass}},
				{"endless", func(n int) string { return "p" + strconv.Itoa(n) }, fmt.Sprintf("more than %d pages", maxPages), maxPages, []CacheMode{CacheUse}},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					s := testserver.New(testserver.Options{Legacy: era.legacy}).AddWeather()
					var mu sync.Mutex
					pages := 0 // of the current listing
					// The server answers every page itself (the SDK would
					// refuse these cursors), ahead of its request counter.
					intercept(s, "tools/list", func(ctx context.Context, req mcp.Request, next func() (mcp.Result, error)) (mcp.Result, error) {
						mu.Lock()
						defer mu.Unlock()
						pages++
						return &mcp.ListToolsResult{Tools: []*mcp.Tool{}, NextCursor: tt.next(pages)}, nil
					})
					a := newAdapter(t, Config{Servers: map[string]Server{"bad": memServer(s, ModeAuto)}})
					for _, mode := range tt.modes {
						_, err := a.ListTools(t.Context(), WithCacheMode(mode))
						var se *ServerError
						if !errors.As(err, &se) || se.Server != "bad" || se.Op != "list tools" || !strings.Contains(err.Error(), tt.want) {
							t.Fatalf("ListTools(%q) error = %v; want a *ServerError for server \"bad\" containing %q", mode, err, tt.want)
						}
						mu.Lock()
						got := pages
						pages = 0
						mu.Unlock()
						if got != tt.wantLists {
							t.Fatalf("ListTools(%q) sent %d tools/list, want %d", mode, got, tt.wantLists)
						}
					}
				})
			}
		})
	}
}

// failLists makes s answer method with a JSON-RPC error while fail is set.
type failLists struct {
	mu   sync.Mutex
	fail bool
}

func newFailLists(s *testserver.Server, method string) *failLists {
	f := &failLists{}
	intercept(s, method, func(ctx context.Context, req mcp.Request, next func() (mcp.Result, error)) (mcp.Result, error) {
		f.mu.Lock()
		fail := f.fail
		f.mu.Unlock()
		if fail {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "list is down"}
		}
		return next()
	})
	return f
}

func (f *failLists) set(fail bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
}

// TestCacheFailedRefresh: a refresh that fails returns its error (or skips
// the server when OnConnectionError says so), keeps the stored catalog and
// leaves the tools handed out working.
func TestCacheFailedRefresh(t *testing.T) {
	for _, era := range cacheEras {
		for _, skip := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/skip=%v", era.name, skip), func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy, TTLMs: 60000}).AddWeather()
				failing := newFailLists(s, "tools/list")
				var mu sync.Mutex
				var reported []error
				cfg := Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}}
				if skip {
					cfg.OnConnectionError = func(server string, err error) error {
						mu.Lock()
						defer mu.Unlock()
						reported = append(reported, err)
						return nil
					}
				}
				a := newAdapter(t, cfg)
				checkEra(t, a, "srv", era.want)
				handed, _ := mustList(t, a, CacheUse)

				failing.set(true)
				for _, mode := range []CacheMode{CacheRefresh, CacheBypass} {
					ts, err := a.ListTools(t.Context(), WithCacheMode(mode))
					if skip {
						if err != nil || len(ts) != 0 {
							t.Fatalf("ListTools(%q) = %v, %v; want the server skipped", mode, toolNames(ts), err)
						}
						continue
					}
					var se *ServerError
					if !errors.As(err, &se) || se.Server != "srv" || !strings.Contains(err.Error(), "list is down") {
						t.Fatalf("ListTools(%q) error = %v, want a *ServerError naming srv with the cause", mode, err)
					}
				}
				if skip {
					mu.Lock()
					n := len(reported)
					mu.Unlock()
					if n != 2 || !strings.Contains(reported[0].Error(), "list is down") {
						t.Fatalf("OnConnectionError got %v, want both failures", reported)
					}
				}
				if res, err := handed[0].Invoke(t.Context(), map[string]any{"city": "Rome"}); err != nil || !strings.Contains(res.Text(), "Rome") {
					t.Fatalf("tool handed out before the failed refresh: Invoke() = %v, %v", res, err)
				}
				// The stored catalog survived, and the server is not remembered as skipped.
				before := s.Count("tools/list")
				ts, _ := mustList(t, a, CacheUse)
				if len(ts) != 1 || ts[0] != handed[0] || s.Count("tools/list") != before {
					t.Fatalf("ListTools() after the failed refresh = %v (%d requests), want the stored catalog",
						toolNames(ts), s.Count("tools/list")-before)
				}
				failing.set(false)
				if ts, _ := mustList(t, a, CacheRefresh); len(ts) != 1 || ts[0] != handed[0] {
					t.Fatalf("ListTools(refresh) once the server is back = %v", toolNames(ts))
				}
			})
		}
	}
}

// TestCacheResources: resource, resource-template and prompt lists follow
// the same rules as tool lists: TTL, modes, list_changed, ttlMs 0.
func TestCacheResources(t *testing.T) {
	type lister struct {
		name, method string
		list         func(a *Adapter, ctx context.Context, mode CacheMode) (int, error)
		kind         ListKind
	}
	listers := []lister{
		{"resources", "resources/list", func(a *Adapter, ctx context.Context, mode CacheMode) (int, error) {
			rs, err := a.ListResources(ctx, "srv", WithCacheMode(mode))
			return len(rs), err
		}, ResourceList},
		{"templates", "resources/templates/list", func(a *Adapter, ctx context.Context, mode CacheMode) (int, error) {
			rs, err := a.ListResourceTemplates(ctx, "srv", WithCacheMode(mode))
			return len(rs), err
		}, ResourceList},
		{"prompts", "prompts/list", func(a *Adapter, ctx context.Context, mode CacheMode) (int, error) {
			ps, err := a.ListPrompts(ctx, "srv", WithCacheMode(mode))
			return len(ps), err
		}, PromptList},
	}
	for _, era := range cacheEras {
		for _, l := range listers {
			t.Run(era.name+"/"+l.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					s := testserver.New(testserver.Options{Legacy: era.legacy, TTLMs: 60000}).AddResources().AddPrompts()
					changed := newLogSignal("mcpadapter: " + l.kind.singular() + " list changed")
					a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}, Logger: slog.New(changed)})
					checkEra(t, a, "srv", era.want)
					n0, err := l.list(a, t.Context(), CacheUse)
					if err != nil || n0 == 0 {
						t.Fatalf("cold list = %d, %v", n0, err)
					}
					steps := []struct {
						name      string
						change    func()
						mode      CacheMode
						wantMore  bool // one item more than at first
						wantLists int
					}{
						{"use again", nil, CacheUse, false, 1},
						{"refresh", nil, CacheRefresh, false, 2},
						{"bypass", nil, CacheBypass, false, 3},
						{"use after bypass", nil, CacheUse, false, 3},
						{"list_changed", func() {
							if l.kind == PromptList {
								s.Server.AddPrompt(&mcp.Prompt{Name: "new"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
									return &mcp.GetPromptResult{}, nil
								})
							} else {
								read := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
									return &mcp.ReadResourceResult{}, nil
								}
								s.Server.AddResource(&mcp.Resource{URI: "mem://docs/new", Name: "new"}, read)
								s.Server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://new/{id}", Name: "new"}, read)
							}
							time.Sleep(time.Second) // past the SDK's debounce of list_changed
							changed.wait(t)
						}, CacheUse, true, 4},
						{"use", nil, CacheUse, true, 4},
						{"after the TTL", func() { time.Sleep(time.Minute) }, CacheUse, true, 5},
					}
					for _, step := range steps {
						if step.change != nil {
							step.change()
						}
						n, err := l.list(a, t.Context(), step.mode)
						want := n0
						if step.wantMore {
							want++
						}
						if err != nil || n != want || s.Count(l.method) != step.wantLists {
							t.Fatalf("%s: list(%q) = %d, %v after %d %s; want %d after %d",
								step.name, step.mode, n, err, s.Count(l.method), l.method, want, step.wantLists)
						}
					}
				})
			})
		}
	}
	t.Run("ttl 0", func(t *testing.T) {
		s := testserver.New(testserver.Options{}).AddResources()
		a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
		for i := 1; i <= 3; i++ {
			if _, err := a.ListResources(t.Context(), "srv"); err != nil {
				t.Fatal(err)
			}
			if got := s.Count("resources/list"); got != i {
				t.Fatalf("after %d ListResources: %d resources/list, want %d", i, got, i)
			}
		}
	})
	t.Run("bad mode", func(t *testing.T) {
		a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(testserver.New(testserver.Options{}), ModeAuto)}})
		if _, err := a.ListResources(t.Context(), "srv", WithCacheMode("sometimes")); err == nil {
			t.Fatal("ListResources with an unknown CacheMode succeeded")
		}
	})
}

// TestCacheNewConnection: a catalog belongs to its connection. After the
// connection died and was dialed again, a fresh cached catalog of the old
// one is not served: the new connection gets new tools.
func TestCacheNewConnection(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy, TTLMs: 60000}).AddWeather()
				srv := memServer(s, ModeAuto)
				srv.Retry = &RetryPolicy{MaxAttempts: 1}
				a := newAdapter(t, Config{Servers: map[string]Server{"srv": srv}})
				old, _ := mustList(t, a, CacheUse)
				s.KillSessions()
				synctest.Wait() // the adapter has seen the session end
				fresh, _ := mustList(t, a, CacheUse)
				if fresh[0] == old[0] || s.Count("tools/list") != 2 || s.Dials() != 2 {
					t.Fatalf("after a reconnect: same tool %v, %d tools/list, %d dials; want a new tool, 2, 2",
						fresh[0] == old[0], s.Count("tools/list"), s.Dials())
				}
				if _, err := fresh[0].Invoke(t.Context(), map[string]any{"city": "Lima"}); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// TestCacheCloseDuringFetch: Close ends a shared fetch in flight, its
// waiters get ErrClosed, and nothing of it outlives Close.
func TestCacheCloseDuringFetch(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy, TTLMs: 60000}).AddWeather()
				g := newGate(s, "tools/list")
				a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
				checkEra(t, a, "srv", era.want)
				errc := make(chan error, 3)
				for range 3 {
					go func() {
						_, err := a.ListTools(context.Background())
						errc <- err
					}()
				}
				<-g.arrived
				synctest.Wait()
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				for range 3 {
					if err := <-errc; !errors.Is(err, ErrClosed) {
						t.Fatalf("ListTools() during Close: error = %v, want ErrClosed", err)
					}
				}
				if got := s.Count("tools/list"); got != 1 {
					t.Fatalf("%d tools/list, want 1 shared fetch", got)
				}
			})
		})
	}
}

// TestCacheKeepsSDKToolChecks: whatever the mode, tools go through the SDK's
// own ListTools, which drops tools with invalid x-mcp-header annotations.
func TestCacheKeepsSDKToolChecks(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: era.legacy}).AddWeather()
			intercept(s, "tools/list", func(ctx context.Context, req mcp.Request, next func() (mcp.Result, error)) (mcp.Result, error) {
				res, err := next()
				if lr, ok := res.(*mcp.ListToolsResult); ok {
					// An x-mcp-header on a non-primitive property: invalid.
					lr.Tools = append(slices.Clone(lr.Tools), &mcp.Tool{Name: "bad_header", InputSchema: map[string]any{
						"type": "object", "properties": map[string]any{"q": map[string]any{"type": "object", "x-mcp-header": "Q"}},
					}})
				}
				return res, err
			})
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
			checkEra(t, a, "srv", era.want)
			for _, mode := range []CacheMode{CacheUse, CacheRefresh, CacheBypass} {
				if _, got := mustList(t, a, mode); got != "srv__get_weather" {
					t.Fatalf("ListTools(%q) = %s, want the invalid tool dropped", mode, got)
				}
			}
		})
	}
}

// TestCacheSDKRecord pins the go-sdk v1.8.0 internals the cache relies on:
// a fetch past the SDK's cache (uncached cursor, restored in place by the
// middleware) still stores the page in the SDK's cache, in a slot of its
// own (sdkcache.go), so that its record of tools is there for calls; and
// the SDK's own ListTools, with a real cursor, misses it.
func TestCacheSDKRecord(t *testing.T) {
	s := testserver.New(testserver.Options{TTLMs: 60000}).AddWeather()
	a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
	checkEra(t, a, "srv", EraModern)
	for _, mode := range []CacheMode{CacheBypass, CacheRefresh} {
		mustList(t, a, mode)
	}
	cs, err := a.Session(t.Context(), "srv")
	if err != nil {
		t.Fatal(err)
	}
	if got := sdkCachedTools(t, cs); got != 1 {
		t.Fatalf("the SDK's cache holds %d tools, want the 1 listed", got)
	}
	before := s.Count("tools/list")
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil || len(res.Tools) != 1 {
		t.Fatalf("SDK ListTools() = %v, %v", res, err)
	}
	if got := s.Count("tools/list"); got != before+1 {
		t.Fatalf("the SDK's own ListTools sent %d requests, want 1: it must not find the adapter's pages", got-before)
	}
}

// headerTool adds to s a tool whose "region" argument travels as the HTTP
// header Mcp-Param-Region on modern HTTP (SEP-2243); the go-sdk server
// rejects a call without it.
func headerTool(s *testserver.Server) {
	s.Server.AddTool(&mcp.Tool{Name: "regional", Description: "Answers with its region.", InputSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"region": map[string]any{"type": "string", "x-mcp-header": "Region"}},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "region " + string(req.Params.Arguments)}}}, nil
	})
}

// TestCacheParamHeaders: on modern HTTP, calls carry the Mcp-Param headers
// of x-mcp-header arguments however the catalog was fetched (Bypass and
// Refresh included), after list_changed made the SDK forget its record, and
// on a connection dialed again.
func TestCacheParamHeaders(t *testing.T) {
	call := func(t *testing.T, s *testserver.Server, tool *Tool) {
		t.Helper()
		if tool == nil {
			t.Fatal("no regional tool")
		}
		res, err := tool.Invoke(t.Context(), map[string]any{"region": "eu-west"})
		if err != nil || !strings.Contains(res.Text(), "eu-west") {
			t.Fatalf("Invoke() = %v, %v; want the region back", res, err)
		}
		if got := s.LastHTTPHeader().Get("Mcp-Param-Region"); got != "eu-west" {
			t.Fatalf("Mcp-Param-Region = %q, want eu-west", got)
		}
	}
	// setup serves the tools over modern Streamable HTTP, to a URL server,
	// or with custom to a go-sdk Streamable transport of the user's, which
	// the adapter screens as it does a URL server's.
	setupWith := func(t *testing.T, logger *slog.Logger, custom bool) (*testserver.Server, *Adapter) {
		s := testserver.New(testserver.Options{TTLMs: 60000}).AddWeather()
		headerTool(s)
		srv := Server{URL: s.StreamableHTTP(t, true).URL}
		if custom {
			url := srv.URL
			srv = Server{Transport: func(context.Context) (mcp.Transport, error) {
				return &mcp.StreamableClientTransport{Endpoint: url}, nil
			}}
		}
		a := newAdapter(t, Config{Servers: map[string]Server{"h": srv}, Logger: logger})
		checkEra(t, a, "h", EraModern)
		return s, a
	}
	setup := func(t *testing.T, logger *slog.Logger) (*testserver.Server, *Adapter) {
		return setupWith(t, logger, false)
	}
	for _, mode := range []CacheMode{CacheBypass, CacheRefresh, CacheUse} {
		t.Run(fmt.Sprintf("first listing %q", mode), func(t *testing.T) {
			s, a := setup(t, nil)
			ts, _ := mustList(t, a, mode)
			call(t, s, ts.Lookup("h__regional"))
			// A bypass after a use must not lose the record either.
			mustList(t, a, CacheBypass)
			call(t, s, ts.Lookup("h__regional"))
		})
	}
	for _, custom := range []bool{false, true} {
		t.Run(fmt.Sprintf("after list_changed, custom transport %v", custom), func(t *testing.T) {
			changed := newLogSignal("mcpadapter: tool list changed")
			s, a := setupWith(t, slog.New(changed), custom)
			ts, _ := mustList(t, a, CacheUse)
			s.AddTool("other")
			changed.wait(t)
			call(t, s, ts.Lookup("h__regional"))
		})
	}
	t.Run("dialed again", func(t *testing.T) {
		s, a := setup(t, nil)
		old, _ := mustList(t, a, CacheUse)
		a.Close()
		if _, err := old.Lookup("h__regional").Invoke(t.Context(), map[string]any{"region": "x"}); !errors.Is(err, ErrClosed) {
			t.Fatalf("old tool after Close: %v, want ErrClosed", err)
		}
		ts, _ := mustList(t, a, CacheUse)
		call(t, s, ts.Lookup("h__regional"))
	})
}
