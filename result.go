package mcpadapter

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/modeltext"
	"github.com/mcpadapter/mcpadapter/internal/outputschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// Result is the outcome of one tool call, converted from the server's
// CallToolResult. Results are plain values: callers own them and may keep,
// change or serialize them. A nil *Result behaves as an empty one.
type Result struct {
	// Content holds the server's content items in order, one Block each.
	// Items the adapter does not model are kept as text placeholders (see
	// [Block.Raw]) so the others survive.
	Content []Block `json:"content"`
	// Artifact holds the structured content; nil when the tool returned none.
	// It is kept on error results too.
	Artifact *Artifact `json:"artifact,omitempty"`
	// IsError is the server's isError flag: the tool failed and its message
	// is in Content. Transport failures are Go errors, never IsError results.
	IsError bool `json:"isError,omitempty"`
	// Meta is the result's _meta, decoded for this result alone; nil when
	// the server sent none. Keys under the reserved prefix
	// "io.modelcontextprotocol/" are left out: they are the protocol's
	// bookkeeping, not the tool's output (go-sdk's modern servers add
	// io.modelcontextprotocol/serverInfo to every result, which
	// [Adapter.ServerInfo] reports already).
	Meta map[string]any `json:"meta,omitempty"`
}

// Artifact is the structured content of a result, as decoded from JSON
// (usually a map[string]any, but any JSON value is allowed).
type Artifact struct {
	StructuredContent any `json:"structuredContent"`
}

// BlockType says what a [Block] holds. The zero value is not a valid type;
// [Result.Text] shows a block of an unknown type as a bracketed placeholder.
type BlockType string

// The block types. Every MCP content item maps to one of them.
const (
	BlockText  BlockType = "text"  // text, or an embedded text resource (URI set)
	BlockImage BlockType = "image" // image bytes, or an image link (URI set, Data nil)
	BlockAudio BlockType = "audio" // audio bytes
	BlockFile  BlockType = "file"  // an embedded non-image blob (URI set)
	BlockLink  BlockType = "link"  // a resource link: URI, Name, MIMEType, Title, Description, Size, Icons; no bytes
)

// Block is one content item of a [Result], with everything the server sent
// about it. Which fields are set depends on Type; unset fields are zero.
//
// A block whose Annotations name an audience without "assistant" (such as
// ["user"]) is meant for the user, not the model: it stays in
// [Result.Content] for the application and is left out of [Result.Text],
// [Result.Parts], [Result.Messages] and [Toolset.HandleToolCalls].
type Block struct {
	Type     BlockType `json:"type"`
	Text     string    `json:"text,omitempty"`
	MIMEType string    `json:"mimeType,omitempty"`
	Data     []byte    `json:"data,omitempty"` // raw bytes (image, audio, file), not base64
	URI      string    `json:"uri,omitempty"`  // embedded resource or link
	Name     string    `json:"name,omitempty"` // link name

	// A resource link's title, description, size in bytes (nil when the
	// server sent none) and icons.
	Title       string     `json:"title,omitempty"`
	Description string     `json:"description,omitempty"`
	Size        *int64     `json:"size,omitempty"`
	Icons       []mcp.Icon `json:"icons,omitempty"`

	// Annotations are the item's annotations (audience, priority,
	// lastModified); nil when it had none.
	Annotations *mcp.Annotations `json:"annotations,omitempty"`
	// Meta is the item's _meta; nil when it had none.
	Meta map[string]any `json:"meta,omitempty"`
	// ResourceMeta is the _meta of an embedded resource's contents (Meta
	// is the item's own); nil when absent.
	ResourceMeta map[string]any `json:"resourceMeta,omitempty"`

	// Raw is the original JSON of a content item the adapter does not model
	// (an unknown type such as "video", or a sampling-only tool_use or
	// tool_result item). Such a block has Type BlockText and a placeholder
	// Text. Raw is nil for every modelled item.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// PartOption configures how [Result.Parts], [Result.Messages] and
// [Toolset.HandleToolCalls] turn media into langchaingo message parts, and,
// for HandleToolCalls, how a tool's timeout reaches the model
// ([TimeoutErrors]). A nil PartOption is ignored.
type PartOption func(*partOptions)

// partOptions is the configuration PartOptions write.
type partOptions struct {
	// imageDataURL selects OpenAI-style parts: images as data URLs, and no
	// binary parts at all (OpenAI rejects them).
	imageDataURL bool
	// budget is [Config.ResultBudget] (budget.go): 0 default, negative none.
	budget int
	// timeoutErrors is [TimeoutErrors] (modelerror.go).
	timeoutErrors bool
}

// ImagesAsDataURL returns a [PartOption] for OpenAI-style models: images
// become llms.ImageURLPart with a data: URL (or the link's own http(s) URL),
// and audio and files, which such models reject as binary parts, stay text
// placeholders. Without it images, audio and files become llms.BinaryPart,
// which is what the Anthropic and Google AI providers accept.
func ImagesAsDataURL() PartOption {
	return func(o *partOptions) { o.imageDataURL = true }
}

// Placeholders used when a result has nothing else to say. Providers reject
// empty tool messages, so these stand in for empty text.
const (
	emptyErrorText  = "tool returned an error with no message"
	emptyResultText = "tool returned no content"
)

// originalMetaKey is the _meta key under which the wire sanitizer (dial.go)
// keeps an unsupported content item it replaced by a text placeholder.
const originalMetaKey = "mcpadapter/original"

// reservedMetaPrefix is the _meta key prefix MCP reserves for itself.
const reservedMetaPrefix = "io.modelcontextprotocol/"

// newResult converts a CallToolResult into a Result. It never fails: content
// the adapter does not model becomes a text placeholder with Raw set
// (newBlock). A nil res gives an empty Result. The Result takes
// over res's _meta map instead of copying it (res was decoded for this call
// alone and is dropped after), so res must not be used afterwards.
func newResult(res *mcp.CallToolResult) *Result {
	if res == nil {
		return &Result{}
	}
	var r *Result
	if len(res.Content) == 1 {
		// The common case, in one allocation instead of two.
		one := &resultOne{}
		r = &one.r
		r.Content = one.block[:0]
	} else {
		r = &Result{Content: make([]Block, 0, len(res.Content))}
	}
	r.IsError = res.IsError
	if res.StructuredContent != nil {
		r.Artifact = &Artifact{StructuredContent: res.StructuredContent}
	}
	// The reserved keys are deleted in place: the meta was decoded for this
	// result alone.
	maps.DeleteFunc(res.Meta, func(k string, _ any) bool { return strings.HasPrefix(k, reservedMetaPrefix) })
	if len(res.Meta) > 0 {
		r.Meta = map[string]any(res.Meta)
	}
	for _, c := range res.Content {
		if b, ok := newBlock(c); ok {
			r.Content = append(r.Content, b)
		}
	}
	return r
}

// resultOne is a Result with room for one block, allocated together.
type resultOne struct {
	r     Result
	block [1]Block
}

// newBlock converts one content item into a Block, without loss: an item
// the adapter does not model becomes a text placeholder that keeps its
// JSON. It reports false for a nil item, which has nothing to keep.
func newBlock(c mcp.Content) (Block, bool) {
	if v := reflect.ValueOf(c); !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil() {
		return Block{}, false // nil, or a nil item of any content type
	}
	switch c := c.(type) {
	case *mcp.TextContent:
		if orig, ok := c.Meta[originalMetaKey]; ok {
			raw, err := json.Marshal(orig)
			if err != nil {
				raw = nil
			}
			return Block{Type: BlockText, Text: c.Text, Raw: raw}, true
		}
		return Block{Type: BlockText, Text: c.Text, Annotations: c.Annotations, Meta: c.Meta}, true
	case *mcp.ImageContent:
		return Block{Type: BlockImage, MIMEType: c.MIMEType, Data: c.Data, Annotations: c.Annotations, Meta: c.Meta}, true
	case *mcp.AudioContent:
		return Block{Type: BlockAudio, MIMEType: c.MIMEType, Data: c.Data, Annotations: c.Annotations, Meta: c.Meta}, true
	case *mcp.ResourceLink:
		b := Block{Type: BlockLink, MIMEType: c.MIMEType, URI: c.URI, Name: c.Name,
			Title: c.Title, Description: c.Description, Size: c.Size, Icons: c.Icons,
			Annotations: c.Annotations, Meta: c.Meta}
		if modeltext.IsImage(c.MIMEType) {
			b.Type = BlockImage
		}
		return b, true
	case *mcp.EmbeddedResource:
		rc := c.Resource
		if rc == nil {
			return unmodelled(c, "[resource without contents]"), true
		}
		b := Block{Type: BlockText, Text: rc.Text, MIMEType: rc.MIMEType, URI: rc.URI,
			Annotations: c.Annotations, Meta: c.Meta, ResourceMeta: rc.Meta}
		if rc.Blob != nil {
			b.Type, b.Text, b.Data = BlockFile, "", rc.Blob
			if modeltext.IsImage(rc.MIMEType) {
				b.Type = BlockImage
			}
		}
		return b, true
	case *mcp.ToolUseContent:
		return unmodelled(c, unsupportedText("tool_use")), true
	case *mcp.ToolResultContent:
		return unmodelled(c, unsupportedText("tool_result")), true
	default:
		// A content type added to the SDK after this code was written.
		return unmodelled(c, unsupportedText(fmt.Sprintf("%T", c))), true
	}
}

// unmodelled returns a placeholder text block keeping c's JSON in Raw.
func unmodelled(c mcp.Content, text string) Block {
	raw, err := c.MarshalJSON()
	if err != nil || !json.Valid(raw) {
		raw = nil
	}
	return Block{Type: BlockText, Text: text, Raw: raw}
}

// unsupportedText is the placeholder text for a content item of type typ.
// Very long type names are cut so the placeholder stays short.
func unsupportedText(typ string) string {
	if typ == "" {
		return "[unsupported content]"
	}
	return fmt.Sprintf("[unsupported content type %q]", modeltext.Short(typ))
}

// Text returns the result as one string for a model or a log: text
// blocks as they are, media and links as short bracketed placeholders
// such as "[image image/png 14 KB]" (never base64), one block per line.
// Blocks meant for the user only (see [Block]) are left out. More in
// docs/reference.md, "Result.Text".
func (r *Result) Text() string {
	if r == nil {
		return ""
	}
	lines := make([]string, 0, len(r.Content)+1)
	for i := range r.Content {
		if b := &r.Content[i]; b.forAssistant() {
			lines = append(lines, b.line())
		}
	}
	if s, ok := r.structuredLine(); ok {
		lines = append(lines, s)
	}
	text := strings.Join(lines, "\n")
	if r.IsError && strings.TrimSpace(text) == "" {
		return emptyErrorText
	}
	return text
}

// Parts returns the result as langchaingo message parts, in order: text
// blocks and placeholders (as in [Result.Text]) become text parts, media
// become media parts; blocks meant for the user only are left out. By default images, audio and files with bytes become
// llms.BinaryPart (the Anthropic provider accepts only images this way; the
// Google AI provider accepts all three); [ImagesAsDataURL] selects the
// OpenAI style. Links to images stay text by default, because the Anthropic
// provider rejects URL parts. The parts are bounded by the default result
// budget (see [Config.ResultBudget], which [Toolset.HandleToolCalls]
// follows). A nil result gives nil.
func (r *Result) Parts(opts ...PartOption) []llms.ContentPart {
	if r == nil {
		return nil
	}
	s := applyParts(opts)
	var parts []llms.ContentPart
	for i := range r.Content {
		if b := &r.Content[i]; b.forAssistant() {
			parts = s.appendPart(parts, b)
		}
	}
	if line, ok := r.structuredLine(); ok {
		parts = append(parts, llms.TextPart(line))
	}
	if r.IsError && len(parts) == 0 {
		parts = append(parts, llms.TextPart(emptyErrorText))
	}
	return modeltext.Parts(parts, budgetLimit(s.budget))
}

// Messages returns the messages that answer call in a chat history: one
// tool message whose single part is an llms.ToolCallResponse carrying
// [Result.Text] (providers accept exactly one text part there), followed,
// only when the result has media for the model, by one human message
// holding a short text part that names the call and the media parts (see
// [Result.Parts]). Blocks meant for the user only are left out.
// An empty result is answered with "tool returned no content", since
// providers reject empty tool messages. The tool message is always there,
// also for a nil result, so callers may index the first message. Text and
// media are bounded by the default result budget (see [Config.ResultBudget]).
func (r *Result) Messages(call llms.ToolCall, opts ...PartOption) []llms.MessageContent {
	if r == nil {
		r = &Result{}
	}
	s := applyParts(opts)
	var name string
	if call.FunctionCall != nil {
		name = call.FunctionCall.Name
	}
	text := r.Text()
	if strings.TrimSpace(text) == "" {
		text = emptyResultText
	}
	var media []llms.ContentPart
	for i := range r.Content {
		if b := &r.Content[i]; b.forAssistant() {
			if p, ok := s.mediaPart(b); ok {
				media = append(media, p)
			}
		}
	}
	text, media = modeltext.Message(text, media, budgetLimit(s.budget))
	msgs := []llms.MessageContent{{
		Role:  llms.ChatMessageTypeTool,
		Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: call.ID, Name: name, Content: text}},
	}}
	if len(media) == 0 {
		return msgs
	}
	intro := llms.TextPart(fmt.Sprintf("Media returned by tool call %s (%s):", call.ID, name))
	return append(msgs, llms.MessageContent{
		Role:  llms.ChatMessageTypeHuman,
		Parts: append([]llms.ContentPart{intro}, media...),
	})
}

// structured is the result's structured content; nil when it has none.
func (r *Result) structured() any {
	if r.Artifact == nil {
		return nil
	}
	return r.Artifact.StructuredContent
}

// forAssistant reports whether b is meant for the model: it has no
// audience, or its audience includes "assistant".
func (b *Block) forAssistant() bool {
	return b.Annotations == nil || len(b.Annotations.Audience) == 0 || slices.Contains(b.Annotations.Audience, "assistant")
}

// line is b's line in [Result.Text]: its text, or a placeholder naming its
// type and what it says of itself.
func (b *Block) line() string {
	typ := cmp.Or(string(b.Type), "content")
	switch b.Type {
	case BlockText:
		return b.Text
	case BlockLink:
		var uri string
		if b.URI != "" {
			uri = "<" + b.URI + ">"
		}
		return modeltext.Placeholder(typ, b.Name, b.MIMEType, uri)
	}
	var size string
	if b.Data != nil {
		size = modeltext.Size(len(b.Data))
	}
	return modeltext.Placeholder(typ, b.MIMEType, size, b.Name, b.URI)
}

// structuredLine returns the structured content as the compact JSON line
// Text and Parts show, when they should: only when no block for the model
// is text from the server (a placeholder for unknown content does not
// count) or carries media bytes. Base64 payloads become placeholders and the
// line is bounded (modeltext.Structured).
func (r *Result) structuredLine() (string, bool) {
	structured := r.structured()
	if structured == nil {
		return "", false
	}
	for i := range r.Content {
		b := &r.Content[i]
		if !b.forAssistant() {
			continue
		}
		if b.Type == BlockText && b.Raw == nil || len(b.Data) > 0 {
			return "", false
		}
	}
	return modeltext.Structured(structured), true
}

// Output validation: a tool that declares an outputSchema promises
// structured content that matches it. The MCP spec says clients SHOULD
// validate; the TypeScript SDK does, go-sdk v1.8.0's client does not. The
// adapter validates the structuredContent of every result without isError
// against the tool's schema, resolved once per tool, and fails the call with
// an [*OutputSchemaError] when it does not match. Not validated:
//
//   - isError results (their structured content describes the failure);
//   - results without structured content (their content stands alone);
//   - schemas the validator cannot take safely: ones that do not resolve,
//     that name a draft other than 2020-12 or draft-07, or that the schema
//     guard refuses (too deep or large, references that cannot be
//     followed, or a reference cycle such as {"$ref":"#"}, which
//     jsonschema-go follows until the stack overflows, a crash no recover
//     stops; see [ErrUnsafeSchema]). These are skipped with a debug log
//     naming the tool and why.

// An OutputSchemaError reports structured content that does not match the
// tool's declared outputSchema. It is the cause of a [*ServerError] (find it
// with [errors.As]).
type OutputSchemaError struct {
	Tool string // the server's name of the tool
	// Path is the location in the output schema that the content broke,
	// such as "/properties/sky"; "" for the schema's root.
	Path string
	// Reason is the validator's message, at most a few hundred bytes.
	Reason string
}

// Error implements error.
func (e *OutputSchemaError) Error() string {
	at := "the schema's root"
	if e.Path != "" {
		at = e.Path
	}
	return fmt.Sprintf("structured content does not match the output schema of tool %q at %s: %s", e.Tool, at, e.Reason)
}

// checkOutput validates the structured content of res, the result of a call
// of t, against t's outputSchema (see above), resolved on first use.
func (t *Tool) checkOutput(ctx context.Context, res *Result, err error) (*Result, error) {
	if err != nil || res == nil || res.IsError || res.structured() == nil || t.desc.OutputSchema == nil {
		return res, err
	}
	skipped := func(why string) {
		t.a.policy.logger.DebugContext(ctx, "mcpadapter: not validating results against the output schema", "server", t.server, "tool", t.desc.Name, "reason", why)
	}
	if verr := t.output.Validate(t.desc.OutputSchema, res.structured(), skipped); verr != nil {
		return nil, serverError(t.server, callToolOp(t.desc.Name), outputError(t.desc.Name, verr))
	}
	return res, nil
}

// outputError turns a validation error of jsonschema-go into an
// OutputSchemaError naming the deepest schema location
// (outputschema.Explain).
func outputError(tool string, err error) *OutputSchemaError {
	path, reason := outputschema.Explain(err)
	return &OutputSchemaError{Tool: tool, Path: path, Reason: reason}
}
