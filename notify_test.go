package mcpadapter

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A change is one callback call: a list change, or a resource update (uri
// set, kind "").
type change struct {
	server, principal string
	kind              ListKind
	uri               string
}

// recordChanges returns callbacks that send every call on the returned
// channel.
func recordChanges() (func(ListChange), func(ResourceUpdate), chan change) {
	ch := make(chan change, 64)
	return func(c ListChange) { ch <- change{server: c.Server, principal: c.Principal, kind: c.Kind} },
		func(u ResourceUpdate) { ch <- change{server: u.Server, principal: u.Principal, uri: u.URI} },
		ch
}

// nextChange waits for the next callback call, up to the test's deadline.
func nextChange(t *testing.T, ch <-chan change) change {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-t.Context().Done():
		t.Fatal("no change callback")
		return change{}
	}
}

// noPrompt is a GetPrompt handler for prompts added by the tests.
func noPrompt(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{}, nil
}

// TestOnListChanged: each list_changed reaches OnListChanged with its
// server and kind, after the cached list went, so that a callback listing
// again sees the new list; in both eras.
func TestOnListChanged(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy, TTLMs: 60000}).AddWeather().AddResources().AddPrompts()
				var a *Adapter
				seen := make(chan int, 8) // the length of the list the callback gets
				a = newAdapter(t, Config{
					Servers: map[string]Server{"srv": memServer(s, ModeAuto)},
					OnListChanged: func(c ListChange) {
						server, kind := c.Server, c.Kind
						if c != (ListChange{Server: "srv", Kind: kind}) {
							t.Errorf("OnListChanged(%+v), want server srv and no principal", c)
						}
						var n int
						var err error
						switch kind {
						case ToolList:
							var ts Toolset
							ts, err = a.ListTools(context.Background())
							n = len(ts)
						case ResourceList:
							var rs []*mcp.Resource
							rs, err = a.ListResources(context.Background(), server)
							n = len(rs)
						case PromptList:
							var ps []*Prompt
							ps, err = a.ListPrompts(context.Background(), server)
							n = len(ps)
						}
						if err != nil {
							t.Errorf("listing %s in the callback: %v", kind, err)
						}
						seen <- n
					},
				})
				checkEra(t, a, "srv", era.want)
				// Cache every list (ttlMs 60s): only the invalidation can
				// make the callback see the new ones.
				ts, _ := mustList(t, a, CacheUse)
				rs, _ := a.ListResources(t.Context(), "srv")
				ps, _ := a.ListPrompts(t.Context(), "srv")
				steps := []struct {
					change func()
					want   int
				}{
					{func() { s.AddTool("added") }, len(ts) + 1},
					{func() {
						s.Server.AddResource(&mcp.Resource{URI: "mem://docs/new", Name: "new"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
							return &mcp.ReadResourceResult{}, nil
						})
					}, len(rs) + 1},
					{func() { s.Server.AddPrompt(&mcp.Prompt{Name: "new"}, noPrompt) }, len(ps) + 1},
				}
				for _, step := range steps {
					step.change()
					select {
					case n := <-seen:
						if n != step.want {
							t.Fatalf("the callback listed %d items, want %d (the new list)", n, step.want)
						}
					case <-t.Context().Done():
						t.Fatal("no OnListChanged")
					}
				}
			})
		})
	}
}

// TestOnListChangedSlowCallback: a callback that blocks stalls no
// connection: calls go on meanwhile, the notifications that arrive are
// delivered in order after it returns, equal ones once.
func TestOnListChangedSlowCallback(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy}).AddWeather().AddPrompts()
				release := make(chan struct{})
				got := make(chan ListKind, 8)
				a := newAdapter(t, Config{
					Servers: map[string]Server{"srv": memServer(s, ModeAuto)},
					OnListChanged: func(c ListChange) {
						got <- c.Kind
						<-release
					},
				})
				ts, _ := mustList(t, a, CacheUse)
				s.AddTool("one")
				if k := <-got; k != ToolList {
					t.Fatalf("first callback for %q, want tools", k)
				}
				// The callback is blocked: the connection still serves calls
				// and receives notifications.
				s.Server.AddPrompt(&mcp.Prompt{Name: "p1"}, noPrompt)
				time.Sleep(time.Second) // past the SDK's debounce
				s.AddTool("two")
				time.Sleep(time.Second)
				s.AddTool("three")
				time.Sleep(time.Second)
				if _, err := ts[0].Invoke(t.Context(), map[string]any{"city": "Oslo"}); err != nil {
					t.Fatalf("a call while a callback blocks: %v", err)
				}
				synctest.Wait()
				close(release)
				var order []ListKind
				for range 2 {
					order = append(order, <-got)
				}
				synctest.Wait()
				if extra := len(got); !slices.Equal(order, []ListKind{PromptList, ToolList}) || extra != 0 {
					t.Fatalf("after the slow callback: %v and %d more, want [prompts tools] (two tool changes delivered once)", order, extra)
				}
			})
		})
	}
}

// TestOnListChangedClose: Close drops the notifications not yet delivered,
// waits for the callback in progress, and leaves no goroutine behind
// (synctest fails a test whose goroutines outlive it).
func TestOnListChangedClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testserver.New(testserver.Options{}).AddWeather()
		release := make(chan struct{})
		calls := make(chan ListKind, 8)
		a, err := New(Config{
			Servers: map[string]Server{"srv": memServer(s, ModeAuto)},
			OnListChanged: func(c ListChange) {
				calls <- c.Kind
				<-release
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		mustList(t, a, CacheUse)
		s.AddTool("one")
		<-calls
		time.Sleep(time.Second)
		s.AddTool("two") // queued behind the blocked callback
		time.Sleep(time.Second)
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- a.Close() }()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned while a callback was running")
		default:
		}
		close(release)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if n := len(calls); n != 0 {
			t.Fatalf("%d callbacks after Close, want the queued one dropped", n)
		}
	})
}

// TestSubscribeResource: a subscribed resource's updates reach
// OnResourceUpdated, unsubscribing ends them, in both eras.
func TestSubscribeResource(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: era.legacy, Subscriptions: true}).AddResources()
			onList, onUpdate, ch := recordChanges()
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}, OnListChanged: onList, OnResourceUpdated: onUpdate})
			checkEra(t, a, "srv", era.want)
			uri := testserver.ResourceURIs()[0]
			if err := a.SubscribeResource(t.Context(), "srv", uri); err != nil {
				t.Fatal(err)
			}
			waitURI(t, s.Subscribed(), uri)
			if n := s.Count("resources/subscribe") + s.Count(testserver.ResourceListen); n != 1 {
				t.Fatalf("the server got %d subscribing requests, want 1", n) // what TestSubscribeResourceUnsupported counts
			}
			if err := s.Server.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
			if got := nextChange(t, ch); got != (change{server: "srv", uri: uri}) {
				t.Fatalf("callback %+v, want the update of %s", got, uri)
			}
			if err := a.UnsubscribeResource(t.Context(), "srv", uri); err != nil {
				t.Fatal(err)
			}
			waitURI(t, s.Unsubscribed(), uri)
			if err := a.UnsubscribeResource(t.Context(), "srv", uri); err != nil {
				t.Fatalf("UnsubscribeResource again: %v, want idempotent", err)
			}
		})
	}
}

// TestSubscribeResourceUnsupported: a server without resources.subscribe
// refuses subscriptions with ErrNotSupported, before any request; unknown
// servers with ErrUnknownServer.
func TestSubscribeResourceUnsupported(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: era.legacy}).AddResources()
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
			checkEra(t, a, "srv", era.want)
			// Subscribing requests: a modern session's own listen for list
			// changes, which go-sdk opens at its own pace, names no resource.
			requests := func() int { return s.Count("resources/subscribe") + s.Count(testserver.ResourceListen) }
			before := requests()
			err := a.SubscribeResource(t.Context(), "srv", "mem://docs/readme")
			var se *ServerError
			if !errors.Is(err, ErrNotSupported) || !errors.As(err, &se) || se.Server != "srv" {
				t.Fatalf("SubscribeResource() error = %v, want ErrNotSupported naming srv", err)
			}
			if n := requests() - before; n != 0 {
				t.Fatalf("the server got %d subscription requests, want none", n)
			}
			for _, f := range []func(context.Context, string, string) error{a.SubscribeResource, a.UnsubscribeResource} {
				if err := f(t.Context(), "other", "mem://x"); !errors.Is(err, ErrUnknownServer) {
					t.Errorf("on an unknown server: %v, want ErrUnknownServer", err)
				}
			}
		})
	}
}

// TestSubscribeResourceClose: Close ends the subscriptions; unsubscribing
// afterwards is no error and dials nothing.
func TestSubscribeResourceClose(t *testing.T) {
	s := testserver.New(testserver.Options{Subscriptions: true}).AddResources()
	a := newAdapter(t, Config{Servers: map[string]Server{"srv": memServer(s, ModeAuto)}})
	uri := testserver.ResourceURIs()[1]
	if err := a.SubscribeResource(t.Context(), "srv", uri); err != nil {
		t.Fatal(err)
	}
	waitURI(t, s.Subscribed(), uri)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	waitURI(t, s.Unsubscribed(), uri) // the modern stream ended with the session
	if err := a.UnsubscribeResource(t.Context(), "srv", uri); err != nil || s.Dials() != 1 {
		t.Fatalf("UnsubscribeResource after Close = %v after %d dials, want nil after 1", err, s.Dials())
	}
}

// waitURI waits for uri on ch, up to the test's deadline.
func waitURI(t *testing.T, ch <-chan string, uri string) {
	t.Helper()
	select {
	case got := <-ch:
		if got != uri {
			t.Fatalf("server saw %q, want %q", got, uri)
		}
	case <-t.Context().Done():
		t.Fatalf("the server never saw %q", uri)
	}
}

// progressPeers serves "hold", which sends its progress token on held and
// waits until its call is cancelled or release is closed, and "forge",
// which reports progress under the token it receives on forged, then under
// its own.
func progressPeers(held, forged chan any, release chan struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "peers", Version: "1"}, nil)
	object := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "hold", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		held <- req.Params.GetProgressToken()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return nil, errors.New("released")
		}
	})
	s.AddTool(&mcp.Tool{Name: "forge", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for _, token := range []any{<-forged, req.Params.GetProgressToken()} {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1}); err != nil {
				return nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "forged"}}}, nil
	})
	return s
}

// TestProgressStaysOnItsConnection: bob's connection to a per-principal
// server reports progress under the token of alice's call in flight on
// hers. Neither alice's WithProgress func nor a Middleware's under her
// context sees it, and her idle timeout (MaxToolTimeout) is not reset: her
// call times out 10s after it started. Bob's own progress reaches him.
func TestProgressStaysOnItsConnection(t *testing.T) {
	for _, era := range pipelineEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				held, forged, release := make(chan any, 1), make(chan any, 1), make(chan struct{})
				h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return progressPeers(held, forged, release) },
					&mcp.StreamableHTTPOptions{Stateless: era.mode == ModeModern, PropagateRequestCancellation: true})
				// Progress as each listener saw it: WithProgress's by
				// principal, the Middleware's by the principal of its context.
				saw := map[string]chan Progress{"alice": make(chan Progress, 4), "bob": make(chan Progress, 4)}
				onProgress := map[string]chan Progress{"alice": make(chan Progress, 4), "bob": make(chan Progress, 4)}
				a, err := New(Config{
					Servers: map[string]Server{"users": {URL: "http://users.test/mcp", Mode: era.mode, HeadersFor: bearer,
						HTTPClient: &http.Client{Transport: inProcess{h}}}},
					DefaultToolTimeout: 10 * time.Second,
					MaxToolTimeout:     time.Hour,
					Middleware:         []Middleware{progressEverywhere(func(ctx context.Context, p Progress) { onProgress[principalFrom(ctx)] <- p })},
				})
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				defer close(release) // a stateful server may not see the cancellation of alice's call
				as := func(user string) context.Context {
					return WithProgress(WithPrincipal(t.Context(), user), func(p Progress) { saw[user] <- p })
				}
				alice, bob := as("alice"), as("bob")
				aliceTools, err := a.ListTools(alice)
				if err != nil {
					t.Fatal(err)
				}
				bobTools, err := a.ListTools(bob)
				if err != nil {
					t.Fatal(err)
				}

				start := time.Now()
				done := make(chan error, 1)
				go func() {
					_, err := aliceTools.Lookup("users__hold").Invoke(alice, nil)
					done <- err
				}()
				token := <-held
				if s, ok := token.(string); !ok || len(s) < 26 {
					t.Errorf("progress token %v: want a random string of 128 bits", token)
				}
				time.Sleep(8 * time.Second)
				forged <- token
				if res, err := bobTools.Lookup("users__forge").Invoke(bob, nil); err != nil || res.Text() != "forged" {
					t.Fatalf("bob's call: %v, %v", res, err)
				}
				// Bob's own progress comes after the forged one, through
				// the same queue: once it is delivered, so is the other.
				for _, ch := range []chan Progress{onProgress["bob"], saw["bob"]} {
					select {
					case p := <-ch:
						if p.MCPName != "forge" {
							t.Errorf("bob got progress %+v, want his own", p)
						}
					case <-time.After(time.Second):
						t.Fatal("bob's own progress did not reach him")
					}
				}
				if len(saw["alice"]) > 0 || len(onProgress["alice"]) > 0 || len(saw["bob"]) > 0 || len(onProgress["bob"]) > 0 {
					t.Errorf("the forged progress reached a listener: alice's %d, the Middleware's under hers %d, bob's %d, the Middleware's under his %d",
						len(saw["alice"]), len(onProgress["alice"]), len(saw["bob"]), len(onProgress["bob"]))
				}
				select {
				case err := <-done:
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("alice's call: %v, want a timeout", err)
					}
					if d := time.Since(start); d != 10*time.Second {
						t.Errorf("alice's call timed out after %v, want 10s", d)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("alice's call was still running 10s after its start: the forged progress reset her timer")
				}
			})
		})
	}
}
