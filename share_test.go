package mcpadapter

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/auth"
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
						if got, want := toolNames(tools), []string{"users__only_" + user, "users__whoami"}; !slices.Equal(got, want) {
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
