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
	"github.com/mcpadapter/mcpadapter/internal/modeltext"
	"github.com/tmc/langchaingo/llms"
)

// DefaultResultBudget is the budget of a tool result's model-visible form
// when none is set, in characters: about 25,000 tokens, a quarter of a
// small context window and far above what a tool that answers a question
// needs; a 1 MB text file goes past it.
const DefaultResultBudget = 100_000

// MediaBudgetCost is what one image, audio clip or file sent to the model as
// a media part counts against the budget, in characters: about 1,000
// tokens, what providers charge for an image of about a megapixel.
// Placeholders ("[image image/png 14 KB]") count as the text they are.
const MediaBudgetCost = modeltext.MediaCost

// ResultBudget returns a [PartOption] that bounds what one result gives the
// model to chars characters (see [Config.ResultBudget]): 0 means
// [DefaultResultBudget], a negative value no bound.
func ResultBudget(chars int) PartOption {
	return func(o *partOptions) { o.budget = chars }
}

// budgetLimit is the effective bound of a budget setting, or -1 for none.
func budgetLimit(budget int) int {
	switch {
	case budget == 0:
		return DefaultResultBudget
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
	return append([]PartOption{ResultBudget(t.resultBudget())}, opts...)
}
