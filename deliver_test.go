package mcpadapter

import (
	"context"
	"fmt"
	"log/slog"
	"math/bits"
	"net/http"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stuckHandler is a slog.Handler whose server log records wait for
// release, as a slow Logger does; it keeps the others' messages.
type stuckHandler struct {
	release <-chan struct{}
	first   chan<- struct{} // signalled by the first waiting record
	other   *syncBuffer
}

func (h *stuckHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *stuckHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *stuckHandler) WithGroup(string) slog.Handler            { return h }
func (h *stuckHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "mcpadapter: server log" {
		h.other.Write([]byte(r.Message + "\n"))
		return nil
	}
	select {
	case h.first <- struct{}{}:
	default:
	}
	<-h.release
	return nil
}

// TestServerLogFlood: a server flooding log messages at a Logger that
// does not keep up holds at most a bounded queue; the rest is dropped,
// counted in Status and reported. Both eras (legacy after
// logging/setLevel, modern through Server.LogLevel).
func TestServerLogFlood(t *testing.T) {
	const n = 5000
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			a, other := floodLogs(t, legacy, n, func(i int) any { return i })
			// At most the queue and the record the Logger holds are kept;
			// the SDK may not have handed over the last few messages yet.
			if dropped := a.Status().Servers["srv"].Deliveries.DroppedLogs; dropped < n/2 {
				t.Errorf("DroppedLogs = %d of %d, want most (the queue holds %d)", dropped, n, notifyQueueSize)
			}
			if !strings.Contains(other.String(), "dropped server log messages") {
				t.Errorf("log = %q, want the drops reported", other.String())
			}
		})
	}
}

// TestServerLogBytesBounded: the queue behind a slow Logger is bounded in
// bytes as well as in messages: large log messages, fewer than the queue
// holds in number, are dropped and counted once they pass 1 MiB. Both eras.
func TestServerLogBytesBounded(t *testing.T) {
	const n, size = 64, 64 << 10 // 4 MiB in all, n well under notifyQueueSize
	big := strings.Repeat("x", size)
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			a, _ := floodLogs(t, legacy, n, func(int) any { return big })
			// 1 MiB holds 15 of them, the Logger one more; the SDK may not
			// have handed over the last few yet.
			if dropped := a.Status().Servers["srv"].Deliveries.DroppedLogs; dropped < n/2 {
				t.Errorf("DroppedLogs = %d of %d messages of %d KiB, want most (the queue holds 1 MiB)", dropped, n, size>>10)
			}
		})
	}
}

// floodLogs calls a tool of server "srv" that sends n log messages (data(i)
// the i-th) to a Logger stuck on the first, until the call has ended. It
// returns the Adapter and the Logger's other records; the Logger is
// released at the end of the test, before the Adapter's Close.
func floodLogs(t *testing.T, legacy bool, n int, data func(int) any) (*Adapter, *syncBuffer) {
	s := testserver.New(testserver.Options{Legacy: legacy})
	addRawTool(s, "flood", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := range n {
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "flood", Data: data(i)}); err != nil {
				return nil, err
			}
		}
		return textResult1("flooded"), nil
	})
	release, first := make(chan struct{}), make(chan struct{}, 1)
	other := new(syncBuffer)
	srv := memServer(s, ModeAuto)
	if !legacy {
		srv.LogLevel = "debug"
	}
	a := newAdapter(t, Config{
		Servers: map[string]Server{"srv": srv},
		Logger:  slog.New(&stuckHandler{release: release, first: first, other: other}),
	})
	t.Cleanup(func() { close(release) }) // before the adapter's Close, which waits for the Logger
	tool := lookupTool(t, a, "srv__flood")
	if legacy {
		if err := a.SetLoggingLevel(t.Context(), "srv", "debug"); err != nil {
			t.Fatal(err)
		}
	}
	done := asyncInvoke(t.Context(), tool, nil)
	receive(t, first, "the Logger to get a server log")
	must(t).result(receive(t, done, "the call to end").unpack())
	return a, other
}

// TestChangeDropsLogged: change callbacks dropped behind a stuck callback
// are counted and reported in a few log lines (at the 1st, 2nd, 4th...
// drop), not in one line each. The URIs are distinct, so none is
// redundant, and more than the 1024 that used to wait.
func TestChangeDropsLogged(t *testing.T) {
	const n = 1400
	synctest.Test(t, func(t *testing.T) {
		s := testserver.New(testserver.Options{Legacy: true, Subscriptions: true}).AddResources()
		release := make(chan struct{})
		var other syncBuffer
		a := newAdapter(t, Config{
			Servers:           map[string]Server{"srv": memServer(s, ModeAuto)},
			Logger:            slog.New(&stuckHandler{release: release, first: make(chan struct{}, 1), other: &other}),
			OnResourceUpdated: func(ResourceUpdate) { <-release },
		})
		defer close(release) // before the adapter's Close, which waits for the callback
		uris := make([]string, n)
		for i := range uris {
			uris[i] = fmt.Sprintf("mem://flood/%d", i)
			if err := a.SubscribeResource(t.Context(), "srv", uris[i]); err != nil {
				t.Fatal(err)
			}
		}
		for _, uri := range uris {
			if err := s.Server.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait() // every notification handled: the callback holds one, the queue the next
		dropped := a.Status().Servers["srv"].Deliveries.DroppedChanges
		if dropped < n-notifyQueueSize-2 {
			t.Errorf("%d of %d change callbacks dropped, want all but the queue (%d) and the one running", dropped, n, notifyQueueSize)
		}
		if lines, want := strings.Count(other.String(), "dropped change notifications"), bits.Len64(uint64(dropped)); lines != want {
			t.Errorf("%d log lines for %d drops, want %d", lines, dropped, want)
		}
	})
}

// TestDeliveryKeepsNoIdleGoroutine: once a server's log message has been
// delivered, no goroutine waits for the next one. The test's goroutines
// carry a pprof label (inherited by every goroutine they start), so that
// the count is of this test's alone, taken when the bubble is idle.
func TestDeliveryKeepsNoIdleGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pprof.SetGoroutineLabels(pprof.WithLabels(t.Context(), pprof.Labels("deliver", "idle")))
		s := testserver.New(testserver.Options{Legacy: true})
		addRawTool(s, "log", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult1("logged"), req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "hello"})
		})
		released, logged := make(chan struct{}), make(chan struct{}, 1)
		close(released)
		a := newAdapter(t, Config{
			Servers: map[string]Server{"srv": memServer(s, ModeAuto)},
			Logger:  slog.New(&stuckHandler{release: released, first: logged, other: new(syncBuffer)}),
		})
		tool := lookupTool(t, a, "srv__log")
		if err := a.SetLoggingLevel(t.Context(), "srv", "debug"); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		idle := labelledGoroutines(t)
		if idle == 0 {
			t.Fatal("no goroutine carries the label: the count sees nothing")
		}
		must(t).result(tool.Invoke(t.Context(), nil))
		<-logged
		synctest.Wait()
		if n := labelledGoroutines(t); n != idle {
			t.Errorf("%d goroutines once the log message was delivered, want %d as before it", n, idle)
		}
	})
}

// labelledGoroutines counts the goroutines labelled deliver=idle.
func labelledGoroutines(t *testing.T) int {
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, group := range strings.Split(b.String(), "\n\n") {
		var k int
		if _, err := fmt.Sscanf(group, "%d @", &k); err == nil && strings.Contains(group, `"deliver":"idle"`) {
			n += k
		}
	}
	return n
}

// TestResourceUpdatePrincipals: two principals subscribed to one URI of a
// shared server get one update each, with their principal; an update of a
// URI nobody subscribed to reaches no one and is counted and logged; when
// one principal unsubscribes the other still gets updates, and the server
// is told to stop only when both have. Both eras.
func TestResourceUpdatePrincipals(t *testing.T) {
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := testserver.New(testserver.Options{Legacy: era.legacy, Subscriptions: true}).AddResources()
				_, onUpdate, ch := recordChanges()
				var logs syncBuffer
				a := newAdapter(t, Config{
					Servers:           map[string]Server{"srv": memServer(s, ModeAuto)},
					OnResourceUpdated: onUpdate,
					Logger:            slog.New(slog.NewTextHandler(&logs, nil)),
				})
				uris := testserver.ResourceURIs()
				alice, bob := WithPrincipal(t.Context(), "alice"), WithPrincipal(t.Context(), "bob")
				for _, ctx := range []context.Context{alice, bob} {
					if err := a.SubscribeResource(ctx, "srv", uris[0]); err != nil {
						t.Fatal(err)
					}
				}
				// Behind the adapter's back, the session subscribes to
				// another URI, which no principal has.
				session, err := a.Session(t.Context(), "srv")
				if err != nil {
					t.Fatal(err)
				}
				if err := session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uris[1]}); err != nil {
					t.Fatal(err)
				}
				synctest.Wait() // the subscriptions in place (a modern one acknowledged)
				update := func(uri string) []change {
					t.Helper()
					if err := s.Server.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
						t.Fatal(err)
					}
					synctest.Wait()
					var got []change
					for len(ch) > 0 {
						got = append(got, <-ch)
					}
					slices.SortFunc(got, func(a, b change) int { return strings.Compare(a.principal, b.principal) })
					return got
				}
				if got, want := update(uris[0]), []change{{server: "srv", principal: "alice", uri: uris[0]}, {server: "srv", principal: "bob", uri: uris[0]}}; !slices.Equal(got, want) {
					t.Fatalf("one update of a URI both subscribed to: %+v, want %+v", got, want)
				}
				if got := update(uris[1]); len(got) != 0 {
					t.Errorf("an update of a URI nobody subscribed to reached %+v", got)
				}
				if !strings.Contains(logs.String(), "not subscribed to") || !strings.Contains(logs.String(), uris[1]) {
					t.Errorf("log = %q, want the unsolicited update reported", logs.String())
				}
				if err := a.UnsubscribeResource(alice, "srv", uris[0]); err != nil {
					t.Fatal(err)
				}
				if got, want := update(uris[0]), []change{{server: "srv", principal: "bob", uri: uris[0]}}; !slices.Equal(got, want) {
					t.Errorf("after alice unsubscribed: %+v, want %+v", got, want)
				}
				if len(s.Unsubscribed()) != 0 {
					t.Errorf("the server was asked to unsubscribe while bob still subscribed")
				}
				st := a.Status().Servers["srv"]
				if d := st.PrincipalDeliveries; d["alice"].Delivered != 1 || d["bob"].Delivered != 2 {
					t.Errorf("deliveries by principal %+v, want alice 1 and bob 2", d)
				}
				if d := st.Deliveries; d.Delivered != 3 || d.UnsolicitedUpdates != 1 {
					t.Errorf("deliveries %+v, want 3 delivered and 1 unsolicited", d)
				}
				if err := a.UnsubscribeResource(bob, "srv", uris[0]); err != nil {
					t.Fatal(err)
				}
				waitURI(t, s.Unsubscribed(), uris[0])
			})
		})
	}
}

// TestLogFloodSparesProgress: alice's connection to a per-principal server
// floods log messages at a Logger that blocks, past her queue; bob's
// progress, sent meanwhile, is not dropped: once the Logger is released
// every notification of his reaches him, and Status counts his deliveries
// and her drops apart. Both eras.
func TestLogFloodSparesProgress(t *testing.T) {
	const flood, reports = 2000, 10
	for _, era := range pipelineEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := mcp.NewServer(&mcp.Implementation{Name: "users", Version: "1"}, nil)
				object := map[string]any{"type": "object"}
				s.AddTool(&mcp.Tool{Name: "flood", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					for i := range flood {
						if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: i}); err != nil {
							return nil, err
						}
					}
					return textResult1("flooded"), nil
				})
				s.AddTool(&mcp.Tool{Name: "report", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					for i := range reports {
						if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: reports}); err != nil {
							return nil, err
						}
					}
					return textResult1("reported"), nil
				})
				h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: era.mode == ModeModern})
				release, first := make(chan struct{}), make(chan struct{}, 1)
				a := newAdapter(t, Config{
					Servers: map[string]Server{"users": {URL: "http://users.test/mcp", Mode: era.mode, HeadersFor: bearer, LogLevel: "debug",
						HTTPClient: &http.Client{Transport: inProcess{h}}}},
					Logger: slog.New(&stuckHandler{release: release, first: first, other: new(syncBuffer)}),
				})
				releaseLogger := sync.OnceFunc(func() { close(release) })
				defer releaseLogger() // before the adapter's Close, which waits for the Logger
				progress := make(chan Progress, reports)
				alice := WithPrincipal(t.Context(), "alice")
				bob := WithProgress(WithPrincipal(t.Context(), "bob"), func(p Progress) { progress <- p })
				aliceTools, err := a.ListTools(alice)
				if err != nil {
					t.Fatal(err)
				}
				bobTools, err := a.ListTools(bob)
				if err != nil {
					t.Fatal(err)
				}
				if era.mode == ModeLegacy {
					if err := a.SetLoggingLevel(alice, "users", "debug"); err != nil {
						t.Fatal(err)
					}
				}
				if res, err := aliceTools.Lookup("users__flood").Invoke(alice, nil); err != nil || res.Text() != "flooded" {
					t.Fatalf("alice's flood: %v, %v", res, err)
				}
				<-first // the Logger holds one of her messages
				if res, err := bobTools.Lookup("users__report").Invoke(bob, nil); err != nil || res.Text() != "reported" {
					t.Fatalf("bob's call: %v, %v", res, err)
				}
				synctest.Wait() // every notification handled: queued or dropped
				releaseLogger()
				synctest.Wait()
				if n := len(progress); n != reports {
					t.Errorf("bob got %d progress notifications, want all %d", n, reports)
				}
				st := a.Status().Servers["users"]
				t.Logf("deliveries: %+v; by principal: %+v", st.Deliveries, st.PrincipalDeliveries)
				if got := st.PrincipalDeliveries["bob"]; got != (Deliveries{Delivered: reports}) {
					t.Errorf("bob's deliveries %+v, want %d delivered and nothing dropped", got, reports)
				}
				if got := st.PrincipalDeliveries["alice"]; got.DroppedLogs < flood/2 || got.DroppedProgress != 0 {
					t.Errorf("alice's deliveries %+v, want most of her %d log messages dropped", got, flood)
				}
				if got, alice := st.Deliveries.DroppedLogs, st.PrincipalDeliveries["alice"].DroppedLogs; got != alice {
					t.Errorf("the server's DroppedLogs = %d, want alice's %d", got, alice)
				}
			})
		})
	}
}

// TestChangeFloodSparesOtherServer: server noisy sends 600 resource
// updates while OnResourceUpdated blocks; server quiet's tools/list_changed,
// sent then, is not dropped: OnListChanged gets it once the callback
// returns, and Status counts the drops against noisy alone. Both eras.
func TestChangeFloodSparesOtherServer(t *testing.T) {
	const n = 600
	for _, era := range cacheEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				noisy := testserver.New(testserver.Options{Legacy: era.legacy, Subscriptions: true}).AddResources()
				quiet := testserver.New(testserver.Options{Legacy: era.legacy}).AddWeather()
				announced := make(chan struct{}, 1) // quiet sent its list_changed
				quiet.Server.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						res, err := next(ctx, method, req)
						if method == "notifications/tools/list_changed" {
							announced <- struct{}{}
						}
						return res, err
					}
				})
				release, first := make(chan struct{}), make(chan struct{}, 1)
				var held atomic.Bool
				changes := make(chan ListChange, 8)
				a := newAdapter(t, Config{
					Servers: map[string]Server{"noisy": memServer(noisy, ModeAuto), "quiet": memServer(quiet, ModeAuto)},
					OnResourceUpdated: func(ResourceUpdate) {
						if !held.Swap(true) { // the first blocks
							first <- struct{}{}
							<-release
						}
					},
					OnListChanged: func(c ListChange) { changes <- c },
				})
				defer close(release) // before the adapter's Close, which waits for the callback
				mustList(t, a, CacheUse)
				uris := make([]string, n)
				for i := range uris {
					uris[i] = fmt.Sprintf("mem://flood/%d", i)
					if err := a.SubscribeResource(t.Context(), "noisy", uris[i]); err != nil {
						t.Fatal(err)
					}
				}
				for _, uri := range uris {
					if err := noisy.Server.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
						t.Fatal(err)
					}
				}
				<-first // the callback holds one update
				synctest.Wait()
				quiet.AddTool("late")
				<-announced
				synctest.Wait() // the change handled: queued or dropped
				release <- struct{}{}
				synctest.Wait()
				if got, want := len(changes), 1; got != want {
					t.Fatalf("OnListChanged called %d times, want %d", got, want)
				}
				if got, want := <-changes, (ListChange{Server: "quiet", Kind: ToolList}); got != want {
					t.Errorf("OnListChanged(%+v), want %+v", got, want)
				}
				st := a.Status()
				t.Logf("noisy: %+v; quiet: %+v", st.Servers["noisy"].Deliveries, st.Servers["quiet"].Deliveries)
				if d := st.Servers["noisy"].Deliveries; d.DroppedChanges < n-notifyQueueSize-1 || d.Delivered+d.DroppedChanges != n {
					t.Errorf("noisy: %+v, want the %d updates delivered or dropped, all but the queue (%d) and the one held dropped", d, n, notifyQueueSize)
				}
				if d := st.Servers["quiet"].Deliveries; d != (Deliveries{Delivered: 1}) {
					t.Errorf("quiet: %+v, want its change delivered", d)
				}
			})
		})
	}
}
