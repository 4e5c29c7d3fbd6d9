package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/llms"
)

// batchOfThree is a model turn of three calls whose second needs input.
var batchOfThree = &llms.ContentChoice{ToolCalls: []llms.ToolCall{
	mcpadaptertest.ToolCall("call_1", "s__get_weather", `{"city":"Paris"}`),
	mcpadaptertest.ToolCall("call_2", "s__book_table", `{"party":4}`),
	mcpadaptertest.ToolCall("call_3", "s__echo", `{"text":"hi"}`),
}}

// storeCalls encodes p as JSON and decodes it, as a store would.
func storeCalls(t *testing.T, err error) *PausedCalls {
	t.Helper()
	var p *PausedCalls
	if !errors.As(err, &p) {
		t.Fatalf("error = %v, want *PausedCalls", err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatalf("json.Marshal(paused calls): %v", err)
	}
	var back PausedCalls
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("json.Unmarshal(%s): %v", b, err)
	}
	return &back
}

// TestResumeToolCalls: a batch of three calls whose second is interrupted,
// stored and resumed on a new Adapter, gives exactly the messages of an
// uninterrupted run (the golden), and no call runs twice.
func TestResumeToolCalls(t *testing.T) {
	full := func() *testserver.Server { return testserver.Full(testserver.Options{StateKey: stateKey}) }
	// Uninterrupted: the handler answers inline.
	inline := newAdapter(t, Config{
		Servers: map[string]Server{"s": memServer(full(), ModeAuto)},
		ElicitationHandler: func(context.Context, ElicitationRequest) (Answer, error) {
			return Answer{Action: Accept, Content: date("2026-09-18")}, nil
		},
	})
	ts, err := inline.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want, err := ts.HandleToolCalls(t.Context(), batchOfThree)
	if err != nil {
		t.Fatal(err)
	}

	s1 := full()
	a1 := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s1, ModeAuto)}})
	ts1, err := a1.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := ts1.HandleToolCalls(t.Context(), batchOfThree)
	if len(msgs) != 2 {
		t.Errorf("paused batch returned %d messages, want the 2 of call_1", len(msgs))
	}
	var intr *Interrupt
	if !errors.As(err, &intr) || intr.MCPName != "book_table" {
		t.Fatalf("HandleToolCalls() error = %v, want book_table's interrupt through the pause", err)
	}
	stored := storeCalls(t, err)
	a1.Close()

	s2 := full()
	a2 := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s2, ModeAuto)}})
	ts2, err := a2.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got, err := ts2.ResumeToolCalls(t.Context(), stored, Answered(answer("date", Accept, date("2026-09-18"))))
	if err != nil {
		t.Fatalf("ResumeToolCalls: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resumed messages differ from an uninterrupted run:\n got %+v\nwant %+v", got, want)
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "pause/batch_of_three.json", append(b, '\n'))
	if s1.Runs("get_weather") != 1 || s2.Runs("get_weather") != 0 || s2.Runs("book_table") != 1 || s2.Runs("echo") != 1 || s1.Runs("echo") != 0 {
		t.Errorf("runs: get_weather %d+%d, book_table %d+%d, echo %d+%d; want 1+0, 1+1, 0+1",
			s1.Runs("get_weather"), s2.Runs("get_weather"), s1.Runs("book_table"), s2.Runs("book_table"), s1.Runs("echo"), s2.Runs("echo"))
	}
	// The pause was settled: the same resolution is refused for a mismatch.
	if _, err := ts2.ResumeToolCalls(t.Context(), stored, Approved()); err == nil {
		t.Error("ResumeToolCalls(interrupt, Approved) succeeded, want an error")
	}
}

// TestResumeToolCallsTwoPauses: two calls of one batch that both need
// input pause the batch twice, one after the other.
func TestResumeToolCallsTwoPauses(t *testing.T) {
	s := testserver.Full(testserver.Options{StateKey: stateKey})
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		mcpadaptertest.ToolCall("call_1", "s__book_table", `{"party":2}`),
		mcpadaptertest.ToolCall("call_2", "s__book_table", `{"party":4}`),
	}}
	_, err = ts.HandleToolCalls(t.Context(), choice)
	first := storeCalls(t, err)
	if first.Next != 0 {
		t.Fatalf("first pause at call %d, want 0", first.Next)
	}
	_, err = ts.ResumeToolCalls(t.Context(), first, Answered(answer("date", Accept, date("2026-09-18"))))
	second := storeCalls(t, err)
	if second.Next != 1 {
		t.Fatalf("second pause at call %d, want 1", second.Next)
	}
	msgs, err := ts.ResumeToolCalls(t.Context(), second, Answered(answer("date", Accept, date("2026-09-19"))))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				texts = append(texts, r.Content)
			}
		}
	}
	if want := []string{"Booked a table for 2 on 2026-09-18", "Booked a table for 4 on 2026-09-19"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("results = %q, want %q", texts, want)
	}
}

// TestResumeToolCallsApproval: a batch paused at an approval, in both
// eras, approved or rejected on a new Adapter.
func TestResumeToolCallsApproval(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		for _, approve := range []bool{true, false} {
			name := eraName(legacy) + "/rejected"
			if approve {
				name = eraName(legacy) + "/approved"
			}
			t.Run(name, func(t *testing.T) {
				cfg := func(s *testserver.Server) Config {
					return Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, Approval: destructiveCall}
				}
				choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
					mcpadaptertest.ToolCall("call_1", "s__echo", `{"text":"a"}`),
					mcpadaptertest.ToolCall("call_2", "s__destroy", `{"target":"db"}`),
					mcpadaptertest.ToolCall("call_3", "s__echo", `{"text":"b"}`),
				}}
				s1 := testserver.Full(testserver.Options{Legacy: legacy})
				a1 := newAdapter(t, cfg(s1))
				ts1, err := a1.ListTools(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				_, err = ts1.HandleToolCalls(t.Context(), choice)
				stored := storeCalls(t, err)
				a1.Close()

				s2 := testserver.Full(testserver.Options{Legacy: legacy})
				a2 := newAdapter(t, cfg(s2))
				ts2, err := a2.ListTools(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				r, want := Rejected("keep it"), "The user rejected the call to tool s__destroy; it was not run. Reason: keep it"
				if approve {
					r, want = Approved(), "destroyed db"
				}
				msgs, err := ts2.ResumeToolCalls(t.Context(), stored, r)
				if err != nil {
					t.Fatal(err)
				}
				if len(msgs) != 6 || msgs[3].Parts[0].(llms.ToolCallResponse).Content != want {
					t.Errorf("messages = %+v, want 6 with call_2 answered %q", msgs, want)
				}
				runs := 0
				if approve {
					runs = 1
				}
				if s1.Runs("echo") != 1 || s2.Runs("echo") != 1 || s1.Runs("destroy") != 0 || s2.Runs("destroy") != runs {
					t.Errorf("runs: echo %d+%d, destroy %d+%d; want 1+1, 0+%d", s1.Runs("echo"), s2.Runs("echo"), s1.Runs("destroy"), s2.Runs("destroy"), runs)
				}
			})
		}
	}
}

// destructiveCall is an Approval policy for these tests: the server
// declared the tool destructive.
func destructiveCall(call ToolCall) bool {
	ann := call.Metadata.Annotations()
	return ann != nil && ann.DestructiveHint != nil && *ann.DestructiveHint
}

// TestZeroPauseIsNoError: a zero PausedCalls (or a nil one)
// wraps no error: Unwrap returns an untyped nil, not a nil *ApprovalRequired
// in an error, and Error says that nothing is paused.
func TestZeroPauseIsNoError(t *testing.T) {
	for _, p := range []interface {
		error
		Unwrap() error
	}{&PausedCalls{}, (*PausedCalls)(nil)} {
		if err := p.Unwrap(); err != nil {
			t.Errorf("%T.Unwrap() = %#v, want nil", p, err)
		}
		var ar *ApprovalRequired
		if errors.As(p, &ar) {
			t.Errorf("errors.As(%T, *ApprovalRequired) found %v in a zero pause", p, ar)
		}
		if msg := p.Error(); msg == "" || msg == "<nil approval request>" {
			t.Errorf("%T.Error() = %q", p, msg)
		}
	}
}
