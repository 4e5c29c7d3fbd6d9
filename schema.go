package mcpadapter

import (
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/mcpadapter/mcpadapter/internal/schemapass"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// normalizeSchema returns a copy of the input schema as providers need it,
// with "type": "object" and "properties" added when missing
// (schemapass.Normalize).
func normalizeSchema(schema any) map[string]any { return schemapass.Normalize(schema) }

// sharedSchema is normalizeSchema for a schema that is only read: the
// descriptor's own schema when it needs no addition (schemapass.Shared).
func sharedSchema(schema any) map[string]any { return schemapass.Shared(schema) }

// describe returns the description text agents see: text followed by a
// one-line hint of the arguments in params (schemapass.Describe).
func describe(text string, params map[string]any) string { return schemapass.Describe(text, params) }

// schemaMap returns a deep copy of a JSON schema as a map, or nil when it is
// not a JSON object.
func schemaMap(schema any) map[string]any { return jsonvalue.Object(schema) }

// deepCopy copies the maps and slices of a decoded JSON value.
func deepCopy[T any](v T) T { return jsonvalue.Copy(v) }

// summary is the text that says what d does: its description, else its
// title, else its annotations' title.
func summary(d *mcp.Tool) string {
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
