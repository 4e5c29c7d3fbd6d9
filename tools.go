package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// nameSeparator joins server and tool names: "server__tool".
const nameSeparator = "__"

// errNoAdapter is returned by the calls of a Tool that did not come from an
// [Adapter] (a zero Tool).
var errNoAdapter = errors.New("mcpadapter: tool was not returned by an Adapter")

// A Tool is one MCP tool of one server, bound to the connection it was
// discovered on. It implements langchaingo's [tools.Tool]; [Tool.LLMTool] and
// [Toolset.HandleToolCalls] serve native tool calling. A Tool is immutable
// and safe for concurrent use. After [Adapter.Close] its calls fail with
// [ErrClosed]; after its connection died, with a [*ServerError]. Tools are
// only made by an [Adapter]: the methods of a zero Tool return zero values
// and its calls fail.
//
// With [Config.CallbacksHandler] set, every [Tool.Call], [Tool.Invoke],
// [Tool.InvokeJSON] and [ApprovalRequired.Approve] reports HandleToolStart
// with its input (Call's text, InvokeJSON's JSON, Invoke's arguments as
// JSON), then exactly one of HandleToolEnd with [Result.Text] (also for
// isError results and for input the tool cannot take) or HandleToolError
// with the error (an approval request, an interrupt, a server failure).
type Tool struct {
	a      *Adapter
	conn   *conn
	server string
	name   string    // the exposed name (names.go): "server__tool" or the raw name, provider-safe
	folded string    // strings.ToUpper(name): the key of duplicate checks, computed once
	desc   *mcp.Tool // the server's descriptor; never mutated
	meta   Metadata
	// appOnly marks an MCP Apps tool the model must not see (visibility.go).
	appOnly bool
	output  outputSchema // the resolved outputSchema, made on first use (output.go)

	params      map[string]any // normalized input schema (sharedSchema), read-only; never handed out
	schemaOnce  sync.Once      // resolves schema, for arguments rewritten by Middleware
	schema      *jsonschema.Resolved
	schemaErr   error
	summary     string // the server's description, or its title
	description string // summary with an argument hint for text agents

	taskRequired bool // the server requires task-based execution, which the adapter has not
}

var _ tools.Tool = (*Tool)(nil)

// Toolset is a list of tools, typically from [Adapter.ListTools]. The
// methods only read the slice.
type Toolset []*Tool

// ToolCall describes a call, as seen by [Config.Approval] and
// [ApprovalRequired]. Tool is the adapter's (possibly prefixed) name,
// MCPName the server's own. Args is a shallow copy of the caller's
// arguments.
type ToolCall struct {
	Server, Tool, MCPName string
	Args                  map[string]any
	Metadata              Metadata
}

// newTool wraps descriptor d of conn c.
func (a *Adapter) newTool(c *conn, d *mcp.Tool) *Tool {
	name := a.toolName(c.server, d.Name)
	t := &Tool{a: a, conn: c, server: c.server, name: name, folded: strings.ToUpper(name), desc: d}
	t.taskRequired = c.screen != nil && c.screen.TaskRequired(d.Name)
	t.meta = newMetadata(d, c.info)
	t.appOnly = appOnly(d)
	t.params = sharedSchema(d.InputSchema)
	t.summary = summary(d)
	t.description = describe(t.summary, t.params)
	return t
}

// Name implements [tools.Tool]: "server__tool", or the server's own name
// with [Config.RawToolNames], made provider-safe by [SafeToolName] (or what
// [Config.ToolName] gives). It is the name models see and call.
func (t *Tool) Name() string { return t.name }

// Description implements [tools.Tool]: the server's description (or the
// tool's title when it has none) followed by a one-line hint of the
// arguments, such as
//
//	Input: JSON object {"city": string (required), "unit": "c"|"f"}
//
// since langchaingo's text agents show models no schema. Tools without
// arguments get no hint.
func (t *Tool) Description() string { return t.description }

// Server returns the name of the tool's server in [Config.Servers].
func (t *Tool) Server() string { return t.server }

// MCPName returns the server's own name of the tool.
func (t *Tool) MCPName() string {
	if t.desc == nil {
		return ""
	}
	return t.desc.Name
}

// Descriptor returns the server's descriptor of the tool. It is borrowed:
// callers must not mutate it.
func (t *Tool) Descriptor() *mcp.Tool { return t.desc }

// Metadata returns the tool's MCP metadata (borrowed, see [Metadata]).
func (t *Tool) Metadata() Metadata { return t.meta }

// Parameters returns the tool's input schema as a fresh map the caller may
// modify. It is the server's schema with two additions that providers need,
// each only where missing: "type": "object" at the top (MCP requires it,
// OpenAI rejects parameters without it) and "properties": {} (Google AI
// rejects an object schema without them). $schema, $defs, $ref, additionalProperties,
// formats and enums are kept as the server wrote them. It makes the tool a
// langchaingo ToolWithParameters, should that interface land
// (tmc/langchaingo#1518).
func (t *Tool) Parameters() map[string]any {
	if t.params == nil {
		return normalizeSchema(nil)
	}
	return deepCopy(t.params)
}

// LLMTool returns the tool for native tool calling ([llms.WithTools]): the
// tool's name, the server's description (without the argument hint of
// [Tool.Description]: the model gets the real schema) and
// [Tool.Parameters]. Strict mode is off: OpenAI's strict schemas require
// every property and additionalProperties false, which MCP schemas rarely
// declare. [Tool.LLMToolFor] gives each provider the form it accepts.
func (t *Tool) LLMTool() llms.Tool {
	return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
		Name:        t.name,
		Description: t.summary,
		Parameters:  t.Parameters(),
	}}
}

// call returns the ToolCall of args on t.
func (t *Tool) call(args map[string]any) ToolCall {
	return ToolCall{Server: t.server, Tool: t.name, MCPName: t.MCPName(), Args: maps.Clone(args), Metadata: t.meta}
}

// Tools returns the set as langchaingo tools, for agents.NewExecutor and
// the agent constructors. Tools for the app alone ([Tool.AppOnly]) are left
// out.
func (s Toolset) Tools() []tools.Tool {
	s = s.forModel()
	out := make([]tools.Tool, len(s))
	for i, t := range s {
		out[i] = t
	}
	return out
}

// LLMTools returns the set for native tool calling ([llms.WithTools]), each
// with its server's schema (see [Tool.LLMTool]). Tools for the app alone
// ([Tool.AppOnly]) are left out.
func (s Toolset) LLMTools() []llms.Tool {
	s = s.forModel()
	out := make([]llms.Tool, len(s))
	for i, t := range s {
		out[i] = t.LLMTool()
	}
	return out
}

// Lookup returns the tool with the given name, or nil. An exact match wins;
// otherwise case is ignored, as langchaingo's executor does. It is the app's
// view: tools for the app alone ([Tool.AppOnly]) are found too.
func (s Toolset) Lookup(name string) *Tool {
	for _, t := range s {
		if t.name == name {
			return t
		}
	}
	for _, t := range s {
		if strings.EqualFold(t.name, name) {
			return t
		}
	}
	return nil
}

// HandleToolCalls runs the tool calls of a model's answer, in order, and
// returns the messages to append to the conversation. For each call i it
// emits an AI message holding only call i followed by its tool message
// (one [llms.ToolCallResponse]): Anthropic's provider reads only the first
// part of an AI message, so this interleaved layout is the one OpenAI and
// Anthropic both accept. The human messages carrying the results' media
// (see [Result.Messages]) follow all the pairs. The choice's text content is
// not part of the returned messages.
//
// Tools for the app alone ([Tool.AppOnly]) are unknown tools here.
// Unknown tools, arguments that are not a JSON object, isError results and
// the JSON-RPC errors a healthy server answers a call with (as in
// [Tool.Call]) become tool messages the model can act on. An [*Interrupt]
// or an [*ApprovalRequired] pauses the batch: the error is a [*PausedCalls]
// (which [errors.As] sees through to the interrupt or the approval
// request), and [Toolset.ResumeToolCalls] settles the paused call and runs
// the rest. A [*ServerError] (a transport or session failure, a timeout)
// stops the loop. Either way the messages of the calls before the stopped
// one are returned with the error, so the stopped call is
// choice.ToolCalls[n] where n is the number of AI messages returned.
func (s Toolset) HandleToolCalls(ctx context.Context, choice *llms.ContentChoice, opts ...PartOption) ([]llms.MessageContent, error) {
	if choice == nil {
		return nil, nil
	}
	return s.runCalls(ctx, &PausedCalls{Calls: choice.ToolCalls}, opts)
}

// ResumeToolCalls settles the paused call of a batch with r (the user's
// answers for an interrupt, a decision for an approval request), then runs
// the calls after it, as [Toolset.HandleToolCalls] does. p may come from
// another process through JSON; the paused call runs on the adapter of the
// tool of s it names, after the checks of [Adapter.Resume] or
// [Adapter.Approve]: under the principal of the paused call only (a
// refusal returns no messages). The calls answered before the pause are
// not run again.
//
// It returns the messages of the whole batch, those returned with the pause
// included: exactly what HandleToolCalls would have returned without the
// pause. Append them instead of the pause's. When another call of the batch
// pauses (parallel tool calls that both need input), or the resumed call
// asks again, the error is a new *PausedCalls: the calls run one after the
// other, and each pause is settled in turn.
func (s Toolset) ResumeToolCalls(ctx context.Context, p *PausedCalls, r Resolution, opts ...PartOption) ([]llms.MessageContent, error) {
	if p == nil || p.Next < 0 || p.Next >= len(p.Calls) {
		return nil, fmt.Errorf("mcpadapter: resume tool calls: %w: no paused call", ErrInvalidState)
	}
	tc := p.Calls[p.Next]
	var t *Tool
	if tc.FunctionCall != nil {
		t = s.Lookup(tc.FunctionCall.Name)
	}
	if t == nil {
		return nil, fmt.Errorf("mcpadapter: resume tool calls: %w: the paused call's tool is not in the toolset", ErrInvalidState)
	}
	if err := p.pause.open(ctx, t.a, stateCalls, p.seal); err != nil {
		return nil, fmt.Errorf("mcpadapter: resume tool calls: %w", err)
	}
	next := &PausedCalls{Calls: p.Calls, Next: p.Next, messages: slices.Clone(p.messages), media: slices.Clone(p.media)}
	res, err := p.pause.settle(ctx, t, r)
	if err != nil {
		return next.stop(err)
	}
	next.add(tc, res, s.partOptions(tc, opts))
	next.Next++
	return s.runCalls(ctx, next, opts)
}

// runCalls runs the calls of p from p.Next on.
func (s Toolset) runCalls(ctx context.Context, p *PausedCalls, opts []PartOption) ([]llms.MessageContent, error) {
	for ; p.Next < len(p.Calls); p.Next++ {
		tc := p.Calls[p.Next]
		res, err := s.runToolCall(ctx, tc)
		if err != nil {
			return p.stop(err)
		}
		p.add(tc, res, s.partOptions(tc, opts))
	}
	return append(p.messages, p.media...), nil // p is done with: no copy
}

// A PausedCalls is returned (as an error) by [Toolset.HandleToolCalls] and
// [Toolset.ResumeToolCalls] when a call of the batch needs user input or
// approval. [errors.As] finds the [*Interrupt] or [*ApprovalRequired]
// through it. It survives json.Marshal and Unmarshal (sealed with
// [Config.StateKey] when set): the batch's calls, the messages of the calls
// answered so far, and the pause, which records the principal of its call.
// Resume it with [Toolset.ResumeToolCalls], under that principal.
type PausedCalls struct {
	Calls []llms.ToolCall // the batch, as the model made it
	Next  int             // the paused call: Calls[Next]

	messages, media []llms.MessageContent // of Calls[:Next]
	pause           pause
	seal            stateSeal
}

// add appends the messages of call tc and its result.
func (p *PausedCalls) add(tc llms.ToolCall, res *Result, opts []PartOption) {
	out := res.Messages(tc, opts...)
	p.messages = append(p.messages, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc}}, out[0])
	p.media = append(p.media, out[1:]...)
}

// all returns a copy of the messages so far: the pairs, then the media.
func (p *PausedCalls) all() []llms.MessageContent {
	return append(slices.Clone(p.messages), p.media...)
}

// stop returns the messages so far with err, as a pause of p when err is
// an interrupt or an approval request.
func (p *PausedCalls) stop(err error) ([]llms.MessageContent, error) {
	pend, ok := pauseOf(err)
	if !ok {
		return p.all(), err
	}
	p.Calls = slices.Clone(p.Calls) // the caller's choice may change
	p.pause, p.seal = pend, stateSeal{}
	return p.all(), p
}

// Error implements error: the pause's message.
func (p *PausedCalls) Error() string {
	if p == nil || p.pause.err() == nil {
		return "mcpadapter: <no paused call>"
	}
	return p.pause.err().Error()
}

// Unwrap returns the [*Interrupt] or [*ApprovalRequired] the batch waits
// for.
func (p *PausedCalls) Unwrap() error {
	if p == nil {
		return nil
	}
	return p.pause.err()
}

// pausedCallsJSON is the wire form of a PausedCalls.
type pausedCallsJSON struct {
	Version  int                   `json:"version"`
	Calls    []storedCall          `json:"calls"`
	Next     int                   `json:"next"`
	Messages []llms.MessageContent `json:"messages,omitempty"`
	Media    []llms.MessageContent `json:"media,omitempty"`
	pause
}

// maxPausedCalls bounds the calls of a stored batch.
const maxPausedCalls = 1024

// MarshalJSON implements [json.Marshaler]. The JSON holds the tool
// results the model has not seen yet and the pause (with the call's
// arguments): store it where those may be stored.
func (p *PausedCalls) MarshalJSON() ([]byte, error) {
	return marshalState(p.pause.adapter(), stateCalls, p.seal, func() ([]byte, error) {
		calls := make([]storedCall, len(p.Calls))
		for i, tc := range p.Calls {
			calls[i] = storedCall{ID: tc.ID, Type: tc.Type, Function: tc.FunctionCall}
		}
		return json.Marshal(pausedCallsJSON{Version: 1, Calls: calls, Next: p.Next, Messages: p.messages, Media: p.media, pause: p.pause})
	})
}

// UnmarshalJSON implements [json.Unmarshaler]. Malformed or oversized JSON
// is an error wrapping [ErrInvalidState], never a panic.
func (p *PausedCalls) UnmarshalJSON(b []byte) error {
	var w pausedCallsJSON
	seal, err := decodeState("paused tool calls", b, &w)
	if err != nil {
		return err
	}
	switch {
	case w.Version != 1:
		err = fmt.Errorf("unsupported version %d", w.Version)
	case len(w.Calls) > maxPausedCalls:
		err = fmt.Errorf("%d calls, more than %d", len(w.Calls), maxPausedCalls)
	case w.Next < 0 || w.Next >= len(w.Calls):
		err = fmt.Errorf("paused call %d of %d", w.Next, len(w.Calls))
	case w.Calls[w.Next].Function == nil:
		err = errors.New("the paused call has no function")
	case slices.ContainsFunc(append(w.Messages, w.Media...), malformed):
		err = errors.New("a message holds a tool call without a function")
	default:
		err = w.pause.check(w.Calls[w.Next].Function.Name)
	}
	if err != nil {
		return fmt.Errorf("mcpadapter: decoding paused tool calls: %w: %w", ErrInvalidState, err)
	}
	calls := make([]llms.ToolCall, len(w.Calls))
	for i, c := range w.Calls {
		calls[i] = llms.ToolCall{ID: c.ID, Type: c.Type, FunctionCall: c.Function}
	}
	*p = PausedCalls{Calls: calls, Next: w.Next, messages: w.Messages, media: w.Media, pause: w.pause, seal: seal}
	return nil
}

// malformed reports whether m holds a tool call without a function, which
// providers dereference.
func malformed(m llms.MessageContent) bool {
	return slices.ContainsFunc(m.Parts, func(p llms.ContentPart) bool {
		tc, ok := p.(llms.ToolCall)
		return ok && tc.FunctionCall == nil
	})
}

// storedCall is the wire form of an llms.ToolCall (whose own decoder loses
// the function in langchaingo v0.1.14).
type storedCall struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Function *llms.FunctionCall `json:"function"`
}

// runToolCall runs one native tool call; problems the model can fix are
// results.
func (s Toolset) runToolCall(ctx context.Context, tc llms.ToolCall) (*Result, error) {
	if tc.FunctionCall == nil {
		return errorResult("Error: tool call without a function"), nil
	}
	t := s.Lookup(tc.FunctionCall.Name)
	if t == nil || t.appOnly {
		return errorResult(fmt.Sprintf("%s is not a valid tool, try another one", tc.FunctionCall.Name)), nil
	}
	if tc.ID != "" {
		ctx = context.WithValue(ctx, modelCallIDKey{}, tc.ID)
	}
	args := tc.FunctionCall.Arguments
	return t.observe(ctx, textInput(args), func() (*Result, error) { return t.answered(t.invokeJSON(ctx, args)) })
}

// errorResult is an isError result holding one text block: what the model
// reads when a call failed in a way it can correct.
func errorResult(text string) *Result {
	return &Result{IsError: true, Content: []Block{{Type: BlockText, Text: text}}}
}
