package faultserver

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPHandler serves p over stateless Streamable HTTP: each POST carries one
// message and gets its answer as an application/json body, or, when sse is
// true, as one event of a text/event-stream body. Notifications get 202; GET
// and DELETE get 405. "hang" holds the request until the client gives up;
// "die" drops the TCP connection without an answer.
func (p *Peer) HTTPHandler(sse bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
			return
		}
		var req rawRequest
		body, err := io.ReadAll(r.Body)
		if err != nil || json.Unmarshal(body, &req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		rep := p.answer(&req)
		switch {
		case rep.hang:
			<-r.Context().Done()
			return
		case rep.die:
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		case rep.delay > 0:
			t := time.NewTimer(rep.delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			}
		}
		bw := bufio.NewWriterSize(w, 64<<10)
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(bw, "event: message\ndata: ")
			rep.write(bw)
			io.WriteString(bw, "\n\n")
		} else {
			w.Header().Set("Content-Type", "application/json")
			rep.write(bw)
		}
		bw.Flush()
	})
}

// StatelessHTTP serves s over stateless Streamable HTTP (the modern era,
// request cancellation propagated) at the root of a new httptest server,
// closed when t ends. With jsonResponse the server answers each call with an
// application/json body instead of an event stream.
func (s *Server) StatelessHTTP(t testing.TB, jsonResponse bool) *httptest.Server {
	t.Helper()
	return testserver.Serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server.Server }, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		JSONResponse:                 jsonResponse,
		PropagateRequestCancellation: true,
	}))
}

// A Recorder is an HTTP handler that records every request it gets: the
// target of a URL nobody should open, or a server whose received headers a
// test checks. It answers 200 with an empty body, or forwards to Next.
type Recorder struct {
	// Next, when set, serves the requests after they are recorded.
	Next http.Handler

	mu      sync.Mutex
	headers []http.Header
	paths   []string
}

// ServeHTTP implements [http.Handler].
func (rec *Recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec.mu.Lock()
	rec.headers = append(rec.headers, r.Header.Clone())
	rec.paths = append(rec.paths, r.Method+" "+r.URL.Path)
	rec.mu.Unlock()
	if rec.Next != nil {
		rec.Next.ServeHTTP(w, r)
	}
}

// Requests returns the method and path of every request recorded.
func (rec *Recorder) Requests() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.paths...)
}

// Headers returns a copy of the header of every request recorded.
func (rec *Recorder) Headers() []http.Header {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := make([]http.Header, len(rec.headers))
	for i, h := range rec.headers {
		out[i] = h.Clone()
	}
	return out
}

// SawHeaderValue reports whether any recorded request carried a header
// value containing value.
func (rec *Recorder) SawHeaderValue(value string) bool {
	for _, h := range rec.Headers() {
		for _, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, value) {
					return true
				}
			}
		}
	}
	return false
}
