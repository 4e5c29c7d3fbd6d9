package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/mcpadapter/mcpadapter/internal/outputschema"
	"github.com/mcpadapter/mcpadapter/internal/schemapass"
	"github.com/mcpadapter/mcpadapter/internal/suggest"
	"github.com/mcpadapter/mcpadapter/internal/toolname"
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
// discovered on. It implements langchaingo's [tools.Tool];
// [Tool.LLMTool] and [Toolset.HandleToolCalls] serve native tool
// calling. A Tool is immutable and safe for concurrent use. After
// [Adapter.Close] its calls fail with [ErrClosed]; after its connection
// died, with a [*ServerError] that says to list the tools again, unless
// [Config.ToolsFollowServer] has the tool call its server's current
// connection (dialing it again if needed). A Streamable HTTP session that
// the server forgot (HTTP 404: it restarted) is not a dead connection:
// the adapter starts a new session, and the tool's calls go on there
// (see [Server.Retry]). Tools are only made by an [Adapter]: the methods of a
// zero Tool return zero values and its calls fail. More in
// docs/reference.md, "Tool".
type Tool struct {
	a      *Adapter
	conn   *conn
	server string
	name   string          // the exposed name (names.go): "server__tool" or the raw name, provider-safe
	folded string          // strings.ToUpper(name): the key of duplicate checks, computed once
	desc   *ToolDescriptor // the server's descriptor (descriptor.go); never mutated
	meta   Metadata
	// appOnly marks an MCP Apps tool the model must not see (filter.go).
	appOnly bool
	output  outputschema.Lazy // the outputSchema, resolved on first use (result.go)

	params      map[string]any // normalized input schema (sharedSchema), read-only; never handed out
	schemaOnce  sync.Once      // resolves schema, for arguments rewritten by Middleware
	schema      *jsonschema.Resolved
	schemaErr   error
	summary     string // the server's description, or its title
	description string // summary with an argument hint for text agents
}

var _ tools.Tool = (*Tool)(nil)

// Toolset is a list of tools, typically from [Adapter.ListTools]. The
// methods only read the slice.
type Toolset []*Tool

// ToolCall describes a call, as seen by [Config.Approval] and
// [ApprovalRequired]. Tool is the adapter's (possibly prefixed) name,
// MCPName the server's own. Args is a shallow copy of the arguments that
// are sent: the caller's, as [Config.Middleware] left them.
type ToolCall struct {
	Server, Tool, MCPName string
	Args                  map[string]any
	Metadata              Metadata
}

// newTool wraps descriptor d of conn c, naming it name (toolPolicy.name);
// raw is d's JSON as the server sent it (see newDescriptor).
func newTool(c *conn, name string, d *mcp.Tool, raw []byte) *Tool {
	desc := newDescriptor(d, raw)
	t := &Tool{a: c.a, conn: c, server: c.server, name: name, folded: strings.ToUpper(name), desc: desc}
	t.meta = newMetadata(desc, c.info)
	t.appOnly = appOnly(desc)
	t.params = schemapass.Shared(d.InputSchema)
	t.summary = summary(desc)
	t.description = schemapass.Describe(t.summary, t.params)
	return t
}

// summary is the text that says what d does: its description, else its
// title, else its annotations' title.
func summary(d *ToolDescriptor) string {
	for _, s := range []string{d.Description, d.Title} {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	if d.Annotations != nil {
		return strings.TrimSpace(d.Annotations.Title)
	}
	return ""
}

// Name implements [tools.Tool]: "server__tool", made provider-safe by
// [SafeToolName], or what [Config.ToolName] gives. It is the name models see and call.
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

// taskSupport is the execution.taskSupport of t's descriptor: "required",
// "optional", "forbidden" or "" when the server sent none (tasks.go).
func (t *Tool) taskSupport() string {
	if t.desc == nil || t.desc.Execution == nil {
		return ""
	}
	return t.desc.Execution.TaskSupport
}

// Descriptor returns the server's descriptor of the tool, as the server
// sent it (see [ToolDescriptor]). It is borrowed: callers must not mutate
// it.
func (t *Tool) Descriptor() *ToolDescriptor { return t.desc }

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
		return schemapass.Normalize(nil)
	}
	return jsonvalue.Copy(t.params)
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
	s = visible(s, false, nil)
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
	out, _ := s.LLMToolsFor() // without passes, no tool fails
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
// (one [llms.ToolCallResponse]): Anthropic's provider reads only the
// first part of an AI message, so this interleaved layout is the one
// OpenAI and Anthropic both accept. The human messages carrying the
// results' media (see [Result.Messages]) follow all the pairs. The
// choice's text content is not part of the returned messages. More in
// docs/reference.md, "Toolset.HandleToolCalls".
func (s Toolset) HandleToolCalls(ctx context.Context, choice *llms.ContentChoice, opts ...PartOption) ([]llms.MessageContent, error) {
	if choice == nil {
		return nil, nil
	}
	return s.runCalls(ctx, &PausedCalls{Calls: choice.ToolCalls}, s.runToolCall, opts)
}

// A callRunner runs one native tool call tc of a set, whose tool t there
// is (toolOf) nil when the set has none: [Toolset.runToolCall], or a
// [ToolSearch]'s, which answers its search calls itself.
type callRunner func(ctx context.Context, tc llms.ToolCall, t *Tool) (*Result, error)

// runCalls runs the calls of p from p.Next on, each with run.
func (s Toolset) runCalls(ctx context.Context, p *PausedCalls, run callRunner, opts []PartOption) ([]llms.MessageContent, error) {
	for ; p.Next < len(p.Calls); p.Next++ {
		tc := p.Calls[p.Next]
		t := s.toolOf(tc)
		res, err := run(ctx, tc, t)
		if err != nil {
			if res = t.timedOut(ctx, err, opts); res == nil { // modelerror.go
				return p.stop(err)
			}
		}
		p.add(tc, res, t.partOptions(opts))
	}
	return append(p.messages, p.media...), nil // p is done with: no copy
}

// toolOf returns the tool that tc calls, or nil.
func (s Toolset) toolOf(tc llms.ToolCall) *Tool {
	if tc.FunctionCall == nil {
		return nil
	}
	return s.Lookup(tc.FunctionCall.Name)
}

// runToolCall runs one native tool call tc, of the tool t of s (toolOf);
// problems the model can fix are results.
func (s Toolset) runToolCall(ctx context.Context, tc llms.ToolCall, t *Tool) (*Result, error) {
	if tc.FunctionCall == nil {
		return errorResult("Error: tool call without a function"), nil
	}
	if t == nil || !t.offered(false) {
		return errorResult(s.unknownTool(tc.FunctionCall.Name)), nil
	}
	args := tc.FunctionCall.Arguments
	return t.observe(ctx, textInput(args), func() (*Result, error) {
		res, err := t.invokeJSON(ctx, args, tc.ID)
		return t.answered(ctx, res, err)
	})
}

// errorResult is an isError result holding one text block: what the model
// reads when a call failed in a way it can correct.
func errorResult(text string) *Result {
	return &Result{IsError: true, Content: []Block{{Type: BlockText, Text: text}}}
}

// unknownTool is what the model reads when it calls a tool that s does not
// offer: that it is not one, and the tool it most likely meant, when one
// stands out: the one whose server calls it so (the model left out the
// server's prefix), else the nearest by spelling.
func (s Toolset) unknownTool(name string) string {
	var meant string
	names := make([]string, 0, len(s))
	for _, t := range s {
		if !t.offered(false) {
			continue
		}
		if strings.EqualFold(t.MCPName(), name) && meant == "" {
			meant = t.name
		}
		names = append(names, t.name)
	}
	if meant == "" {
		meant = suggest.Nearest(name, names)
	}
	if meant == "" {
		return fmt.Sprintf("%s is not a valid tool, try another one", name)
	}
	return fmt.Sprintf("%s is not a valid tool; did you mean %s?", name, meant)
}

// Names the model sees.
//
// Providers accept tool names matching ^[a-zA-Z0-9_-]{1,64}$ (OpenAI and
// Anthropic state it; Google AI allows dots and colons too, but no more than
// 64 characters). MCP names are freer: "server__tool" may hold dots, slashes
// or spaces and grow past 64. The default policy makes every exposed name
// fit; [Config.ToolName] replaces it.

// maxToolNameLength is the longest tool name the default policy gives: the
// limit of OpenAI, Anthropic and Google AI.
const maxToolNameLength = 64

// SafeToolName returns name in the form providers accept: every
// character outside [A-Za-z0-9_-] is replaced by '_' (one '_' per
// character, however many bytes it takes), and a result longer than
// maxLen is cut and ends in '_' followed by the first 8 hex digits of
// the SHA-256 of the whole original name, so that the same name always
// gives the same result, in every process and version, and names that
// differ only past the cut stay distinct. A maxLen below 16 counts as
// 16. An empty name stays empty. More in docs/reference.md,
// "SafeToolName".
func SafeToolName(name string, maxLen int) string { return toolname.Safe(name, maxLen) }

// name returns the name the model sees for tool of server: the result of
// [Config.ToolName] when set, else [SafeToolName] of "server__tool" with
// maxToolNameLength.
func (p *toolPolicy) name(server, tool string) string {
	if p.cfg.ToolName != nil {
		return p.cfg.ToolName(server, tool)
	}
	return SafeToolName(server+nameSeparator+tool, maxToolNameLength)
}

// Metadata mirrors LangChain's "mcp" metadata namespace: what the server
// declared about a tool and who the server is. Every nested field is nil
// when the server did not provide it, and the accessor methods return nil
// instead of panicking on a missing level, so
// tool.Metadata().Annotations() is always safe. The nested values are
// borrowed from the tool (like [Tool.Descriptor]): callers must not mutate
// them. Metadata marshals to JSON in LangChain's shape:
// {"mcp": {"tool": {"annotations": ..., "_meta": ...}, "server": {"name": ..., "version": ..., "title": ...}}}.
type Metadata struct {
	// MCP is set on every tool returned by an Adapter; it is nil in a zero
	// Metadata.
	MCP *MCPMetadata `json:"mcp,omitempty"`
}

// MCPMetadata is the MCP part of a tool's [Metadata].
type MCPMetadata struct {
	Tool   *ToolMetadata   `json:"tool,omitempty"`   // nil when the tool has neither annotations nor _meta
	Server *ServerMetadata `json:"server,omitempty"` // nil when the server sent no name, version or title
}

// ToolMetadata holds what the server declared about a tool.
type ToolMetadata struct {
	Annotations *ToolAnnotations `json:"annotations,omitempty"` // nil when the tool has no annotations; hints as sent
	Meta        map[string]any   `json:"_meta,omitempty"`       // the tool's _meta; nil when absent
}

// ServerMetadata identifies the server a tool comes from, as it introduced
// itself (serverInfo).
type ServerMetadata struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	Title   string `json:"title,omitempty"` // the server's display name, when it sent one
}

// Annotations returns the tool's annotations, or nil.
func (m Metadata) Annotations() *ToolAnnotations {
	if m.MCP == nil || m.MCP.Tool == nil {
		return nil
	}
	return m.MCP.Tool.Annotations
}

// Meta returns the tool's _meta, or nil.
func (m Metadata) Meta() map[string]any {
	if m.MCP == nil || m.MCP.Tool == nil {
		return nil
	}
	return m.MCP.Tool.Meta
}

// Server returns the identity of the tool's server, or nil.
func (m Metadata) Server() *ServerMetadata {
	if m.MCP == nil {
		return nil
	}
	return m.MCP.Server
}

// newMetadata builds the metadata of d, served by the server described by
// info.
func newMetadata(d *ToolDescriptor, info ServerInfo) Metadata {
	m := &MCPMetadata{}
	if d.Annotations != nil || d.Meta != nil {
		m.Tool = &ToolMetadata{Annotations: d.Annotations, Meta: d.Meta}
	}
	if info.Name != "" || info.Version != "" || info.Title != "" {
		m.Server = &ServerMetadata{Name: info.Name, Version: info.Version, Title: info.Title}
	}
	return Metadata{MCP: m}
}
