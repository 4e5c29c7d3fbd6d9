package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/openai"
)

// A fakeProvider is an httptest server that speaks a provider's wire
// format: it records each request body and answers with the next reply of
// its script, made from the request.
type fakeProvider struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []map[string]any
	replies []func(req map[string]any) any
}

// newFakeProvider serves the replies at path.
func newFakeProvider(t *testing.T, path string, replies ...func(req map[string]any) any) *fakeProvider {
	p := &fakeProvider{replies: replies}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if r.Method != http.MethodPost || r.URL.Path != path || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "unexpected request "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		n := len(p.reqs)
		p.reqs = append(p.reqs, req)
		p.mu.Unlock()
		if n >= len(p.replies) {
			http.Error(w, "script exhausted", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(p.replies[n](req))
	}))
	t.Cleanup(p.Close)
	return p
}

// requests returns the recorded request bodies.
func (p *fakeProvider) requests() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.reqs...)
}

// jsonValue is v through JSON, as a decoded request holds it.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// wireTools returns the request's tools as (name, description, schema),
// from where the provider puts them.
func wireTools(req map[string]any) [][3]any {
	var out [][3]any
	tools, _ := req["tools"].([]any)
	for _, tool := range tools {
		tool, _ := tool.(map[string]any)
		if fn, ok := tool["function"].(map[string]any); ok { // OpenAI
			out = append(out, [3]any{fn["name"], fn["description"], fn["parameters"]})
			continue
		}
		out = append(out, [3]any{tool["name"], tool["description"], tool["input_schema"]}) // Anthropic
	}
	return out
}

// checkTools fails the test unless req offers exactly want.
func checkTools(t *testing.T, req map[string]any, want []llms.Tool) {
	t.Helper()
	var expected [][3]any
	for _, tool := range want {
		expected = append(expected, [3]any{tool.Function.Name, tool.Function.Description, jsonValue(t, tool.Function.Parameters)})
	}
	if got := wireTools(req); !reflect.DeepEqual(got, expected) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(expected)
		t.Errorf("the request's tools\n%s\nwant LLMTools\n%s", gb, wb)
	}
}

// pngPlaceholder is the text of testserver.PNG in a tool message.
var pngPlaceholder = fmt.Sprintf("[image image/png %d B]", len(testserver.PNG()))

// openAIReply is a chat completion holding content or tool calls (id,
// name, arguments).
func openAIReply(content string, calls ...[3]string) any {
	msg := map[string]any{"role": "assistant", "content": content}
	finish := "stop"
	if len(calls) > 0 {
		var tcs []any
		for _, c := range calls {
			tcs = append(tcs, map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
		}
		msg["tool_calls"], msg["content"], finish = tcs, nil, "tool_calls"
	}
	return map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
}

// toolResults is what the last request told the model of its tool calls,
// "id: content" in order, from OpenAI's or Anthropic's wire format.
func toolResults(req map[string]any) []string {
	var out []string
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		m, _ := m.(map[string]any)
		if m["role"] == "tool" {
			out = append(out, fmt.Sprintf("%v: %v", m["tool_call_id"], m["content"]))
		}
		blocks, _ := m["content"].([]any)
		for _, b := range blocks {
			if b, _ := b.(map[string]any); b["type"] == "tool_result" {
				out = append(out, fmt.Sprintf("%v: %v", b["tool_use_id"], b["content"]))
			}
		}
	}
	return out
}

// toolCallIDs are the ids of the tool calls the request replays, in order.
func toolCallIDs(req map[string]any) []string {
	var out []string
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		m, _ := m.(map[string]any)
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			out = append(out, fmt.Sprint(c.(map[string]any)["id"]))
		}
		blocks, _ := m["content"].([]any)
		for _, b := range blocks {
			if b, _ := b.(map[string]any); b["type"] == "tool_use" {
				out = append(out, fmt.Sprint(b["id"]))
			}
		}
	}
	return out
}

// images are the image parts of the request's user messages, as
// "mime/type" (Anthropic) or "data:" URL prefixes (OpenAI).
func images(req map[string]any) []string {
	var out []string
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		m, _ := m.(map[string]any)
		blocks, _ := m["content"].([]any)
		for _, b := range blocks {
			b, _ := b.(map[string]any)
			switch b["type"] {
			case "image_url":
				url := fmt.Sprint(b["image_url"].(map[string]any)["url"])
				out = append(out, url[:min(len(url), len("data:image/png;base64,"))])
			case "image":
				out = append(out, fmt.Sprint(b["source"].(map[string]any)["media_type"]))
			}
		}
	}
	return out
}

// TestOpenAIWire drives langchaingo's OpenAI client against a server that
// speaks OpenAI's chat completions: the request offers the tools as
// LLMToolsFor(ForOpenAIStrict) gives them; a turn of parallel calls (a
// strict-mode null, an image, a booking that interrupts) pauses the run;
// stored as JSON and resumed, the same run sends the model every call's
// result under its call id, the image as an image part, and ends with the
// answer made from them.
func TestOpenAIWire(t *testing.T) {
	ts, s := fullToolset(t)
	provider := newFakeProvider(t, "/chat/completions",
		func(map[string]any) any {
			return openAIReply("",
				[3]string{"call_w", "s__get_weather", `{"city":"Paris","unit":null}`},
				[3]string{"call_i", "s__image", `{}`},
				[3]string{"call_b", "s__book_table", `{"party":2}`})
		},
		func(req map[string]any) any { return openAIReply("I saw: " + strings.Join(toolResults(req), "; ")) },
	)
	llm, err := openai.New(openai.WithBaseURL(provider.URL), openai.WithToken("test"), openai.WithModel("gpt-4o-mini"))
	if err != nil {
		t.Fatal(err)
	}
	strictSafe := strictTools(ts)
	ag, err := New(llm, strictSafe, WithSchemaPasses(mcpadapter.ForOpenAIStrict()), WithPartOptions(mcpadapter.ImagesAsDataURL()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = chains.Run(t.Context(), NewExecutor(ag), "Weather in Paris, a picture, and a table for 2")
	var paused *PausedRun
	if !errors.As(err, &paused) {
		t.Fatalf("run error = %v, want a *PausedRun", err)
	}
	stored, err := json.Marshal(paused)
	if err != nil {
		t.Fatal(err)
	}
	var run PausedRun
	if err := json.Unmarshal(stored, &run); err != nil {
		t.Fatal(err)
	}
	out, err := NewExecutor(ag).Resume(t.Context(), &run, dateAnswer("2026-09-18"))
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}

	reqs := provider.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	want, err := strictSafe.LLMToolsFor(mcpadapter.ForOpenAIStrict())
	if err != nil {
		t.Fatal(err)
	}
	checkTools(t, reqs[0], want)
	if got := s.LastArgs("get_weather"); !reflect.DeepEqual(got, map[string]any{"city": "Paris"}) {
		t.Errorf("get_weather got %v, want the strict-mode null dropped", got)
	}
	results := []string{"call_w: Sunny, 21°C in Paris", "call_i: " + pngPlaceholder, "call_b: Booked a table for 2 on 2026-09-18"}
	if got := toolResults(reqs[1]); !reflect.DeepEqual(got, results) {
		t.Errorf("tool messages %q, want %q", got, results)
	}
	if got := toolCallIDs(reqs[1]); !reflect.DeepEqual(got, []string{"call_w", "call_i", "call_b"}) {
		t.Errorf("replayed tool calls %q, want the model's ids", got)
	}
	if got := images(reqs[1]); !reflect.DeepEqual(got, []string{"data:image/png;base64,"}) {
		t.Errorf("images %q, want one PNG image part", got)
	}
	if want := "I saw: " + strings.Join(results, "; "); out["output"] != want {
		t.Errorf("answer = %v, want %q", out["output"], want)
	}
}

// anthropicReply is a message holding text and tool uses (id, name, input
// JSON), one content block each.
func anthropicReply(text string, uses ...[3]string) any {
	var content []any
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	stop := "end_turn"
	for _, u := range uses {
		var input any
		json.Unmarshal([]byte(u[2]), &input)
		content = append(content, map[string]any{"type": "tool_use", "id": u[0], "name": u[1], "input": input})
		stop = "tool_use"
	}
	return map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
		"content": content, "stop_reason": stop, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}
}

// TestAnthropicWire drives langchaingo's Anthropic client against a server
// that speaks Anthropic's messages API: the request offers LLMTools as
// input_schema; a turn of text and two tool uses (one content block each,
// which the provider returns as three choices) is one turn of parallel
// calls; their ids come back in tool_use and tool_result blocks, and the
// image as an image block.
func TestAnthropicWire(t *testing.T) {
	ts, _ := fullToolset(t)
	provider := newFakeProvider(t, "/messages",
		func(map[string]any) any {
			return anthropicReply("Let me look.",
				[3]string{"toolu_w", "s__get_weather", `{"city":"Oslo"}`},
				[3]string{"toolu_i", "s__image", `{}`})
		},
		func(req map[string]any) any { return anthropicReply("I saw: " + strings.Join(toolResults(req), "; ")) },
	)
	llm, err := anthropic.New(anthropic.WithBaseURL(provider.URL), anthropic.WithToken("test"), anthropic.WithModel("claude-sonnet-4-5"))
	if err != nil {
		t.Fatal(err)
	}
	ag, err := New(llm, ts)
	if err != nil {
		t.Fatal(err)
	}
	out, err := chains.Run(t.Context(), NewExecutor(ag), "Weather in Oslo and a picture", chains.WithMaxTokens(256))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	reqs := provider.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	checkTools(t, reqs[0], ts.LLMTools())
	results := []string{"toolu_w: Sunny, 21°C in Oslo", "toolu_i: " + pngPlaceholder}
	if got := toolResults(reqs[1]); !reflect.DeepEqual(got, results) {
		t.Errorf("tool results %q, want %q", got, results)
	}
	if got := toolCallIDs(reqs[1]); !reflect.DeepEqual(got, []string{"toolu_w", "toolu_i"}) {
		t.Errorf("replayed tool uses %q, want the model's ids", got)
	}
	if got := images(reqs[1]); !reflect.DeepEqual(got, []string{"image/png"}) {
		t.Errorf("images %q, want one PNG image block", got)
	}
	if want := "I saw: " + strings.Join(results, "; "); out != want {
		t.Errorf("answer = %q, want %q", out, want)
	}
}

// strictTools returns the tools of ts that the OpenAI strict pass takes.
func strictTools(ts mcpadapter.Toolset) mcpadapter.Toolset {
	var out mcpadapter.Toolset
	for _, tool := range ts {
		if _, err := tool.LLMToolFor(mcpadapter.ForOpenAIStrict()); err == nil {
			out = append(out, tool)
		}
	}
	return out
}
