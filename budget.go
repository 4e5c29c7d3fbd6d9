package mcpadapter

// Result budget: what one tool result may put into the model's context.
//
// A server can answer with a whole file, a database dump or a page of logs;
// sent as is, one result fills the model's context window and the next
// request fails (or costs a fortune). The budget bounds the model-visible
// form of a result: [Tool.Call]'s text, and the messages of
// [Result.Messages], [Result.Parts] and [Toolset.HandleToolCalls]. The
// [Result] itself, from [Tool.Invoke], is never cut.

import (
	"github.com/tmc/langchaingo/llms"
)

// defaultResultBudget is the budget of a tool result's model-visible form
// when none is set, in characters: about 25,000 tokens, a quarter of a
// small context window and far above what a tool that answers a question
// needs; a 1 MB text file goes past it.
const defaultResultBudget = 100_000

// withBudget returns a [PartOption] that bounds what one result gives the
// model to chars characters, as [Config.ResultBudget] does: 0 means the
// default, a negative value no bound.
func withBudget(chars int) PartOption {
	return func(o *partOptions) { o.budget = chars }
}

// budgetLimit is the effective bound of a budget setting, or -1 for none.
func budgetLimit(budget int) int {
	switch {
	case budget == 0:
		return defaultResultBudget
	case budget < 0:
		return -1
	}
	return budget
}

// resultBudget is the budget of t's adapter.
func (t *Tool) resultBudget() int {
	if t == nil || t.a == nil {
		return 0
	}
	return t.a.cfg.ResultBudget
}

// partOptions returns opts preceded by the budget of the tool that tc
// calls, so that the caller's options win.
func (s Toolset) partOptions(tc llms.ToolCall, opts []PartOption) []PartOption {
	var t *Tool
	if tc.FunctionCall != nil {
		t = s.Lookup(tc.FunctionCall.Name)
	}
	return append([]PartOption{withBudget(t.resultBudget())}, opts...)
}
