// Package content converts what an MCP server sends as content (the items
// of a tool result, the messages of a rendered prompt) into the root
// package's Block and PromptMessage, without loss: an item the adapter
// does not model becomes a text placeholder that keeps its JSON. And it
// renders blocks for a model (model.go): as text, as langchaingo parts
// and messages, bounded by internal/modeltext.
//
// It is pure and knows nothing of the adapter. It cannot name the root
// package's types, so it names their shapes: [Block] and [Message] are
// struct types identical to the root package's Block and PromptMessage
// (the same fields, types and tags), and the functions take and return
// the root types through constraints such as B ~Block[T]. When the two
// drift apart the root package stops compiling.
package content

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/modeltext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Block is the shape of the root package's Block, whose documentation
// says what each field holds; T is its BlockType.
type Block[T ~string] = struct {
	Type     T      `json:"type"`
	Text     string `json:"text,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	Data     []byte `json:"data,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`

	Title       string     `json:"title,omitempty"`
	Description string     `json:"description,omitempty"`
	Size        *int64     `json:"size,omitempty"`
	Icons       []mcp.Icon `json:"icons,omitempty"`

	Annotations  *mcp.Annotations `json:"annotations,omitempty"`
	Meta         map[string]any   `json:"meta,omitempty"`
	ResourceMeta map[string]any   `json:"resourceMeta,omitempty"`

	Raw json.RawMessage `json:"raw,omitempty"`
}

// The block types, as the root package's BlockType constants spell them.
const (
	kindText  = "text"
	kindImage = "image"
	kindAudio = "audio"
	kindFile  = "file"
	kindLink  = "link"
)

// OriginalMetaKey is the _meta key under which the wire sanitizer keeps an
// unsupported content item it replaced by a text placeholder.
const OriginalMetaKey = "mcpadapter/original"

// reservedMetaPrefix is the _meta key prefix MCP reserves for itself.
const reservedMetaPrefix = "io.modelcontextprotocol/"

// ResultMeta returns meta without its reserved keys, or nil when nothing is
// left. It deletes in place: meta was decoded for one result alone.
func ResultMeta(meta mcp.Meta) map[string]any {
	maps.DeleteFunc(meta, func(k string, _ any) bool { return strings.HasPrefix(k, reservedMetaPrefix) })
	if len(meta) == 0 {
		return nil
	}
	return map[string]any(meta)
}

// FromMCP converts one content item into a B. It reports false for a nil
// item, which has nothing to keep.
func FromMCP[B ~Block[T], T ~string](c mcp.Content) (B, bool) {
	b, ok := fromMCP[T](c)
	return B(b), ok
}

// fromMCP is [FromMCP] on the shape.
func fromMCP[T ~string](c mcp.Content) (Block[T], bool) {
	switch c := c.(type) {
	case nil:
		return Block[T]{}, false
	case *mcp.TextContent:
		if c == nil {
			return Block[T]{}, false
		}
		if orig, ok := c.Meta[OriginalMetaKey]; ok {
			raw, err := json.Marshal(orig)
			if err != nil {
				raw = nil
			}
			return Block[T]{Type: kindText, Text: c.Text, Raw: raw}, true
		}
		return Block[T]{Type: kindText, Text: c.Text, Annotations: c.Annotations, Meta: c.Meta}, true
	case *mcp.ImageContent:
		if c == nil {
			return Block[T]{}, false
		}
		return Block[T]{Type: kindImage, MIMEType: c.MIMEType, Data: c.Data, Annotations: c.Annotations, Meta: c.Meta}, true
	case *mcp.AudioContent:
		if c == nil {
			return Block[T]{}, false
		}
		return Block[T]{Type: kindAudio, MIMEType: c.MIMEType, Data: c.Data, Annotations: c.Annotations, Meta: c.Meta}, true
	case *mcp.ResourceLink:
		if c == nil {
			return Block[T]{}, false
		}
		b := Block[T]{Type: kindLink, MIMEType: c.MIMEType, URI: c.URI, Name: c.Name,
			Title: c.Title, Description: c.Description, Size: c.Size, Icons: c.Icons,
			Annotations: c.Annotations, Meta: c.Meta}
		if modeltext.IsImage(c.MIMEType) {
			b.Type = kindImage
		}
		return b, true
	case *mcp.EmbeddedResource:
		if c == nil {
			return Block[T]{}, false
		}
		rc := c.Resource
		if rc == nil {
			return unmodelled[T](c, "[resource without contents]"), true
		}
		b := Block[T]{Type: kindText, Text: rc.Text, MIMEType: rc.MIMEType, URI: rc.URI,
			Annotations: c.Annotations, Meta: c.Meta, ResourceMeta: rc.Meta}
		if rc.Blob != nil {
			b.Type, b.Text, b.Data = kindFile, "", rc.Blob
			if modeltext.IsImage(rc.MIMEType) {
				b.Type = kindImage
			}
		}
		return b, true
	case *mcp.ToolUseContent:
		if c == nil {
			return Block[T]{}, false
		}
		return unmodelled[T](c, Unsupported("tool_use")), true
	case *mcp.ToolResultContent:
		if c == nil {
			return Block[T]{}, false
		}
		return unmodelled[T](c, Unsupported("tool_result")), true
	default:
		// A content type added to the SDK after this code was written.
		return unmodelled[T](c, Unsupported(fmt.Sprintf("%T", c))), true
	}
}

// unmodelled returns a placeholder text block keeping c's JSON in Raw.
func unmodelled[T ~string](c mcp.Content, text string) Block[T] {
	raw, err := c.MarshalJSON()
	if err != nil || !json.Valid(raw) {
		raw = nil
	}
	return Block[T]{Type: kindText, Text: text, Raw: raw}
}

// Unsupported is the placeholder text for a content item of type typ.
// Very long type names are cut so the placeholder stays short.
func Unsupported(typ string) string {
	if typ == "" {
		return "[unsupported content]"
	}
	return fmt.Sprintf("[unsupported content type %q]", modeltext.Short(typ))
}
