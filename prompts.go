package mcpadapter

// Prompts: listing (cached like tools, see catalog.go), getting with the
// arguments checked against the prompt's declaration, and the conversion of
// the messages to langchaingo's two message shapes.
//
// langchaingo's prompts package is not used: its templates are rendered
// locally from a template string, with no context and no error of the
// server's, while an MCP prompt is rendered by the server, over the network.
// What fits its API is the rendered messages: [PromptResult.LLMMessages]
// goes straight to GenerateContent. Importing the
// package would also bring its template engines (sprig, gonja) into every
// program using the adapter.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/modeltext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// A Prompt is a prompt as its server listed it (prompts/list), without
// loss: an argument's Required is nil when the server left it out, and
// the Prompt marshals to the JSON the server sent, byte for byte, fields
// this type does not know included. It is shared with the adapter's
// cache: callers must not mutate it.
type Prompt struct {
	Name        string            `json:"name"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Arguments   []*PromptArgument `json:"arguments,omitempty"`
	Icons       []mcp.Icon        `json:"icons,omitempty"`
	Meta        map[string]any    `json:"_meta,omitempty"`

	raw []byte // the JSON the server sent; nil for a prompt made by the caller
}

// PromptArgument is one argument a [Prompt] declares.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    *bool  `json:"required,omitempty"` // nil when the server left it out: not required
}

// MarshalJSON returns the JSON the server sent for p, or, for a prompt
// not made by the adapter, its fields' encoding.
func (p Prompt) MarshalJSON() ([]byte, error) {
	type fields Prompt // without this method
	return asSent(p.raw, fields(p))
}

// newPrompt makes the Prompt of p, whose JSON the server sent as raw (nil
// when the screen did not see it: p's own encoding is used). The
// arguments are decoded from raw: go-sdk's lose a required false. JSON
// that does not decode declares none: go-sdk decoded the same JSON.
func newPrompt(p *mcp.Prompt, raw []byte) *Prompt {
	if raw == nil {
		raw, _ = json.Marshal(p) // no JSON kept (see newDescriptor)
	}
	var sent struct {
		Arguments []*PromptArgument `json:"arguments"`
	}
	_ = json.Unmarshal(raw, &sent)
	return &Prompt{Name: p.Name, Title: p.Title, Description: p.Description, Arguments: sent.Arguments, Icons: p.Icons, Meta: p.Meta, raw: raw}
}

// PromptResult is a prompt rendered by its server, converted from the
// server's GetPromptResult. Like [Result], it is a plain value the caller
// owns.
type PromptResult struct {
	// Description is the server's description of the rendered prompt.
	Description string `json:"description,omitempty"`
	// Messages holds the server's messages in order.
	Messages []PromptMessage `json:"messages"`
	// Meta is the result's _meta; nil when the server sent none.
	Meta map[string]any `json:"meta,omitempty"`
}

// PromptMessage is one message of a [PromptResult]: its role ("user" or
// "assistant") and its content, converted as tool result content is.
type PromptMessage struct {
	Role    mcp.Role `json:"role"`
	Content Block    `json:"content"`
}

// ListPrompts lists every prompt of the named server (all pages). A server
// without prompts (method not found) has none: an empty list. The list is
// cached like tool lists, honouring the server's ttlMs and its prompts
// list_changed; opts may set a [CacheMode] ([FromServers] has no effect here).
// The caller owns the slice but must not mutate the prompts.
func (a *Adapter) ListPrompts(ctx context.Context, server string, opts ...ListOption) ([]*Prompt, error) {
	return listItems(ctx, a, server, opts, "list prompts", "prompts",
		func(cat *catalog) *entry[*Prompt] { return &cat.prompts },
		func(ctx context.Context, c *conn, cursor string) ([]*Prompt, string, int, error) {
			ctx, listing := withListing(ctx) // this page's JSON, apart from other callers' (descriptor.go)
			res, err := c.session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return nil, "", 0, err
			}
			prompts := make([]*Prompt, 0, len(res.Prompts))
			for _, p := range res.Prompts {
				if p != nil {
					prompts = append(prompts, newPrompt(p, c.listed(listing, "prompts", p.Name)))
				}
			}
			return prompts, res.NextCursor, res.TTLMs, nil
		})
}

// GetPrompt renders the prompt name of the named server with args. The
// prompt is looked up in the (cached) list of [Adapter.ListPrompts] first:
// a prompt the server does not list fails (in a [*ServerError]), and args
// that leave out a required argument or name one the prompt does not
// declare fail with an error naming them; neither reaches the server.
// A modern server that asks for user input to render the prompt (an
// input-required result) fails it with [ErrUnsupportedInputRequest]; a
// legacy server's live requests go to [Config.ElicitationHandler].
// Convert the result with [PromptResult.LLMMessages].
func (a *Adapter) GetPrompt(ctx context.Context, server, name string, args map[string]string) (*PromptResult, error) {
	op := fmt.Sprintf("get prompt %q", name)
	prompts, err := a.ListPrompts(ctx, server)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(prompts, func(p *Prompt) bool { return p.Name == name })
	if i < 0 {
		return nil, serverError(server, op, errUnknownPrompt)
	}
	if missing, unknown := checkPromptArgs(prompts[i].Arguments, args); missing != nil || unknown != nil {
		return nil, &promptArgumentsError{Server: server, Prompt: name, Missing: missing, Unknown: unknown}
	}
	var res *mcp.GetPromptResult
	_, err = a.onConn(ctx, server, func(c *conn) (err error) {
		ctx, done := c.callContext(ctx)
		defer done()
		if res, err = c.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args}); err != nil {
			return c.callError(op, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n := len(res.InputRequests); n > 0 {
		// A modern input-required result: not a prompt yet.
		return nil, serverError(server, op, fmt.Errorf("%w: the server asked for input (%d requests) to render the prompt", ErrUnsupportedInputRequest, n))
	}
	p, err := newPromptResult(res)
	if err != nil {
		return nil, serverError(server, op, err)
	}
	return p, nil
}

// newPromptResult converts a GetPromptResult. A message of a role other
// than user or assistant is an error: langchaingo has no place for it.
func newPromptResult(res *mcp.GetPromptResult) (*PromptResult, error) {
	msgs := make([]PromptMessage, 0, len(res.Messages))
	for i, m := range res.Messages {
		if m == nil {
			continue // left out
		}
		if _, ok := chatType(m.Role); !ok {
			return nil, fmt.Errorf("message %d has role %q, want user or assistant", i, modeltext.Short(string(m.Role)))
		}
		if b, ok := newBlock(m.Content); ok {
			msgs = append(msgs, PromptMessage{Role: m.Role, Content: b})
		}
	}
	p := &PromptResult{Description: res.Description, Messages: msgs}
	if res.Meta != nil {
		p.Meta = map[string]any(res.Meta)
	}
	return p, nil
}

// LLMMessages returns the prompt as langchaingo messages for
// GenerateContent, one per message: user messages are human messages,
// assistant messages AI messages, and each content block becomes a part as
// in [Result.Parts] (text and embedded text resources as text, images,
// audio and embedded blobs as media parts; opts select the provider style).
// A message with nothing to show (blank text) is left out, since providers
// reject empty messages. A nil result gives nil.
func (p *PromptResult) LLMMessages(opts ...PartOption) []llms.MessageContent {
	if p == nil {
		return nil
	}
	s := applyParts(opts)
	out := make([]llms.MessageContent, 0, len(p.Messages))
	for i := range p.Messages {
		m := &p.Messages[i]
		role, ok := chatType(m.Role)
		parts := s.appendPart(nil, &m.Content)
		if !ok || len(parts) == 0 {
			continue
		}
		out = append(out, llms.MessageContent{Role: role, Parts: parts})
	}
	return out
}

// chatType is the langchaingo message type of an MCP role.
func chatType(r mcp.Role) (llms.ChatMessageType, bool) {
	switch r {
	case "user":
		return llms.ChatMessageTypeHuman, true
	case "assistant":
		return llms.ChatMessageTypeAI, true
	}
	return "", false
}

// checkPromptArgs returns the required arguments of declared that args
// leaves out, in declared order, and the names in args that declared does
// not have, sorted; both nil when args fit.
func checkPromptArgs(declared []*PromptArgument, args map[string]string) (missing, unknown []string) {
	known := map[string]bool{}
	for _, arg := range declared {
		if arg == nil {
			continue
		}
		known[arg.Name] = true
		if _, ok := args[arg.Name]; arg.Required != nil && *arg.Required && !ok {
			missing = append(missing, arg.Name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	return missing, unknown
}

// argsProblems says what [checkPromptArgs] found, as in `missing required
// argument "a"; unknown arguments "b", "c"`.
func argsProblems(missing, unknown []string) string {
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, "missing required "+quoteList(missing))
	}
	if len(unknown) > 0 {
		problems = append(problems, "unknown "+quoteList(unknown))
	}
	return strings.Join(problems, "; ")
}

// quoteList renders names as `argument "a"` or `arguments "a", "b"`.
func quoteList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	if len(names) == 1 {
		return "argument " + quoted[0]
	}
	return "arguments " + strings.Join(quoted, ", ")
}
