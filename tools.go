package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

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
	name   string    // the adapter's name: "server__tool" or the raw name
	folded string    // strings.ToUpper(name): the key of duplicate checks, computed once
	desc   *mcp.Tool // the server's descriptor; never mutated
	meta   Metadata

	params      map[string]any // normalized input schema, built once; never handed out
	summary     string         // the server's description, or its title
	description string         // summary with an argument hint for text agents

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
	name := d.Name
	if !a.cfg.RawToolNames {
		name = c.server + nameSeparator + d.Name
	}
	t := &Tool{a: a, conn: c, server: c.server, name: name, folded: strings.ToUpper(name), desc: d}
	t.taskRequired = c.screen != nil && c.screen.TaskRequired(d.Name)
	t.meta = newMetadata(d, c.info)
	t.params = normalizeSchema(d.InputSchema)
	t.summary = summary(d)
	t.description = describe(t.summary, t.params)
	return t
}

// Name implements [tools.Tool]: "server__tool", or the server's own name
// with [Config.RawToolNames].
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
// modify. It is the server's schema with one change that providers need: a
// schema without "properties" gets "properties": {} (Google AI rejects an
// object schema without them). $schema, $defs, $ref, additionalProperties,
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
// declare.
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
// the agent constructors.
func (s Toolset) Tools() []tools.Tool {
	out := make([]tools.Tool, len(s))
	for i, t := range s {
		out[i] = t
	}
	return out
}

// LLMTools returns the set for native tool calling ([llms.WithTools]), each
// with its server's schema (see [Tool.LLMTool]).
func (s Toolset) LLMTools() []llms.Tool {
	out := make([]llms.Tool, len(s))
	for i, t := range s {
		out[i] = t.LLMTool()
	}
	return out
}

// Lookup returns the tool with the given name, or nil. An exact match wins;
// otherwise case is ignored, as langchaingo's executor does.
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
// Unknown tools, arguments that are not a JSON object and isError results
// become tool messages the model can act on. An [*Interrupt], an
// [*ApprovalRequired] or a [*ServerError] stops the loop: the messages of
// the calls before the failed one are returned with the error, so the
// failed call is choice.ToolCalls[n] where n is the number of AI messages
// returned. Resolve it (resume, approve), append its AI message and
// [Result.Messages], and handle the remaining calls.
func (s Toolset) HandleToolCalls(ctx context.Context, choice *llms.ContentChoice, opts ...PartOption) ([]llms.MessageContent, error) {
	if choice == nil {
		return nil, nil
	}
	var msgs, media []llms.MessageContent
	for _, tc := range choice.ToolCalls {
		res, err := s.runToolCall(ctx, tc)
		if err != nil {
			return append(msgs, media...), err
		}
		out := res.Messages(tc, opts...)
		msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc}}, out[0])
		media = append(media, out[1:]...)
	}
	return append(msgs, media...), nil
}

// runToolCall runs one native tool call; problems the model can fix are
// results.
func (s Toolset) runToolCall(ctx context.Context, tc llms.ToolCall) (*Result, error) {
	if tc.FunctionCall == nil {
		return textResult(true, "Error: tool call without a function"), nil
	}
	t := s.Lookup(tc.FunctionCall.Name)
	if t == nil {
		return textResult(true, fmt.Sprintf("%s is not a valid tool, try another one", tc.FunctionCall.Name)), nil
	}
	return t.InvokeJSON(ctx, tc.FunctionCall.Arguments)
}

// textResult is a result holding one text block.
func textResult(isError bool, text string) *Result {
	return &Result{IsError: isError, Content: []Block{{Type: BlockText, Text: text}}}
}
