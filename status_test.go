package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
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
				if (state == ServerNotDialed) != got.Since.IsZero() || (got.Err != nil) != (state == ServerSkipped || state == ServerFailed) {
					t.Fatalf("Status()[%s] = %+v: Since and Err do not fit state %q", name, got, state)
				}
				return got
			}
			want("ok", ServerNotDialed, 0, 0)
			tool := lookupTool(t, a, "ok__slow")
			era := EraModern
			if legacy {
				era = EraLegacy
			}
			if got := want("ok", ServerConnected, 0, 1); got.Era != era {
				t.Errorf("Era = %q, want %q", got.Era, era)
			}
			if got := want("down", ServerSkipped, 0, 1); !errors.Is(got.Err, refused) {
				t.Errorf("skipped Err = %v, want %v", got.Err, refused)
			}
			// A health endpoint marshals the status: Err as its message.
			b, err := json.Marshal(a.Status().Servers["down"])
			if err != nil {
				t.Fatal(err)
			}
			var shown struct {
				State ServerState
				Err   string
			}
			if err := json.Unmarshal(b, &shown); err != nil || shown.State != ServerSkipped || !strings.Contains(shown.Err, "no such server") {
				t.Errorf("Status JSON = %s (%v), want the state and the error's message", b, err)
			}
			done := asyncInvoke(t.Context(), tool, nil)
			receive(t, s.SlowStarted(), "the call to start")
			want("ok", ServerConnected, 1, 1)
			c := liveConn(t, a, "ok")
			s.KillSessions()
			receive(t, done, "the call to fail")
			// The call can fail with the server's error answer before the
			// adapter reads the end of the session: wait for that end.
			receive(t, c.done, "the session to end")
			want("ok", ServerFailed, 0, 1)
			a.Close()
			want("ok", ServerNotDialed, 0, 1)
			want("down", ServerNotDialed, 0, 1)
		})
	}
}

// TestDuplicateNamesFailOneServer: a server listing two names that differ
// only in case fails its own listing, reported through OnConnectionError;
// the other servers' tools are still discovered. Duplicates across servers
// still fail discovery.
func TestDuplicateNamesFailOneServer(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			dup := testserver.New(testserver.Options{Legacy: legacy})
			for _, name := range []string{"Foo", "foo"} {
				addRawTool(dup, name, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return textResult1("called"), nil
				})
			}
			var reported []string
			a := newAdapter(t, Config{
				Servers: map[string]Server{
					"dup": memServer(dup, ModeAuto),
					"ok":  memServer(testserver.New(testserver.Options{Legacy: legacy}).AddFeatures(), ModeAuto),
				},
				OnConnectionError: func(server string, err error) error {
					if !errors.Is(err, ErrDuplicateToolName) {
						t.Errorf("OnConnectionError(%s, %v), want ErrDuplicateToolName", server, err)
					}
					reported = append(reported, server)
					return nil
				},
			})
			ts, err := a.ListTools(t.Context())
			if err != nil || ts.Lookup("ok__echo") == nil || len(reported) != 1 || reported[0] != "dup" {
				t.Fatalf("ListTools() = %v, %v (reported %v); want ok's tools, dup reported", toolNames(ts), err, reported)
			}
		})
	}
	// Across servers (raw names), discovery fails as before.
	s1, s2 := testserver.New(testserver.Options{}).AddFeatures(), testserver.New(testserver.Options{}).AddFeatures()
	a := newAdapter(t, Config{
		Servers:           map[string]Server{"a": memServer(s1, ModeAuto), "b": memServer(s2, ModeAuto)},
		ToolName:          rawToolNames,
		OnConnectionError: IgnoreConnectionErrors,
	})
	if _, err := a.ListTools(t.Context()); !errors.Is(err, ErrDuplicateToolName) {
		t.Errorf("ListTools() with the same tools on two servers = %v, want ErrDuplicateToolName", err)
	}
}

// TestSkippedServerComesBack: a server skipped after a failed dial is
// tried again by later discoveries when it has a retry policy, after the
// policy's Delay, doubled at each failure in a row; without a policy it
// stays skipped until Close.
func TestSkippedServerComesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testserver.New(testserver.Options{}).AddFeatures()
		var dials, failing atomic.Int32
		failing.Store(2)
		flaky := func(ctx context.Context) (mcp.Transport, error) {
			dials.Add(1)
			if failing.Add(-1) >= 0 {
				return nil, errors.New("not yet")
			}
			return s.Transport()(ctx)
		}
		a := newAdapter(t, Config{
			Servers: map[string]Server{
				"flaky": {Transport: flaky, Retry: &RetryPolicy{Delay: time.Second}},
				"never": {Transport: func(context.Context) (mcp.Transport, error) { return nil, errors.New("never") }},
			},
			OnConnectionError: IgnoreConnectionErrors,
		})
		list := func(wantDials int32, wantTools bool) {
			t.Helper()
			ts, err := a.ListTools(t.Context())
			if err != nil || dials.Load() != wantDials || (ts.Lookup("flaky__echo") != nil) != wantTools {
				t.Fatalf("ListTools() = %v, %v after %d dials; want tools %t after %d dials", toolNames(ts), err, dials.Load(), wantTools, wantDials)
			}
		}
		list(1, false)
		list(1, false) // skipped: no retry due yet
		time.Sleep(time.Second)
		list(2, false) // tried again, failed: the next wait is 2s
		time.Sleep(time.Second)
		list(2, false)
		time.Sleep(time.Second)
		list(3, true)
		if got := a.Status().Servers["never"]; got.State != ServerSkipped || got.DialAttempts != 1 {
			t.Errorf("server without a policy: %+v, want skipped after 1 dial", got)
		}
		a.Close()
	})
}

// liveConn returns a's live connection to server, with no principal.
func liveConn(t *testing.T, a *Adapter, server string) *conn {
	t.Helper()
	a.pool.mu.Lock()
	defer a.pool.mu.Unlock()
	c := a.pool.gen.conns[connKey{server: server}]
	if c == nil {
		t.Fatalf("no connection to %q", server)
	}
	return c
}

// TestDeliveryCounts: a count of a pair counts for its server too, and
// past the limit the pair counted least recently is forgotten, its
// server's counts kept.
func TestDeliveryCounts(t *testing.T) {
	delivered := func(d *Deliveries) *int64 { return &d.Delivered }
	a, b, c := connKey{"g", "a"}, connKey{"g", "b"}, connKey{"h", "c"}
	counts := newDeliveryCounts(map[string]*Deliveries{"g": {}, "h": {}}, 2)
	counts.add(a, delivered)
	counts.add(b, delivered)
	counts.add(a, delivered)
	counts.add(c, func(d *Deliveries) *int64 { return &d.DroppedLogs }) // forgets b, the least recent
	if got := counts.add(a, delivered); got != 3 {
		t.Errorf("a's count = %d, want 3", got)
	}
	keys := map[connKey]Deliveries{}
	all := counts.of("g", func(k connKey, d Deliveries) { keys[k] = d })
	if all != (Deliveries{Delivered: 4}) {
		t.Errorf("g's counts = %+v, want Delivered 4", all)
	}
	if len(keys) != 1 || keys[a] != (Deliveries{Delivered: 3}) {
		t.Errorf("g's pairs = %+v, want a alone, Delivered 3", keys)
	}
	if counts.add(b, delivered) != 1 {
		t.Error("a forgotten pair counts on from its old count")
	}
}
