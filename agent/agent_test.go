package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
)

// fullToolset returns the tools of a full test server as server "s", and
// the server.
func fullToolset(t *testing.T) (mcpadapter.Toolset, *testserver.Server) {
	t.Helper()
	s := testserver.Full(testserver.Options{StateKey: stateKey})
	a := newAdapter(t, mcpadapter.Config{Servers: map[string]mcpadapter.Server{"s": memServer(s)}})
	return listTools(t, a), s
}

// parallelTurn is a turn of parallel tool calls: a result with text and
// structured content, an image, an isError result, an unknown tool and
// arguments that are not JSON.
func parallelTurn(withImage bool) mcpadaptertest.Turn {
	calls := []llms.ToolCall{
		mcpadaptertest.ToolCall("call_w", "s__get_weather", `{"city":"Paris","unit":null}`),
		mcpadaptertest.ToolCall("call_f", "s__fail", `{}`),
		mcpadaptertest.ToolCall("call_n", "s__nope", `{}`),
		mcpadaptertest.ToolCall("call_s", "s__structured_only", `{}`),
	}
	if withImage {
		calls = append(calls, mcpadaptertest.ToolCall("call_i", "s__image", `{}`))
	}
	return mcpadaptertest.ToolCalls(calls...)
}

// nativeLoop is the loop a user writes over HandleToolCalls: it returns
// what the model was sent.
func nativeLoop(t *testing.T, ts mcpadapter.Toolset, turns []mcpadaptertest.Turn, parts ...mcpadapter.PartOption) *mcpadaptertest.Model {
	t.Helper()
	model := mcpadaptertest.NewModel(turns...)
	history := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "q")}
	for {
		resp, err := model.GenerateContent(t.Context(), history, llms.WithTools(ts.LLMTools()))
		if err != nil {
			t.Fatal(err)
		}
		choice := resp.Choices[0]
		if len(choice.ToolCalls) == 0 {
			return model
		}
		msgs, err := ts.HandleToolCalls(t.Context(), choice, parts...)
		if err != nil {
			t.Fatal(err)
		}
		history = append(history, msgs...)
	}
}

// sameView fails the test unless the two models were sent the same
// requests: the same messages and the same tools, byte for byte as JSON.
func sameView(t *testing.T, what string, got, want *mcpadaptertest.Model) {
	t.Helper()
	gr, _ := json.Marshal(got.Requests())
	wr, _ := json.Marshal(want.Requests())
	if string(gr) != string(wr) {
		t.Errorf("%s: the model saw\n%s\nthe native loop's model saw\n%s", what, gr, wr)
	}
	var gt, wt [][]llms.Tool
	for _, o := range got.Options() {
		gt = append(gt, o.Tools)
	}
	for _, o := range want.Options() {
		wt = append(wt, o.Tools)
	}
	gb, _ := json.Marshal(gt)
	wb, _ := json.Marshal(wt)
	if string(gb) != string(wb) {
		t.Errorf("%s: tools offered\n%s\nthe native loop offered\n%s", what, gb, wb)
	}
}

// TestAgentSeesWhatNativeLoopSees: the model's view in agent mode equals
// its view in a native loop over LLMTools and HandleToolCalls: the same
// tools (real schemas) and the same messages, for parallel calls with an
// isError result, an unknown tool, structured content and an image. In
// langchaingo's agents.Executor, whose observations are strings, the view
// is the same for results without media.
func TestAgentSeesWhatNativeLoopSees(t *testing.T) {
	ts, _ := fullToolset(t)
	for _, parts := range [][]mcpadapter.PartOption{nil, {mcpadapter.ImagesAsDataURL()}} {
		turns := []mcpadaptertest.Turn{parallelTurn(true), mcpadaptertest.FinalAnswer("done")}
		want := nativeLoop(t, ts, turns, parts...)

		model := mcpadaptertest.NewModel(turns...)
		ag, err := New(model, ts, WithPartOptions(parts...))
		if err != nil {
			t.Fatal(err)
		}
		out, err := chains.Run(t.Context(), NewExecutor(ag), "q")
		if err != nil || out != "done" {
			t.Fatalf("run = %q, %v", out, err)
		}
		sameView(t, "Executor", model, want)
		last := model.Requests()[1]
		if img := last[len(last)-1].Parts[1]; !isImage(img) {
			t.Errorf("the image reached the model as %#v, want an image part", img)
		}
	}

	turns := []mcpadaptertest.Turn{parallelTurn(false), mcpadaptertest.FinalAnswer("done")}
	want := nativeLoop(t, ts, turns)
	model := mcpadaptertest.NewModel(turns...)
	ag, err := New(model, ts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := chains.Run(t.Context(), agents.NewExecutor(ag), "q")
	if err != nil || out != "done" {
		t.Fatalf("agents.Executor run = %q, %v", out, err)
	}
	sameView(t, "agents.Executor", model, want)
}

// isImage reports whether p is an image part.
func isImage(p llms.ContentPart) bool {
	switch p := p.(type) {
	case llms.BinaryContent:
		return p.MIMEType == "image/png"
	case llms.ImageURLContent:
		return strings.HasPrefix(p.URL, "data:image/png;base64,")
	}
	return false
}

// TestAgentToolMessages: the tool messages of a parallel turn keep the
// model's call ids, one per call, in order; an isError result, an unknown
// tool and a strict-mode null are messages the model can act on.
func TestAgentToolMessages(t *testing.T) {
	ts, _ := fullToolset(t)
	model := mcpadaptertest.NewModel(parallelTurn(false), mcpadaptertest.FinalAnswer("done"))
	ag, err := New(model, ts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chains.Run(t.Context(), NewExecutor(ag), "q"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range model.Requests()[1] {
		for _, p := range m.Parts {
			switch p := p.(type) {
			case llms.ToolCall:
				got = append(got, "call "+p.ID)
			case llms.ToolCallResponse:
				got = append(got, p.ToolCallID+": "+p.Content)
			}
		}
	}
	want := []string{
		"call call_w", "call_w: Sunny, 21°C in Paris",
		"call call_f", "call_f: it failed",
		"call call_n", "call_n: s__nope is not a valid tool, try another one",
		"call call_s", `call_s: {"answer":42}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the model saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAgentOptions: WithSchemaPasses offers the tools as LLMToolsFor gives
// them, WithSystemPrompt starts the conversation, WithCallOptions reach
// the model; a pass that refuses a tool fails New.
func TestAgentOptions(t *testing.T) {
	ts, _ := fullToolset(t)
	model := mcpadaptertest.NewModel(mcpadaptertest.FinalAnswer("hi"))
	ag, err := New(model, ts, WithSchemaPasses(mcpadapter.ForGemini()), WithSystemPrompt("be brief"), WithCallOptions(llms.WithTemperature(0.25)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chains.Run(t.Context(), NewExecutor(ag), "q"); err != nil {
		t.Fatal(err)
	}
	want, err := ts.LLMToolsFor(mcpadapter.ForGemini())
	if err != nil {
		t.Fatal(err)
	}
	opts := model.Options()[0]
	gb, _ := json.Marshal(opts.Tools)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) || opts.Temperature != 0.25 {
		t.Errorf("options: tools %s, temperature %v; want %s, 0.25", gb, opts.Temperature, wb)
	}
	if first := model.Requests()[0][0]; first.Role != llms.ChatMessageTypeSystem || first.Parts[0] != llms.TextPart("be brief") {
		t.Errorf("first message = %+v, want the system prompt", first)
	}
	refuse := func(fn *llms.FunctionDefinition) error { return mcpadapter.ErrUnsupportedSchema }
	if _, err := New(model, ts, WithSchemaPasses(refuse)); err == nil {
		t.Error("New with a refusing pass: no error")
	}
}

// TestTurnOfMergesChoices: a turn split into one choice per content block
// (Anthropic's provider) is one turn: the text and every tool call.
func TestTurnOfMergesChoices(t *testing.T) {
	resp := &llms.ContentResponse{Choices: []*llms.ContentChoice{
		{Content: "Let me look."},
		{ToolCalls: []llms.ToolCall{mcpadaptertest.ToolCall("a", "x", `{}`)}},
		{ToolCalls: []llms.ToolCall{mcpadaptertest.ToolCall("b", "y", `{}`)}, StopReason: "tool_use"},
	}}
	turn, err := turnOf(resp)
	if err != nil || turn.Content != "Let me look." || len(turn.ToolCalls) != 2 || turn.ToolCalls[1].ID != "b" {
		t.Errorf("turnOf = %+v, %v", turn, err)
	}
	if _, err := turnOf(&llms.ContentResponse{}); err == nil {
		t.Error("turnOf(no choices): no error")
	}
}
