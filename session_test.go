package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A restartable is a Streamable HTTP endpoint whose server can be
// restarted: a fresh go-sdk server behind a fresh handler, which knows
// none of the old one's sessions, as after a redeploy.
type restartable struct {
	t         *testing.T
	stateless bool // modern era: no sessions
	handler   atomic.Pointer[http.Handler]
	url       string
	drop      func() // drops the clients' connections
}

// server returns the adapter's entry for r, with the default HTTP client:
// its pooled connections are the ones the restart closes.
func (r *restartable) server() Server { return Server{URL: r.url} }

// newRestartable starts the endpoint with a first server, which it returns.
func newRestartable(t *testing.T, stateless bool) (*restartable, *testserver.Server) {
	r := &restartable{t: t, stateless: stateless}
	s := r.serve()
	ts := testserver.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		(*r.handler.Load()).ServeHTTP(w, req)
	}))
	r.url, r.drop = ts.URL, ts.CloseClientConnections
	return r, s
}

// serve puts a fresh server behind a fresh handler and returns it.
func (r *restartable) serve() *testserver.Server {
	s := testserver.Full(testserver.Options{Legacy: !r.stateless, Subscriptions: true}).AddPrompts()
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server },
		&mcp.StreamableHTTPOptions{Stateless: r.stateless})
	r.handler.Store(&h)
	return s
}

// restart replaces the server and drops every connection to the old one
// (its event streams, the calls it was answering).
func (r *restartable) restart() *testserver.Server {
	s := r.serve()
	r.drop()
	return s
}

// era names a restartable's era in subtests.
func era(stateless bool) string { return map[bool]string{false: "legacy", true: "modern"}[stateless] }

// TestSessionRecovery: a Streamable HTTP server restarts under the adapter,
// which has no Reconnect policy. Legacy (stateful) sessions are forgotten
// by the new server, which answers 404 for them: per the spec the adapter
// starts a new session and sends the refused request again, so the next
// ListTools and a held tool's call succeed, each request running once.
// Modern servers have no sessions: the same calls just go on.
func TestSessionRecovery(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		for _, first := range []string{"call", "list"} {
			t.Run(era(stateless)+"/"+first+" first", func(t *testing.T) {
				r, _ := newRestartable(t, stateless)
				a := newAdapter(t, Config{Servers: map[string]Server{"h": r.server()}})
				ts, err := a.ListTools(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				echo := ts.Lookup("h__echo")
				if _, err := echo.Invoke(t.Context(), map[string]any{"text": "before"}); err != nil {
					t.Fatal(err)
				}
				s := r.restart()
				call := func() {
					t.Helper()
					res, err := echo.Invoke(t.Context(), map[string]any{"text": "after"})
					if err != nil || res.Text() != "after" {
						t.Fatalf("held tool after the restart: %v, %v", res, err)
					}
				}
				list := func() {
					t.Helper()
					fresh, err := a.ListTools(t.Context())
					if err != nil || fresh.Lookup("h__echo") == nil {
						t.Fatalf("ListTools after the restart: %v, %v", fresh, err)
					}
				}
				if first == "call" {
					call()
					list()
				} else {
					list()
					call()
				}
				if got := s.Runs("echo"); got != 1 {
					t.Errorf("the new server ran echo %d times, want 1", got)
				}
				if !stateless {
					if got := s.Count("initialize"); got != 1 {
						t.Errorf("the new server saw %d initialize requests, want 1 (one new session)", got)
					}
				}
				if st := a.Status().Servers["h"]; st.Err != nil {
					t.Errorf("Status after recovery: %v", st.Err)
				}
			})
		}
	}
}

// TestSessionRecoverySubscriptions: a subscription belongs to its principal
// and server, not to one session. A legacy server restarts and forgets the
// session: the adapter's new session subscribes again, and the server's
// next update reaches the principal that subscribed.
func TestSessionRecoverySubscriptions(t *testing.T) {
	r, old := newRestartable(t, false)
	updates := make(chan ResourceUpdate, 8)
	a := newAdapter(t, Config{Servers: map[string]Server{"h": r.server()}, OnResourceUpdated: func(u ResourceUpdate) { updates <- u }})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a failure, not a hang
	defer cancel()
	alice := WithPrincipal(ctx, "alice")
	uri := testserver.ResourceURIs()[0]
	ts, err := a.ListTools(alice)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SubscribeResource(alice, "h", uri); err != nil {
		t.Fatal(err)
	}
	<-old.Subscribed()
	s := r.restart()
	if _, err := ts.Lookup("h__echo").Invoke(alice, map[string]any{"text": "x"}); err != nil {
		t.Fatal(err) // on the new session
	}
	select {
	case got := <-s.Subscribed():
		if got != uri {
			t.Fatalf("the new session subscribed to %q, want %q", got, uri)
		}
	case <-ctx.Done():
		t.Fatal("the new session never subscribed again")
	}
	if err := s.Server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	select {
	case u := <-updates:
		if u.Server != "h" || u.Principal != "alice" || u.URI != uri {
			t.Errorf("update %+v, want alice's of %s on h", u, uri)
		}
	case <-ctx.Done():
		t.Fatal("the update on the new session never reached OnResourceUpdated")
	}
}

// TestSessionRecoveryReads: after a restart, the first list, read or prompt
// (each safe to send twice) succeeds on the spec's new session, like
// ListTools and a call: none fails with the forgotten session.
func TestSessionRecoveryReads(t *testing.T) {
	reads := map[string]func(ctx context.Context, a *Adapter) error{
		"ListResources": func(ctx context.Context, a *Adapter) error {
			_, err := a.ListResources(ctx, "h", WithCacheMode(CacheBypass))
			return err
		},
		"ListResourceTemplates": func(ctx context.Context, a *Adapter) error {
			_, err := a.ListResourceTemplates(ctx, "h", WithCacheMode(CacheBypass))
			return err
		},
		"ReadResource": func(ctx context.Context, a *Adapter) error {
			res, err := a.ReadResource(ctx, "h", "mem://docs/readme")
			if err == nil && len(res.Contents) != 1 {
				err = fmt.Errorf("%d contents, want 1", len(res.Contents))
			}
			return err
		},
		"ListPrompts": func(ctx context.Context, a *Adapter) error {
			_, err := a.ListPrompts(ctx, "h", WithCacheMode(CacheBypass))
			return err
		},
		"GetPrompt": func(ctx context.Context, a *Adapter) error {
			_, err := a.GetPrompt(ctx, "h", "greet", map[string]string{"name": "Ada"})
			return err
		},
	}
	for _, stateless := range []bool{false, true} {
		for _, name := range slices.Sorted(maps.Keys(reads)) {
			t.Run(era(stateless)+"/"+name, func(t *testing.T) {
				read := reads[name]
				r, _ := newRestartable(t, stateless)
				a := newAdapter(t, Config{Servers: map[string]Server{"h": r.server()}})
				if err := read(t.Context(), a); err != nil {
					t.Fatal(err)
				}
				s := r.restart()
				if err := read(t.Context(), a); err != nil {
					t.Fatalf("%s after the restart: %v", name, err)
				}
				if !stateless {
					if got := s.Count("initialize"); got != 1 {
						t.Errorf("the new server saw %d initialize requests, want 1 (one new session)", got)
					}
				}
			})
		}
	}
}

// slowInFlight starts an adapter on r, lists its tools and calls slow,
// which old runs when it returns; the call's error comes on errc.
func slowInFlight(t *testing.T, r *restartable, old *testserver.Server) (Toolset, <-chan error) {
	a := newAdapter(t, Config{Servers: map[string]Server{"h": r.server()}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := ts.Lookup("h__slow").Invoke(t.Context(), nil)
		errc <- err
	}()
	<-old.SlowStarted()
	return ts, errc
}

// TestSessionRecoveryMayHaveRun: a call in flight when the server restarts
// may have run: it fails, and is not sent again, on either era; the held
// tool's next call goes to the new server.
func TestSessionRecoveryMayHaveRun(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(era(stateless), func(t *testing.T) {
			r, old := newRestartable(t, stateless)
			ts, errc := slowInFlight(t, r, old)
			s := r.restart()
			if err := <-errc; err == nil {
				t.Fatal("a call cut by the restart succeeded")
			}
			if runs := old.Runs("slow") + s.Runs("slow"); runs != 1 {
				t.Errorf("slow ran %d times in all, want 1: a call that may have run was sent again", runs)
			}
			if _, err := ts.Lookup("h__echo").Invoke(t.Context(), map[string]any{"text": "x"}); err != nil {
				t.Fatalf("held tool after the restart: %v", err)
			}
			old.Release()
		})
	}
}

// TestSessionRecoveryGone: the server's session is forgotten and no new
// one can be started (the endpoint now answers 404 to everything): the
// errors name Server.Retry, and, once the server is skipped,
// Config.OnConnectionError.
func TestSessionRecoveryGone(t *testing.T) {
	r, _ := newRestartable(t, false)
	a := newAdapter(t, Config{Servers: map[string]Server{"h": r.server()}, OnConnectionError: IgnoreConnectionErrors})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var gone http.Handler = http.NotFoundHandler()
	r.handler.Store(&gone)
	r.drop()
	_, err = ts.Lookup("h__echo").Invoke(t.Context(), map[string]any{"text": "x"})
	if err == nil || !strings.Contains(err.Error(), "Server.Retry") {
		t.Fatalf("call on a server gone for good: error = %v, want it to name Server.Retry", err)
	}
	var se *ServerError
	if !errors.As(err, &se) || se.Server != "h" {
		t.Errorf("error = %#v, want a *ServerError of h", err)
	}
	if ts, err := a.ListTools(t.Context()); err != nil || len(ts) != 0 {
		t.Fatalf("ListTools with the server skipped = %v, %v; want no tools", ts, err)
	}
	_, err = a.ServerInfo(t.Context(), "h")
	if err == nil || !strings.Contains(err.Error(), "Server.Retry") || !strings.Contains(err.Error(), "OnConnectionError") {
		t.Fatalf("ServerInfo of a skipped server: error = %v, want it to name Server.Retry and OnConnectionError", err)
	}
}

// TestSessionRecoveryInFlight: a legacy call in flight when another request
// finds the session missing fails with the session, which can no longer
// take its answer, and is not sent again on the new session: it may have
// run (here it did, on the old server).
func TestSessionRecoveryInFlight(t *testing.T) {
	r, old := newRestartable(t, false)
	ts, errc := slowInFlight(t, r, old)
	s := r.serve() // the old server keeps the slow call's stream
	s.Release()    // a slow call sent again would succeed at once
	if _, err := ts.Lookup("h__echo").Invoke(t.Context(), map[string]any{"text": "x"}); err != nil {
		t.Fatalf("held tool after the restart: %v", err)
	}
	old.Release() // the old server answers a session the adapter gave up
	if err := <-errc; !errors.Is(err, mcp.ErrSessionMissing) {
		t.Errorf("the call in flight: error = %v, want the session's end", err)
	}
	if runs := [2]int{old.Runs("slow"), s.Runs("slow")}; runs != [2]int{1, 0} {
		t.Errorf("slow ran %d times on the old server and %d on the new one, want once on the old", runs[0], runs[1])
	}
}

// TestRecoveryHints: a crashed stdio server without Server.Retry stays
// down until Close, and every error that says so names Server.Retry; once
// Config.OnConnectionError skipped it, the skip is named too.
func TestRecoveryHints(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"p": stdioServer(t, "modern")}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = ts.Lookup("p__exit").Invoke(t.Context(), nil)
	if err == nil || !strings.Contains(err.Error(), "set Server.Retry") {
		t.Fatalf("call on a crashing server: error = %v, want it to name Server.Retry", err)
	}
	<-ts.Lookup("p__exit").conn.done
	if _, err := a.ListTools(t.Context()); err == nil || !strings.Contains(err.Error(), "set Server.Retry") {
		t.Fatalf("ListTools after the crash: error = %v, want it to name Server.Retry", err)
	}
	b := newAdapter(t, Config{Servers: map[string]Server{"p": stdioServer(t, "modern")}, OnConnectionError: IgnoreConnectionErrors})
	if ts, err = b.ListTools(t.Context()); err != nil {
		t.Fatal(err)
	}
	ts.Lookup("p__exit").Invoke(t.Context(), nil)
	<-ts.Lookup("p__exit").conn.done
	if _, err := b.ListTools(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, err = b.ServerInfo(t.Context(), "p")
	if err == nil || !strings.Contains(err.Error(), "Config.OnConnectionError") || !strings.Contains(err.Error(), "set Server.Retry") {
		t.Fatalf("ServerInfo of the skipped server: error = %v, want it to name Config.OnConnectionError and Server.Retry", err)
	}
}
