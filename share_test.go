package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// sharedTokenServer serves ts statelessly (the modern era) and records
// the requests that came without a token.
func sharedTokenServer(t *testing.T, ts *tokenServers) (url string, anonymous func() int) {
	var mu sync.Mutex
	n := 0
	h := ts.handler("modern")
	srv := testserver.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if userOf(r.Header) == "" {
			mu.Lock()
			n++
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	return srv.URL, func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// ownCatalogAndToken lists the tools of a tokenServers server "users"
// for user under ctx, and calls whoami: the catalog must be user's own,
// and the server must see user's token.
func ownCatalogAndToken(ctx context.Context, a *Adapter, user string) error {
	tools, err := a.ListTools(ctx)
	if err != nil {
		return err
	}
	if got, want := toolNames(tools), []string{"users__only_" + user, "users__whoami"}; !slices.Equal(got, want) {
		return fmt.Errorf("%s: tools %v, want %v", user, got, want)
	}
	tool := tools.Lookup("users__whoami")
	res, err := tool.Invoke(ctx, nil)
	if err == nil && res.Text() != "Bearer tok-"+user {
		err = fmt.Errorf("%s: the server saw %q", user, res.Text())
	}
	return err
}

// principalTool discovers the tools of user on a and returns the one named
// name.
func principalTool(t *testing.T, a *Adapter, user, name string) *Tool {
	t.Helper()
	tools, err := a.ListTools(WithPrincipal(t.Context(), user))
	if err != nil {
		t.Fatal(err)
	}
	tool := tools.Lookup(name)
	if tool == nil {
		t.Fatalf("%s: no %s in %v", user, name, toolNames(tools))
	}
	return tool
}

// TestSharedSessionTokens: with ShareStatelessSessions, the principals of
// a stateless server share one session, dialed once: every request
// carries its principal's token (HeadersFor or OAuthFor), each principal
// gets its own catalog (listed once, then from the cache), and Status
// counts the principals and says the server shares.
func TestSharedSessionTokens(t *testing.T) {
	for _, creds := range []string{"HeadersFor", "OAuthFor"} {
		t.Run(creds, func(t *testing.T) {
			ts := newTokenServers()
			url, anonymous := sharedTokenServer(t, ts)
			s := Server{URL: url, Mode: ModeModern}
			if creds == "HeadersFor" {
				s.HeadersFor = bearer
			} else {
				s.OAuthFor = func(principal string) auth.OAuthHandler { return staticToken("tok-" + principal) }
			}
			a := newAdapter(t, Config{Servers: map[string]Server{"users": s}, ShareStatelessSessions: true})
			users := []string{"alice", "bob", "carol"}
			const rounds = 3
			var wg sync.WaitGroup
			for _, user := range users {
				wg.Go(func() {
					for range rounds {
						if err := ownCatalogAndToken(WithPrincipal(t.Context(), user), a, user); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			for _, user := range users {
				if n := ts.listsOf(user); n != 1 {
					t.Errorf("%s: %d tools/list, want 1 (the rest from the cache)", user, n)
				}
			}
			if n := anonymous(); n != 0 {
				t.Errorf("%d requests without a token", n)
			}
			st := a.Status().Servers["users"]
			if st.DialAttempts != 1 || !st.Shared || st.Principals != len(users) || st.State != ServerConnected || st.Era != EraModern {
				t.Errorf("Status = %+v, want 1 dial, shared, %d principals, connected, modern", st, len(users))
			}
		})
	}
}

// TestSharedSessionIsolation: two principals call at once on one shared
// session (both calls in flight together): each server handler sees its
// own principal's credentials, and each principal gets its own progress,
// never the other's.
func TestSharedSessionIsolation(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "work", Version: "1"}, nil)
	entered, release := make(chan string, 2), make(chan struct{})
	s.AddTool(&mcp.Tool{Name: "work", InputSchema: &jsonschema.Schema{Type: "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		user := userOf(req.Extra.Header)
		if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1, Message: "for " + user}); err != nil {
			return nil, err
		}
		entered <- user
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: user}}}, nil
	})
	srv := testserver.Serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	a, err := New(Config{Servers: map[string]Server{"w": {URL: srv.URL, Mode: ModeModern, HeadersFor: bearer}}, ShareStatelessSessions: true})
	if err != nil {
		t.Fatal(err)
	}
	users := []string{"alice", "bob"}
	var mu sync.Mutex
	progress := map[string][]string{}
	got := map[string]chan struct{}{"alice": make(chan struct{}, 1), "bob": make(chan struct{}, 1)}
	results := make(chan error, len(users))
	for _, user := range users {
		ctx := WithProgress(WithPrincipal(t.Context(), user), func(p Progress) {
			mu.Lock()
			progress[user] = append(progress[user], p.Message)
			mu.Unlock()
			got[user] <- struct{}{}
		})
		tools, err := a.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			res, err := tools.Lookup("w__work").Invoke(ctx, nil)
			if err == nil && res.Text() != user {
				err = fmt.Errorf("%s: the server saw %q", user, res.Text())
			}
			results <- err
		}()
	}
	seen := []string{<-entered, <-entered} // both calls are in flight
	slices.Sort(seen)
	if !slices.Equal(seen, users) {
		t.Errorf("the handlers saw %v, want %v", seen, users)
	}
	close(release)
	for range users {
		if err := <-results; err != nil {
			t.Error(err)
		}
	}
	for _, user := range users {
		<-got[user]
	}
	if st := a.Status().Servers["w"]; st.DialAttempts != 1 || !st.Shared {
		t.Errorf("Status = %+v, want one shared session", st)
	}
	a.Close() // every delivery is done
	for _, user := range users {
		if want := []string{"for " + user}; !slices.Equal(progress[user], want) {
			t.Errorf("%s's progress: %q, want %q", user, progress[user], want)
		}
	}
}

// TestSharedSessionStateful: ShareStatelessSessions shares only stateless
// sessions. A stateful server (the legacy era over Streamable HTTP, in
// ModeAuto) and a server in ModeLegacy still get a session per principal;
// a ModeAuto server that the first principal's dial finds stateless is
// shared from the next principal on, dialed once for all of them.
func TestSharedSessionStateful(t *testing.T) {
	for _, tt := range []struct {
		name      string
		transport string
		mode      Mode
		dials     int64
		shared    bool
	}{
		{"stateful auto", "legacy", ModeAuto, 3, false},
		{"stateless legacy", "modern", ModeLegacy, 3, false},
		{"stateless auto", "modern", ModeAuto, 2, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTokenServers()
			srv := testserver.Serve(t, ts.handler(tt.transport))
			a := newAdapter(t, Config{Servers: map[string]Server{"users": {URL: srv.URL, Mode: tt.mode, HeadersFor: bearer}}, ShareStatelessSessions: true})
			users := []string{"alice", "bob", "carol"}
			for _, user := range users {
				ctx := WithPrincipal(t.Context(), user)
				tools, err := a.ListTools(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := whoami(ctx, t, tools); err != nil || got != "Bearer tok-"+user {
					t.Errorf("%s: the server saw %q, %v", user, got, err)
				}
			}
			st := a.Status().Servers["users"]
			if st.DialAttempts != tt.dials || st.Shared != tt.shared || st.Principals != len(users) {
				t.Errorf("Status = %+v, want %d dials, shared %v, %d principals", st, tt.dials, tt.shared, len(users))
			}
		})
	}
}

// TestSharedSessionBounds: MaxPrincipalConns and PrincipalIdleTimeout
// bound the principals of a shared session as they bound sessions: the
// least recently used idle principal is evicted past the cap (its tools
// fail with ErrClosed) and an idle one after the timeout; an evicted
// principal's next discovery joins the shared session again, without a
// dial, and the session stays until Close.
func TestSharedSessionBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTokenServers()
		a, err := New(Config{Servers: map[string]Server{"users": inProcessServer(ts)}, ShareStatelessSessions: true,
			MaxPrincipalConns: 2, PrincipalIdleTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		held := map[string]*Tool{} // each user's whoami, of their last discovery
		list := func(user string) {
			held[user] = principalTool(t, a, user, "users__whoami")
			time.Sleep(time.Second) // the next use is later
		}
		call := func(user string) error {
			res, err := held[user].Invoke(WithPrincipal(t.Context(), user), nil)
			if err == nil && res.Text() != "Bearer tok-"+user {
				err = fmt.Errorf("%s: the server saw %q", user, res.Text())
			}
			time.Sleep(time.Second)
			return err
		}
		status := func() ServerStatus { return a.Status().Servers["users"] }
		list("alice")
		list("bob")
		list("carol")
		if st := status(); st.Principals != 2 || st.DialAttempts != 1 || !st.Shared {
			t.Fatalf("Status = %+v, want 2 principals on one shared session", st)
		}
		if err := call("alice"); !errors.Is(err, ErrClosed) {
			t.Errorf("alice, least recently used: %v, want ErrClosed", err)
		}
		for _, user := range []string{"bob", "carol"} {
			if err := call(user); err != nil {
				t.Error(err)
			}
		}
		list("alice") // joins again, evicting bob
		if err := call("alice"); err != nil {
			t.Error(err)
		}
		if err := call("bob"); !errors.Is(err, ErrClosed) {
			t.Errorf("bob: %v, want ErrClosed", err)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if st := status(); st.Principals != 0 || st.DialAttempts != 1 || !st.Shared {
			t.Errorf("Status after the idle timeout = %+v, want no principal, one dial, the session kept", st)
		}
		list("bob")
		if err := call("bob"); err != nil {
			t.Error(err)
		}
		if st := status(); st.Principals != 1 || st.DialAttempts != 1 {
			t.Errorf("Status = %+v, want 1 principal and still one dial", st)
		}
		a.Close()
		synctest.Wait() // every goroutine of the adapter has ended
	})
}

// TestSharedSessionMix: 200 goroutines of 50 principals list and call on
// one shared session while the cap evicts principals and the Adapter is
// closed once midway (run it with -race). A call fails only with ErrClosed
// (evicted, or closed), and the goroutine then discovers again.
func TestSharedSessionMix(t *testing.T) {
	srv := testserver.Lean(testserver.Options{}).StreamableHTTP(t, true)
	a := newAdapter(t, Config{Servers: map[string]Server{"s": {URL: srv.URL, Mode: ModeModern, HeadersFor: bearer}},
		ShareStatelessSessions: true, MaxPrincipalConns: 20})
	const goroutines, principals, rounds = 200, 50, 5
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	halfway := make(chan struct{}, goroutines)
	wg.Go(func() {
		for range goroutines / 2 {
			<-halfway
		}
		a.Close()
	})
	for i := range goroutines {
		wg.Go(func() {
			ctx := WithPrincipal(t.Context(), fmt.Sprintf("p%d", i%principals))
			for r := range rounds {
				if r == rounds/2 {
					halfway <- struct{}{}
				}
				tools, err := a.ListTools(ctx)
				if errors.Is(err, ErrClosed) {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				res, err := tools.Lookup("s__echo").Invoke(ctx, echoArgs)
				switch {
				case errors.Is(err, ErrClosed):
				case err != nil:
					errs <- err
					return
				case res.Text() != echoText:
					errs <- fmt.Errorf("echo = %q", res.Text())
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Busy principals pass the cap; the next admission restores it.
	if _, err := a.ListTools(WithPrincipal(t.Context(), "late")); err != nil {
		t.Fatal(err)
	}
	if st := a.Status().Servers["s"]; st.Principals > 20 || !st.Shared {
		t.Errorf("Status = %+v, want at most 20 principals (the cap), shared", st)
	}
}

// TestSharedSessionDescriptors: the principals of a shared session whose
// catalogs hold the same tool keep its descriptor once (the same decoded
// schema), each with a wrapper of its own bound to its own conn; a tool
// listed for one principal alone stays that principal's.
func TestSharedSessionDescriptors(t *testing.T) {
	ts := newTokenServers()
	url, _ := sharedTokenServer(t, ts)
	a := newAdapter(t, Config{Servers: map[string]Server{"users": {URL: url, Mode: ModeModern, HeadersFor: bearer}}, ShareStatelessSessions: true})
	alice, bob := principalTool(t, a, "alice", "users__whoami"), principalTool(t, a, "bob", "users__whoami")
	if alice == bob || alice.conn == bob.conn {
		t.Fatal("alice and bob share a wrapper or a conn")
	}
	same := func(x, y map[string]any) bool { return fmt.Sprintf("%p", x) == fmt.Sprintf("%p", y) }
	if !same(alice.Descriptor().InputSchema, bob.Descriptor().InputSchema) {
		t.Error("the same descriptor listed for alice and bob is held twice")
	}
	if got, err := whoami(WithPrincipal(t.Context(), "bob"), t, Toolset{bob}); err != nil || got != "Bearer tok-bob" {
		t.Errorf("bob's call: %q, %v", got, err)
	}
	if own := principalTool(t, a, "bob", "users__only_bob"); own.conn != bob.conn {
		t.Error("bob's own tool is not on bob's conn")
	}
}

// TestSharedSessionNotHandedOut: Adapter.Session refuses the shared
// session of a principal (its requests would carry no credentials), and
// ServerInfo still answers.
func TestSharedSessionNotHandedOut(t *testing.T) {
	ts := newTokenServers()
	url, _ := sharedTokenServer(t, ts)
	a := newAdapter(t, Config{Servers: map[string]Server{"users": {URL: url, Mode: ModeModern, HeadersFor: bearer}}, ShareStatelessSessions: true})
	ctx := WithPrincipal(t.Context(), "alice")
	if _, err := a.Session(ctx, "users"); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Session of a shared session: %v, want ErrNotSupported", err)
	}
	if info, err := a.ServerInfo(ctx, "users"); err != nil || info.Era != EraModern {
		t.Errorf("ServerInfo = %+v, %v", info, err)
	}
}

// TestSharedSessionSubscribe: a resource subscription, whose stream would
// carry no principal's credentials, is refused on a shared session;
// reading a resource goes on with the principal's.
func TestSharedSessionSubscribe(t *testing.T) {
	s := testserver.New(testserver.Options{}).AddResources()
	url := s.StreamableHTTP(t, true).URL
	a := newAdapter(t, Config{Servers: map[string]Server{"s": {URL: url, Mode: ModeModern, HeadersFor: bearer}}, ShareStatelessSessions: true})
	ctx := WithPrincipal(t.Context(), "alice")
	uri := testserver.ResourceURIs()[0]
	if err := a.SubscribeResource(ctx, "s", uri); !errors.Is(err, ErrNotSupported) {
		t.Errorf("SubscribeResource on a shared session: %v, want ErrNotSupported", err)
	}
	if n := s.Count(testserver.ResourceListen); n != 0 {
		t.Errorf("the server got %d resource subscriptions", n)
	}
	if _, err := a.ReadResource(ctx, "s", uri); err != nil {
		t.Errorf("ReadResource: %v", err)
	}
}

// TestSharedSessionMetrics: the meter counts the principals of a shared
// session as principals and the session as one connection, dialed once;
// Close uncounts them all.
func TestSharedSessionMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	ts := newTokenServers()
	url, _ := sharedTokenServer(t, ts)
	a := newAdapter(t, Config{Servers: map[string]Server{"users": {URL: url, Mode: ModeModern, HeadersFor: bearer}},
		ShareStatelessSessions: true, MeterProvider: mp})
	for _, user := range []string{"alice", "bob", "carol"} {
		if err := ownCatalogAndToken(WithPrincipal(t.Context(), user), a, user); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]float64{
		"mcpadapter.tool.call.duration{gen_ai.tool.name=users__whoami,mcpadapter.server=users}": 3,
		"mcpadapter.dials{mcpadapter.server=users}":                                             1,
		"mcpadapter.connections{mcpadapter.server=users}":                                       1,
		"mcpadapter.principal.connections{mcpadapter.server=users}":                             3,
	}
	if got := collect(t, reader); !maps.Equal(got, want) {
		t.Errorf("metrics:\n%s\nwant:\n%s", show(got), show(want))
	}
	a.Close()
	got := collect(t, reader)
	for _, k := range []string{"mcpadapter.connections{mcpadapter.server=users}", "mcpadapter.principal.connections{mcpadapter.server=users}"} {
		if got[k] != 0 {
			t.Errorf("after Close %s = %v, want 0", k, got[k])
		}
	}
}

// TestSharedSessionRefusalFailsOnePrincipal: on a shared session, one
// principal's requests answered 401 (an auth proxy's text body, no
// JSON-RPC error) fail with that status and the server's name, and
// nothing of another principal's credentials; the session lives on for
// the principals on it and for those joining after.
func TestSharedSessionRefusalFailsOnePrincipal(t *testing.T) {
	ts := newTokenServers()
	h := ts.handler("modern")
	srv := testserver.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if userOf(r.Header) == "mallory" {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	a := newAdapter(t, Config{Servers: map[string]Server{"users": {URL: srv.URL, Mode: ModeModern, HeadersFor: bearer}}, ShareStatelessSessions: true})
	alice := WithPrincipal(t.Context(), "alice")
	if err := ownCatalogAndToken(alice, a, "alice"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		_, err := a.ListTools(WithPrincipal(t.Context(), "mallory"))
		var se *ServerError
		if !errors.As(err, &se) || se.Server != "users" || !strings.Contains(err.Error(), "HTTP 401") || strings.Contains(err.Error(), "tok-alice") {
			t.Fatalf("mallory's listing: error %v, want a *ServerError of users saying HTTP 401, without alice's token", err)
		}
	}
	if err := ownCatalogAndToken(alice, a, "alice"); err != nil {
		t.Errorf("alice after mallory's 401: %v", err)
	}
	if err := ownCatalogAndToken(WithPrincipal(t.Context(), "bob"), a, "bob"); err != nil {
		t.Errorf("bob after mallory's 401: %v", err)
	}
	if st := a.Status().Servers["users"]; !st.Shared || st.DialAttempts != 1 {
		t.Errorf("status %+v, want the one shared session, dialed once", st)
	}
}

// TestSharedSessionListingsStayApart: the principals of a shared session
// listing at once each get the descriptors and prompts of their own
// listing, as their server sent them (annotations, prompt arguments),
// never another principal's.
func TestSharedSessionListingsStayApart(t *testing.T) {
	var mu sync.Mutex
	servers := map[string]*mcp.Server{}
	get := func(r *http.Request) *mcp.Server {
		user := userOf(r.Header)
		mu.Lock()
		defer mu.Unlock()
		if s := servers[user]; s != nil {
			return s
		}
		s := mcp.NewServer(&mcp.Implementation{Name: "d", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "t", Description: "for " + user, InputSchema: &jsonschema.Schema{Type: "object"},
			Annotations: &mcp.ToolAnnotations{Title: "title-" + user}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
		s.AddPrompt(&mcp.Prompt{Name: "p", Arguments: []*mcp.PromptArgument{{Name: "arg_" + user}}}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
		servers[user] = s
		return s
	}
	srv := testserver.Serve(t, mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true}))
	a := newAdapter(t, Config{Servers: map[string]Server{"d": {URL: srv.URL, Mode: ModeModern, HeadersFor: bearer}}, ShareStatelessSessions: true})
	var wg sync.WaitGroup
	for n := range 16 {
		user := fmt.Sprint("u", n)
		wg.Go(func() {
			ctx := WithPrincipal(t.Context(), user)
			for range 3 {
				tools, err := a.ListTools(ctx, WithCacheMode(CacheRefresh))
				if err != nil {
					t.Error(err)
					return
				}
				if d := tools[0].Descriptor(); d.Description != "for "+user || d.Annotations == nil || d.Annotations.Title != "title-"+user {
					raw, _ := json.Marshal(d)
					t.Errorf("%s: descriptor %s, want its own", user, raw)
					return
				}
				prompts, err := a.ListPrompts(ctx, "d", WithCacheMode(CacheRefresh))
				if err != nil {
					t.Error(err)
					return
				}
				if args := prompts[0].Arguments; len(args) != 1 || args[0].Name != "arg_"+user {
					raw, _ := json.Marshal(args)
					t.Errorf("%s: prompt arguments %s, want its own", user, raw)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestSharedSessionDialFailureStaysOwn: a principal that waited for
// another's dial of the shared session, which failed (its HeadersFor
// refused), dials with its own credentials and never sees the other's
// error; the server's instructions are those of the principal whose
// handshake dialed the session, "" for those that joined it.
func TestSharedSessionDialFailureStaysOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ts := newTokenServers()
		s := inProcessServer(ts)
		entered, release := make(chan struct{}), make(chan struct{})
		s.HeadersFor = func(ctx context.Context, principal string) (map[string]string, error) {
			if principal == "mallory" {
				close(entered)
				<-release
				return nil, errors.New("vault: mallory-secret revoked")
			}
			return bearer(ctx, principal)
		}
		a, err := New(Config{Servers: map[string]Server{"users": s}, ShareStatelessSessions: true})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		mallory, bob := make(chan error, 1), make(chan error, 1)
		go func() {
			_, err := a.ListTools(WithPrincipal(t.Context(), "mallory"))
			mallory <- err
		}()
		<-entered
		go func() { bob <- ownCatalogAndToken(WithPrincipal(t.Context(), "bob"), a, "bob") }()
		synctest.Wait() // bob waits for mallory's dial
		close(release)
		if err := <-bob; err != nil {
			t.Errorf("bob, who waited for mallory's dial: %v, want his own catalog", err)
		}
		if err := <-mallory; err == nil || !strings.Contains(err.Error(), "mallory-secret") {
			t.Errorf("mallory: %v, want her HeadersFor's error", err)
		}
		for user, want := range map[string]string{"bob": "for bob", "alice": ""} {
			info, err := a.ServerInfo(WithPrincipal(t.Context(), user), "users")
			if err != nil || info.Instructions != want {
				t.Errorf("%s: instructions %+v (%v), want %q", user, info, err, want)
			}
		}
		if st := a.Status().Servers["users"]; !st.Shared || st.DialAttempts != 2 {
			t.Errorf("status %+v, want one shared session after two dials", st)
		}
	})
}

// TestSharedSessionRedialedAfterItsEnd: a shared session that ended (one
// principal's answer broke off mid-body, which go-sdk fails the
// connection on) is dialed again by the next principal, though the
// server has no Server.Retry: a stateless server has no session to lose.
func TestSharedSessionRedialedAfterItsEnd(t *testing.T) {
	ts := newTokenServers()
	h := ts.handler("modern")
	srv := testserver.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if userOf(r.Header) != "crash" {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("{"))
		w.(http.Flusher).Flush()
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}))
	a := newAdapter(t, Config{Servers: map[string]Server{"users": {URL: srv.URL, Mode: ModeModern, HeadersFor: bearer}}, ShareStatelessSessions: true})
	if err := ownCatalogAndToken(WithPrincipal(t.Context(), "alice"), a, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ListTools(WithPrincipal(t.Context(), "crash")); err == nil {
		t.Fatal("crash's listing broken off mid-body succeeded")
	}
	for _, user := range []string{"bob", "alice"} {
		err := ownCatalogAndToken(WithPrincipal(t.Context(), user), a, user)
		if errors.Is(err, mcp.ErrConnectionClosed) && !strings.Contains(err.Error(), "stays down") {
			// The request raced the end's being noticed: it went on the
			// ended session, which it ends for good; the next one dials.
			err = ownCatalogAndToken(WithPrincipal(t.Context(), user), a, user)
		}
		if err != nil {
			t.Errorf("%s after the session ended: %v", user, err)
		}
	}
	if st := a.Status().Servers["users"]; !st.Shared || st.DialAttempts != 2 {
		t.Errorf("status %+v, want a shared session dialed again", st)
	}
}
