//go:build unix

package mcpadapter

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// credentialServer serves statelessly (the modern era) a "whoami" tool
// that answers the Authorization header of its own request, and counts the
// requests that came without one.
func credentialServer(tb testing.TB) (url string, anonymous *atomic.Int64) {
	s := mcp.NewServer(&mcp.Implementation{Name: "whoami", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: &jsonschema.Schema{Type: "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Extra.Header.Get("Authorization")}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	anonymous = new(atomic.Int64)
	srv := testserver.Serve(tb, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			anonymous.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	return srv.URL, anonymous
}

// sharedPrincipals opens one Adapter sharing the stateless session of a
// credentialServer among n principals p0, p1, ..., each listing the tools
// and calling whoami once, which must answer the principal's own token.
// It returns the live heap and goroutines per principal it added, and the
// heap in all.
func sharedPrincipals(t *testing.T, n int) (perHeap, perGoroutines, total float64) {
	url, anonymous := credentialServer(t)
	heap0, g0 := heapInUse(), runtime.NumGoroutine()
	a, err := New(Config{Servers: map[string]Server{"s": {URL: url, Mode: ModeModern, HeadersFor: principalHeaders}},
		ShareStatelessSessions: true, MaxPrincipalConns: 2 * n})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for i := range n {
		principal := fmt.Sprintf("p%d", i)
		ctx := WithPrincipal(t.Context(), principal)
		ts, err := a.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ts.Lookup("s__whoami").Invoke(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := "Bearer " + principal; res.Text() != want {
			t.Fatalf("%s: the server saw %q, want %q", principal, res.Text(), want)
		}
	}
	heap1, g1 := heapInUse(), runtime.NumGoroutine()
	if n := anonymous.Load(); n != 0 {
		t.Errorf("%d requests without a token", n)
	}
	st := a.Status().Servers["s"]
	if st.Principals != n || !st.Shared || st.DialAttempts != 1 {
		t.Errorf("Status = %+v, want %d principals, shared, 2 dials (the first principal's, then the shared session's)", st, n)
	}
	total = float64(heap1) - float64(heap0)
	return total / float64(n), float64(g1-g0) / float64(n), total
}

// TestSharedSessionScale: 2,000 live principals on one stateless server,
// each with its own token, each listing and calling once, cost at most
// 8 KiB of live heap and 0.01 goroutines each; 10,000 at most 80 MB in
// all. A load test: go test without -short runs it.
func TestSharedSessionScale(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a load test (10,000 principals); go test without -short runs it")
	}
	heap, goroutines, _ := sharedPrincipals(t, 2000)
	t.Logf("2,000 principals: %.0f B of live heap and %.4f goroutines each", heap, goroutines)
	if heap > 8<<10 || goroutines > 0.01 {
		t.Errorf("2,000 principals: %.0f B of live heap and %.4f goroutines each, want at most 8 KiB and 0.01", heap, goroutines)
	}
	_, _, total := sharedPrincipals(t, 10000)
	t.Logf("10,000 principals: %.1f MB of live heap", total/1e6)
	if total > 80e6 {
		t.Errorf("10,000 principals: %.1f MB of live heap, want at most 80 MB", total/1e6)
	}
}

// BenchmarkPrincipalFirstCall measures what a new principal's first call
// costs on a stateless server (ModeModern) whose principals have other
// principals before them: its discovery (ListTools) and one Invoke of the
// echo tool, with a session of its own (share=false: a dial, the
// handshake and subscriptions/listen first) and on the shared session
// (share=true: no dial, no handshake). Each op is a new principal; it
// reports the dials per op too.
func BenchmarkPrincipalFirstCall(b *testing.B) {
	for _, share := range []bool{false, true} {
		b.Run(fmt.Sprintf("share=%v", share), func(b *testing.B) {
			url := testserver.Lean(testserver.Options{}).StreamableHTTP(b, true).URL
			a, err := New(Config{Servers: map[string]Server{"s": {URL: url, Mode: ModeModern, HeadersFor: principalHeaders}},
				ShareStatelessSessions: share, MaxPrincipalConns: 1 << 20})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			if _, err := a.ListTools(WithPrincipal(b.Context(), "first")); err != nil {
				b.Fatal(err)
			}
			dials := a.Status().Servers["s"].DialAttempts
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				ctx := WithPrincipal(b.Context(), fmt.Sprintf("p%d", i))
				i++
				ts, err := a.ListTools(ctx)
				if err != nil {
					b.Fatal(err)
				}
				invokeEcho(b, ctx, ts.Lookup("s__echo"))
			}
			b.ReportMetric(float64(a.Status().Servers["s"].DialAttempts-dials)/float64(i), "dials/op")
		})
	}
}

// holdServer serves statelessly a "hold" tool whose calls signal entered,
// then wait until release (or their end).
func holdServer(tb testing.TB) (url string, entered <-chan struct{}, release func()) {
	s := mcp.NewServer(&mcp.Implementation{Name: "hold", Version: "1"}, nil)
	in, gate := make(chan struct{}, 1<<16), make(chan struct{})
	s.AddTool(&mcp.Tool{Name: "hold", InputSchema: &jsonschema.Schema{Type: "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{}, nil
	})
	srv := testserver.Serve(tb, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	return srv.URL, in, func() { close(gate) }
}

// BenchmarkPrincipalsInFlight measures n principals of one stateless
// server (ModeModern), each having listed the tools, idle ("idle-"
// metrics: per principal, from before New) and then with one call each in
// flight at once ("inflight-": per principal, from idle), with a session
// per principal (share=false) and sharing one (share=true). The server is
// in process: its share counts too. Each op measures afresh.
func BenchmarkPrincipalsInFlight(b *testing.B) {
	for _, n := range []int{1000} {
		for _, share := range []bool{false, true} {
			b.Run(fmt.Sprintf("n=%d/share=%v", n, share), func(b *testing.B) {
				var idle, busy idleCost
				for b.Loop() {
					idle, busy = principalsInFlight(b, n, share)
				}
				b.ReportMetric(idle.heap, "idle-heap-B/principal")
				b.ReportMetric(idle.goroutines, "idle-goroutines/principal")
				b.ReportMetric(busy.heap, "inflight-heap-B/principal")
				b.ReportMetric(busy.goroutines, "inflight-goroutines/principal")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// principalsInFlight is one measurement of BenchmarkPrincipalsInFlight.
func principalsInFlight(b *testing.B, n int, share bool) (idle, busy idleCost) {
	url, entered, release := holdServer(b)
	heap0, g0 := heapInUse(), runtime.NumGoroutine()
	a, err := New(Config{Servers: map[string]Server{"s": {URL: url, Mode: ModeModern, HeadersFor: principalHeaders}},
		ShareStatelessSessions: share, MaxPrincipalConns: 2 * n})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	ctxs, tools := make([]context.Context, n), make([]*Tool, n)
	for i := range n {
		ctxs[i] = WithPrincipal(b.Context(), fmt.Sprintf("p%d", i))
		ts, err := a.ListTools(ctxs[i])
		if err != nil {
			b.Fatal(err)
		}
		tools[i] = ts.Lookup("s__hold")
	}
	heap1, g1 := heapInUse(), runtime.NumGoroutine()
	done := make(chan error, n)
	for i := range n {
		go func() {
			_, err := tools[i].Invoke(ctxs[i], nil)
			done <- err
		}()
	}
	for range n {
		<-entered
	}
	heap2, g2 := heapInUse(), runtime.NumGoroutine()
	release()
	for range n {
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	per := func(d float64) float64 { return d / float64(n) }
	idle = idleCost{heap: per(float64(heap1) - float64(heap0)), goroutines: per(float64(g1 - g0))}
	busy = idleCost{heap: per(float64(heap2) - float64(heap1)), goroutines: per(float64(g2 - g1))}
	return idle, busy
}
