package mcpadapter

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An endFault is a go-sdk Streamable HTTP handler that, once broken, answers
// in one of the ways after which the SDK's client ends its session:
//   - "cut": a POST's JSON answer stops halfway, the connection dropped;
//   - "type": a POST's answer is 200 text/plain (a stateful session ends;
//     a stateless one is left closing, and the next call re-dials);
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
// sends (a call's answer cut short or of a type it cannot read, the
// standalone stream lost for good) ends the adapter's
// connection too, and the next discovery dials a new one; in both eras (a
// stateless modern server, a stateful legacy one, with and without a
// standalone stream).
func TestHTTPSessionEnd(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stateless bool
		fault     string
		noStream  bool
	}{
		{"modern/cut", true, "cut", false},
		{"legacy/cut", false, "cut", false},
		{"legacy/type", false, "type", false},
		{"legacy/stream", false, "stream", false},
		{"legacy/missing", false, "missing", false},
		{"legacy without stream/cut", false, "cut", true},
		{"legacy without stream/type", false, "type", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testserver.Lean(testserver.Options{Legacy: !tc.stateless})
			f := &endFault{fault: tc.fault, noStream: tc.noStream, kill: s.KillSessions, h: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, &mcp.StreamableHTTPOptions{Stateless: tc.stateless})}
			ts := testserver.Serve(t, f)
			srv := Server{URL: ts.URL, Reconnect: &RetryPolicy{MaxAttempts: 2, Delay: time.Millisecond}}
			a := newAdapter(t, Config{Servers: map[string]Server{"h": srv}})
			tools, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			c := liveConn(t, a, "h")
			f.breakNow()
			if tc.fault != "stream" && tc.fault != "missing" {
				if _, err := tools.Lookup("h__echo").Invoke(t.Context(), map[string]any{"text": "x"}); err == nil {
					t.Fatal("a call answered by a broken server succeeded")
				}
			}
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			select {
			case <-c.done:
			case <-ctx.Done():
				t.Fatal("the adapter did not learn that the session ended")
			}
			f.mu.Lock()
			f.broken = false
			f.mu.Unlock()
			if _, err := a.ListTools(t.Context()); err != nil {
				t.Fatalf("ListTools after the session ended: %v", err)
			}
			if liveConn(t, a, "h") == c {
				t.Fatal("discovery kept the dead session")
			}
		})
	}
}
