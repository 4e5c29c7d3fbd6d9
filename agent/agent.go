// Package agent runs langchaingo agents over MCP tools: a tool-calling
// [Agent] that offers the model the tools' real JSON schemas, and an
// [Executor] whose runs pause at a tool that needs the user (an
// [*mcpadapter.Interrupt] or an [*mcpadapter.ApprovalRequired]) or that
// runs on as a task on the server (an [*mcpadapter.PendingTask]) and resume
// as the same run, in this process or in another one (a run paused on a
// live interrupt, a legacy server's question waiting on its connection, in
// this process only: see [Executor]). It is the only
// package of the module that imports langchaingo's agents and chains, so
// that programs using the root package alone (native tool-calling loops)
// do not link them.
//
//	ts, _ := a.ListTools(ctx)
//	ag, _ := agent.New(llm, ts)
//	answer, err := chains.Run(ctx, agent.NewExecutor(ag), "What is the weather in Paris?")
//
// langchaingo's own agents take ts.Tools(), and the Executor runs them
// too: for a model without native tool calling, the text agents
// (agents.NewOneShotAgent, agents.NewConversationalAgent), which show the
// model each tool's description with a hint of its arguments;
// agents.NewOpenAIFunctionsAgent offers every tool as one string argument.
package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"
	"github.com/tmc/langchaingo/tools"
)

// An Agent is a tool-calling [agents.Agent]: each turn it sends the model
// the conversation with the tools as [mcpadapter.Toolset.LLMTools] gives
// them (each tool's real input schema, after the [WithSchemaPasses] passes),
// or with [WithToolSearch] the search tool and the tools found so far,
// through [llms.WithTools], and plans the model's tool calls, parallel
// calls included, as actions that keep the model's call ids. The model
// sees exactly what a native loop over [mcpadapter.Toolset.HandleToolCalls]
// shows it: for each call, an AI message holding the call and its tool
// message (isError results included), then the results' media as image
// parts, under [mcpadapter.Config.ResultBudget].
//
// In this package's [Executor] the tool calls run through HandleToolCalls
// and the model gets those messages as they are. In langchaingo's
// agents.Executor, which hands an agent each step's observation as a
// string, the tools run through [mcpadapter.Tool.Call] and the model gets
// the same messages without the media (the text of a result with images
// carries placeholders such as "[image image/png 14 KB]"). It works over
// any [llms.Model] whose provider takes tools: openai, anthropic, mistral,
// bedrock, googleai (with [mcpadapter.ForGemini]); not ollama, which ignores
// them. The conversation starts with the input "input" (after
// [WithSystemPrompt]'s message): a memory's other variables are not shown
// to the model. An Agent is safe for concurrent runs.
type Agent struct {
	llm     llms.Model
	toolset mcpadapter.Toolset
	tools   []llms.Tool            // offered on every request, without search
	search  *mcpadapter.ToolSearch // with WithToolSearch: offers the search tool and the tools found
	options                        // as the Options set them
}

var _ agents.Agent = (*Agent)(nil)

// An Option configures an [Agent].
type Option func(*options)

type options struct {
	passes     []mcpadapter.SchemaPass
	toolSearch *mcpadapter.ToolSearchOptions // nil: no tool search
	system     string
	parts      []mcpadapter.PartOption
	callOpts   []llms.CallOption
}

// WithSchemaPasses offers the tools as [mcpadapter.Toolset.LLMToolsFor]
// gives them with passes: the form the provider accepts, such as
// [mcpadapter.ForGemini] or [mcpadapter.ForOpenAIStrict]. Without it the
// tools are [mcpadapter.Toolset.LLMTools].
func WithSchemaPasses(passes ...mcpadapter.SchemaPass) Option {
	return func(o *options) { o.passes = append(o.passes, passes...) }
}

// WithToolSearch offers the tools through a [mcpadapter.ToolSearch] made
// with opts (which may be nil): each request offers the search tool and the
// tools that the searches of the run's conversation found, not the whole
// catalog, for catalogs too big to send with every request (see
// [mcpadapter.ToolSearch] for when to turn it on). Search calls are
// answered here, without a server, and a call of a tool no search found is
// answered with a tool message telling the model to search first. Found
// tools stay offered for the rest of the run, through a pause: they are
// read from the conversation, which a [*PausedRun] holds.
//
// In langchaingo's agents.Executor the search tool is one of the agent's
// tools ([Agent.GetTools]) and found tools are read from the steps'
// observations, but that executor runs any tool the model names, found or
// not; use this package's [Executor] for the refusal.
func WithToolSearch(opts *mcpadapter.ToolSearchOptions) Option {
	return func(o *options) {
		if opts == nil {
			opts = &mcpadapter.ToolSearchOptions{}
		}
		o.toolSearch = opts
	}
}

// WithSystemPrompt starts every conversation with a system message holding
// prompt. Without it the conversation starts with the user's input.
func WithSystemPrompt(prompt string) Option {
	return func(o *options) { o.system = prompt }
}

// WithPartOptions sets how results become messages, as
// [mcpadapter.Toolset.HandleToolCalls] takes them: [mcpadapter.ImagesAsDataURL]
// for OpenAI, or [mcpadapter.TimeoutErrors].
func WithPartOptions(opts ...mcpadapter.PartOption) Option {
	return func(o *options) { o.parts = append(o.parts, opts...) }
}

// WithCallOptions adds options to every model call (temperature, the
// model's name, a tool choice), after the tools.
func WithCallOptions(opts ...llms.CallOption) Option {
	return func(o *options) { o.callOpts = append(o.callOpts, opts...) }
}

// New returns a tool-calling agent of llm over the tools of ts that are
// for the model (tools for the app alone are left out). An error names a
// tool whose schema a pass refused, or, with [WithToolSearch], wraps
// [mcpadapter.ErrDuplicateToolName] when a tool has the search tool's name.
func New(llm llms.Model, ts mcpadapter.Toolset, opts ...Option) (*Agent, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	offered, err := ts.LLMToolsFor(o.passes...)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	a := &Agent{llm: llm, toolset: ts, tools: offered, options: o}
	if o.toolSearch != nil {
		if a.search, err = mcpadapter.NewToolSearch(ts, o.toolSearch); err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		if _, err := a.search.LLMToolsFor(nil, o.passes...); err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
		a.tools = nil
	}
	return a, nil
}

// LLMTools returns the tools the agent offers the model on the request
// after history, the conversation after the user's input: the tools of
// [mcpadapter.Toolset.LLMToolsFor] with the agent's passes, or, with
// [WithToolSearch], the search tool and the tools its searches in history
// found ([mcpadapter.ToolSearch.LLMToolsFor]).
func (a *Agent) LLMTools(history []llms.MessageContent) ([]llms.Tool, error) {
	if a.search == nil {
		return slices.Clone(a.tools), nil
	}
	offered, err := a.search.LLMToolsFor(history, a.passes...)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return offered, nil
}

// handleToolCalls runs the tool calls of choice, the model's turn after
// history, as one batch: through the search with WithToolSearch, else
// through the toolset.
func (a *Agent) handleToolCalls(ctx context.Context, history []llms.MessageContent, choice *llms.ContentChoice) ([]llms.MessageContent, error) {
	if a.search != nil {
		return a.search.HandleToolCalls(ctx, history, choice, a.parts...)
	}
	return a.toolset.HandleToolCalls(ctx, choice, a.parts...)
}

// resumeToolCalls settles the paused batch p, which followed history, with
// r and runs the rest of it, as handleToolCalls ran it.
func (a *Agent) resumeToolCalls(ctx context.Context, history []llms.MessageContent, p *mcpadapter.PausedCalls, r mcpadapter.Resolution) ([]llms.MessageContent, error) {
	if a.search != nil {
		return a.search.ResumeToolCalls(ctx, history, p, r, a.parts...)
	}
	return a.toolset.ResumeToolCalls(ctx, p, r, a.parts...)
}

// inputKey is the input the agent reads: the user's message.
const inputKey = "input"

// GetInputKeys implements [agents.Agent]: "input", the user's message.
func (a *Agent) GetInputKeys() []string { return []string{inputKey} }

// GetOutputKeys implements [agents.Agent]: "output", the model's answer.
func (a *Agent) GetOutputKeys() []string { return []string{"output"} }

// GetTools implements [agents.Agent]: the tools as langchaingo tools, for
// an executor to run ([mcpadapter.Toolset.Tools]), after the search tool
// with [WithToolSearch].
func (a *Agent) GetTools() []tools.Tool {
	if a.search == nil {
		return a.toolset.Tools()
	}
	return append([]tools.Tool{searchTool{a.search}}, a.toolset.Tools()...)
}

// searchTool is the search tool of a ToolSearch as a langchaingo tool, for
// langchaingo's agents.Executor.
type searchTool struct{ search *mcpadapter.ToolSearch }

// Name implements [tools.Tool].
func (s searchTool) Name() string { return s.search.Name() }

// Description implements [tools.Tool].
func (s searchTool) Description() string { return s.search.LLMTool().Function.Description }

// Call implements [tools.Tool]: the search's answer to the arguments
// input, the text of the tool message [mcpadapter.ToolSearch.HandleToolCalls]
// answers the call with.
func (s searchTool) Call(ctx context.Context, input string) (string, error) {
	msgs, err := s.search.HandleToolCalls(ctx, nil, &llms.ContentChoice{ToolCalls: []llms.ToolCall{{
		Type: "function", FunctionCall: &llms.FunctionCall{Name: s.search.Name(), Arguments: input},
	}}})
	if err != nil {
		return "", fmt.Errorf("agent: %w", err)
	}
	for _, m := range msgs {
		for _, part := range m.Parts {
			if resp, ok := part.(llms.ToolCallResponse); ok {
				return resp.Content, nil
			}
		}
	}
	return "", fmt.Errorf("agent: search tool %q answered no tool message", s.search.Name())
}

// Plan implements [agents.Agent] for langchaingo's agents.Executor: the
// steps so far become the conversation (each step's call, then its
// observation as the call's tool message), and the model's answer becomes
// the next actions (one per tool call, in order, with its id) or the
// finish.
func (a *Agent) Plan(ctx context.Context, steps []schema.AgentStep, inputs map[string]string, options ...chains.ChainCallOption) ([]schema.AgentAction, *schema.AgentFinish, error) {
	var history []llms.MessageContent
	for _, s := range steps {
		tc := toolCall(s.Action)
		history = append(history,
			llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc}},
			llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
				llms.ToolCallResponse{ToolCallID: tc.ID, Name: s.Action.Tool, Content: s.Observation},
			}})
	}
	choice, err := a.generate(ctx, history, inputs, options)
	if err != nil {
		return nil, nil, err
	}
	if len(choice.ToolCalls) == 0 {
		return nil, finish(choice), nil
	}
	return actions(choice), nil, nil
}

// generate asks the model for its next turn after history.
func (a *Agent) generate(ctx context.Context, history []llms.MessageContent, inputs map[string]string, options []chains.ChainCallOption) (*llms.ContentChoice, error) {
	msgs := make([]llms.MessageContent, 0, len(history)+2)
	if a.system != "" {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, a.system))
	}
	msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, inputs[inputKey]))
	msgs = append(msgs, history...)
	offered, err := a.LLMTools(history)
	if err != nil {
		return nil, err
	}
	opts := append([]llms.CallOption{llms.WithTools(offered)}, a.callOpts...)
	opts = append(opts, chains.GetLLMCallOptions(options...)...)
	resp, err := a.llm.GenerateContent(ctx, msgs, opts...)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	return turnOf(resp)
}

// turnOf returns the model's turn in resp. Providers split a turn
// differently: OpenAI returns one choice holding the text and every tool
// call, Anthropic one choice per content block (a text, then each
// tool_use). The turn is the text of all the choices and the tool calls of
// all of them, in order.
func turnOf(resp *llms.ContentResponse) (*llms.ContentChoice, error) {
	if resp == nil || len(resp.Choices) == 0 {
		return nil, fmt.Errorf("agent: %w: the model answered no choice", agents.ErrAgentNoReturn)
	}
	if len(resp.Choices) == 1 {
		return resp.Choices[0], nil
	}
	turn := &llms.ContentChoice{}
	var text []string
	for _, c := range resp.Choices {
		if c.Content != "" {
			text = append(text, c.Content)
		}
		turn.ToolCalls = append(turn.ToolCalls, c.ToolCalls...)
		turn.StopReason = c.StopReason
	}
	turn.Content = strings.Join(text, "\n")
	return turn, nil
}

// finish is the end of a run whose model answered choice without a tool
// call.
func finish(choice *llms.ContentChoice) *schema.AgentFinish {
	return &schema.AgentFinish{ReturnValues: map[string]any{"output": choice.Content}, Log: choice.Content}
}

// actions are the tool calls of choice as actions, in order, each keeping
// its call id; the model's text, if any, is the first one's log.
func actions(choice *llms.ContentChoice) []schema.AgentAction {
	out := make([]schema.AgentAction, 0, len(choice.ToolCalls))
	for i, tc := range choice.ToolCalls {
		act := schema.AgentAction{ToolID: tc.ID}
		if tc.FunctionCall != nil {
			act.Tool, act.ToolInput = tc.FunctionCall.Name, tc.FunctionCall.Arguments
		}
		if i == 0 {
			act.Log = choice.Content
		}
		out = append(out, act)
	}
	return out
}

// toolCall is the native tool call of action, as the model made it.
func toolCall(action schema.AgentAction) llms.ToolCall {
	return llms.ToolCall{ID: action.ToolID, Type: "function",
		FunctionCall: &llms.FunctionCall{Name: action.Tool, Arguments: action.ToolInput}}
}
