package stored

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/tasks"
	"github.com/tmc/langchaingo/llms"
)

// TestApprovalRoundTrip: an encoded approval decodes to what was stored,
// numbers kept exact.
func TestApprovalRoundTrip(t *testing.T) {
	b, err := Approval{ID: "x", Server: "s", Tool: "s_t", MCPName: "t", Principal: "alice"}.Encode(map[string]any{"n": json.Number("12345678901234567890")})
	if err != nil {
		t.Fatal(err)
	}
	w, args, err := DecodeApproval(b)
	if err != nil {
		t.Fatal(err)
	}
	if w.Version != approvalVersion || w.Kind != kindApproval || w.Server != "s" || w.Tool != "s_t" || w.MCPName != "t" || w.Principal != "alice" || w.ID != "x" {
		t.Errorf("decoded %+v", w)
	}
	if n, _ := args["n"].(json.Number); n != "12345678901234567890" {
		t.Errorf("args = %#v, want the number exact", args)
	}
	if b, err := (Approval{Server: "s", MCPName: "t"}).Encode(nil); err != nil || strings.Contains(string(b), "arguments") {
		t.Errorf("Encode(nil) = %s, %v; want no arguments", b, err)
	}
	if _, args, err := DecodeApproval([]byte(`{"version":1,"kind":"approvalRequired","server":"s","mcpName":"t","arguments":null}`)); err != nil || args != nil {
		t.Errorf("null arguments: %v, %v; want none, no error", args, err)
	}
}

// TestDecodeApprovalChecks: each check refuses its case with its text.
func TestDecodeApprovalChecks(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`[]`, "cannot unmarshal"},
		{`{"version":2,"kind":"approvalRequired","server":"s","mcpName":"t"}`, "unsupported version 2"},
		{`{"version":1,"kind":"interrupt","server":"s","mcpName":"t"}`, `kind "interrupt", want "approvalRequired"`},
		{`{"version":1,"kind":"approvalRequired","mcpName":"t"}`, "missing server or tool"},
		{`{"version":1,"kind":"approvalRequired","server":"s"}`, "missing server or tool"},
		{`{"version":1,"kind":"approvalRequired","server":"s","mcpName":"t","arguments":[1]}`, "arguments: "},
	} {
		if _, _, err := DecodeApproval([]byte(c.json)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeApproval(%s) = %v, want %q", c.json, err, c.want)
		}
	}
}

// TestBatchRoundTrip: a batch's calls survive the wire form with their
// functions.
func TestBatchRoundTrip(t *testing.T) {
	calls := []llms.ToolCall{
		{ID: "1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "a", Arguments: "{}"}},
		{ID: "2", Type: "function", FunctionCall: &llms.FunctionCall{Name: "b", Arguments: `{"x":1}`}},
	}
	b, err := json.Marshal(NewBatch(calls, 1, nil, nil, json.RawMessage(`{"run":1}`)))
	if err != nil {
		t.Fatal(err)
	}
	var w Batch
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	got, err := w.Check()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].ID != "2" || got[1].FunctionCall == nil || got[1].FunctionCall.Arguments != `{"x":1}` || string(w.State) != `{"run":1}` {
		t.Errorf("Check() = %+v, state %s", got, w.State)
	}
}

// TestBatchChecks: each check of a decoded batch refuses its case.
func TestBatchChecks(t *testing.T) {
	fn := &llms.FunctionCall{Name: "a"}
	bad := []llms.MessageContent{{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{ID: "1"}}}}
	for _, c := range []struct {
		w    Batch
		want string
	}{
		{Batch{Version: 2, Calls: []Call{{Function: fn}}}, "unsupported version 2"},
		{Batch{Version: 1, Calls: make([]Call, maxCalls+1)}, fmt.Sprintf("%d calls, more than %d", maxCalls+1, maxCalls)},
		{Batch{Version: 1}, "paused call 0 of 0"},
		{Batch{Version: 1, Calls: []Call{{Function: fn}}, Next: -1}, "paused call -1 of 1"},
		{Batch{Version: 1, Calls: []Call{{Function: fn}}, Next: 1}, "paused call 1 of 1"},
		{Batch{Version: 1, Calls: []Call{{}}}, "the paused call has no function"},
		{Batch{Version: 1, Calls: []Call{{Function: fn}}, Messages: bad}, "a message holds a tool call without a function"},
		{Batch{Version: 1, Calls: []Call{{Function: fn}}, Media: bad}, "a message holds a tool call without a function"},
	} {
		if _, err := c.w.Check(); err == nil || err.Error() != c.want {
			t.Errorf("Check(%+v) = %v, want %q", c.w, err, c.want)
		}
	}
}

// TestTask: a pending task's stored form round-trips; a wrong version or
// a missing name is refused; status texts are cut.
func TestTask(t *testing.T) {
	b, err := Task{Server: "s", Tool: "t", MCPName: "m", TaskID: "id", Status: "working"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	s, err := DecodeTask(b)
	if err != nil || s.Version != taskVersion || s.TaskID != "id" {
		t.Fatalf("DecodeTask = %+v, %v", s, err)
	}
	for _, bad := range []string{`{"version":2,"server":"s","mcpName":"m","taskId":"id"}`, `{"version":1,"server":"s","taskId":"id"}`, `[]`} {
		if _, err := DecodeTask([]byte(bad)); err == nil {
			t.Errorf("DecodeTask(%s) accepted", bad)
		}
	}
	msg := strings.Repeat("x", 4<<10)
	long, _ := json.Marshal(Task{Version: 1, Server: "s", MCPName: "m", TaskID: "id", StatusMessage: msg})
	if s, _ := DecodeTask(long); len(s.StatusMessage) >= len(msg) || s.StatusMessage != tasks.Truncate(msg) {
		t.Errorf("a stored status message of %d bytes is kept as %d bytes", len(msg), len(s.StatusMessage))
	}
}
