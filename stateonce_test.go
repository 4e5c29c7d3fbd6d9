package mcpadapter

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/seal"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

// testKey is a StateKey of the tests of this file; otherKey replaces it.
var (
	testKey  = []byte("0123456789abcdef0123456789abcdef")
	otherKey = []byte("fedcba9876543210fedcba9876543210")
)

// storedState is what a maker Adapter stored: a sealed interrupt
// (book_table), approval request (destroy) and paused batch (batchOfThree,
// paused at book_table).
type storedState struct {
	interrupt, approval, batch []byte
}

// storeState makes and marshals the three kinds of stored state on a.
func storeState(t *testing.T, a *Adapter) storedState {
	t.Helper()
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var st storedState
	marshal := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	st.interrupt = marshal(must(t).interrupt(ts.Lookup("s__book_table").Invoke(t.Context(), map[string]any{"party": 4})))
	st.approval = marshal(must(t).approval(ts.Lookup("s__destroy").Invoke(t.Context(), map[string]any{"target": "db"})))
	_, err = ts.HandleToolCalls(t.Context(), batchOfThree)
	var paused *PausedCalls
	if !errors.As(err, &paused) {
		t.Fatalf("HandleToolCalls() error = %v, want *PausedCalls", err)
	}
	st.batch = marshal(paused)
	return st
}

// A stateCase resumes one kind of stored state on an Adapter.
type stateCase struct {
	name   string
	tool   string // the tool the resume runs
	resume func(t *testing.T, a *Adapter) error
}

// stateCases resumes each kind of st, as it was stored.
func stateCases(st storedState) []stateCase {
	ans := Answered(answer("date", Accept, date("2026-09-18")))
	return []stateCase{
		{"interrupt", "book_table", func(t *testing.T, a *Adapter) error {
			_, err := a.Resume(t.Context(), decodeInterrupt(t, st.interrupt), ans)
			return err
		}},
		{"approval", "destroy", func(t *testing.T, a *Adapter) error {
			_, err := a.Resume(t.Context(), decodeStored[ApprovalRequired](t, st.approval), Approved())
			return err
		}},
		{"paused batch", "book_table", func(t *testing.T, a *Adapter) error {
			ts, err := a.ListTools(t.Context())
			if err != nil {
				return err
			}
			_, err = ts.ResumeToolCalls(t.Context(), decodeStored[PausedCalls](t, st.batch), ans)
			return err
		}},
	}
}

// stateServer returns a server and the configuration of adapters over it
// that seal state with testKey.
func stateServer() (*testserver.Server, Config) {
	s := testserver.Full(testserver.Options{StateKey: stateKey})
	return s, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, State: StateOptions{Key: testKey}, Approval: destructiveCall}
}

// TestStateResumesOnce: the same sealed interrupt, approval request and
// paused batch, each resumed on two Adapters sharing a claim store: one
// call at the server, and the second resume fails with ErrClaimedState
// before anything is sent. A rejection is applied once too.
func TestStateResumesOnce(t *testing.T) {
	s, cfg := stateServer()
	cfg.State.Claims = newClaims()
	st := storeState(t, newAdapter(t, cfg))
	replicas := []*Adapter{newAdapter(t, cfg), newAdapter(t, cfg)}
	for _, tt := range stateCases(st) {
		t.Run(tt.name, func(t *testing.T) {
			runs := s.Runs(tt.tool)
			if err := tt.resume(t, replicas[0]); err != nil {
				t.Fatalf("first resume: %v", err)
			}
			if err := tt.resume(t, replicas[1]); !errors.Is(err, ErrClaimedState) {
				t.Errorf("second resume, on another replica: error = %v, want ErrClaimedState", err)
			}
			if got := s.Runs(tt.tool); got != runs+1 {
				t.Errorf("%s runs = %d, want %d: one call at the server", tt.tool, got, runs+1)
			}
		})
	}
	t.Run("rejection", func(t *testing.T) {
		held := must(t).approval(lookupTool(t, replicas[0], "s__destroy").Invoke(t.Context(), map[string]any{"target": "logs"}))
		b, err := json.Marshal(held)
		if err != nil {
			t.Fatal(err)
		}
		runs := s.Runs("destroy")
		must(t).result(replicas[0].Resume(t.Context(), decodeStored[ApprovalRequired](t, b), Rejected("no")))
		if _, err := replicas[1].Resume(t.Context(), decodeStored[ApprovalRequired](t, b), Approved()); !errors.Is(err, ErrClaimedState) {
			t.Errorf("approval after a rejection, on another replica: error = %v, want ErrClaimedState", err)
		}
		if s.Runs("destroy") != runs {
			t.Errorf("destroy runs = %d after a rejection, want %d", s.Runs("destroy"), runs)
		}
	})
}

// TestStateClaimStoreDown: a claim store that cannot tell fails the resume
// with its error and sends nothing; the same value resumes once the store
// answers.
func TestStateClaimStoreDown(t *testing.T) {
	s, cfg := stateServer()
	claims := newClaims()
	cfg.State.Claims = claims
	a := newAdapter(t, cfg)
	intr := must(t).interrupt(lookupTool(t, a, "s__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
	down := errors.New("claims database unreachable")
	claims.err = down
	runs := s.Runs("book_table")
	ans := Answered(answer("date", Accept, date("2026-09-18")))
	if _, err := a.Resume(t.Context(), intr, ans); !errors.Is(err, down) || !strings.Contains(err.Error(), "Config.State.Claims") {
		t.Errorf("Resume() with the store down: error = %v, want the store's error naming Config.State.Claims", err)
	}
	if s.Runs("book_table") != runs {
		t.Fatalf("book_table ran with the claim store down")
	}
	claims.err = nil
	must(t).result(a.Resume(t.Context(), intr, ans))
	if expires, ok := claims.claimed[intr.ID()]; !ok || !expires.IsZero() {
		t.Errorf("claim of %s: %v, %v; want one that never expires (the zero time) without State.MaxAge", intr.ID(), expires, ok)
	}
}

// TestStateReplayWithoutClaims: without a claim store, a value is applied
// once, but the same JSON decoded again is a new value, which resumes
// again: what the README says a replay can do.
func TestStateReplayWithoutClaims(t *testing.T) {
	s, cfg := stateServer()
	st := storeState(t, newAdapter(t, cfg))
	a := newAdapter(t, cfg)
	in := decodeInterrupt(t, st.interrupt)
	ans := Answered(answer("date", Accept, date("2026-09-18")))
	runs := s.Runs("book_table")
	must(t).result(a.Resume(t.Context(), in, ans))
	if _, err := a.Resume(t.Context(), in, ans); !errors.Is(err, ErrClaimedState) {
		t.Errorf("second Resume() of one value: error = %v, want ErrClaimedState", err)
	}
	must(t).result(a.Resume(t.Context(), decodeInterrupt(t, st.interrupt), ans))
	if got := s.Runs("book_table"); got != runs+2 {
		t.Errorf("book_table runs = %d, want %d: a decoded copy is a new value", got, runs+2)
	}
}

// reissue returns sealed state b of kind with its issue time set to issued
// (zero: removed) and sealed again with a's key, as a holder of the key
// could.
func reissue(t *testing.T, a *Adapter, kind string, b []byte, issued time.Time) []byte {
	t.Helper()
	var id string
	payload := editJSON(t, payloadOf(t, a, kind, b), func(w map[string]any) {
		id, _ = w["id"].(string)
		if issued.IsZero() {
			delete(w, "issued")
		} else {
			w["issued"] = issued.Format(time.RFC3339Nano)
		}
	})
	out, err := a.states.ring.Seal(kind, id, issued, payload)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStateMaxAge: with StateMaxAge, state issued longer ago, or without an
// issue time, is refused with errExpiredState before anything is sent;
// state within the age resumes, and its claim expires with it.
func TestStateMaxAge(t *testing.T) {
	s, cfg := stateServer()
	claims := newClaims()
	cfg.State.MaxAge, cfg.State.Claims = time.Hour, claims
	a := newAdapter(t, cfg)
	st := storeState(t, a)
	old := storedState{
		interrupt: reissue(t, a, stateInterrupt, st.interrupt, time.Now().Add(-2*time.Hour)),
		approval:  reissue(t, a, stateApproval, st.approval, time.Time{}),
	}
	replica := newAdapter(t, cfg)
	for _, tt := range stateCases(old)[:2] {
		t.Run(tt.name, func(t *testing.T) {
			runs := s.Runs(tt.tool)
			if err := tt.resume(t, replica); !errors.Is(err, errExpiredState) {
				t.Errorf("resume of old state: error = %v, want errExpiredState", err)
			}
			if s.Runs(tt.tool) != runs {
				t.Errorf("%s ran for expired state", tt.tool)
			}
		})
	}
	for _, tt := range stateCases(st) {
		if err := tt.resume(t, replica); err != nil {
			t.Errorf("%s within State: StateOptions{MaxAge: %v", tt.name, err)
		}
	}
	in := decodeInterrupt(t, st.interrupt)
	if got, least := claims.claimed[in.ID()], time.Now().Add(time.Hour); got.Before(in.Issued().Add(time.Hour+seal.MaxSkew)) || got.After(least.Add(seal.MaxSkew)) {
		t.Errorf("claim of the interrupt expires %v}, want State.MaxAge and the skew after its claim, by the claiming clock", got)
	}
}

// TestStateKeyRotation: an Adapter with a new StateKey and the old one in
// OldStateKeys opens state sealed with either, and seals what it makes with
// the new one; without the old key, old state is refused.
func TestStateKeyRotation(t *testing.T) {
	s, cfg := stateServer()
	st := storeState(t, newAdapter(t, cfg)) // sealed with testKey
	rotated := cfg
	rotated.State.Key, rotated.State.OldKeys = otherKey, [][]byte{testKey}
	r := newAdapter(t, rotated)
	for _, tt := range stateCases(st) {
		if err := tt.resume(t, r); err != nil {
			t.Errorf("%s sealed with the old key, on the rotated Adapter: %v", tt.name, err)
		}
	}

	onlyNew, onlyOld := cfg, cfg
	onlyNew.State.Key = otherKey
	fresh := storeState(t, r) // sealed with otherKey
	runs := s.Runs("book_table")
	for _, tt := range stateCases(st) {
		if err := tt.resume(t, newAdapter(t, onlyNew)); !errors.Is(err, ErrTamperedState) {
			t.Errorf("%s sealed with a dropped key: error = %v, want ErrTamperedState", tt.name, err)
		}
	}
	for _, tt := range stateCases(fresh) {
		if err := tt.resume(t, newAdapter(t, onlyOld)); !errors.Is(err, ErrTamperedState) {
			t.Errorf("%s made by the rotated Adapter, opened with the old key only: error = %v, want ErrTamperedState (sealed with the new key)", tt.name, err)
		}
		if err := tt.resume(t, newAdapter(t, onlyNew)); err != nil {
			t.Errorf("%s made by the rotated Adapter, opened with the new key: %v", tt.name, err)
		}
	}
	if got := s.Runs("book_table"); got != runs+2 {
		t.Errorf("book_table runs = %d, want %d (the refusals send nothing)", got, runs+2)
	}

	bad := cfg
	bad.State.Key, bad.State.OldKeys = nil, [][]byte{testKey, nil}
	if _, err := New(bad); err == nil || !strings.Contains(err.Error(), "field State.OldKeys: set without a State.Key") || !strings.Contains(err.Error(), "field State.OldKeys: an empty key") {
		t.Errorf("New(old keys without a current one) error = %v}, want both problems", err)
	}
}
