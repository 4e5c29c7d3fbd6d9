package mcpadaptertest_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms"

	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
)

func human(text string) []llms.MessageContent {
	return []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, text)}
}

func TestScript(t *testing.T) {
	ctx := context.Background()
	m := mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(
			mcpadaptertest.ToolCall("call_1", "get_weather", `{"city":"Paris"}`),
			mcpadaptertest.ToolCall("call_2", "get_weather", `{"city":"Oslo"}`),
		),
		mcpadaptertest.FinalAnswer("Sunny in both."),
	)
	tool := llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: "get_weather"}}

	resp, err := m.GenerateContent(ctx, human("weather?"), llms.WithTools([]llms.Tool{tool}), llms.WithTemperature(0.5))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 1 {
		t.Fatalf("choices = %d", len(resp.Choices))
	}
	c := resp.Choices[0]
	if len(c.ToolCalls) != 2 || c.ToolCalls[0].ID != "call_1" || c.ToolCalls[1].FunctionCall.Arguments != `{"city":"Oslo"}` ||
		c.ToolCalls[0].Type != "function" {
		t.Errorf("tool calls = %+v", c.ToolCalls)
	}
	if c.FuncCall == nil || c.FuncCall.Name != "get_weather" || c.FuncCall.Arguments != `{"city":"Paris"}` {
		t.Errorf("FuncCall = %+v", c.FuncCall)
	}
	if c.Content != "" || c.StopReason != "tool_calls" {
		t.Errorf("content %q, stop %q", c.Content, c.StopReason)
	}
	// Mutating a response does not change the script or the record.
	c.ToolCalls[0].FunctionCall.Name = "changed"

	var streamed []byte
	out, err := m.Call(ctx, "and now?", llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
		streamed = append(streamed, chunk...)
		return nil
	}))
	if err != nil || out != "Sunny in both." || string(streamed) != out {
		t.Errorf("Call = %q, %v (streamed %q)", out, err, streamed)
	}
	if m.Remaining() != 0 {
		t.Errorf("Remaining = %d", m.Remaining())
	}

	_, err = m.GenerateContent(ctx, human("more?"))
	if !errors.Is(err, mcpadaptertest.ErrExhausted) {
		t.Errorf("exhausted: err = %v; want ErrExhausted", err)
	}

	reqs := m.Requests()
	want := [][]llms.MessageContent{human("weather?"), human("and now?"), human("more?")}
	if !reflect.DeepEqual(reqs, want) {
		t.Errorf("Requests = %+v; want %+v", reqs, want)
	}
	opts := m.Options()
	if len(opts) != 3 || len(opts[0].Tools) != 1 || opts[0].Temperature != 0.5 || opts[1].StreamingFunc == nil {
		t.Errorf("Options = %+v", opts)
	}
}

func TestFailAndWithText(t *testing.T) {
	boom := errors.New("boom")
	m := mcpadaptertest.NewModel(mcpadaptertest.Fail(boom), mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("1", "f", "{}")).WithText("thinking"))
	if _, err := m.GenerateContent(context.Background(), human("x")); err != boom {
		t.Errorf("Fail turn: err = %v", err)
	}
	resp, err := m.GenerateContent(context.Background(), human("x"))
	if err != nil || resp.Choices[0].Content != "thinking" || len(resp.Choices[0].ToolCalls) != 1 {
		t.Errorf("WithText turn = %+v, %v", resp, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m = mcpadaptertest.NewModel(mcpadaptertest.FinalAnswer("a"))
	if _, err := m.GenerateContent(ctx, human("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: err = %v", err)
	}
	if m.Remaining() != 1 || len(m.Requests()) != 0 {
		t.Errorf("a cancelled request consumed a turn")
	}
}

func TestRecordIsACopy(t *testing.T) {
	m := mcpadaptertest.NewModel(mcpadaptertest.FinalAnswer("a"))
	msgs := human("x")
	if _, err := m.GenerateContent(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	msgs[0].Parts[0] = llms.TextContent{Text: "changed"}
	if got := m.Requests()[0][0].Parts[0]; got != (llms.TextContent{Text: "x"}) {
		t.Errorf("recorded part = %#v", got)
	}
}

func TestConcurrent(t *testing.T) {
	const n = 50
	turns := make([]mcpadaptertest.Turn, n)
	for i := range turns {
		turns[i] = mcpadaptertest.FinalAnswer(fmt.Sprint(i))
	}
	m := mcpadaptertest.NewModel(turns...)
	var wg sync.WaitGroup
	seen := make(chan string, n)
	for range n {
		wg.Go(func() {
			out, err := m.Call(context.Background(), "x")
			if err != nil {
				t.Error(err)
			}
			seen <- out
		})
	}
	wg.Wait()
	close(seen)
	got := map[string]bool{}
	for s := range seen {
		got[s] = true
	}
	if len(got) != n || len(m.Requests()) != n || m.Remaining() != 0 {
		t.Errorf("distinct answers %d, requests %d, remaining %d", len(got), len(m.Requests()), m.Remaining())
	}
}

func ExampleModel() {
	m := mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_1", "get_weather", `{"city":"Paris"}`)),
		mcpadaptertest.FinalAnswer("It is sunny in Paris."),
	)
	resp, _ := m.GenerateContent(context.Background(), human("Weather in Paris?"))
	call := resp.Choices[0].ToolCalls[0]
	fmt.Println(call.FunctionCall.Name, call.FunctionCall.Arguments)
	out, _ := m.Call(context.Background(), "Sunny, 21°C in Paris")
	fmt.Println(out)
	_, err := m.Call(context.Background(), "anything else?")
	fmt.Println(err)
	// Output:
	// get_weather {"city":"Paris"}
	// It is sunny in Paris.
	// mcpadaptertest: script exhausted: request 3, but the script has 2 turns
}
