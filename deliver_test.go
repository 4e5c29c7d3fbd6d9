package mcpadapter

import (
	"context"
	"fmt"
	"log/slog"
	"math/bits"
	"runtime/pprof"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
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
			if dropped := a.Status().Servers["srv"].DroppedLogs; dropped < n/2 {
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
			if dropped := a.Status().Servers["srv"].DroppedLogs; dropped < n/2 {
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
			OnResourceUpdated: func(string, string) { <-release },
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
		dropped := a.notify.droppedChanges.Load()
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
