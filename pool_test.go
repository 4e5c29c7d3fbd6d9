package mcpadapter

import (
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

// liveHeap returns the bytes of live heap objects, after two collections
// (the second frees what the first's finalizers and weak pointers let go).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// maxHeapGrowth is what the live heap may grow by over the connections of
// a test below, closed ones all: about 100 bytes each, where a closed
// connection that stays reachable holds several KB.
const maxHeapGrowth = 1 << 20

// heapGrowth runs warm, measures the live heap, runs work and measures it
// again, and returns the growth (0 when it shrank).
func heapGrowth(warm, work func()) uint64 {
	warm()
	before := liveHeap()
	work()
	after := liveHeap()
	return max(after, before) - before
}

// TestClosedPrincipalConnsFreed: 1,500 principals, one after the other,
// use a per-principal Streamable HTTP server (stateless, and stateful,
// which gets a DELETE for each session) under MaxPrincipalConns 4: each
// one's connection is closed past the cap, and nothing of it stays
// reachable from the Adapter.
func TestClosedPrincipalConnsFreed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a load test (1,500 principals); go test without -short runs it")
	}
	for _, tc := range []struct {
		name      string
		stateless bool
		mode      Mode
	}{
		{"stateless", true, ModeModern},
		{"stateful", false, ModeLegacy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testserver.New(testserver.Options{}).AddWeather().StreamableHTTP(t, tc.stateless)
			const maxConns = 4
			a := newAdapter(t, Config{Servers: map[string]Server{"users": {URL: srv.URL, Mode: tc.mode, HeadersFor: bearer}},
				MaxPrincipalConns: maxConns})
			// Principals come in rounds of maxConns at once. The admissions
			// of a round close the conns of the round before, which are
			// idle and less recently used than any of the round's own.
			var ended []<-chan struct{} // the session ends of the last round's conns
			next := 0
			use := func(rounds int) {
				for range rounds {
					ends := make([]<-chan struct{}, maxConns)
					var wg sync.WaitGroup
					for i := range maxConns {
						ctx := WithPrincipal(t.Context(), "user-"+strconv.Itoa(next+i))
						wg.Go(func() {
							ts, err := a.ListTools(ctx)
							if err != nil {
								t.Error(err)
								return
							}
							tool := ts.Lookup("users__get_weather")
							if _, err := tool.Invoke(ctx, map[string]any{"city": "Paris"}); err != nil {
								t.Error(err)
							}
							ends[i] = tool.conn.done
						})
					}
					wg.Wait()
					if t.Failed() {
						t.FailNow()
					}
					for _, end := range ended {
						<-end // closed past the cap
					}
					ended, next = ends, next+maxConns
				}
			}
			growth := heapGrowth(func() { use(100 / maxConns) }, func() { use(1500 / maxConns) })
			t.Logf("live heap growth over 1,500 principals: %d KB", growth>>10)
			if growth > maxHeapGrowth {
				t.Errorf("the live heap grew by %d KB over 1,500 closed connections, want under %d KB", growth>>10, maxHeapGrowth>>10)
			}
			if n := a.Status().Servers["users"].Principals; n != maxConns {
				t.Errorf("%d principals, want %d", n, maxConns)
			}
		})
	}
}

// TestClosedReconnectsFreed: a shared stateful Streamable HTTP server whose
// sessions the server drops 500 times, each noticed by a call that starts
// a new session and goes on there (the spec's 404 rule, without a retry
// policy): no dead connection stays reachable.
func TestClosedReconnectsFreed(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a load test (500 reconnects); go test without -short runs it")
	}
	s := testserver.New(testserver.Options{}).AddWeather()
	srv := s.StreamableHTTP(t, false)
	a := newAdapter(t, Config{Servers: map[string]Server{"shared": {URL: srv.URL, Mode: ModeLegacy}}})
	reconnect := func(n int) {
		for range n {
			ts, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			tool := ts.Lookup("shared__get_weather")
			if _, err := tool.Invoke(t.Context(), map[string]any{"city": "Paris"}); err != nil {
				t.Fatal(err)
			}
			s.KillSessions()
			// The next request finds the session missing, and is sent
			// again on a new one.
			if _, err := tool.Invoke(t.Context(), map[string]any{"city": "Paris"}); err != nil {
				t.Fatalf("a call on a killed session: %v", err)
			}
			<-tool.conn.done
		}
	}
	growth := heapGrowth(func() { reconnect(50) }, func() { reconnect(500) })
	t.Logf("live heap growth over 500 reconnects: %d KB", growth>>10)
	if growth > maxHeapGrowth {
		t.Errorf("the live heap grew by %d KB over 500 reconnects, want under %d KB", growth>>10, maxHeapGrowth>>10)
	}
	if got := a.Status().Servers["shared"].DialAttempts; got != 551 {
		t.Errorf("%d dials, want 551", got)
	}
}
