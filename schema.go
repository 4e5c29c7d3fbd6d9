package mcpadapter

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// normalizeSchema returns a copy of the input schema as providers need it: a
// map[string]any with "type": "object" (MCP requires it; OpenAI rejects
// parameters without it) and "properties" (googleai rejects an object
// without them), each added only when missing. Nothing else is changed: $schema,
// $defs, $ref, formats, enums and additionalProperties stay as the server
// wrote them. A schema that is not a JSON object (absent, or broken)
// becomes an empty object schema.
func normalizeSchema(schema any) map[string]any {
	m := schemaMap(schema)
	if m == nil {
		m = map[string]any{}
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	if m["properties"] == nil {
		m["properties"] = map[string]any{}
	}
	return m
}

// sharedSchema is normalizeSchema for a schema that is only read: the
// descriptor's own schema when it needs no addition, so that a tool holds
// its schema once (in its descriptor, which the SDK's cache shares), not a
// second time in the catalog.
func sharedSchema(schema any) map[string]any {
	if m, ok := schema.(map[string]any); ok {
		if _, typed := m["type"]; typed && m["properties"] != nil {
			return m
		}
	}
	return normalizeSchema(schema)
}

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

// maxEnumHint is the number of enum values an argument hint lists.
const maxEnumHint = 8

// maxHintBytes bounds an argument hint: past it the remaining properties
// are only counted (the schema, in Parameters, has them all).
const maxHintBytes = 2 << 10

// describe returns the description text agents see: text followed by a
// one-line hint of the arguments, because langchaingo's text agents (MRKL,
// conversational) show models each tool's description and no schema:
//
//	Get the weather. Input: JSON object {"city": string (required), "unit": "c"|"f"}
//
// A tool without properties gets no hint, and the hint of many properties
// stops after maxHintBytes: "…and 149990 more properties".
func describe(text string, params map[string]any) string {
	props, _ := params["properties"].(map[string]any)
	if len(props) == 0 {
		return text
	}
	required, _ := params["required"].([]any)
	var b strings.Builder
	b.Grow(len(text) + min(32*len(props), maxHintBytes) + 64)
	if text != "" {
		b.WriteString(text)
		b.WriteByte(' ')
	}
	b.WriteString("Input: JSON object {")
	start := b.Len()
	names := sortedKeys(props)
	var entry []byte // one property's, reused
	for i, name := range names {
		entry = append(appendJSONString(entry[:0], name), ": "...)
		entry = append(entry, typeHint(props[name])...)
		if slices.Contains(required, any(name)) {
			entry = append(entry, " (required)"...)
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if b.Len()-start+len(entry) > maxHintBytes {
			fmt.Fprintf(&b, "…and %d more properties", len(names)-i)
			break
		}
		b.Write(entry)
	}
	b.WriteByte('}')
	return b.String()
}

// sortedKeys returns the keys of m in order, in one allocation
// (slices.Sorted(maps.Keys(m)) takes several: the iterator's and the
// slice's growth).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendJSONString appends s to dst as a JSON string, as json.Marshal
// writes it; plain names without allocating.
func appendJSONString(dst []byte, s string) []byte {
	if !plainJSON(s) {
		b, _ := json.Marshal(s) // a string always marshals
		return append(dst, b...)
	}
	return append(append(append(dst, '"'), s...), '"')
}

// plainJSON reports whether s is printable ASCII that JSON does not escape.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// typeHint summarizes a property schema for [describe]: its enum values,
// its type (or types), "array of <item type>", or "any".
func typeHint(prop any) string {
	p, ok := prop.(map[string]any)
	if !ok {
		return "any"
	}
	if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
		var hint []byte
		for i, v := range enum[:min(len(enum), maxEnumHint)] {
			if i > 0 {
				hint = append(hint, '|')
			}
			if str, ok := v.(string); ok {
				hint = appendJSONString(hint, str)
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				return "any"
			}
			hint = append(hint, b...)
		}
		if len(enum) > maxEnumHint {
			hint = append(hint, "|…"...)
		}
		return string(hint)
	}
	switch typ := p["type"].(type) {
	case string:
		if typ == "array" {
			if items := typeHint(p["items"]); items != "any" {
				return "array of " + items
			}
		}
		return typ
	case []any:
		var names []string
		for _, n := range typ {
			if s, ok := n.(string); ok {
				names = append(names, s)
			}
		}
		if len(names) > 0 {
			return strings.Join(names, "|")
		}
	}
	return "any"
}
