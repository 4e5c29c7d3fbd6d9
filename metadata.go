package mcpadapter

import "github.com/modelcontextprotocol/go-sdk/mcp"

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
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"` // nil when the tool has no annotations
	Meta        map[string]any       `json:"_meta,omitempty"`       // the tool's _meta; nil when absent
}

// ServerMetadata identifies the server a tool comes from, as it introduced
// itself (serverInfo).
type ServerMetadata struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	Title   string `json:"title,omitempty"` // the server's display name, when it sent one
}

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

// Server returns the identity of the tool's server, or nil.
func (m Metadata) Server() *ServerMetadata {
	if m.MCP == nil {
		return nil
	}
	return m.MCP.Server
}

// IsDestructive reports whether the server declared the tool destructive:
// annotation destructiveHint true on a tool that is not read-only (the spec:
// destructiveHint "is meaningful only when readOnlyHint == false"). An absent
// hint counts as false here, unlike in the spec's defaults, and a nil tool is
// not destructive. Annotations are hints from the server, not guarantees:
// gate calls with [Config.Approval] accordingly.
func IsDestructive(t *Tool) bool {
	if t == nil {
		return false
	}
	ann := t.meta.Annotations()
	return ann != nil && !ann.ReadOnlyHint && ann.DestructiveHint != nil && *ann.DestructiveHint
}

// newMetadata builds the metadata of d, served by the server described by
// info.
func newMetadata(d *mcp.Tool, info ServerInfo) Metadata {
	m := &MCPMetadata{}
	if d.Annotations != nil || d.Meta != nil {
		m.Tool = &ToolMetadata{Annotations: d.Annotations, Meta: d.Meta}
	}
	if info.Name != "" || info.Version != "" || info.Title != "" {
		m.Server = &ServerMetadata{Name: info.Name, Version: info.Version, Title: info.Title}
	}
	return Metadata{MCP: m}
}
