package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// nameSeparator joins server and tool names: "server__tool".
const nameSeparator = "__"

// A Tool is one MCP tool of one server, bound to the connection it was
// discovered on. It implements langchaingo's [tools.Tool]. A Tool is
// immutable and safe for concurrent use. After [Adapter.Close] its calls fail
// with [ErrClosed]; after its connection died, with a [*ServerError].
type Tool struct {
	a      *Adapter
	conn   *conn
	server string
	name   string    // the adapter's name: "server__tool" or the raw name
	desc   *mcp.Tool // the server's descriptor; never mutated
	meta   Metadata

	params      map[string]any // normalized input schema, built once
	description string         // description with an argument hint for text agents
}

// Toolset is a list of tools, typically from [Adapter.ListTools].
type Toolset []*Tool

// Metadata mirrors LangChain's "mcp" metadata namespace. Every nested field
// is nil when the server did not provide it; the accessor methods never
// panic on missing fields.
type Metadata struct{ MCP *MCPMetadata }

// MCPMetadata is the MCP part of a tool's [Metadata].
type MCPMetadata struct {
	Tool   *ToolMetadata   // nil when the tool has neither annotations nor _meta
	Server *ServerMetadata // nil when the server did not say who it is
}

// ToolMetadata holds what the server declared about a tool.
type ToolMetadata struct {
	Annotations *mcp.ToolAnnotations // nil when absent
	Meta        map[string]any       // the tool's _meta; nil when absent
}

// ServerMetadata identifies the server a tool comes from.
type ServerMetadata struct{ Name, Version string }

// Annotations returns the tool's annotations, or nil.
func (m Metadata) Annotations() *mcp.ToolAnnotations {
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

// ServerInfo returns the server's identity, or nil.
func (m Metadata) ServerInfo() *ServerMetadata {
	if m.MCP == nil {
		return nil
	}
	return m.MCP.Server
}

// IsDestructive reports whether the server declared the tool destructive
// (annotation destructiveHint true). An absent hint counts as false here:
// gate on it with [Config.Approval] knowing that annotations are hints from
// the server, not guarantees.
func IsDestructive(t *Tool) bool {
	ann := t.Metadata().Annotations()
	return ann != nil && ann.DestructiveHint != nil && *ann.DestructiveHint
}

// ToolCall describes a call, as seen by [Config.Approval]. Tool is the
// adapter's (possibly prefixed) name, MCPName the server's own.
type ToolCall struct {
	Server, Tool, MCPName string
	Args                  map[string]any
	Metadata              Metadata
}

var _ tools.Tool = (*Tool)(nil)

// newTool wraps descriptor d of conn c.
func (a *Adapter) newTool(c *conn, d *mcp.Tool) *Tool {
	name := d.Name
	if !a.cfg.RawToolNames {
		name = c.server + nameSeparator + d.Name
	}
	t := &Tool{a: a, conn: c, server: c.server, name: name, desc: d}
	t.meta = newMetadata(d, c.info)
	t.params = normalizeSchema(d.InputSchema)
	t.description = describe(d, t.params)
	return t
}

func newMetadata(d *mcp.Tool, info ServerInfo) Metadata {
	m := &MCPMetadata{}
	if d.Annotations != nil || d.Meta != nil {
		m.Tool = &ToolMetadata{Annotations: d.Annotations, Meta: d.Meta}
	}
	if info.Name != "" || info.Version != "" {
		m.Server = &ServerMetadata{Name: info.Name, Version: info.Version}
	}
	return Metadata{MCP: m}
}

// normalizeSchema returns the input schema as providers need it: a
// map[string]any with "properties" (googleai rejects an object without
// them). Nothing else is changed: $schema, $defs, $ref, formats and enums
// stay as the server wrote them.
func normalizeSchema(schema any) map[string]any {
	m := schemaMap(schema)
	if m == nil {
		m = map[string]any{"type": "object"}
	}
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	return m
}

// schemaMap returns a copy of a JSON schema as a map, or nil.
func schemaMap(schema any) map[string]any {
	if m, ok := schema.(map[string]any); ok {
		return deepCopy(m)
	}
	// Not decoded as a map (a value built in Go): go through JSON.
	var m map[string]any
	if b, err := json.Marshal(schema); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

// deepCopy copies the maps and slices of a decoded JSON value.
func deepCopy[T any](v T) T {
	var copyAny func(any) any
	copyAny = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			m := make(map[string]any, len(v))
			for k, e := range v {
				m[k] = copyAny(e)
			}
			return m
		case []any:
			s := make([]any, len(v))
			for i, e := range v {
				s[i] = copyAny(e)
			}
			return s
		}
		return v
	}
	out, _ := copyAny(v).(T)
	return out
}

// describe returns the description text agents see: the server's
// description (or title) and a one-line hint of the arguments, since
// langchaingo's text agents show models no schema.
func describe(d *mcp.Tool, params map[string]any) string {
	text := d.Description
	if text == "" {
		text = d.Title
	}
	if text == "" && d.Annotations != nil {
		text = d.Annotations.Title
	}
	props, _ := params["properties"].(map[string]any)
	if len(props) == 0 {
		return text
	}
	required := map[string]bool{}
	if req, ok := params["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	var hint []string
	for _, name := range slices.Sorted(maps.Keys(props)) {
		typ := "any"
		if p, ok := props[name].(map[string]any); ok {
			if s, ok := p["type"].(string); ok {
				typ = s
			}
		}
		if required[name] {
			typ += ", required"
		}
		hint = append(hint, fmt.Sprintf("%q (%s)", name, typ))
	}
	sep := " "
	if text == "" {
		sep = ""
	}
	return text + sep + "Input: a JSON object with " + strings.Join(hint, ", ") + "."
}

// Name implements [tools.Tool]: "server__tool", or the server's name with
// [Config.RawToolNames].
func (t *Tool) Name() string { return t.name }

// Description implements [tools.Tool]: the server's description followed by
// a short hint of the arguments (text agents show models no schema).
func (t *Tool) Description() string { return t.description }

// Server returns the name of the tool's server.
func (t *Tool) Server() string { return t.server }

// MCPName returns the server's own name of the tool.
func (t *Tool) MCPName() string { return t.desc.Name }

// Descriptor returns the server's descriptor. It is borrowed: callers must
// not mutate it.
func (t *Tool) Descriptor() *mcp.Tool { return t.desc }

// Metadata returns the tool's MCP metadata.
func (t *Tool) Metadata() Metadata { return t.meta }

// Parameters returns the tool's input schema, normalized for providers
// (a missing "properties" is added, nothing else changes), as a fresh map
// the caller may modify.
func (t *Tool) Parameters() map[string]any { return deepCopy(t.params) }

// LLMTool returns the tool for native tool calling ([llms.WithTools]), with
// the server's real schema.
func (t *Tool) LLMTool() llms.Tool {
	return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
		Name:        t.name,
		Description: t.desc.Description,
		Parameters:  t.Parameters(),
	}}
}

// call returns the ToolCall of args on t.
func (t *Tool) call(args map[string]any) ToolCall {
	return ToolCall{Server: t.server, Tool: t.name, MCPName: t.desc.Name, Args: args, Metadata: t.meta}
}

// Invoke calls the tool with args, sent as given (the server validates
// them). A tool-level failure (isError, or invalid params) is a [Result]
// with IsError set and a nil error. The error is an [*Interrupt] when the
// server needs user input, an [*ApprovalRequired] when [Config.Approval]
// asks for approval, and a [*ServerError] for transport, session and other
// JSON-RPC failures.
func (t *Tool) Invoke(ctx context.Context, args map[string]any) (*Result, error) {
	if t.a.cfg.Approval != nil {
		if call := t.call(args); t.a.cfg.Approval(call) {
			return nil, &ApprovalRequired{Call: call, tool: t}
		}
	}
	return t.invoke(ctx, args)
}

// InvokeJSON is [Tool.Invoke] with the arguments as a JSON object.
func (t *Tool) InvokeJSON(ctx context.Context, argsJSON string) (*Result, error) {
	args, err := decodeObject(argsJSON)
	if err != nil {
		return nil, fmt.Errorf("mcpadapter: tool %q: arguments: %w", t.name, err)
	}
	return t.Invoke(ctx, args)
}

// invoke runs the call, with callbacks, past the approval gate.
func (t *Tool) invoke(ctx context.Context, args map[string]any) (*Result, error) {
	cb := t.a.cfg.CallbacksHandler
	if cb != nil {
		input, _ := json.Marshal(args)
		cb.HandleToolStart(ctx, string(input))
	}
	res, err := t.a.callRounds(ctx, t.conn, t.name, t.desc.Name, args, nil, "", 0)
	if cb != nil {
		if err != nil {
			cb.HandleToolError(ctx, err)
		} else {
			cb.HandleToolEnd(ctx, res.Text())
		}
	}
	return res, err
}

// timeout returns the bound of one call to a tool of c's server.
func (a *Adapter) timeout(c *conn) time.Duration {
	if a.cfg.DefaultToolTimeout > 0 {
		return a.cfg.DefaultToolTimeout
	}
	return c.cfg.DefaultToolTimeout
}

// callOnce sends one tools/call on c. Params are built fresh for every call:
// the SDK writes into them.
func (c *conn) callOnce(ctx context.Context, op, mcpName string, args any, responses mcp.InputResponseMap, state string) (*mcp.CallToolResult, *Result, error) {
	if err := c.usable(op); err != nil {
		return nil, nil, err
	}
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: mcpName, Arguments: args, InputResponses: responses, RequestState: state})
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) && we.Code == jsonrpc.CodeInvalidParams {
			// The model can fix its arguments: a tool-level error.
			return nil, &Result{IsError: true, Content: []Block{{Type: BlockText, Text: we.Message}}}, nil
		}
		return nil, nil, c.callError(op, err)
	}
	return res, nil, nil
}

// Call implements [tools.Tool], langchaingo's text API. input may be a JSON
// object, langchaingo's {"__arg1": ...} wrapper (a string or an object),
// JSON in a Markdown fence, or a bare string when the schema has exactly one
// string property. Arguments that cannot be decoded and isError results come
// back as text with a nil error, so the model can correct itself (an error
// ends an agent run); interrupts, approvals and transport failures are
// errors.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	args, err := decodeCallInput(input, t.params)
	if err != nil {
		return fmt.Sprintf("Invalid input for tool %s: %v. %s", t.name, err, t.inputHint()), nil
	}
	res, err := t.Invoke(ctx, args)
	if err != nil {
		return "", err
	}
	return res.Text(), nil
}

// inputHint tells the model what input the tool expects.
func (t *Tool) inputHint() string {
	b, _ := json.Marshal(t.params)
	return "Expected a JSON object matching this schema: " + string(b)
}

// decodeCallInput turns the text input of [Tool.Call] into arguments.
func decodeCallInput(input string, schema map[string]any) (map[string]any, error) {
	s := unfence(strings.TrimSpace(input))
	if strings.HasPrefix(s, "{") {
		obj, err := decodeObject(s)
		if err != nil {
			return nil, err
		}
		if len(obj) == 1 {
			switch inner := obj["__arg1"].(type) {
			case string:
				return decodeCallInput(inner, schema)
			case map[string]any:
				return inner, nil
			}
		}
		return obj, nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal([]byte(s), &str); err == nil {
			s = str
		}
	}
	props, _ := schema["properties"].(map[string]any)
	if s == "" && !hasRequired(schema) {
		return map[string]any{}, nil
	}
	if len(props) == 1 {
		for name, p := range props {
			if p, ok := p.(map[string]any); ok && p["type"] == "string" {
				return map[string]any{name: s}, nil
			}
		}
	}
	return nil, errors.New("input is not a JSON object")
}

func hasRequired(schema map[string]any) bool {
	req, _ := schema["required"].([]any)
	return len(req) > 0
}

// unfence strips a Markdown code fence (```json ... ```) or backticks
// around s.
func unfence(s string) string {
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		if i := strings.IndexByte(rest, '\n'); i >= 0 && !strings.HasPrefix(strings.TrimSpace(rest[:i]), "{") {
			rest = rest[i+1:] // drop the language tag
		}
		rest, _ = strings.CutSuffix(strings.TrimSpace(rest), "```")
		return strings.TrimSpace(rest)
	}
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}

// decodeObject decodes one JSON object, keeping numbers exact.
func decodeObject(s string) (map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("invalid JSON: data after the object")
	}
	if obj == nil {
		return nil, errors.New("not a JSON object")
	}
	return obj, nil
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

// LLMTools returns the set for native tool calling ([llms.WithTools]).
func (s Toolset) LLMTools() []llms.Tool {
	out := make([]llms.Tool, len(s))
	for i, t := range s {
		out[i] = t.LLMTool()
	}
	return out
}

// Lookup returns the tool with the given name, or nil. Like langchaingo's
// executor, it ignores case.
func (s Toolset) Lookup(name string) *Tool {
	for _, t := range s {
		if strings.EqualFold(t.name, name) {
			return t
		}
	}
	return nil
}

// HandleToolCalls runs the tool calls of a model's answer, in order, and
// returns the messages to append to the conversation: for each call, an AI
// message holding that call followed by its tool message (a layout OpenAI
// and Anthropic both accept), then one human message with the media of all
// results, if any. Unknown tools, undecodable arguments and isError results
// become tool messages the model can act on. An [*Interrupt], an
// [*ApprovalRequired] or a transport failure stops the loop: the messages of
// the calls before it are returned with the error.
func (s Toolset) HandleToolCalls(ctx context.Context, choice *llms.ContentChoice, opts ...PartOption) ([]llms.MessageContent, error) {
	if choice == nil {
		return nil, nil
	}
	var msgs, media []llms.MessageContent
	for _, tc := range choice.ToolCalls {
		msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc}})
		res, err := s.runToolCall(ctx, tc)
		if err != nil {
			return append(msgs[:len(msgs)-1], media...), err
		}
		out := res.Messages(tc, opts...)
		msgs = append(msgs, out[0])
		media = append(media, out[1:]...)
	}
	return append(msgs, media...), nil
}

// runToolCall runs one native tool call; problems the model can fix are
// results.
func (s Toolset) runToolCall(ctx context.Context, tc llms.ToolCall) (*Result, error) {
	if tc.FunctionCall == nil {
		return textResult(true, "tool call without a function"), nil
	}
	t := s.Lookup(tc.FunctionCall.Name)
	if t == nil {
		return textResult(true, fmt.Sprintf("%s is not a valid tool, try another one", tc.FunctionCall.Name)), nil
	}
	args := map[string]any{}
	if strings.TrimSpace(tc.FunctionCall.Arguments) != "" {
		var err error
		if args, err = decodeObject(tc.FunctionCall.Arguments); err != nil {
			return textResult(true, fmt.Sprintf("Invalid arguments for tool %s: %v. %s", t.name, err, t.inputHint())), nil
		}
	}
	return t.Invoke(ctx, args)
}

// textResult is a result holding one text block.
func textResult(isError bool, text string) *Result {
	return &Result{IsError: isError, Content: []Block{{Type: BlockText, Text: text}}}
}
