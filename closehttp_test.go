package mcpadapter

import (
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

// TestCloseCancelsHTTPCalls: Close over Streamable HTTP cancels the calls in
// flight at once, and the server is told (notifications/cancelled): its
// handler sees its context end. Stateless (modern) and stateful (legacy).
func TestCloseCancelsHTTPCalls(t *testing.T) {
	for _, stateless := range []bool{true, false} {
		t.Run(eraName(!stateless), func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: !stateless}).AddFeatures()
			hs := s.StreamableHTTP(t, stateless)
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": {URL: hs.URL}}})
			tool := lookupTool(t, a, "srv__slow")
			done := asyncInvoke(t.Context(), tool, nil)
			receive(t, s.SlowStarted(), "the slow call to start")
			closed := make(chan error, 1)
			go func() { closed <- a.Close() }()
			receive(t, closed, "Close to return")
			waitCancelled(t, s, done, ErrClosed)
		})
	}
}
