package mcpadapter

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStatus follows a server through every state Status reports, in
// both eras: not dialed, connected (with its era and calls in flight),
// failed when its session ended, and skipped after a failed dial.
func TestStatus(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: legacy}).AddFeatures()
			refused := errors.New("no such server")
			a := newAdapter(t, Config{
				Servers: map[string]Server{
					"ok":   memServer(s, ModeAuto),
					"down": {Transport: func(context.Context) (mcp.Transport, error) { return nil, refused }},
				},
				OnConnectionError: IgnoreConnectionErrors,
			})
			want := func(name string, state ServerState, inFlight int, dials int64) ServerStatus {
				t.Helper()
				got := a.Status().Servers[name]
				if got.State != state || got.CallsInFlight != inFlight || got.DialAttempts != dials {
					t.Fatalf("Status()[%s] = %+v, want state %q, %d in flight, %d dials", name, got, state, inFlight, dials)
				}
				if (state == StateNotDialed) != got.Since.IsZero() || (got.Err != nil) != (state == StateSkipped || state == StateFailed) {
					t.Fatalf("Status()[%s] = %+v: Since and Err do not fit state %q", name, got, state)
				}
				return got
			}
			want("ok", StateNotDialed, 0, 0)
			tool := lookupTool(t, a, "ok__slow")
			era := ModeModern
			if legacy {
				era = ModeLegacy
			}
			if got := want("ok", StateConnected, 0, 1); got.Era != era {
				t.Errorf("Era = %q, want %q", got.Era, era)
			}
			if got := want("down", StateSkipped, 0, 1); !errors.Is(got.Err, refused) {
				t.Errorf("skipped Err = %v, want %v", got.Err, refused)
			}
			done := asyncInvoke(t.Context(), tool, nil)
			receive(t, s.SlowStarted(), "the call to start")
			want("ok", StateConnected, 1, 1)
			s.KillSessions()
			receive(t, done, "the call to fail")
			want("ok", StateFailed, 0, 1)
			a.Close()
			want("ok", StateNotDialed, 0, 1)
			want("down", StateNotDialed, 0, 1)
		})
	}
}
