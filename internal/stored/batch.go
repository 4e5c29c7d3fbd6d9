package stored

// A paused batch of tool calls: the root package's PausedCalls without
// its pause, which the root embeds beside [Batch] in its own wire form.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/tmc/langchaingo/llms"
)

// Batch is the wire form of a paused batch of tool calls, its pause left
// out.
type Batch struct {
	Version  int                   `json:"version"` // batchVersion
	Calls    []Call                `json:"calls"`
	Next     int                   `json:"next"`
	Messages []llms.MessageContent `json:"messages,omitempty"`
	Media    []llms.MessageContent `json:"media,omitempty"`
	State    json.RawMessage       `json:"state,omitempty"`
}

// batchVersion is the version of [Batch] that [NewBatch] makes and
// [Batch.Check] reads.
const batchVersion = 1

// maxCalls bounds the calls of a stored batch.
const maxCalls = 1024

// Call is the wire form of an llms.ToolCall (whose own decoder loses the
// function in langchaingo v0.1.14).
type Call struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Function *llms.FunctionCall `json:"function"`
}

// NewBatch returns the wire form, of the current version, of the batch
// calls paused at calls[next], with the messages and media of the calls
// before it and the application's state.
func NewBatch(calls []llms.ToolCall, next int, messages, media []llms.MessageContent, state json.RawMessage) Batch {
	w := Batch{Version: batchVersion, Calls: make([]Call, len(calls)), Next: next, Messages: messages, Media: media, State: state}
	for i, tc := range calls {
		w.Calls[i] = Call{ID: tc.ID, Type: tc.Type, Function: tc.FunctionCall}
	}
	return w
}

// Check checks a decoded batch (its version, at most [maxCalls] calls,
// Next one of them, the paused call's function present, no message
// holding a tool call without a function) and returns its calls. The
// paused call's function is then calls[Next].FunctionCall.
func (w Batch) Check() ([]llms.ToolCall, error) {
	switch {
	case w.Version != batchVersion:
		return nil, fmt.Errorf("unsupported version %d", w.Version)
	case len(w.Calls) > maxCalls:
		return nil, fmt.Errorf("%d calls, more than %d", len(w.Calls), maxCalls)
	case w.Next < 0 || w.Next >= len(w.Calls):
		return nil, fmt.Errorf("paused call %d of %d", w.Next, len(w.Calls))
	case w.Calls[w.Next].Function == nil:
		return nil, errors.New("the paused call has no function")
	case slices.ContainsFunc(w.Messages, malformed) || slices.ContainsFunc(w.Media, malformed):
		return nil, errors.New("a message holds a tool call without a function")
	}
	calls := make([]llms.ToolCall, len(w.Calls))
	for i, c := range w.Calls {
		calls[i] = llms.ToolCall{ID: c.ID, Type: c.Type, FunctionCall: c.Function}
	}
	return calls, nil
}

// malformed reports whether m holds a tool call without a function, which
// providers dereference.
func malformed(m llms.MessageContent) bool {
	return slices.ContainsFunc(m.Parts, func(p llms.ContentPart) bool {
		tc, ok := p.(llms.ToolCall)
		return ok && tc.FunctionCall == nil
	})
}
