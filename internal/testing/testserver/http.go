package testserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SetHTTPStatus makes every endpoint started by [Server.StreamableHTTP],
// [Server.SSE] and [Server.SSEOnly] answer each request with the HTTP status
// code (e.g. 401, 404, 503) and no body, until it is called with 0.
func (s *Server) SetHTTPStatus(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.httpStatus = code
}

// faults wraps h: it records the request header (LastHTTPHeader) and
// implements SetHTTPStatus.
func (s *Server) faults(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.lastHeader = r.Header.Clone()
		code := s.httpStatus
		s.mu.Unlock()
		if code != 0 {
			http.Error(w, http.StatusText(code), code)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Serve starts an httptest server for h and registers its shutdown with t.
// Shutdown drops client connections first, so long-lived SSE streams and
// hanging requests of sessions the test left open do not block it.
func Serve(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts
}

// getServer returns s's SDK server for every HTTP request.
func (s *Server) getServer(*http.Request) *mcp.Server { return s.Server }

// StreamableHTTP serves s over Streamable HTTP at the root of a new httptest
// server (use its URL) and closes it when t ends.
//
// stateless true serves the modern era (and legacy clients, which cannot then
// receive server-to-client requests such as elicitation), with request
// cancellation propagated to tool handlers. stateless false serves a stateful
// server, which speaks only the legacy era; its sessions have ids, and
// [Server.KillSessions] makes them missing (404).
func (s *Server) StreamableHTTP(t testing.TB, stateless bool) *httptest.Server {
	t.Helper()
	return Serve(t, s.faults(mcp.NewStreamableHTTPHandler(s.getServer, &mcp.StreamableHTTPOptions{
		Stateless:                    stateless,
		PropagateRequestCancellation: stateless,
	})))
}

// SSE serves s over the legacy HTTP+SSE transport at the root of a new
// httptest server and closes it when t ends. A Streamable HTTP client posting
// to its URL gets 400 Bad Request.
func (s *Server) SSE(t testing.TB) *httptest.Server {
	t.Helper()
	return Serve(t, s.faults(mcp.NewSSEHandler(s.getServer, nil)))
}

// SSEOnly serves s as an old SSE-only deployment would, for Streamable→SSE
// fallback tests, and closes it when t ends:
//
//   - URL+"/mcp" answers 404 Not Found to every request;
//   - URL+"/sse" serves HTTP+SSE (Streamable POSTs get 400);
//   - URL itself serves HTTP+SSE, but answers a POST without a sessionid
//     query (a Streamable HTTP request) with 405 Method Not Allowed.
func (s *Server) SSEOnly(t testing.TB) *httptest.Server {
	t.Helper()
	sse := mcp.NewSSEHandler(s.getServer, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.NotFoundHandler())
	mux.Handle("/sse", sse)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		if r.Method == http.MethodPost && r.URL.Query().Get("sessionid") == "" {
			w.Header().Set("Allow", "GET")
			http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
			return
		}
		sse.ServeHTTP(w, r)
	})
	return Serve(t, s.faults(mux))
}
