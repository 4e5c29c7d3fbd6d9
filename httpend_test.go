package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An endFault is a go-sdk Streamable HTTP handler that, once broken, answers
// in one of the ways after which the SDK's client ends its session:
//   - "status": a POST gets a plain-text 4xx (status);
//   - "cut": a POST's JSON answer stops halfway, the connection dropped;
//   - "type": a POST's answer is 200 text/plain (a stateful session ends;
//     a stateless one is left closing, and its next call fails on it);
//   - "stream": the standalone event stream ends, and the GETs that would
//     resume it get a 500;
//   - "missing": the server forgets the session (kill), so that the GET
//     resuming its standalone stream gets a 404.
//
// (A 500 to a POST does not end a session: the SDK fails that request
// alone.)
type endFault struct {
	h        http.Handler
	fault    string
	noStream bool   // GET gets 405: no standalone stream
	status   int    // for "status"
	kill     func() // for "missing"

	mu     sync.Mutex
	broken bool
	gets   []context.CancelFunc // of the standalone streams
}

func (f *endFault) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	broken := f.broken
	if r.Method == http.MethodGet && !broken {
		ctx, cancel := context.WithCancel(r.Context())
		f.gets = append(f.gets, cancel)
		r = r.WithContext(ctx)
	}
	f.mu.Unlock()
	switch {
	case f.noStream && r.Method == http.MethodGet:
		http.Error(w, "no stream", http.StatusMethodNotAllowed)
	case !broken, r.Method == http.MethodDelete:
		f.h.ServeHTTP(w, r)
	case f.fault == "stream" && r.Method == http.MethodGet:
		http.Error(w, "broken", http.StatusInternalServerError)
	case f.fault == "status" && r.Method == http.MethodPost:
		http.Error(w, "broken", f.status)
	case f.fault == "cut" && r.Method == http.MethodPost:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, `{"jsonrpc":"2.0",`)
		http.NewResponseController(w).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	case f.fault == "type" && r.Method == http.MethodPost:
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "hello")
	default:
		f.h.ServeHTTP(w, r)
	}
}

// breakNow breaks f, and ends the standalone streams open.
func (f *endFault) breakNow() {
	f.mu.Lock()
	f.broken = true
	if f.fault == "stream" {
		for _, cancel := range f.gets {
			cancel()
		}
	}
	f.mu.Unlock()
	if f.fault == "missing" {
		f.kill()
	}
}

// TestHTTPSessionEnd: no goroutine waits for the end of a Streamable HTTP
// session (TestIdleHTTPConnection), so the adapter learns of it from the
// session's exchanges. Each way the SDK ends a session on what a server
// sends (a call answered with a 4xx it fails the session for, an answer
// cut short or of a type it cannot read, the standalone stream lost for
// good) ends the adapter's connection too, and the next discovery dials a
// new one; in both eras, on stateless and stateful servers, with and
// without a standalone stream. A stateless session the SDK leaves closing
// (type) is given up by the adapter at its next call, and Close still
// returns (giveUp signs the end: without a listen stream, the SDK's Close
// of a stateless session sends nothing).
func TestHTTPSessionEnd(t *testing.T) {
	for _, tc := range []struct {
		name              string
		legacy, stateless bool
		fault             string
		status            int
		noStream          bool
		calls             int // failing calls before the end
	}{
		{name: "modern/401", stateless: true, fault: "status", status: http.StatusUnauthorized, calls: 1},
		{name: "modern/404", stateless: true, fault: "status", status: http.StatusNotFound, calls: 1},
		{name: "modern/cut", stateless: true, fault: "cut", calls: 1},
		{name: "modern/type", stateless: true, fault: "type", calls: 2},
		{name: "stateless legacy/403", legacy: true, stateless: true, fault: "status", status: http.StatusForbidden, calls: 1},
		{name: "stateless legacy/type", legacy: true, stateless: true, fault: "type", calls: 2},
		{name: "legacy/cut", legacy: true, fault: "cut", calls: 1},
		{name: "legacy/type", legacy: true, fault: "type", calls: 1},
		{name: "legacy/stream", legacy: true, fault: "stream"},
		{name: "legacy/missing", legacy: true, fault: "missing"},
		{name: "legacy without stream/cut", legacy: true, fault: "cut", noStream: true, calls: 1},
		{name: "legacy without stream/type", legacy: true, fault: "type", noStream: true, calls: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testserver.Lean(testserver.Options{Legacy: tc.legacy})
			f := &endFault{fault: tc.fault, status: tc.status, noStream: tc.noStream, kill: s.KillSessions,
				h: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, &mcp.StreamableHTTPOptions{Stateless: tc.stateless})}
			ts := testserver.Serve(t, f)
			srv := Server{URL: ts.URL, Retry: &RetryPolicy{MaxAttempts: 2, Delay: time.Millisecond}}
			a := newAdapter(t, Config{Servers: map[string]Server{"h": srv}})
			tools, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			c := liveConn(t, a, "h")
			f.breakNow()
			for range tc.calls {
				if _, err := tools.Lookup("h__echo").Invoke(t.Context(), map[string]any{"text": "x"}); err == nil {
					t.Fatal("a call answered by a broken server succeeded")
				}
			}
			waitEnd(t, c)
			f.mu.Lock()
			f.broken = false
			f.mu.Unlock()
			if _, err := a.ListTools(t.Context()); err != nil {
				t.Fatalf("ListTools after the session ended: %v", err)
			}
			if liveConn(t, a, "h") == c {
				t.Fatal("discovery kept the dead session")
			}
			closeWithin(t, a)
		})
	}
}

// TestHTTPSessionEndKeepAlive: a client of the user's can end a session
// the adapter sees nothing of: its KeepAlive closes a stateless session
// whose pings fail (here with a JSON-RPC error, in a 200), with no DELETE,
// no stream and no call. Such a session keeps its watch goroutine.
func TestHTTPSessionEndKeepAlive(t *testing.T) {
	s := testserver.Lean(testserver.Options{Legacy: true})
	var broken atomic.Bool
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := testserver.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ping struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		if broken.Load() && json.Unmarshal(body, &ping) == nil && ping.Method == "ping" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"down"}}`, ping.ID)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	client := mcp.NewClient(&mcp.Implementation{Name: "keepalive", Version: "1"}, &mcp.ClientOptions{KeepAlive: 10 * time.Millisecond})
	a := newAdapter(t, Config{Servers: map[string]Server{"h": {URL: ts.URL, Client: client}}})
	if _, err := a.ListTools(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := liveConn(t, a, "h")
	broken.Store(true)
	waitEnd(t, c)
	closeWithin(t, a)
}

// waitEnd waits until the adapter knows that c's session ended.
func waitEnd(t *testing.T, c *conn) {
	t.Helper()
	select {
	case <-c.done:
	case <-faultCtx(t).Done():
		t.Fatal("the adapter did not learn that the session ended")
	}
}
