package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tokenServers serves a catalog per bearer token: the server of user u
// lists "whoami", which answers the Authorization header of the call's own
// HTTP request, and "only_u". Lists are cacheable for a minute, so that a
// second listing of a user comes from the adapter's cache.
type tokenServers struct {
	mu      sync.Mutex
	servers map[string]*mcp.Server
	lists   map[string]int    // tools/list requests per user
	posted  map[string]string // SSE: the Authorization of the last POST per session user
	owners  map[string]string // SSE: the user of each session id, from its GET's token
	held    string            // the user whose whoami waits for gate (holding)
	gate    chan struct{}
	entered chan struct{}
	calls   atomic.Int64
}

// holding makes the next whoami of user wait until release; entered
// receives when it has started.
func (ts *tokenServers) holding(user string) (entered <-chan struct{}, release func()) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.held, ts.gate, ts.entered = user, make(chan struct{}), make(chan struct{}, 1)
	gate := ts.gate
	return ts.entered, func() {
		ts.mu.Lock()
		ts.held = ""
		ts.mu.Unlock()
		close(gate)
	}
}

func newTokenServers() *tokenServers {
	return &tokenServers{servers: map[string]*mcp.Server{}, lists: map[string]int{}, posted: map[string]string{}, owners: map[string]string{}}
}

// user returns the user a request's token names ("" for none).
func userOf(h http.Header) string {
	tok, _ := strings.CutPrefix(h.Get("Authorization"), "Bearer tok-")
	return tok
}

func (ts *tokenServers) server(r *http.Request) *mcp.Server {
	user := userOf(r.Header)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if s := ts.servers[user]; s != nil {
		return s
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "tokens", Version: "1"}, &mcp.ServerOptions{
		Instructions: "for " + user,
		SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) { c.TTLMs = 60000 },
	})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				ts.mu.Lock()
				ts.lists[user]++
				ts.mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	object := &jsonschema.Schema{Type: "object"}
	s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ts.calls.Add(1)
		ts.mu.Lock()
		held, gate, entered := ts.held == user, ts.gate, ts.entered
		ts.mu.Unlock()
		if held {
			entered <- struct{}{}
			<-gate
		}
		var saw string
		if req.Extra != nil {
			saw = req.Extra.Header.Get("Authorization")
		} else { // SSE: the header of the last POST to the user's session
			ts.mu.Lock()
			saw = ts.posted[user]
			ts.mu.Unlock()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: saw}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "only_" + user, InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	ts.servers[user] = s
	return s
}

func (ts *tokenServers) listsOf(user string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.lists[user]
}

// handler serves ts over transport: "modern" (stateless Streamable HTTP),
// "legacy" (stateful Streamable HTTP) or "sse".
func (ts *tokenServers) handler(transport string) http.Handler {
	if transport == "sse" {
		// The SSE handler gives tools no request header: record the one
		// of each message POST by session.
		sse := mcp.NewSSEHandler(ts.server, nil)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if id := r.URL.Query().Get("sessionid"); id != "" {
				ts.mu.Lock()
				ts.posted[ts.owners[id]] = r.Header.Get("Authorization")
				ts.mu.Unlock()
			} else if r.Method == http.MethodGet {
				w = &endpointWriter{ResponseWriter: w, found: func(id string) {
					ts.mu.Lock()
					ts.owners[id] = userOf(r.Header)
					ts.mu.Unlock()
				}}
			}
			sse.ServeHTTP(w, r)
		})
	}
	return mcp.NewStreamableHTTPHandler(ts.server, &mcp.StreamableHTTPOptions{Stateless: transport == "modern"})
}

// An endpointWriter passes on an SSE stream and reports the session id of
// its endpoint event.
type endpointWriter struct {
	http.ResponseWriter
	found func(id string)
	done  bool
}

func (w *endpointWriter) Write(b []byte) (int, error) {
	if _, rest, ok := strings.Cut(string(b), "sessionid="); ok && !w.done {
		w.done = true
		id, _, _ := strings.Cut(rest, "\n")
		w.found(strings.TrimSpace(id))
	}
	return w.ResponseWriter.Write(b)
}

func (w *endpointWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// bearer is a Server.HeadersFor giving each principal its own token.
func bearer(_ context.Context, principal string) (map[string]string, error) {
	return map[string]string{"Authorization": "Bearer tok-" + principal}, nil
}

// principalTransports are the transports that carry headers, in each era.
var principalTransports = []struct {
	name string
	mode Mode
}{
	{"modern", ModeModern},
	{"legacy", ModeLegacy},
	{"sse", ModeLegacy},
}

// whoami calls the "users__whoami" tool of ts under ctx.
func whoami(ctx context.Context, t *testing.T, ts Toolset) (string, error) {
	t.Helper()
	tool := ts.Lookup("users__whoami")
	if tool == nil {
		t.Fatalf("no users__whoami in %v", toolNames(ts))
	}
	res, err := tool.Invoke(ctx, nil)
	if err != nil {
		return "", err
	}
	return res.Text(), nil
}

// TestPrincipalTokens: two users, two tokens, one Adapter, discovery and
// calls interleaved on goroutines. Every request of a user carries that
// user's token, each user gets their own catalog (served from the cache
// after the first listing, never the other's), and the shared server has
// one connection for both.
func TestPrincipalTokens(t *testing.T) {
	for _, tr := range principalTransports {
		t.Run(tr.name, func(t *testing.T) {
			ts := newTokenServers()
			srv := testserver.Serve(t, ts.handler(tr.name))
			shared := testserver.New(testserver.Options{}).AddWeather()
			a := newAdapter(t, Config{Servers: map[string]Server{
				"users":  {URL: srv.URL, Mode: tr.mode, HeadersFor: bearer},
				"shared": memServer(shared, ModeAuto),
			}})
			users := []string{"alice", "bob"}
			const rounds = 5
			var wg sync.WaitGroup
			errs := make(chan error, len(users)*rounds)
			for _, user := range users {
				wg.Go(func() {
					ctx := WithPrincipal(t.Context(), user)
					for range rounds {
						tools, err := a.ListTools(ctx)
						if err != nil {
							errs <- err
							return
						}
						want := []string{"shared__get_weather", "users__only_" + user, "users__whoami"}
						if got := toolNames(tools); !slices.Equal(got, want) {
							errs <- fmt.Errorf("%s: tools %v, want %v", user, got, want)
							return
						}
						got, err := whoami(ctx, t, tools)
						if err != nil {
							errs <- err
							return
						}
						if got != "Bearer tok-"+user {
							errs <- fmt.Errorf("%s: the server saw %q", user, got)
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			for _, user := range users {
				if n := ts.listsOf(user); n != 1 {
					t.Errorf("%s: %d tools/list, want 1 (the rest from the cache)", user, n)
				}
			}
			if n := ts.listsOf(""); n != 0 {
				t.Errorf("%d tools/list without a token", n)
			}
			if got := shared.Dials(); got != 1 {
				t.Errorf("shared server dialed %d times, want 1", got)
			}
			st := a.Status()
			if s := st.Servers["users"]; s.State != ServerConnected || s.Principals != 2 || s.Era != Era(tr.mode) {
				t.Errorf("Status users = %+v, want connected, %s, 2 principals", s, tr.mode)
			}
			if s := st.Servers["shared"]; s.State != ServerConnected || s.Principals != 0 {
				t.Errorf("Status shared = %+v, want connected, 0 principals", s)
			}
		})
	}
}

// TestPrincipalRefusals: a discovery without a principal lists the shared
// servers and leaves the per-principal one out (a debug record says so,
// and the server is not contacted); naming the per-principal server
// without a principal is errNoPrincipal; and a tool of one principal
// refuses to run for another or for none.
func TestPrincipalRefusals(t *testing.T) {
	ts := newTokenServers()
	srv := testserver.Serve(t, ts.handler("modern"))
	shared := testserver.New(testserver.Options{}).AddWeather()
	var logs syncBuffer
	a := newAdapter(t, Config{
		Servers: map[string]Server{
			"users":  {URL: srv.URL, HeadersFor: bearer},
			"shared": memServer(shared, ModeAuto),
		},
		Logger: logsTo(&logs),
	})
	tools, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatalf("ListTools without a principal: %v, want the shared server's tools", err)
	}
	if got := toolNames(tools); !slices.Equal(got, []string{"shared__get_weather"}) {
		t.Errorf("tools without a principal = %v, want the shared server's", got)
	}
	if sets, err := a.ListToolsets(t.Context()); err != nil || len(sets) != 1 || sets["shared"] == nil {
		t.Errorf("ListToolsets without a principal = %v, %v, want the shared server's set alone", sets, err)
	}
	if !strings.Contains(logs.String(), "per-principal server left out") || !strings.Contains(logs.String(), "server=users") {
		t.Errorf("log = %s\nwant a debug record naming the server left out", logs.String())
	}
	var se *ServerError
	for _, names := range [][]string{{"users"}, {"shared", "users"}} {
		if _, err := a.ListTools(t.Context(), FromServers(names...)); !errors.Is(err, errNoPrincipal) || !errors.As(err, &se) || se.Server != "users" {
			t.Errorf("ListTools(FromServers(%q)) without a principal: %v, want errNoPrincipal of server users", names, err)
		}
	}
	if _, err := a.Session(t.Context(), "users"); !errors.Is(err, errNoPrincipal) {
		t.Errorf("Session without a principal: %v, want errNoPrincipal", err)
	}
	if n := len(ts.servers); n != 0 {
		t.Errorf("the per-principal server was reached %d times without a principal", n)
	}

	alice := WithPrincipal(t.Context(), "alice")
	tools, err = a.ListTools(alice)
	if err != nil {
		t.Fatal(err)
	}
	for name, ctx := range map[string]context.Context{"bob": WithPrincipal(t.Context(), "bob"), "none": t.Context()} {
		if _, err := whoami(ctx, t, tools); !errors.Is(err, ErrWrongPrincipal) || !errors.As(err, &se) || se.Server != "users" {
			t.Errorf("alice's tool called for %s: %v, want ErrWrongPrincipal of server users", name, err)
		}
		if _, err := tools.Lookup("shared__get_weather").Invoke(ctx, map[string]any{"city": "Paris"}); err != nil {
			t.Errorf("shared tool called for %s: %v", name, err)
		}
	}
	if n := ts.calls.Load(); n != 0 {
		t.Errorf("the server got %d calls, want none", n)
	}
	if got, err := whoami(alice, t, tools); err != nil || got != "Bearer tok-alice" {
		t.Errorf("alice's tool for alice = %q, %v", got, err)
	}
}

// TestPrincipalHeadersForError: an error of HeadersFor fails the request,
// and the server is never contacted without the token.
func TestPrincipalHeadersForError(t *testing.T) {
	ts := newTokenServers()
	srv := testserver.Serve(t, ts.handler("modern"))
	refuse := errors.New("no token for this user")
	a := newAdapter(t, Config{Servers: map[string]Server{"users": {URL: srv.URL, Mode: ModeModern,
		HeadersFor: func(context.Context, string) (map[string]string, error) { return nil, refuse }}}})
	if _, err := a.ListTools(WithPrincipal(t.Context(), "alice")); !errors.Is(err, refuse) {
		t.Fatalf("ListTools: %v, want the HeadersFor error", err)
	}
	if n := len(ts.servers); n != 0 {
		t.Errorf("the server was reached %d times", n)
	}
}

// inProcess is an http.RoundTripper serving requests with a handler in the
// process, without a network, so that HTTP servers run in a synctest
// bubble.
type inProcess struct{ h http.Handler }

func (p inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	pr, pw := io.Pipe()
	w := &pipeResponse{header: http.Header{}, body: pw, ready: make(chan struct{})}
	// As over a network, a request cancelled by the client ends its
	// response's body, and the handler's writes fail.
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(context.Canceled) })
	go func() {
		defer cancel()
		defer stop()
		p.h.ServeHTTP(w, req.WithContext(ctx))
		w.WriteHeader(http.StatusOK)
		pw.Close()
	}()
	select {
	case <-w.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &http.Response{StatusCode: w.code, Header: w.sent, Body: cancelBody{pr, cancel}, Request: req}, nil
}

type pipeResponse struct {
	header, sent http.Header
	body         *io.PipeWriter
	once         sync.Once
	code         int
	ready        chan struct{}
}

func (w *pipeResponse) Header() http.Header { return w.header }
func (w *pipeResponse) Flush()              {}
func (w *pipeResponse) WriteHeader(code int) {
	w.once.Do(func() {
		w.code, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}
func (w *pipeResponse) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

type cancelBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b cancelBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}

// inProcessServer is a per-principal entry for ts served in process.
func inProcessServer(ts *tokenServers) Server {
	return Server{URL: "http://tokens.test/mcp", Mode: ModeModern, HeadersFor: bearer,
		HTTPClient: &http.Client{Transport: inProcess{ts.handler("modern")}}}
}

// TestPrincipalIdleEviction: a per-principal connection unused for
// PrincipalIdleTimeout is closed (its tools fail with ErrClosed, the next
// discovery dials again), one with a call in flight is not, and the
// reaper is gone after Close.
func TestPrincipalIdleEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTokenServers()
		a, err := New(Config{Servers: map[string]Server{"users": inProcessServer(ts)}, PrincipalIdleTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		alice, bob := WithPrincipal(t.Context(), "alice"), WithPrincipal(t.Context(), "bob")
		aliceTools, err := a.ListTools(alice)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Second)
		bobTools, err := a.ListTools(bob)
		if err != nil {
			t.Fatal(err)
		}
		principals := func() int { return a.Status().Servers["users"].Principals }

		time.Sleep(31 * time.Second) // alice idle for 61s, bob for 31s
		synctest.Wait()
		if n := principals(); n != 1 {
			t.Fatalf("%d principals after alice's idle timeout, want 1", n)
		}
		if _, err := whoami(alice, t, aliceTools); !errors.Is(err, ErrClosed) {
			t.Errorf("alice's evicted tool: %v, want ErrClosed", err)
		}

		// Bob's call outlasts the idle timeout: his connection stays.
		entered, release := ts.holding("bob")
		done := make(chan error, 1)
		go func() {
			_, err := whoami(bob, t, bobTools)
			done <- err
		}()
		<-entered
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if n := principals(); n != 1 {
			t.Fatalf("%d principals with bob's call in flight, want 1", n)
		}
		release()
		if err := <-done; err != nil {
			t.Fatalf("bob's long call: %v", err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := principals(); n != 0 {
			t.Fatalf("%d principals a minute after bob's call ended, want 0", n)
		}

		// The next discovery dials again.
		tools, err := a.ListTools(alice)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := whoami(alice, t, tools); err != nil || got != "Bearer tok-alice" {
			t.Fatalf("alice after eviction: %q, %v", got, err)
		}
		if got := a.Status().Servers["users"].DialAttempts; got != 3 {
			t.Errorf("%d dials, want 3", got)
		}
		a.Close()
		synctest.Wait() // every goroutine of the adapter has ended
	})
}

// TestPrincipalCap: past MaxPrincipalConns the least recently used idle
// connection is closed; a busy one never is.
func TestPrincipalCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTokenServers()
		a, err := New(Config{Servers: map[string]Server{"users": inProcessServer(ts)}, MaxPrincipalConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		tools := map[string]Toolset{}
		list := func(user string) {
			t.Helper()
			ts, err := a.ListTools(WithPrincipal(t.Context(), user))
			if err != nil {
				t.Fatal(err)
			}
			tools[user] = ts
			time.Sleep(time.Second) // the next use is later
		}
		call := func(user string) error {
			_, err := whoami(WithPrincipal(t.Context(), user), t, tools[user])
			return err
		}
		list("alice")
		list("bob")
		if err := call("alice"); err != nil { // alice is now more recent than bob
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		list("carol")
		if n := a.Status().Servers["users"].Principals; n != 2 {
			t.Fatalf("%d principals, want 2", n)
		}
		if err := call("bob"); !errors.Is(err, ErrClosed) {
			t.Errorf("bob, least recently used: %v, want ErrClosed", err)
		}
		for _, user := range []string{"alice", "carol"} {
			if err := call(user); err != nil {
				t.Errorf("%s: %v", user, err)
			}
		}

		// Alice's call starts before carol's last use: alice is the least
		// recently used, but busy, so dave evicts carol.
		entered, release := ts.holding("alice")
		done := make(chan error, 1)
		go func() { done <- call("alice") }()
		<-entered
		time.Sleep(time.Second)
		if err := call("carol"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		list("dave")
		release()
		if err := <-done; err != nil {
			t.Errorf("alice's call in flight: %v", err)
		}
		if err := call("carol"); !errors.Is(err, ErrClosed) {
			t.Errorf("carol: %v, want ErrClosed", err)
		}
		if n := a.Status().Servers["users"].Principals; n != 2 {
			t.Errorf("%d principals, want 2", n)
		}
	})
}

// TestPrincipalValidation: per-principal settings are checked by New.
func TestPrincipalValidation(t *testing.T) {
	oauth := func(string) auth.OAuthHandler { return nil }
	for name, cfg := range map[string]Config{
		"HeadersFor on a Command": {Servers: map[string]Server{"x": {Command: "srv", HeadersFor: bearer}}},
		"OAuthFor on a Transport": {Servers: map[string]Server{"x": {Transport: testserver.New(testserver.Options{}).Transport(), OAuthFor: oauth}}},
		"OAuth and OAuthFor":      {Servers: map[string]Server{"x": {URL: "http://h/mcp", OAuth: new(auth.AuthorizationCodeHandler), OAuthFor: oauth}}},
		"negative idle timeout":   {PrincipalIdleTimeout: -1},
		"negative cap":            {MaxPrincipalConns: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
	if _, err := New(Config{Servers: map[string]Server{"x": {URL: "http://h/mcp", HeadersFor: bearer, OAuthFor: oauth}}}); err != nil {
		t.Errorf("HeadersFor with OAuthFor: %v", err)
	}
}

// TestPrincipalOAuthFor: each principal's Streamable HTTP connection
// authorizes with its own OAuth handler, in both eras.
func TestPrincipalOAuthFor(t *testing.T) {
	for _, tr := range principalTransports[:2] { // OAuth is for Streamable HTTP
		t.Run(tr.name, func(t *testing.T) {
			ts := newTokenServers()
			srv := testserver.Serve(t, ts.handler(tr.name))
			a := newAdapter(t, Config{Servers: map[string]Server{"users": {URL: srv.URL, Mode: tr.mode,
				OAuthFor: func(principal string) auth.OAuthHandler { return staticToken("tok-" + principal) }}}})
			for _, user := range []string{"alice", "bob", "alice"} {
				ctx := WithPrincipal(t.Context(), user)
				tools, err := a.ListTools(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := whoami(ctx, t, tools); err != nil || got != "Bearer tok-"+user {
					t.Errorf("%s: the server saw %q, %v", user, got, err)
				}
			}
			if n := a.Status().Servers["users"].DialAttempts; n != 2 {
				t.Errorf("%d dials, want one per principal", n)
			}
		})
	}
}

// TestPrincipalInMiddleware: middleware sees whom a call acts for; a shared
// server's calls act for no one.
func TestPrincipalInMiddleware(t *testing.T) {
	ts := newTokenServers()
	srv := testserver.Serve(t, ts.handler("modern"))
	shared := testserver.New(testserver.Options{}).AddWeather()
	var seen []string
	a := newAdapter(t, Config{
		Servers: map[string]Server{"users": {URL: srv.URL, HeadersFor: bearer}, "shared": memServer(shared, ModeAuto)},
		Middleware: []Middleware{func(next CallHandler) CallHandler {
			return func(ctx context.Context, req *CallRequest) (*Result, error) {
				seen = append(seen, req.Server+":"+req.Principal)
				return next(ctx, req)
			}
		}},
	})
	ctx := WithPrincipal(t.Context(), "alice")
	tools, err := a.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := whoami(ctx, t, tools); err != nil {
		t.Fatal(err)
	}
	if _, err := tools.Lookup("shared__get_weather").Invoke(ctx, map[string]any{"city": "Paris"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"users:alice", "shared:"}; !slices.Equal(seen, want) {
		t.Errorf("middleware saw %v, want %v", seen, want)
	}
}

// TestPrincipalListChanged: a list_changed on one principal's session drops
// that principal's cached catalog alone, and reaches OnListChanged with
// that principal.
func TestPrincipalListChanged(t *testing.T) {
	ts := newTokenServers()
	srv := testserver.Serve(t, ts.handler("legacy")) // stateful: the server can notify
	changed := make(chan string, 1)
	a := newAdapter(t, Config{
		Servers:       map[string]Server{"users": {URL: srv.URL, Mode: ModeLegacy, HeadersFor: bearer}},
		OnListChanged: func(c ListChange) { changed <- c.Server + ":" + c.Principal },
	})
	alice, bob := WithPrincipal(t.Context(), "alice"), WithPrincipal(t.Context(), "bob")
	for _, ctx := range []context.Context{alice, bob} {
		if _, err := a.ListTools(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ts.mu.Lock()
	aliceServer := ts.servers["alice"]
	ts.mu.Unlock()
	aliceServer.AddTool(&mcp.Tool{Name: "added", InputSchema: &jsonschema.Schema{Type: "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	if got := <-changed; got != "users:alice" {
		t.Errorf("OnListChanged for %s, want users:alice (the principal of the connection it came on)", got)
	}
	tools, err := a.ListTools(alice)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(tools); !slices.Contains(got, "users__added") {
		t.Errorf("alice after list_changed: %v, want users__added", got)
	}
	tools, err = a.ListTools(bob)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(tools); slices.Contains(got, "users__added") {
		t.Errorf("bob: %v", got)
	}
	if a, b := ts.listsOf("alice"), ts.listsOf("bob"); a != 2 || b != 1 {
		t.Errorf("tools/list: alice %d, bob %d; want 2 and 1 (bob's from the cache)", a, b)
	}
}
