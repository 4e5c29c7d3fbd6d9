package mcpadapter

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/stored"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

// editJSON decodes b as an object, edits it and encodes it again.
func editJSON(t *testing.T, b []byte, edit func(map[string]any)) []byte {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	edit(w)
	out, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// payloadOf returns the JSON that sealed state b of kind holds, opened
// with a's key: the state as it would be stored unsealed.
func payloadOf(t *testing.T, a *Adapter, kind string, b []byte) []byte {
	t.Helper()
	_, sl, err := unsealState(kind, b)
	if err != nil || sl.sealed == nil {
		t.Fatalf("not sealed (%v): %s", err, b)
	}
	payload, err := a.states.ring.Open(kind, sl.sealed)
	if err != nil {
		t.Fatal(err)
	}
	return payload
}

// flipBox returns sealed state b with one byte of its box changed, as
// whoever alters stored state without the key can.
func flipBox(t *testing.T, b []byte) []byte {
	t.Helper()
	return editJSON(t, b, func(w map[string]any) {
		box, err := base64.StdEncoding.DecodeString(w["box"].(string))
		if err != nil || len(box) < 40 {
			t.Fatalf("no box in %s (%v)", b, err)
		}
		box[len(box)/2] ^= 1
		w["box"] = base64.StdEncoding.EncodeToString(box)
	})
}

// decodeInterrupt decodes b, failing the test on error.
func decodeInterrupt(t *testing.T, b []byte) *Interrupt {
	t.Helper()
	return decodeStored[Interrupt](t, b)
}

// decodeStored decodes stored state b, failing the test on error.
func decodeStored[T any](t *testing.T, b []byte) *T {
	t.Helper()
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("json.Unmarshal(%s): %v", b, err)
	}
	return v
}

// TestForgedInterrupt: a stored interrupt edited to name another tool, a
// server or tool this Adapter does not have, or a gated tool with other
// arguments is refused before anything is sent, or held by the Approval
// gate, which is consulted again.
func TestForgedInterrupt(t *testing.T) {
	s := testserver.Full(testserver.Options{StateKey: stateKey})
	var asked []ToolCall
	a := newAdapter(t, Config{
		Servers: map[string]Server{"s": memServer(s, ModeAuto)},
		Approval: func(call ToolCall) bool {
			asked = append(asked, call)
			return destructiveCall(call)
		},
	})
	intr := must(t).interrupt(lookupTool(t, a, "s__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
	stored, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	calls := s.Count("tools/call")
	ans := answer("date", Accept, date("2026-09-18"))
	for _, tt := range []struct {
		name string
		edit func(map[string]any)
		want error
	}{
		{"mcpName edited", func(w map[string]any) { w["mcpName"] = "destroy" }, ErrInvalidState},
		{"tool edited", func(w map[string]any) { w["tool"] = "s__destroy" }, ErrInvalidState},
		{"unknown server", func(w map[string]any) { w["server"], w["tool"] = "other", "other__book_table" }, ErrUnknownServer},
		{"unknown tool", func(w map[string]any) { w["mcpName"], w["tool"] = "delete_everything", "s__delete_everything" }, ErrInvalidState},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := decodeInterrupt(t, editJSON(t, stored, tt.edit))
			_, err := a.Resume(t.Context(), in, Answered(ans))
			if !errors.Is(err, tt.want) || !errors.Is(err, ErrInvalidState) {
				t.Errorf("Resume() error = %v, want %v and ErrInvalidState", err, tt.want)
			}
		})
	}
	if s.Count("tools/call") != calls {
		t.Errorf("tools/call = %d after the refusals, want %d (nothing sent)", s.Count("tools/call"), calls)
	}

	// A consistent forgery of a gated tool: the gate sees it again, with
	// the forged arguments.
	forged := decodeInterrupt(t, editJSON(t, stored, func(w map[string]any) {
		w["mcpName"], w["tool"], w["arguments"], w["approved"] = "destroy", "s__destroy", map[string]any{"target": "everything"}, true
	}))
	asked = nil
	_, err = a.Resume(t.Context(), forged, Answered(ans))
	var p *ApprovalRequired
	if !errors.As(err, &p) || p.Call.Tool != "s__destroy" || p.Call.Args["target"] != "everything" {
		t.Fatalf("Resume(forged gated call) error = %v, want *ApprovalRequired for s__destroy", err)
	}
	if len(asked) != 1 || asked[0].MCPName != "destroy" {
		t.Errorf("Approval asked %v, want once for destroy", asked)
	}
	if s.Runs("destroy") != 0 || s.Count("tools/call") != calls {
		t.Errorf("destroy ran %d times, tools/call %d; want 0, %d", s.Runs("destroy"), s.Count("tools/call"), calls)
	}
	if _, err := json.Marshal(p); err == nil {
		t.Error("json.Marshal(approval of a resume) succeeded, want an error: it holds the answers")
	}

	// Stored input responses are refused.
	var in Interrupt
	withResponses := editJSON(t, stored, func(w map[string]any) {
		w["inputResponses"] = map[string]any{"date": map[string]any{"action": "accept", "content": date("1999-01-01")}}
	})
	if err := json.Unmarshal(withResponses, &in); !errors.Is(err, ErrInvalidState) {
		t.Errorf("Unmarshal(interrupt with inputResponses) error = %v, want ErrInvalidState", err)
	}
}

// TestForgedURLInterrupt: a URL-elicitation interrupt is stored without
// the answers its request carried, and one carrying answers is refused.
func TestForgedURLInterrupt(t *testing.T) {
	s, _ := urlRequiredServer(false)
	a := newAdapter(t, Config{Servers: map[string]Server{"u": memServer(s, ModeAuto)}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var intr *Interrupt
	for _, tool := range ts {
		if _, err := tool.Invoke(t.Context(), nil); errors.As(err, &intr) && intr.kind == stored.KindURLRequired {
			break
		}
		intr = nil
	}
	if intr == nil {
		t.Fatal("no URL-elicitation interrupt")
	}
	b, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "inputResponses") {
		t.Errorf("stored URL interrupt carries input responses: %s", b)
	}
	var in Interrupt
	forged := editJSON(t, b, func(w map[string]any) { w["inputResponses"] = map[string]any{"x": map[string]any{"action": "accept"}} })
	if err := json.Unmarshal(forged, &in); !errors.Is(err, ErrInvalidState) {
		t.Errorf("Unmarshal(URL interrupt with inputResponses) error = %v, want ErrInvalidState", err)
	}
}

// TestStateKey: with Config.State.Key, stored state must be sealed with the
// key; unsealed, altered, resealed under another key or another kind's
// seal is refused with ErrTamperedState and nothing is sent.
func TestStateKey(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	s := testserver.Full(testserver.Options{StateKey: stateKey})
	cfg := Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, State: StateOptions{Key: key}, Approval: destructiveCall}
	a := newAdapter(t, cfg)
	intr := must(t).interrupt(lookupTool(t, a, "s__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
	sealed, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sealed), `"box"`) {
		t.Fatalf("stored interrupt is not sealed: %s", sealed)
	}
	p := must(t).approval(lookupTool(t, a, "s__destroy").Invoke(t.Context(), map[string]any{"target": "db"}))
	sealedApproval, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	other := cfg
	other.State.Key = []byte("another key, another deployment!")
	otherSealed, err := json.Marshal(must(t).interrupt(lookupTool(t, newAdapter(t, other), "s__book_table").Invoke(t.Context(), map[string]any{"party": 4})))
	if err != nil {
		t.Fatal(err)
	}

	a2 := newAdapter(t, cfg) // another replica, same key
	calls := s.Count("tools/call")
	ans := answer("date", Accept, date("2026-09-18"))
	for _, tt := range []struct {
		name  string
		state []byte
	}{
		{"unsealed", payloadOf(t, a, stateInterrupt, sealed)},
		{"altered", flipBox(t, sealed)},
		{"other key", otherSealed},
		{"approval's seal on an interrupt", sealedApproval},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := decodeInterrupt(t, tt.state)
			if _, err := a2.Resume(t.Context(), in, Answered(ans)); !errors.Is(err, ErrTamperedState) {
				t.Errorf("Resume() error = %v, want ErrTamperedState", err)
			}
		})
	}
	if s.Count("tools/call") != calls {
		t.Errorf("tools/call = %d after the refusals, want %d", s.Count("tools/call"), calls)
	}
	res := must(t).result(a2.Resume(t.Context(), decodeInterrupt(t, sealed), Answered(ans)))
	if want := "Booked a table for 4 on 2026-09-18"; res.Text() != want {
		t.Errorf("Resume(sealed) = %s, want %q", resultText(res), want)
	}

	// A sealed approval is decided on the other replica; an unsealed one
	// is refused.
	var unsealed ApprovalRequired
	if err := json.Unmarshal(payloadOf(t, a, stateApproval, sealedApproval), &unsealed); err != nil {
		t.Fatal(err)
	}
	if _, err := a2.Resume(t.Context(), &unsealed, Approved()); !errors.Is(err, ErrTamperedState) {
		t.Errorf("Approve(unsealed) error = %v, want ErrTamperedState", err)
	}
	var back ApprovalRequired
	if err := json.Unmarshal(sealedApproval, &back); err != nil {
		t.Fatal(err)
	}
	res = must(t).result(a2.Resume(t.Context(), &back, Approved()))
	if res.Text() != "destroyed db" || s.Runs("destroy") != 1 {
		t.Errorf("Approve(sealed) = %s, destroy runs %d; want destroyed db, 1", resultText(res), s.Runs("destroy"))
	}
	if _, err := a2.Resume(t.Context(), &back, Approved()); err == nil || s.Runs("destroy") != 1 {
		t.Errorf("second Approve() error = %v, destroy runs %d; want an error, 1", err, s.Runs("destroy"))
	}
}

// TestDurableApproval: an approval request survives JSON, keeps its ID,
// and is approved or rejected on a new Adapter, in both eras; the new
// Adapter checks it as it checks an interrupt.
func TestDurableApproval(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			s := testserver.Full(testserver.Options{Legacy: legacy})
			cfg := Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, Approval: destructiveCall}
			p := must(t).approval(lookupTool(t, newAdapter(t, cfg), "s__destroy").Invoke(t.Context(), map[string]any{"target": "db"}))
			if len(p.ID()) != 32 {
				t.Errorf("ID = %q, want 32 hex digits", p.ID())
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			decode := func(b []byte) *ApprovalRequired {
				var back ApprovalRequired
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatalf("json.Unmarshal(%s): %v", b, err)
				}
				return &back
			}
			a2 := newAdapter(t, cfg)
			back := decode(b)
			if back.ID() != p.ID() || back.Call.Tool != "s__destroy" || back.Call.Args["target"] != "db" {
				t.Errorf("decoded = %+v, want the stored call", back)
			}
			rejected := must(t).result(a2.Resume(t.Context(), decode(b), Rejected("no")))
			if !rejected.IsError || s.Runs("destroy") != 0 {
				t.Errorf("Reject() = %s, runs %d; want an error result, 0", resultText(rejected), s.Runs("destroy"))
			}
			res := must(t).result(a2.Resume(t.Context(), back, Approved()))
			if res.Text() != "destroyed db" || s.Runs("destroy") != 1 {
				t.Errorf("Approve() = %s, runs %d", resultText(res), s.Runs("destroy"))
			}
			if back.Call.Metadata.Annotations() == nil {
				t.Error("approved call has no metadata from the catalog")
			}
			for _, forged := range [][]byte{
				editJSON(t, b, func(w map[string]any) { w["tool"] = "s__echo" }),
				editJSON(t, b, func(w map[string]any) { w["mcpName"], w["tool"] = "nothing", "s__nothing" }),
				editJSON(t, b, func(w map[string]any) { w["server"] = "x" }),
			} {
				if _, err := a2.Resume(t.Context(), decode(forged), Approved()); !errors.Is(err, ErrInvalidState) {
					t.Errorf("Approve(%s) error = %v, want ErrInvalidState", forged, err)
				}
			}
			if s.Runs("destroy") != 1 {
				t.Errorf("destroy runs = %d, want 1", s.Runs("destroy"))
			}
		})
	}
}

// TestApprovedInterruptResumes: an interrupt of an approved call resumes
// without approval when it can be believed (made in this process, or
// sealed), and needs a new approval, in the resuming process, when it
// comes unsealed from storage.
func TestApprovedInterruptResumes(t *testing.T) {
	s := testserver.Full(testserver.Options{StateKey: stateKey})
	always := func(ToolCall) bool { return true }
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, Approval: always})
	p := must(t).approval(lookupTool(t, a, "s__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
	intr := must(t).interrupt(a.Resume(t.Context(), p, Approved()))
	ans := answer("date", Accept, date("2026-09-18"))

	// Unsealed from storage: approval again, then the resume with the
	// answers given.
	held := must(t).approval(a.Resume(t.Context(), roundTrip(t, intr), Answered(ans)))
	res := must(t).result(a.Resume(t.Context(), held, Approved()))
	if want := "Booked a table for 4 on 2026-09-18"; res.Text() != want {
		t.Errorf("Approve(resume) = %s, want %q", resultText(res), want)
	}
	// Live: no approval.
	must(t).result(a.Resume(t.Context(), intr, Answered(ans)))

	// Sealed, on another replica: without a claim store, a replay of the
	// stored interrupt would send the call again, so Approval is asked
	// again; with one, no approval, and the resume happens once across
	// replicas.
	key := []byte("0123456789abcdef0123456789abcdef")
	cfg := Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, Approval: always, State: StateOptions{Key: key}}
	k1 := newAdapter(t, cfg)
	p = must(t).approval(lookupTool(t, k1, "s__book_table").Invoke(t.Context(), map[string]any{"party": 2}))
	stored, err := json.Marshal(must(t).interrupt(k1.Resume(t.Context(), p, Approved())))
	if err != nil {
		t.Fatal(err)
	}
	runs := s.Runs("book_table")
	for range 2 {
		must(t).approval(newAdapter(t, cfg).Resume(t.Context(), decodeInterrupt(t, stored), Answered(ans)))
	}
	cfg.State.Claims = newClaims()
	res = must(t).result(newAdapter(t, cfg).Resume(t.Context(), decodeInterrupt(t, stored), Answered(ans)))
	if want := "Booked a table for 2 on 2026-09-18"; res.Text() != want {
		t.Errorf("Resume(sealed approved) = %s, want %q", resultText(res), want)
	}
	if _, err := newAdapter(t, cfg).Resume(t.Context(), decodeInterrupt(t, stored), Answered(ans)); !errors.Is(err, ErrClaimedState) {
		t.Errorf("replayed Resume(sealed approved) error = %v, want ErrClaimedState", err)
	}
	if got := s.Runs("book_table"); got != runs+1 {
		t.Errorf("book_table runs = %d, want %d: the approved call sent once", got, runs+1)
	}
}

// memClaims is a ClaimStore in memory, shared by the Adapters of a test
// as replicas share a database.
type memClaims struct {
	mu      sync.Mutex
	claimed map[string]time.Time // id -> expires
	err     error                // returned by every Claim when set
}

func newClaims() *memClaims { return &memClaims{claimed: make(map[string]time.Time)} }

func (c *memClaims) Claim(_ context.Context, id string, expires time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if _, ok := c.claimed[id]; ok {
		return ErrClaimedState
	}
	c.claimed[id] = expires
	return nil
}

// TestStoredStateNeverPanics: hostile stored state is an error wrapping
// ErrInvalidState, for every kind.
func TestStoredStateNeverPanics(t *testing.T) {
	for _, b := range []string{
		`{"version":1,"kind":"inputRequired","server":"s","tool":"s__t","mcpName":"t","round":1,"inputRequests":{"k":null}}`,
		`{"version":1,"kind":"inputRequired","server":"s","tool":"s__t","mcpName":"t","round":1,"inputRequests":{"k":7}}`,
		`{"version":1,"kind":"inputRequired","server":"s","tool":"s__t","mcpName":"t","round":1,"inputRequests":{"k":{"method":"elicitation/create"}}}`,
		`{"version":1,"kind":"inputRequired","server":"s","tool":"s__t","mcpName":"t","round":1,"inputRequests":[]}`,
		`{"sealed":null}`, `{"sealed":"x","mac":"AAAA"}`, `{"sealed":"{}"}`, `null`, `"x"`, `{"version":"1"}`,
		`{"version":1,"calls":[{"id":"1","function":null}],"next":0,"interrupt":null}`,
		`{"version":1,"calls":[],"next":0}`,
		`{"version":1,"calls":[{"id":"1","function":{"name":"s__t"}}],"next":0,"messages":[{"role":"ai","parts":[{"type":"tool_call","tool_call":{"id":"x"}}]}],"approval":{"version":1,"kind":"approvalRequired","server":"s","tool":"s__t","mcpName":"t"}}`,
		`{"version":1,"calls":[{"id":"1","function":{"name":"s__t"}}],"next":0,"interrupt":{"version":1},"approval":{"version":1}}`,
		`{"version":1,"steps":[null],"actions":[null]}`,
		`{"version":1,"inputs":{"input":7}}`,
		"{" + strings.Repeat(" ", maxStateBytes) + "}",
	} {
		for _, v := range []json.Unmarshaler{new(Interrupt), new(ApprovalRequired), new(PausedCalls)} {
			if err := v.UnmarshalJSON([]byte(b)); !errors.Is(err, ErrInvalidState) {
				t.Errorf("Unmarshal(%.120s) into %T: error = %v, want ErrInvalidState", b, v, err)
			}
		}
	}
}

// FuzzStoredState: decoding stored state of every kind never panics, and
// what decodes encodes and decodes again.
func FuzzStoredState(f *testing.F) {
	for _, seed := range []string{
		`{"version":1,"kind":"inputRequired","server":"s","tool":"s__t","mcpName":"t","round":1,"arguments":{"n":1},"requestState":"x","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"m"}}}}`,
		`{"version":1,"kind":"inputRequired","server":"s","tool":"s__t","mcpName":"t","round":1,"inputRequests":{"k":null}}`,
		`{"version":1,"kind":"approvalRequired","id":"00","server":"s","tool":"s__t","mcpName":"t","arguments":{"a":[1,2]}}`,
		`{"version":1,"calls":[{"id":"1","type":"function","function":{"name":"s__t","arguments":"{}"}}],"next":0,"messages":[{"role":"ai","text":"x"}],"approval":{"version":1,"kind":"approvalRequired","server":"s","tool":"s__t","mcpName":"t"}}`,
		`{"version":1,"inputs":{"input":"q"},"steps":[{"tool":"s__w","observation":"o"}],"actions":[{"tool":"s__t"}],"iterations":1,"approval":{"version":1,"kind":"approvalRequired","server":"s","tool":"s__t","mcpName":"t"}}`,
		`{"sealed":"{\"version\":1,\"server\":\"s\",\"tool\":\"s__t\",\"mcpName\":\"t\"}","mac":"AAAA"}`,
		`{"sealed":null,"mac":null}`, `{}`, `null`, `[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, newV := range []func() json.Unmarshaler{
			func() json.Unmarshaler { return new(Interrupt) },
			func() json.Unmarshaler { return new(ApprovalRequired) },
			func() json.Unmarshaler { return new(PausedCalls) },
		} {
			v := newV()
			if v.UnmarshalJSON(b) != nil {
				continue
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%T decoded from %q does not encode: %v", v, b, err)
			}
			if err := newV().UnmarshalJSON(out); err != nil {
				t.Fatalf("%T: %q decoded, encoded as %q, which does not decode: %v", v, b, out, err)
			}
		}
	})
}

// TestStateKeyPauses: with Config.State.Key, a paused batch whose JSON was
// altered (a forged observation for the model) or is not sealed is
// refused, and nothing is sent.
func TestStateKeyPauses(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	s := testserver.Full(testserver.Options{StateKey: stateKey})
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, State: StateOptions{Key: key}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = ts.HandleToolCalls(t.Context(), batchOfThree)
	calls := storeCalls(t, err)
	b, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "Sunny") {
		t.Fatalf("paused calls not sealed: %s", b)
	}
	runs := s.Runs("book_table")
	ans := Answered(answer("date", Accept, date("2026-09-18")))
	for name, state := range map[string][]byte{"altered": flipBox(t, b), "unsealed": payloadOf(t, a, stateCalls, b)} {
		var p PausedCalls
		if err := json.Unmarshal(state, &p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := ts.ResumeToolCalls(t.Context(), &p, ans); !errors.Is(err, ErrTamperedState) {
			t.Errorf("ResumeToolCalls(%s) error = %v, want ErrTamperedState", name, err)
		}
	}
	if got := s.Runs("book_table"); got != runs {
		t.Errorf("book_table runs = %d after the refusals, want %d (nothing sent)", got, runs)
	}
}

// TestStatesOpen: an Adapter's states checks stored state in order, the
// seal before the principal, and believes what state says about itself
// only when it was made here or sealed; per-principal servers are the ones
// of Config.Servers with HeadersFor.
func TestStatesOpen(t *testing.T) {
	headers := func(context.Context, string) (map[string]string, error) { return nil, nil }
	servers := map[string]Server{"shared": {URL: "http://shared.test/mcp"}, "own": {URL: "http://own.test/mcp", HeadersFor: headers}}
	newAdapter := func(key []byte, claims ClaimStore) *Adapter {
		a, err := New(Config{State: StateOptions{Key: key, Claims: claims}, Servers: servers})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	keyed, plain, claimed := newAdapter([]byte("k"), nil), newAdapter(nil, nil), newAdapter([]byte("k"), newClaims())
	payload := []byte(`{"x":1}`)
	b, err := keyed.states.ring.Seal(stateInterrupt, "", time.Time{}, payload)
	if err != nil {
		t.Fatal(err)
	}
	_, sealed, err := unsealState("test", b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openState(&keyed.states, stateInterrupt, &Interrupt{seal: sealed}); !errors.Is(err, ErrInvalidState) {
		t.Errorf("openState of a payload that is no interrupt = %v, want ErrInvalidState", err)
	}
	if _, err := openState(&keyed.states, stateApproval, &Interrupt{seal: sealed}); !errors.Is(err, ErrTamperedState) {
		t.Errorf("openState as another kind = %v, want ErrTamperedState", err)
	}
	local, unsealed := stateSeal{}, stateSeal{decoded: true}
	sealedHere := sealed
	sealedHere.opened = &keyed.states
	alice, bob := WithPrincipal(t.Context(), "alice"), WithPrincipal(t.Context(), "bob")
	tests := []struct {
		name          string
		a             *Adapter
		ctx           context.Context
		kind          string
		seal          stateSeal
		server, owner string
		want          error // nil: opens
	}{
		{"made here, no key", plain, t.Context(), stateInterrupt, local, "shared", "", nil},
		{"decoded, no key", plain, t.Context(), stateInterrupt, unsealed, "shared", "", nil},
		{"sealed, opened", keyed, alice, stateInterrupt, sealedHere, "own", "alice", nil},
		{"sealed, not opened here", keyed, alice, stateInterrupt, sealed, "own", "alice", ErrTamperedState},
		{"unsealed under a key", keyed, alice, stateInterrupt, unsealed, "own", "alice", ErrTamperedState},
		{"seal checked first", keyed, bob, stateApproval, sealed, "own", "alice", ErrTamperedState},
		{"another principal", keyed, bob, stateInterrupt, sealedHere, "own", "alice", ErrWrongPrincipal},
		{"another principal, shared server", plain, bob, stateInterrupt, local, "shared", "alice", ErrWrongPrincipal},
		{"any principal, shared server without owner", plain, bob, stateInterrupt, local, "shared", "", nil},
		{"per-principal state without owner", plain, alice, stateInterrupt, local, "own", "", errNoPrincipal},
		{"per-principal server, ctx without principal", plain, t.Context(), stateInterrupt, local, "own", "alice", errNoPrincipal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.a.states.open(tt.ctx, tt.kind, tt.seal, newStamp(), tt.server, tt.owner)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("open() = %v, want %v", err, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		name string
		a    *Adapter
		seal stateSeal
		want bool
	}{
		{"made here", plain, local, true},
		{"decoded without a key", plain, unsealed, false},
		{"decoded under a key", keyed, sealed, false},
		{"decoded under a key, with claims", claimed, sealed, true},
		{"decoded with claims, no key", newAdapter(nil, newClaims()), unsealed, false},
	} {
		if got := tt.a.states.trusted(tt.seal); got != tt.want {
			t.Errorf("trusted(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestStoredStateByValue: a checkpoint struct that holds an interrupt, an
// approval request and a paused batch by value marshals each of them whole
// (sealed), and each resumes from the decoded struct on another replica.
func TestStoredStateByValue(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	s := testserver.Full(testserver.Options{StateKey: stateKey})
	cfg := Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, State: StateOptions{Key: key}, Approval: destructiveCall}
	a := newAdapter(t, cfg)
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	type checkpoint struct {
		Interrupt Interrupt
		Approval  ApprovalRequired
		Calls     PausedCalls
	}
	var cp checkpoint
	cp.Interrupt = *must(t).interrupt(ts.Lookup("s__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
	cp.Approval = *must(t).approval(ts.Lookup("s__destroy").Invoke(t.Context(), map[string]any{"target": "db"}))
	_, err = ts.HandleToolCalls(t.Context(), batchOfThree)
	var paused *PausedCalls
	if !errors.As(err, &paused) {
		t.Fatalf("HandleToolCalls() error = %v, want *PausedCalls", err)
	}
	cp.Calls = *paused
	b, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]struct {
		Box string `json:"box"`
	}
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Interrupt", "Approval", "Calls"} {
		if fields[name].Box == "" {
			t.Errorf("a struct holding %s by value marshals it unsealed: %s", name, b)
		}
	}
	var back checkpoint
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("json.Unmarshal(checkpoint): %v", err)
	}

	a2 := newAdapter(t, cfg)
	ts2, err := a2.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ans := Answered(answer("date", Accept, date("2026-09-18")))
	res := must(t).result(a2.Resume(t.Context(), &back.Interrupt, ans))
	if want := "Booked a table for 4 on 2026-09-18"; res.Text() != want {
		t.Errorf("Resume(checkpoint.Interrupt) = %s, want %q", resultText(res), want)
	}
	res = must(t).result(a2.Resume(t.Context(), &back.Approval, Approved()))
	if res.Text() != "destroyed db" {
		t.Errorf("Decide(checkpoint.Approval) = %s, want destroyed db", resultText(res))
	}
	msgs, err := ts2.ResumeToolCalls(t.Context(), &back.Calls, ans)
	if err != nil || len(msgs) != 6 {
		t.Errorf("ResumeToolCalls(checkpoint.Calls) = %d messages, %v; want the 6 of the batch", len(msgs), err)
	}
}
