package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/content"
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
	// budget is the [ResultBudget] (budget.go): 0 default, negative none.
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

// originalMetaKey is the _meta key under which the wire sanitizer keeps
// content it replaced (dial.go): internal/content's.
const originalMetaKey = content.OriginalMetaKey

// newResult converts a CallToolResult into a Result. It never fails: content
// the adapter does not model becomes a text placeholder with Raw set
// (content.FromMCP). A nil res gives an empty Result. The Result takes
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
	r.Meta = content.ResultMeta(res.Meta)
	for _, c := range res.Content {
		if b, ok := content.FromMCP[Block](c); ok {
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

// unsupportedText is the placeholder text for a content item of type typ
// (content.Unsupported).
func unsupportedText(typ string) string { return content.Unsupported(typ) }

// Text returns the result as one string for a model or a log: text blocks
// as they are, media and links as short bracketed placeholders such as
// "[image image/png 14 KB]" (never base64), one block per line. Blocks meant
// for the user only (see [Block]) are left out.
//
// When the result has neither text nor media for the model, the structured
// content follows as compact JSON, so that the model sees the answer. It
// never carries media: a string holding base64 data (a data: URL, or a run
// of 256 or more base64 characters) reads "[base64 data, 14 KB]", and JSON
// longer than 16 KB is cut, ending in a note of its full size. With media
// blocks there is no such line: servers that mirror their media into the
// structured content (server-filesystem's read_media_file) would send it
// twice. [Result.Artifact] keeps the structured content as it was.
//
// An error result with nothing to say reads "tool returned an error with no
// message". A nil or empty result gives "".
func (r *Result) Text() string {
	if r == nil {
		return ""
	}
	return content.Text(r.Content, r.structured(), r.IsError)
}

// Parts returns the result as langchaingo message parts, in order: text
// blocks and placeholders (as in [Result.Text]) become text parts, media
// become media parts; blocks meant for the user only are left out. By default images, audio and files with bytes become
// llms.BinaryPart (the Anthropic provider accepts only images this way; the
// Google AI provider accepts all three); [ImagesAsDataURL] selects the
// OpenAI style. Links to images stay text by default, because the Anthropic
// provider rejects URL parts. The parts are bounded by [ResultBudget]
// (by default [DefaultResultBudget]). A nil result gives nil.
func (r *Result) Parts(opts ...PartOption) []llms.ContentPart {
	if r == nil {
		return nil
	}
	return content.Parts(r.Content, r.structured(), r.IsError, style(opts))
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
// media are bounded by [ResultBudget] (by default [DefaultResultBudget]).
func (r *Result) Messages(call llms.ToolCall, opts ...PartOption) []llms.MessageContent {
	if r == nil {
		r = &Result{}
	}
	return content.Messages(call, r.Content, r.structured(), r.IsError, style(opts))
}

// structured is the result's structured content; nil when it has none.
func (r *Result) structured() any {
	if r.Artifact == nil {
		return nil
	}
	return r.Artifact.StructuredContent
}

// style returns the content style that opts select.
func style(opts []PartOption) content.Style {
	o := applyParts(opts)
	return content.Style{DataURL: o.imageDataURL, Limit: budgetLimit(o.budget)}
}

// applyParts applies opts, skipping nil ones.
func applyParts(opts []PartOption) partOptions {
	var o partOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
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
