package mcpadapter

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// refusedFor checks that err wraps want and names no principal of the
// tests (principal ids may be personal data).
func refusedFor(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error = %v, want %v", what, err, want)
		return
	}
	for _, p := range []string{"alice", "bob", "mallory"} {
		if strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q names principal %q", what, err, p)
		}
	}
}

// TestStoredStatePrincipal: the interrupts, approval requests, paused
// batches and paused runs of a per-principal server resume, or are
// decided, only under the principal they were made for, live or stored, on
// the Adapter that made them or another; state without a principal, and a
// context without one, fail with errNoPrincipal. Nothing is sent, and a
// refused approval stays undecided. Both eras: approvals in both, input
// interrupts in the modern one (legacy servers ask live).
func TestStoredStatePrincipal(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			s := testserver.Full(testserver.Options{Legacy: legacy, StateKey: stateKey})
			web := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.Server }, &mcp.StreamableHTTPOptions{Stateless: !legacy}))
			t.Cleanup(web.Close) // after the adapters' Close
			cfg := Config{Servers: map[string]Server{"s": {URL: web.URL, HeadersFor: bearer}}, Approval: destructiveCall}
			a, a2 := newAdapter(t, cfg), newAdapter(t, cfg) // a2: another replica
			alice, bob := WithPrincipal(t.Context(), "alice"), WithPrincipal(t.Context(), "bob")
			ts, err := a.ListTools(alice)
			if err != nil {
				t.Fatal(err)
			}
			edit := func(b []byte, principal string) []byte {
				return editJSON(t, b, func(w map[string]any) {
					if principal == "" {
						delete(w, "principal")
					} else {
						w["principal"] = principal
					}
				})
			}

			p := must(t).approval(ts.Lookup("s__destroy").Invoke(alice, map[string]any{"target": "db"}))
			stored, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
				mcpadaptertest.ToolCall("call_1", "s__echo", `{"text":"a"}`),
				mcpadaptertest.ToolCall("call_2", "s__destroy", `{"target":"db"}`),
			}}
			_, err = ts.HandleToolCalls(alice, choice)
			batch := storeCalls(t, err)
			calls := s.Count("tools/call")
			for _, tt := range []struct {
				name string
				do   func() error
				want error
			}{
				{"live approval, another principal", func() error { _, err := a.Resume(bob, p, Approved()); return err }, ErrWrongPrincipal},
				{"live rejection, another principal", func() error { _, err := a.Resume(bob, p, Rejected("no")); return err }, ErrWrongPrincipal},
				{"live approval, no principal", func() error { _, err := a.Resume(t.Context(), p, Approved()); return err }, errNoPrincipal},
				{"stored approval, another principal", func() error {
					_, err := a2.Resume(bob, decodeStored[ApprovalRequired](t, stored), Approved())
					return err
				}, ErrWrongPrincipal},
				{"stored rejection, another principal", func() error {
					_, err := a2.Resume(bob, decodeStored[ApprovalRequired](t, stored), Rejected("no"))
					return err
				}, ErrWrongPrincipal},
				{"stored approval, principal edited", func() error {
					_, err := a2.Resume(bob, decodeStored[ApprovalRequired](t, edit(stored, "mallory")), Approved())
					return err
				}, ErrWrongPrincipal},
				{"stored approval, principal removed", func() error {
					_, err := a2.Resume(alice, decodeStored[ApprovalRequired](t, edit(stored, "")), Approved())
					return err
				}, errNoPrincipal},
				{"paused batch, another principal", func() error {
					msgs, err := ts.ResumeToolCalls(bob, batch, Approved())
					if msgs != nil {
						t.Errorf("a refused batch returned %d messages, want none", len(msgs))
					}
					return err
				}, ErrWrongPrincipal},
			} {
				refusedFor(t, tt.name, tt.do(), tt.want)
			}
			if got := s.Count("tools/call"); got != calls || s.Runs("destroy") != 0 {
				t.Fatalf("tools/call %d, destroy runs %d after the refusals; want %d, 0 (nothing sent)", got, s.Runs("destroy"), calls)
			}
			if res := must(t).result(a2.Resume(alice, decodeStored[ApprovalRequired](t, stored), Approved())); res.Text() != "destroyed db" {
				t.Errorf("Approve(stored, alice) = %s, want destroyed db", resultText(res))
			}
			if res := must(t).result(a.Resume(alice, p, Approved())); res.Text() != "destroyed db" {
				t.Errorf("Approve(live, alice) after the refusals = %s, want destroyed db (undecided)", resultText(res))
			}

			if legacy {
				return
			}
			in := must(t).interrupt(ts.Lookup("s__book_table").Invoke(alice, map[string]any{"party": 4}))
			b, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			ans := answer("date", Accept, date("2026-09-18"))
			runs := s.Runs("book_table")
			for _, tt := range []struct {
				name string
				do   func() error
				want error
			}{
				{"live interrupt, another principal", func() error { _, err := a.Resume(bob, in, Answered(ans)); return err }, ErrWrongPrincipal},
				{"stored interrupt, another principal", func() error { _, err := a2.Resume(bob, decodeInterrupt(t, b), Answered(ans)); return err }, ErrWrongPrincipal},
				{"stored interrupt, no principal", func() error { _, err := a2.Resume(t.Context(), decodeInterrupt(t, b), Answered(ans)); return err }, errNoPrincipal},
				{"stored interrupt, principal edited", func() error {
					_, err := a2.Resume(bob, decodeInterrupt(t, edit(b, "mallory")), Answered(ans))
					return err
				}, ErrWrongPrincipal},
				{"stored interrupt, principal removed", func() error { _, err := a2.Resume(alice, decodeInterrupt(t, edit(b, "")), Answered(ans)); return err }, errNoPrincipal},
			} {
				refusedFor(t, tt.name, tt.do(), tt.want)
			}
			if got := s.Runs("book_table"); got != runs {
				t.Fatalf("book_table runs %d after the refusals, want %d (nothing sent)", got, runs)
			}
			if res := must(t).result(a2.Resume(alice, decodeInterrupt(t, b), Answered(ans))); res.Text() != "Booked a table for 4 on 2026-09-18" {
				t.Errorf("Resume(stored, alice) = %s", resultText(res))
			}
		})
	}
}

// TestStoredStatePrincipalShared: on a shared server, an interrupt made
// under a principal resumes under that principal only, one made without a
// principal (the wire form of state stored before principals were
// recorded) under any; with a StateKey, an edited principal breaks the
// seal.
func TestStoredStatePrincipalShared(t *testing.T) {
	s := testserver.Full(testserver.Options{StateKey: stateKey})
	cfg := Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}}
	a := newAdapter(t, cfg)
	alice, bob := WithPrincipal(t.Context(), "alice"), WithPrincipal(t.Context(), "bob")
	book := lookupTool(t, a, "s__book_table")
	ans := answer("date", Accept, date("2026-09-18"))
	const want = "Booked a table for 4 on 2026-09-18"

	b, err := json.Marshal(must(t).interrupt(book.Invoke(alice, map[string]any{"party": 4})))
	if err != nil {
		t.Fatal(err)
	}
	runs := s.Runs("book_table")
	_, err = a.Resume(bob, decodeInterrupt(t, b), Answered(ans))
	refusedFor(t, "another principal", err, ErrWrongPrincipal)
	_, err = a.Resume(t.Context(), decodeInterrupt(t, b), Answered(ans))
	refusedFor(t, "no principal", err, ErrWrongPrincipal)
	if got := s.Runs("book_table"); got != runs {
		t.Fatalf("book_table runs %d after the refusals, want %d", got, runs)
	}
	if res := must(t).result(a.Resume(alice, decodeInterrupt(t, b), Answered(ans))); res.Text() != want {
		t.Errorf("Resume(alice) = %s, want %q", resultText(res), want)
	}

	old, err := json.Marshal(must(t).interrupt(book.Invoke(t.Context(), map[string]any{"party": 4})))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(old), "principal") {
		t.Fatalf("an interrupt made without a principal stores one: %s", old)
	}
	if res := must(t).result(a.Resume(bob, decodeInterrupt(t, old), Answered(ans))); res.Text() != want {
		t.Errorf("Resume(state without a principal, bob) = %s, want %q", resultText(res), want)
	}

	cfg.State.Key = []byte("0123456789abcdef0123456789abcdef")
	sealedBy := newAdapter(t, cfg)
	sealed, err := json.Marshal(must(t).interrupt(lookupTool(t, sealedBy, "s__book_table").Invoke(alice, map[string]any{"party": 4})))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(payloadOf(t, sealedBy, stateInterrupt, sealed)), `"principal":"alice"`) {
		t.Fatalf("the sealed interrupt records no principal: %s", sealed)
	}
	forged := flipBox(t, sealed) // without the key, the principal cannot be edited in place
	_, err = newAdapter(t, cfg).Resume(bob, decodeInterrupt(t, forged), Answered(ans))
	refusedFor(t, "sealed, principal edited", err, ErrTamperedState)
}
