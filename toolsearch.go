package mcpadapter

// Tool search: a big catalog offered through one search tool.
//
// The found set is not state of its own: it is read from the conversation,
// whose search results (tool messages of the search tool) name the tools
// they found. The app already keeps, trims and stores its history, and
// [PausedCalls] carries the messages of a paused batch, so a run that is
// stored and resumed offers what it offered before, and nothing here needs
// saving.

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/toolsearch"
	"github.com/tmc/langchaingo/llms"
)

// defaultSearchToolName is the name of the search tool of a [ToolSearch]
// when [ToolSearchOptions.Name] is empty.
const defaultSearchToolName = "search_tools"

// defaultSearchResults is how many tools one search returns when
// [ToolSearchOptions.MaxResults] is 0.
const defaultSearchResults = 5

// ToolSearchOptions configures a [ToolSearch]. The zero value is the
// default: a search tool named "search_tools" that returns 5 tools.
type ToolSearchOptions struct {
	// Name is the search tool's name, as the model calls it; "" means
	// "search_tools". No tool of the set may have it.
	Name string
	// MaxResults is the number of tools one search returns at most; 0 (or
	// less) means 5. A search returns fewer when fewer
	// tools match well (see [ToolSearch.Search]).
	MaxResults int
}

// A ToolSearch offers a big [Toolset] to a model through a search tool:
// the model is offered the search tool and the tools its searches found,
// not the whole catalog (a local, deterministic BM25 ranking). Make one
// with [NewToolSearch] and use it in a native loop in place of the
// Toolset: [ToolSearch.LLMTools] each turn, [ToolSearch.HandleToolCalls]
// for the model's calls. A tool the model found stays offered for the rest
// of the run (see [ToolSearch.Found]). Turn it on past about 10,000 tokens
// of tool definitions. The loop, and when to turn it on, are in
// docs/reference.md, "ToolSearch". A ToolSearch is immutable and safe for
// concurrent use; after the catalog changes, make another.
type ToolSearch struct {
	tools Toolset           // the set, the app's view
	model Toolset           // the tools the model may see, in the index's order
	index *toolsearch.Index // over model
	name  string            // the search tool's name
	limit int               // results per search
	desc  string            // the search tool's description
}

// NewToolSearch returns a search over the tools of s that the model may
// see (tools for the app alone, [Tool.AppOnly], are never offered).
// opts may be nil. It indexes the tools (about 10 ms for 1,000 tools; a
// search then takes about 15 µs): make one per catalog, not per request.
// The error wraps [ErrDuplicateToolName] when a tool of s
// has the search tool's name (case ignored, as [Toolset.Lookup] ignores
// it).
func NewToolSearch(s Toolset, opts *ToolSearchOptions) (*ToolSearch, error) {
	var o ToolSearchOptions
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = defaultSearchToolName
	}
	if o.MaxResults <= 0 {
		o.MaxResults = defaultSearchResults
	}
	if s.Lookup(o.Name) != nil {
		return nil, fmt.Errorf("%w: %q names a tool and the search tool", ErrDuplicateToolName, o.Name)
	}
	model := visible(s, false, nil)
	docs := make([]toolsearch.Doc, len(model))
	servers := make([]string, len(model))
	for i, t := range model {
		docs[i], servers[i] = searchDoc(t), t.server
	}
	return &ToolSearch{
		tools: s,
		model: model,
		index: toolsearch.New(docs),
		name:  o.Name,
		limit: o.MaxResults,
		desc:  toolsearch.Description(len(model), servers, o.MaxResults),
	}, nil
}

// searchDoc is what the index reads of t.
func searchDoc(t *Tool) toolsearch.Doc {
	var title string
	if t.desc != nil {
		title = t.desc.Title
		if title == "" && t.desc.Annotations != nil {
			title = t.desc.Annotations.Title
		}
	}
	return toolsearch.DocOf(t.name, title, t.summary, t.params)
}

// Name returns the search tool's name.
func (x *ToolSearch) Name() string { return x.name }

// Search returns the tools that match query best, best first, at most
// [ToolSearchOptions.MaxResults] of them: what the search tool returns to
// the model. Only tools that match well are returned: a tool that scores
// less than half the best one is left out, and so is, when the query holds
// a word that no tool holds, a tool that shares with it only words many
// tools hold (over server-everything and server-filesystem, "add two
// numbers" returns get-sum alone, and "delete a file" nothing). A query
// that no tool matches well returns none, and the model is told to search
// again with other words.
func (x *ToolSearch) Search(query string) Toolset {
	hits := x.index.Search(query, x.limit)
	out := make(Toolset, len(hits))
	for i, h := range hits {
		out[i] = x.model[h]
	}
	return out
}

// LLMTool returns the search tool, for native tool calling.
func (x *ToolSearch) LLMTool() llms.Tool {
	return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
		Name:        x.name,
		Description: x.desc,
		Parameters:  toolsearch.Parameters(),
	}}
}

// LLMTools returns what to offer the model on the next request of a
// conversation whose messages so far are history: the search tool, then
// the tools its searches found ([ToolSearch.Found]), in the order they
// were first found, so that the list only grows at its end.
func (x *ToolSearch) LLMTools(history []llms.MessageContent) []llms.Tool {
	return append([]llms.Tool{x.LLMTool()}, x.Found(history).LLMTools()...)
}

// LLMToolsFor is [ToolSearch.LLMTools] with passes applied to each tool,
// the search tool included, for one provider (see [Toolset.LLMToolsFor]).
// The found tools that cannot be converted are left out, with an error
// joining one per tool.
func (x *ToolSearch) LLMToolsFor(history []llms.MessageContent, passes ...SchemaPass) ([]llms.Tool, error) {
	search := x.LLMTool()
	if err := applyPasses(search.Function, passes); err != nil {
		return nil, errorf("mcpadapter: search tool %q: %w", x.name, err)
	}
	found, err := x.Found(history).LLMToolsFor(passes...)
	return append([]llms.Tool{search}, found...), err
}

// Found returns the tools that the search results in history found, in
// the order they were first found: the tool messages answering a call of
// the search tool (as [ToolSearch.HandleToolCalls] makes them), read for
// the names of the catalog's tools they list. Names of tools the set no
// longer holds are skipped.
func (x *ToolSearch) Found(history []llms.MessageContent) Toolset {
	var f toolsearch.Set
	f.Read(x.name, history, x.known)
	found := make(Toolset, 0, len(f.Names()))
	for _, name := range f.Names() {
		found = append(found, x.model.Lookup(name))
	}
	return found
}

// known reports whether the catalog holds a tool named name.
func (x *ToolSearch) known(name string) bool { return x.model.Lookup(name) != nil }

// HandleToolCalls is [Toolset.HandleToolCalls] for a model offered
// [ToolSearch.LLMTools] of history, the conversation before choice. Calls
// of the search tool are answered here, with a tool message listing the
// tools found (from then on, and for the calls after it in the same
// choice, they can be called). Calls of a tool that no search of history
// or of choice found are answered with a tool message that tells the model
// to search first, and run nothing. Search calls reach no server: no
// [Config.CallbacksHandler] event or trace span reports them. The other calls run as with the
// Toolset, and the messages, errors and pauses are the same: a
// [*PausedCalls] resumes with [ToolSearch.ResumeToolCalls].
func (x *ToolSearch) HandleToolCalls(ctx context.Context, history []llms.MessageContent, choice *llms.ContentChoice, opts ...PartOption) ([]llms.MessageContent, error) {
	if choice == nil {
		return nil, nil
	}
	return x.tools.runCalls(ctx, &PausedCalls{Calls: choice.ToolCalls}, x.runner(history), opts)
}

// ResumeToolCalls is [Toolset.ResumeToolCalls] for a batch paused by
// [ToolSearch.HandleToolCalls]: history is the conversation before the
// batch, as it was given to HandleToolCalls. The calls after the paused
// one are checked and run as HandleToolCalls does; the search results of
// the batch before the pause, which p holds, count.
func (x *ToolSearch) ResumeToolCalls(ctx context.Context, history []llms.MessageContent, p *PausedCalls, r Resolution, opts ...PartOption) ([]llms.MessageContent, error) {
	p, err := x.tools.openCalls(p)
	if err != nil {
		return nil, errorf("mcpadapter: resume tool calls: %w", err)
	}
	var batch []llms.MessageContent
	if p != nil {
		batch = p.messages
	}
	return x.tools.resumeCalls(ctx, p, r, x.runner(history, batch), opts)
}

// runner returns the callRunner of a batch that follows msgs: it answers
// search calls, refuses tools not found yet and runs the others.
func (x *ToolSearch) runner(msgs ...[]llms.MessageContent) callRunner {
	var f toolsearch.Set
	for _, m := range msgs {
		f.Read(x.name, m, x.known)
	}
	return func(ctx context.Context, tc llms.ToolCall, t *Tool) (*Result, error) {
		if tc.FunctionCall == nil {
			return x.tools.runToolCall(ctx, tc, t)
		}
		name := tc.FunctionCall.Name
		if strings.EqualFold(name, x.name) {
			res, found := x.answer(tc.FunctionCall.Arguments)
			for _, hit := range found {
				f.Add(hit.name)
			}
			return res, nil
		}
		if offered := x.model.Lookup(name); offered == nil || !f.Has(offered.name) {
			return errorResult(toolsearch.NotFound(name, x.name)), nil
		}
		return x.tools.runToolCall(ctx, tc, t)
	}
}

// answer runs the search call with arguments argsJSON and returns its
// result, and the tools it found.
func (x *ToolSearch) answer(argsJSON string) (*Result, Toolset) {
	query, ok := toolsearch.Query(argsJSON)
	if !ok {
		return errorResult(toolsearch.Usage(x.name)), nil
	}
	found := x.Search(query)
	docs := make([]toolsearch.Doc, len(found))
	for i, t := range found {
		docs[i] = toolsearch.Doc{Name: t.name, Description: t.summary}
	}
	return &Result{Content: []Block{{Type: BlockText, Text: toolsearch.Results(query, docs)}}}, found
}
