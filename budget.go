package mcpadapter

// Result budget: what one tool result may put into the model's context.
//
// A server can answer with a whole file, a database dump or a page of logs;
// sent as is, one result fills the model's context window and the next
// request fails (or costs a fortune). The budget bounds the model-visible
// form of a result: [Tool.Call]'s text, and the messages of
// [Result.Messages], [Result.Parts] and [Toolset.HandleToolCalls]. The
// [Result] itself, from [Tool.Invoke], is never cut.

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

// partOptions returns opts preceded by the budget of t's adapter (for a
// nil or zero t: the default), so that the caller's options win.
func (t *Tool) partOptions(opts []PartOption) []PartOption {
	budget := 0
	if t != nil && t.a != nil {
		budget = t.a.cfg.ResultBudget
	}
	return append([]PartOption{withBudget(budget)}, opts...)
}
