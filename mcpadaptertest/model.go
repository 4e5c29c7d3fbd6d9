// Package mcpadaptertest helps test agents built on mcpadapter without a
// model API or a network, the way this module's examples and tests do: a
// scripted [llms.Model] that plays a fixed list of turns (text answers or
// tool calls) and records every request it receives. For the servers, use
// go-sdk servers in the test's process with [mcpadapter.InMemory].
//
//	model := mcpadaptertest.NewModel(
//		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_1", "weather__get_weather", `{"city":"Paris"}`)),
//		mcpadaptertest.FinalAnswer("It is sunny in Paris."),
//	)
//	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{
//		"weather": mcpadapter.InMemory(newWeatherServer()), // an *mcp.Server
//	}})
//	...
//	model.Requests() // what the agent sent the model: messages, tool results
//	model.Options()  // and the tools it offered
//
// Tool-call turns set both [llms.ContentChoice.ToolCalls] and, for
// langchaingo's OpenAIFunctionsAgent legacy path, [llms.ContentChoice.FuncCall]
// (the first call), so they drive agents.Executor and native tool-calling
// loops alike.
//
// [mcpadapter.InMemory]: https://pkg.go.dev/github.com/mcpadapter/mcpadapter#InMemory
package mcpadaptertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// ErrExhausted is returned (wrapped) when the model is asked for more turns
// than its script holds.
var ErrExhausted = errors.New("mcpadaptertest: script exhausted")

// Turn is one scripted model response. Build it with [FinalAnswer], [ToolCalls] or
// [Fail].
type Turn struct {
	text  string
	calls []llms.ToolCall
	err   error
}

// FinalAnswer returns a turn whose response is the text answer text, with no tool
// calls (an agent treats it as the final answer).
func FinalAnswer(text string) Turn { return Turn{text: text} }

// ToolCalls returns a turn whose response asks for calls. It panics if calls
// is empty.
func ToolCalls(calls ...llms.ToolCall) Turn {
	if len(calls) == 0 {
		panic("mcpadaptertest.ToolCalls: no calls")
	}
	return Turn{calls: slices.Clone(calls)}
}

// Fail returns a turn on which GenerateContent returns err.
func Fail(err error) Turn { return Turn{err: err} }

// WithText returns a copy of t whose response also carries text as its
// content (a model "thinking aloud" next to its tool calls).
func (t Turn) WithText(text string) Turn {
	t.text = text
	t.calls = slices.Clone(t.calls)
	return t
}

// ToolCall returns a function tool call with the given id, function name and JSON
// arguments.
func ToolCall(id, name, argsJSON string) llms.ToolCall {
	return llms.ToolCall{
		ID:           id,
		Type:         "function",
		FunctionCall: &llms.FunctionCall{Name: name, Arguments: argsJSON},
	}
}

// Model is a scripted [llms.Model]. Each GenerateContent call consumes the
// next turn; once the script is exhausted it fails with an error wrapping
// [ErrExhausted]. Every request is recorded, including failed ones. A Model
// is safe for concurrent use; concurrent requests take turns in the order
// they acquire its lock.
type Model struct {
	mu    sync.Mutex
	turns []Turn
	next  int
	reqs  [][]llms.MessageContent
	opts  []llms.CallOptions
}

var _ llms.Model = (*Model)(nil)

// NewModel returns a model that plays turns in order.
func NewModel(turns ...Turn) *Model {
	return &Model{turns: slices.Clone(turns)}
}

// GenerateContent implements [llms.Model]. It records messages and the
// resolved options, then returns the next turn as a single choice. A text
// turn is also passed to the options' streaming function, if any. If ctx is
// already done it returns ctx.Err() without consuming a turn.
func (m *Model) GenerateContent(ctx context.Context, messages []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var co llms.CallOptions
	for _, o := range options {
		o(&co)
	}
	msgs := cloneMessages(messages)

	m.mu.Lock()
	n := len(m.reqs) + 1
	m.reqs = append(m.reqs, msgs)
	m.opts = append(m.opts, co)
	if m.next >= len(m.turns) {
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: request %d, but the script has %d turns", ErrExhausted, n, len(m.turns))
	}
	turn := m.turns[m.next]
	m.next++
	m.mu.Unlock()

	if turn.err != nil {
		return nil, turn.err
	}
	choice := &llms.ContentChoice{Content: turn.text, StopReason: "stop"}
	if len(turn.calls) > 0 {
		choice.StopReason = "tool_calls"
		choice.ToolCalls = make([]llms.ToolCall, len(turn.calls))
		for i, c := range turn.calls {
			choice.ToolCalls[i] = cloneToolCall(c)
		}
		if fc := choice.ToolCalls[0].FunctionCall; fc != nil {
			choice.FuncCall = &llms.FunctionCall{Name: fc.Name, Arguments: fc.Arguments}
		}
	}
	if co.StreamingFunc != nil && turn.text != "" {
		if err := co.StreamingFunc(ctx, []byte(turn.text)); err != nil {
			return nil, err
		}
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{choice}}, nil
}

// ToolCall implements [llms.Model]: it sends prompt as one human message and
// returns the content of the response.
func (m *Model) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// Requests returns the messages of every request so far, in order. The
// caller owns the returned slices.
func (m *Model) Requests() [][]llms.MessageContent {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([][]llms.MessageContent, len(m.reqs))
	for i, r := range m.reqs {
		out[i] = cloneMessages(r)
	}
	return out
}

// Options returns the resolved call options of every request so far, in
// order (for example to check the tools or functions an agent advertised).
func (m *Model) Options() []llms.CallOptions {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.opts)
}

// Remaining reports how many turns have not been played yet.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.turns) - m.next
}

// cloneMessages copies messages and their part slices, so that a caller
// appending to or editing its history does not change the record.
func cloneMessages(msgs []llms.MessageContent) []llms.MessageContent {
	out := make([]llms.MessageContent, len(msgs))
	for i, msg := range msgs {
		out[i] = llms.MessageContent{Role: msg.Role, Parts: slices.Clone(msg.Parts)}
	}
	return out
}

// cloneToolCall copies c, including its FunctionCall.
func cloneToolCall(c llms.ToolCall) llms.ToolCall {
	if c.FunctionCall != nil {
		fc := *c.FunctionCall
		c.FunctionCall = &fc
	}
	return c
}
