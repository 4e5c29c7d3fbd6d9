package mcpadapter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A headerLog records the header of every HTTP request that posts a
// tools/call to the handler it wraps.
type headerLog struct {
	mu    sync.Mutex
	calls []http.Header
}

func (l *headerLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				l.mu.Lock()
				l.calls = append(l.calls, r.Header.Clone())
				l.mu.Unlock()
			}
		}
		h.ServeHTTP(w, r)
	})
}

// last returns the header of the last tools/call, or nil.
func (l *headerLog) last() http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.calls) == 0 {
		return nil
	}
	return l.calls[len(l.calls)-1]
}

// tagHeaders is a middleware that gives a call whose text starts with
// "tag" the headers X-Call (the text) and X-Over.
func tagHeaders(next CallHandler) CallHandler {
	return func(ctx context.Context, req *CallRequest) (*Result, error) {
		if text, _ := req.Args["text"].(string); strings.HasPrefix(text, "tag") {
			req.Headers = map[string]string{"X-Call": text, "X-Over": "call"}
		}
		return next(ctx, req)
	}
}

// TestCallHeaders: a middleware's CallRequest.Headers reach the HTTP
// requests of that call alone, over Server.Headers, on Streamable HTTP
// (both eras) and SSE servers, shared or per-principal.
func TestCallHeaders(t *testing.T) {
	serve := map[string]func(t *testing.T, s *testserver.Server, log *headerLog) Server{
		"modern": func(t *testing.T, s *testserver.Server, log *headerLog) Server {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, &mcp.StreamableHTTPOptions{Stateless: true})
			return Server{URL: testserver.Serve(t, log.wrap(h)).URL}
		},
		"legacy": func(t *testing.T, s *testserver.Server, log *headerLog) Server {
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, nil)
			return Server{URL: testserver.Serve(t, log.wrap(h)).URL}
		},
		"sse": func(t *testing.T, s *testserver.Server, log *headerLog) Server {
			h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s.Server }, nil)
			return Server{URL: testserver.Serve(t, log.wrap(h)).URL, Mode: ModeLegacy}
		},
	}
	for _, name := range []string{"modern", "legacy", "sse"} {
		for _, perPrincipal := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "/shared", true: "/per-principal"}[perPrincipal], func(t *testing.T) {
				s := testserver.Full(testserver.Options{Legacy: name != "modern"})
				var log headerLog
				srv := serve[name](t, s, &log)
				srv.Headers = map[string]string{"X-Tenant": "base", "X-Over": "base"}
				ctx := t.Context()
				if perPrincipal {
					srv.HeadersFor = func(_ context.Context, p string) (map[string]string, error) {
						return map[string]string{"Authorization": "Bearer " + p}, nil
					}
					ctx = WithPrincipal(ctx, "alice")
				}
				a := newAdapter(t, Config{Servers: map[string]Server{"h": srv}, Middleware: []Middleware{tagHeaders}})
				ts, err := a.ListTools(ctx)
				if err != nil {
					t.Fatal(err)
				}
				echo := ts.Lookup("h__echo")
				if _, err := echo.Invoke(ctx, map[string]any{"text": "tag-1"}); err != nil {
					t.Fatal(err)
				}
				h := log.last()
				if h.Get("X-Call") != "tag-1" || h.Get("X-Over") != "call" || h.Get("X-Tenant") != "base" {
					t.Errorf("the call's headers: %v; want X-Call tag-1, X-Over call, X-Tenant base", h)
				}
				if perPrincipal && h.Get("Authorization") != "Bearer alice" {
					t.Errorf("the call's Authorization = %q, want HeadersFor's", h.Get("Authorization"))
				}
				if _, err := echo.Invoke(ctx, map[string]any{"text": "plain"}); err != nil {
					t.Fatal(err)
				}
				if h := log.last(); h.Get("X-Call") != "" || h.Get("X-Over") != "base" {
					t.Errorf("the next call's headers: %v; want no X-Call and X-Over base", h)
				}
			})
		}
	}
}

// TestCallHeadersRefused: headers for a stdio or in-memory server's call,
// or a header of the transport's own, fail the call with errCallHeaders,
// and nothing is sent.
func TestCallHeadersRefused(t *testing.T) {
	mem := testserver.Full(testserver.Options{})
	httpSrv := testserver.Full(testserver.Options{})
	session := func(next CallHandler) CallHandler {
		return func(ctx context.Context, req *CallRequest) (*Result, error) {
			if req.Server == "web" {
				req.Headers = map[string]string{"mcp-session-id": "forged"}
			}
			return next(ctx, req)
		}
	}
	a := newAdapter(t, Config{
		Servers: map[string]Server{
			"stdio": stdioServer(t, "modern"),
			"mem":   memServer(mem, ModeAuto),
			"web":   {URL: httpSrv.StreamableHTTP(t, true).URL},
		},
		Middleware: []Middleware{tagHeaders, session},
	})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stdio__echo", "mem__echo", "web__echo"} {
		_, err := ts.Lookup(name).Invoke(t.Context(), map[string]any{"text": "tag"})
		var se *ServerError
		if !errors.Is(err, errCallHeaders) || !errors.As(err, &se) {
			t.Errorf("%s with headers: error = %v, want a *ServerError wrapping errCallHeaders", name, err)
		}
	}
	if mem.Runs("echo") != 0 || httpSrv.Runs("echo") != 0 {
		t.Errorf("echo ran %d (mem) and %d (web) times, want 0", mem.Runs("echo"), httpSrv.Runs("echo"))
	}
}

// TestCallHeadersStayOnOrigin: a server that redirects a call to another
// origin: the call's headers (and the server's) do not go there.
func TestCallHeadersStayOnOrigin(t *testing.T) {
	var elsewhere headerLog
	other := testserver.Serve(t, elsewhere.wrap(http.NotFoundHandler()))
	s := testserver.Full(testserver.Options{})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, &mcp.StreamableHTTPOptions{Stateless: true})
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			http.Redirect(w, r, other.URL, http.StatusTemporaryRedirect)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
	srv := Server{URL: testserver.Serve(t, redirect).URL, Headers: map[string]string{"X-Tenant": "base"}}
	a := newAdapter(t, Config{Servers: map[string]Server{"h": srv}, Middleware: []Middleware{tagHeaders}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ts.Lookup("h__echo").Invoke(t.Context(), map[string]any{"text": "tag-1"}) // fails: the other origin has no server
	got := elsewhere.last()
	if got == nil {
		t.Fatal("the redirect was not followed")
	}
	if got.Get("X-Call") != "" || got.Get("X-Over") != "" || got.Get("X-Tenant") != "" {
		t.Errorf("the other origin got %v; want none of the call's or the server's headers", got)
	}
}
