package mcpadapter

import (
	"fmt"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

// concurrentCalls is the number of calls TestConcurrentInvoke starts at
// once on one Adapter.
const concurrentCalls = 1000

// TestConcurrentInvoke starts 1000 Invokes at once on one Adapter (one
// tool, one session) and checks that every call succeeds with its own
// answer and that the server ran each exactly once, while discovery runs
// beside them (cached, bypassed and refreshed ListTools) and the text APIs
// share the session. Run it with -race: it is the adapter's load test.
func TestConcurrentInvoke(t *testing.T) {
	tests := []struct {
		name string
		srv  func(t *testing.T) (Server, *testserver.Server)
	}{
		{"memory/modern", func(t *testing.T) (Server, *testserver.Server) {
			s := testserver.Full(testserver.Options{})
			return memServer(s, ModeAuto), s
		}},
		{"memory/legacy", func(t *testing.T) (Server, *testserver.Server) {
			s := testserver.Full(testserver.Options{Legacy: true})
			return memServer(s, ModeAuto), s
		}},
		{"http/legacy", func(t *testing.T) (Server, *testserver.Server) {
			s := testserver.Full(testserver.Options{Legacy: true})
			return Server{URL: s.StreamableHTTP(t, false).URL}, s
		}},
		{"http/modern", func(t *testing.T) (Server, *testserver.Server) {
			s := testserver.Full(testserver.Options{})
			return Server{URL: s.StreamableHTTP(t, true).URL}, s
		}},
		// Over stdio the server is another process: its run count is not
		// visible, the answers are.
		{"stdio/modern", func(t *testing.T) (Server, *testserver.Server) {
			return stdioServer(t, "modern"), nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, s := tc.srv(t)
			a := newAdapter(t, Config{Servers: map[string]Server{"s": srv}})
			ts, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			echo := ts.Lookup("s__echo")
			if echo == nil {
				t.Fatalf("no s__echo in %v", ts)
			}

			start := make(chan struct{})
			errs := make(chan error, concurrentCalls+3)
			var wg sync.WaitGroup
			for i := range concurrentCalls {
				wg.Go(func() {
					<-start
					want := fmt.Sprintf("call %d", i)
					var (
						got string
						err error
					)
					// Every tenth call goes through a text API.
					switch i % 10 {
					case 1:
						got, err = echo.Call(t.Context(), fmt.Sprintf(`{"text":%q}`, want))
					case 2:
						var res *Result
						if res, err = echo.InvokeJSON(t.Context(), fmt.Sprintf(`{"text":%q}`, want)); err == nil {
							got = res.Text()
						}
					default:
						var res *Result
						if res, err = echo.Invoke(t.Context(), map[string]any{"text": want}); err == nil {
							if res.IsError {
								err = fmt.Errorf("isError result %q", res.Text())
							}
							got = res.Text()
						}
					}
					if err == nil && got != want {
						err = fmt.Errorf("got %q", got)
					}
					if err != nil {
						errs <- fmt.Errorf("%s: call %d: %w", tc.name, i, err)
					}
				})
			}
			for _, mode := range []CacheMode{CacheUse, CacheBypass, CacheRefresh} {
				wg.Go(func() {
					<-start
					if got, err := a.ListTools(t.Context(), WithCacheMode(mode)); err != nil || got.Lookup("s__echo") == nil {
						errs <- fmt.Errorf("%s: ListTools(%q) during the calls = %d tools, %v", tc.name, mode, len(got), err)
					}
				})
			}
			close(start)
			wg.Wait()
			close(errs)
			n := 0
			for err := range errs {
				if n++; n <= 10 {
					t.Error(err)
				}
			}
			if n > 10 {
				t.Errorf("%s: %d calls failed in all", tc.name, n)
			}
			if s != nil {
				if got := s.Runs("echo"); got != concurrentCalls {
					t.Errorf("%s: the server ran echo %d times, want %d", tc.name, got, concurrentCalls)
				}
			}
		})
	}
}
