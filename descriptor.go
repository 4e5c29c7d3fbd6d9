package mcpadapter

// A tool's descriptor as its server sent it. go-sdk's mcp.Tool decodes
// what its version of the specification knows, with annotation hints that
// cannot be absent (readOnlyHint, idempotentHint) and without execution;
// the wire screen keeps each listed descriptor's JSON (internal/wire): in
// the wire.Listing of the listing request over HTTP, so that the
// principals of a shared session each get their own listing's; in the
// screen otherwise (Screen.Listed). The ToolDescriptor of a Tool is made
// from both.

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// withListing returns ctx carrying a new wire.Listing, which keeps the
// JSON of the items that the answers to its HTTP requests list (c.listed).
func withListing(ctx context.Context) (context.Context, *wire.Listing) {
	l := new(wire.Listing)
	return wire.WithListing(ctx, l), l
}

// listed returns the JSON of the item called name of list ("tools",
// "prompts") as the server sent it in the answer to a request of c made
// with l (withListing), or nil. Over a transport that has no request
// contexts (stdio, in memory, SSE's stream) the screen kept it: unless c
// is a principal's on a shared session, whose screen holds any
// principal's, it is taken from there.
func (c *conn) listed(l *wire.Listing, list, name string) []byte {
	if raw := l.Take(list, name); raw != nil || c.carrier != nil {
		return raw
	}
	return c.screen.Listed(list, name)
}

// A ToolDescriptor is a tool as its server described it in tools/list,
// without loss: the fields go-sdk's mcp.Tool decodes and those it lacks
// (Execution), and annotation hints the server left out stay nil. It
// marshals to the JSON the server sent, byte for byte, fields this type
// does not know included. A Tool's descriptor is borrowed (see
// [Tool.Descriptor]): callers must not mutate it.
type ToolDescriptor struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema and OutputSchema are the JSON schemas as decoded JSON
	// objects; nil when absent or not an object.
	InputSchema  map[string]any   `json:"inputSchema"`
	OutputSchema map[string]any   `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"` // nil when the server sent none
	Execution    *ToolExecution   `json:"execution,omitempty"`   // nil when the server sent none
	Icons        []mcp.Icon       `json:"icons,omitempty"`
	Meta         map[string]any   `json:"_meta,omitempty"`

	raw []byte // the JSON the server sent; nil for a descriptor made by the caller
}

// ToolAnnotations are the hints a server gives about a tool
// (annotations). A hint the server left out is nil: the MCP
// specification's defaults (readOnlyHint false, destructiveHint true,
// idempotentHint false, openWorldHint true) are not filled in. Hints are
// the server's word, not guarantees.
type ToolAnnotations struct {
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	Title           string `json:"title,omitempty"`
}

// ReadOnly reports whether the server declared the tool read-only
// (readOnlyHint true). Without annotations (a nil a) it is false.
//
// ReadOnly and MayBeDestructive are the questions the adapter asks of
// annotations, for every use: an approval policy
// (call.Metadata.Annotations().MayBeDestructive()), a filter
// (d.Annotations.ReadOnly()) or one tool
// (t.Metadata().Annotations().MayBeDestructive()).
func (a *ToolAnnotations) ReadOnly() bool {
	return a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint
}

// MayBeDestructive reports whether a call of the tool may change or
// destroy something, by the MCP specification's defaults: it is false
// only when the server declared the tool read-only, or destructiveHint
// false. Without annotations (a nil a), or without either hint, it is
// true.
func (a *ToolAnnotations) MayBeDestructive() bool {
	switch {
	case a.ReadOnly():
		return false
	case a == nil || a.DestructiveHint == nil:
		return true
	}
	return *a.DestructiveHint
}

// ToolExecution says how a tool may be run (execution).
type ToolExecution struct {
	// TaskSupport is "forbidden" (the specification's default when
	// absent), "optional" or "required": whether the tool may, or must, be
	// called as a task (see [Server.Tasks]).
	TaskSupport string `json:"taskSupport,omitempty"`
}

// MarshalJSON returns the JSON the server sent for d, or, for a
// descriptor not made by the adapter, its fields' encoding.
func (d ToolDescriptor) MarshalJSON() ([]byte, error) {
	type fields ToolDescriptor // without this method
	return asSent(d.raw, fields(d))
}

// asSent is the MarshalJSON of a value listed by a server: the JSON the
// server sent (raw), or, when there is none (a value made by the caller),
// fields encoded.
func asSent(raw []byte, fields any) ([]byte, error) {
	if raw != nil {
		return bytes.Clone(raw), nil
	}
	return json.Marshal(fields)
}

// newDescriptor makes the descriptor of d, whose JSON the server sent as
// raw (nil when the screen did not see it: d's own encoding is used). The
// schemas are d's decoded ones, shared; only what d cannot hold is
// decoded from raw.
func newDescriptor(d *mcp.Tool, raw []byte) *ToolDescriptor {
	if raw == nil {
		// No JSON of d was kept: on a shared session, an answer that came
		// with no request context (a resumed stream: c.listed). d's
		// encoding loses only what go-sdk does not decode (execution,
		// absent hints).
		raw, _ = json.Marshal(d)
	}
	var sent struct {
		Annotations *ToolAnnotations `json:"annotations"`
		Execution   *ToolExecution   `json:"execution"`
	}
	// go-sdk decoded the same JSON, and the screen checked that it could:
	// an error here leaves the two fields nil.
	_ = json.Unmarshal(raw, &sent)
	in, _ := d.InputSchema.(map[string]any)
	out, _ := d.OutputSchema.(map[string]any)
	return &ToolDescriptor{
		Name: d.Name, Title: d.Title, Description: d.Description,
		InputSchema: in, OutputSchema: out,
		Annotations: sent.Annotations, Execution: sent.Execution,
		Icons: d.Icons, Meta: d.Meta,
		raw: raw,
	}
}
