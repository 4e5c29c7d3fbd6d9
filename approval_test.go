package mcpadapter

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/tmc/langchaingo/llms"
)

// approval returns the *ApprovalRequired in err, or fails the test.
func (c checker) approval(res *Result, err error) *ApprovalRequired {
	c.t.Helper()
	var p *ApprovalRequired
	if !errors.As(err, &p) {
		c.t.Fatalf("call = %s, %v; want an *ApprovalRequired", resultText(res), err)
	}
	if res != nil {
		c.t.Errorf("call returned a result with its approval request: %s", resultText(res))
	}
	return p
}

// TestApprovalDestructive gates the tools that may be destructive in both
// eras: the server is not contacted until Approve, and Reject runs nothing.
func TestApprovalDestructive(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			s := testserver.Full(testserver.Options{Legacy: legacy})
			var ts Toolset
			var asked []ToolCall
			a := newAdapter(t, Config{
				Servers: map[string]Server{"s": memServer(s, ModeAuto)},
				Approval: func(call ToolCall) bool {
					asked = append(asked, call)
					return call.Metadata.Annotations().MayBeDestructive()
				},
			})
			var err error
			if ts, err = a.ListTools(t.Context()); err != nil {
				t.Fatal(err)
			}
			calls := s.Count("tools/call")

			// Not destructive: runs.
			must(t).result(ts.Lookup("s__get_weather").Invoke(t.Context(), map[string]any{"city": "Paris"}))
			if s.Runs("get_weather") != 1 {
				t.Fatalf("get_weather runs = %d, want 1", s.Runs("get_weather"))
			}

			// Destructive: held.
			p := must(t).approval(ts.Lookup("s__destroy").Invoke(t.Context(), map[string]any{"target": "db"}))
			if s.Runs("destroy") != 0 || s.Count("tools/call") != calls+1 {
				t.Fatalf("destroy runs = %d, tools/call = %d before Approve; want 0, %d", s.Runs("destroy"), s.Count("tools/call"), calls+1)
			}
			c := p.Call
			if c.Server != "s" || c.Tool != "s__destroy" || c.MCPName != "destroy" || c.Args["target"] != "db" || c.Metadata.Annotations() == nil {
				t.Errorf("Call = %+v, want server s, tool s__destroy (destroy), args and annotations", c)
			}
			if last := asked[len(asked)-1]; last.Tool != "s__destroy" || last.Args["target"] != "db" {
				t.Errorf("Approval saw %+v", last)
			}
			if want := `mcpadapter: server "s": tool "s__destroy" needs approval`; p.Error() != want || strings.Contains(p.Error(), "db") {
				t.Errorf("Error() = %q, want %q (no arguments)", p.Error(), want)
			}
			res := must(t).result(a.Resume(t.Context(), p, Approved()))
			if res.Text() != "destroyed db" || s.Runs("destroy") != 1 {
				t.Errorf("Approve() = %s with %d runs, want destroyed db after 1", resultText(res), s.Runs("destroy"))
			}
			// Decided once.
			if _, err := a.Resume(t.Context(), p, Approved()); !errors.Is(err, ErrClaimedState) {
				t.Errorf("second Approve() error = %v, want a refusal", err)
			}
			if _, err := a.Resume(t.Context(), p, Rejected("too late")); err == nil {
				t.Error("Reject() after Approve succeeded, want an error")
			}
			if s.Runs("destroy") != 1 {
				t.Errorf("destroy runs = %d after the second decision, want 1", s.Runs("destroy"))
			}

			// Rejected: nothing runs, the model reads why.
			p = must(t).approval(ts.Lookup("s__destroy").Invoke(t.Context(), map[string]any{"target": "prod"}))
			res = must(t).result(a.Resume(t.Context(), p, Rejected("production is off limits")))
			if !res.IsError || !strings.Contains(res.Text(), "production is off limits") || !strings.Contains(res.Text(), "s__destroy") {
				t.Errorf("Reject() = %s, want an error result naming the tool and the reason", resultText(res))
			}
			if _, err := a.Resume(t.Context(), p, Approved()); err == nil {
				t.Error("Approve() after Reject succeeded, want an error")
			}
			if s.Runs("destroy") != 1 {
				t.Errorf("destroy runs = %d after Reject, want 1", s.Runs("destroy"))
			}
			res = must(t).result(a.Resume(t.Context(), must(t).approval(ts.Lookup("s__destroy").Invoke(t.Context(), nil)), Rejected("")))
			if want := "The user rejected the call to tool s__destroy; it was not run."; res.Text() != want {
				t.Errorf("Reject(\"\") = %s, want %q", resultText(res), want)
			}
		})
	}
}

// TestApprovalArgument gates on an argument (a protected path), through
// every call API, and lets the reviewer edit the arguments.
func TestApprovalArgument(t *testing.T) {
	s := testserver.Full(testserver.Options{})
	protected := func(call ToolCall) bool {
		text, _ := call.Args["text"].(string)
		return strings.HasPrefix(text, "/etc/")
	}
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, Approval: protected})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	echo := ts.Lookup("s__echo")
	if res := must(t).result(echo.Invoke(t.Context(), map[string]any{"text": "/home/me"})); res.Text() != "/home/me" {
		t.Errorf("Invoke(/home/me) = %s", resultText(res))
	}
	runs := s.Runs("echo")

	must(t).approval(echo.Invoke(t.Context(), map[string]any{"text": "/etc/passwd"}))
	must(t).approval(echo.InvokeJSON(t.Context(), `{"text": "/etc/shadow"}`))
	out, err := echo.Call(t.Context(), `{"text": "/etc/hosts"}`)
	p := must(t).approval(nil, err)
	if out != "" {
		t.Errorf("Call() = %q with its approval request, want no text", out)
	}
	msgs, err := ts.HandleToolCalls(t.Context(), &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		{ID: "1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "s__echo", Arguments: `{"text":"ok"}`}},
		{ID: "2", Type: "function", FunctionCall: &llms.FunctionCall{Name: "s__echo", Arguments: `{"text":"/etc/group"}`}},
	}})
	must(t).approval(nil, err)
	if len(msgs) != 2 {
		t.Errorf("HandleToolCalls() = %d messages, want the 2 of the first call", len(msgs))
	}
	if got := s.Runs("echo") - runs; got != 1 {
		t.Errorf("echo runs while gated = %d, want 1 (the ungated call)", got)
	}
	// The reviewer edits the arguments before approving.
	p.Call.Args["text"] = "/etc/hosts (redacted)"
	if res := must(t).result(a.Resume(t.Context(), p, Approved())); res.Text() != "/etc/hosts (redacted)" {
		t.Errorf("Approve() = %s, want the edited argument", resultText(res))
	}
}

// TestApprovalThenInterrupt: an approved call may need user input; the
// resume does not ask for approval again.
func TestApprovalThenInterrupt(t *testing.T) {
	s := bookingServer(false)
	var approvals atomic.Int32
	a := newAdapter(t, Config{
		Servers:  map[string]Server{"b": memServer(s, ModeAuto)},
		Approval: func(ToolCall) bool { approvals.Add(1); return true },
	})
	p := must(t).approval(lookupTool(t, a, "b__book_table").Invoke(t.Context(), map[string]any{"party": 4}))
	if s.Runs("book_table") != 0 {
		t.Fatalf("runs before Approve = %d, want 0", s.Runs("book_table"))
	}
	intr := must(t).interrupt(a.Resume(t.Context(), p, Approved()))
	res := must(t).result(a.Resume(t.Context(), intr, Answered(answer("date", Accept, date("2026-09-18")))))
	if want := "Booked a table for 4 on 2026-09-18"; res.Text() != want {
		t.Errorf("Resume() = %s, want %q", resultText(res), want)
	}
	if got := approvals.Load(); got != 1 {
		t.Errorf("Approval asked %d times, want 1", got)
	}
}

// TestApproveOnce: concurrent Approve calls run the call once.
func TestApproveOnce(t *testing.T) {
	s := testserver.Full(testserver.Options{})
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, Approval: func(ToolCall) bool { return true }})
	p := must(t).approval(lookupTool(t, a, "s__destroy").Invoke(t.Context(), map[string]any{"target": "x"}))
	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 8 {
		wg.Go(func() {
			if _, err := a.Resume(t.Context(), p, Approved()); err == nil {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || s.Runs("destroy") != 1 {
		t.Errorf("%d Approve calls succeeded, %d runs; want 1, 1", ok.Load(), s.Runs("destroy"))
	}
}

// TestApprovalMisuse: zero and nil values, and a Resolution of the wrong
// sort, fail without panicking and without sending anything.
func TestApprovalMisuse(t *testing.T) {
	var nilP *ApprovalRequired
	var nilI *Interrupt
	if nilP.Error() == "" || nilI.Error() == "" {
		t.Error("nil Error() is empty")
	}
	s := testserver.Full(testserver.Options{})
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, Approval: destructiveCall})
	if _, err := a.Resume(t.Context(), nilP, Approved()); err == nil {
		t.Error("nil Decide(Approved) succeeded")
	}
	if _, err := a.Resume(t.Context(), nilP, Rejected("")); err == nil {
		t.Error("nil Decide(Rejected) succeeded")
	}
	if _, err := a.Resume(t.Context(), new(ApprovalRequired), Approved()); err == nil || !strings.Contains(err.Error(), "not an approval request") {
		t.Errorf("zero Decide() error = %v", err)
	}
	p := must(t).approval(lookupTool(t, a, "s__destroy").Invoke(t.Context(), map[string]any{"target": "db"}))
	if _, err := a.Resume(t.Context(), p, Answered(nil)); err == nil || !strings.Contains(err.Error(), "resolve it with Approved or Rejected") {
		t.Errorf("Decide(Answered) error = %v, want a pointer to Approved or Rejected", err)
	}
	must(t).result(a.Resume(t.Context(), p, Approved())) // the refusal decided nothing
	if s.Runs("destroy") != 1 {
		t.Errorf("destroy runs = %d, want 1", s.Runs("destroy"))
	}
	intr := must(t).interrupt(lookupTool(t, a, "s__book_table").Invoke(t.Context(), map[string]any{"party": 2}))
	if _, err := a.Resume(t.Context(), intr, Approved()); err == nil || !strings.Contains(err.Error(), "resolve it with Answered") {
		t.Errorf("Resume(Approved) error = %v, want a pointer to Answered", err)
	}
}

func TestMayBeDestructive(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		ann  *ToolAnnotations
		want bool
	}{
		{"no annotations", nil, true},
		{"no hints", &ToolAnnotations{Title: "t"}, true},
		{"read-only", &ToolAnnotations{ReadOnlyHint: &yes}, false},
		{"read-only, destructive hint ignored", &ToolAnnotations{ReadOnlyHint: &yes, DestructiveHint: &yes}, false},
		{"not destructive", &ToolAnnotations{DestructiveHint: &no}, false},
		{"destructive", &ToolAnnotations{DestructiveHint: &yes}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call := ToolCall{Tool: "x"}
			if tt.ann != nil {
				call.Metadata = Metadata{MCP: &MCPMetadata{Tool: &ToolMetadata{Annotations: tt.ann}}}
			}
			if got := call.Metadata.Annotations().MayBeDestructive(); got != tt.want {
				t.Errorf("MayBeDestructive() = %t, want %t", got, tt.want)
			}
		})
	}
	if !(ToolCall{}).Metadata.Annotations().MayBeDestructive() {
		t.Error("MayBeDestructive(zero) = false, want true")
	}

	// As a policy over a real server's tools.
	s := testserver.Full(testserver.Options{})
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}, Approval: func(c ToolCall) bool { return c.Metadata.Annotations().MayBeDestructive() }})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	must(t).result(ts.Lookup("s__get_weather").Invoke(t.Context(), map[string]any{"city": "Oslo"})) // read-only
	must(t).approval(ts.Lookup("s__destroy").Invoke(t.Context(), nil))                              // destructive
	must(t).approval(ts.Lookup("s__echo").Invoke(t.Context(), map[string]any{"text": "hi"}))        // no annotations
	if s.Runs("destroy") != 0 || s.Runs("echo") != 0 {
		t.Errorf("gated tools ran: destroy %d, echo %d", s.Runs("destroy"), s.Runs("echo"))
	}
}

// TestApprovalSeesRewrittenArgs: the approval gate comes after Middleware,
// so Config.Approval and the reviewer see the arguments that are sent.
// Approve runs the middleware again: a rewrite that holds sends the
// approved arguments; one that changes them again asks again.
func TestApprovalSeesRewrittenArgs(t *testing.T) {
	for _, name := range []string{"redact", "append"} {
		t.Run(name, func(t *testing.T) {
			s := testserver.Full(testserver.Options{})
			var asked []ToolCall
			rewrite := func(next CallHandler) CallHandler {
				return func(ctx context.Context, req *CallRequest) (*Result, error) {
					if name == "redact" {
						req.Args["text"] = "[redacted]"
					} else {
						req.Args["text"] = req.Args["text"].(string) + "!"
					}
					return next(ctx, req)
				}
			}
			a := newAdapter(t, Config{
				Servers:    map[string]Server{"s": memServer(s, ModeAuto)},
				Middleware: []Middleware{rewrite},
				Approval: func(call ToolCall) bool {
					asked = append(asked, call)
					return true
				},
			})
			ts, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			p := must(t).approval(ts.Lookup("s__echo").Invoke(t.Context(), map[string]any{"text": "secret"}))
			want := map[string]string{"redact": "[redacted]", "append": "secret!"}[name]
			if got := p.Call.Args["text"]; got != want || asked[0].Args["text"] != want {
				t.Fatalf("the reviewer sees text %q and Approval %q, want the rewritten %q", got, asked[0].Args["text"], want)
			}
			res, err := a.Resume(t.Context(), p, Approved())
			if name == "append" {
				// Applied again, the rewrite changes what was approved.
				again := must(t).approval(res, err)
				if got := again.Call.Args["text"]; got != "secret!!" || s.Runs("echo") != 0 {
					t.Fatalf("approved text changed by the middleware: held again with %q, %d runs; want %q, 0 runs", got, s.Runs("echo"), "secret!!")
				}
				return
			}
			if err != nil || res.Text() != want {
				t.Fatalf("Approve() = %s, %v; want %q", resultText(res), err, want)
			}
			if got := s.LastArgs("echo")["text"]; got != want || s.Runs("echo") != 1 {
				t.Fatalf("the server got text %v in %d runs, want %q once", got, s.Runs("echo"), want)
			}
			if len(asked) != 1 {
				t.Errorf("Approval was asked %d times, want once", len(asked))
			}
		})
	}
}
