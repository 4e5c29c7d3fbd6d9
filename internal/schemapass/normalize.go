package schemapass

// What every provider gets before any pass: an input schema normalised to
// an object schema, and the argument hint langchaingo's text agents read in
// a tool's description. Unlike the passes, these never change their input
// and never refuse a schema.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
)

// Normalize returns a copy of the input schema as providers need it: a
// map[string]any with "type": "object" (MCP requires it; OpenAI rejects
// parameters without it) and "properties" (googleai rejects an object
// without them), each added only when missing. Nothing else is changed: $schema,
// $defs, $ref, formats, enums and additionalProperties stay as the server
// wrote them. A schema that is not a JSON object (absent, or broken)
// becomes an empty object schema.
func Normalize(schema any) map[string]any {
	m := jsonvalue.Object(schema)
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

// Shared is Normalize for a schema that is only read: the
// descriptor's own schema when it needs no addition, so that a tool holds
// its schema once (in its descriptor, which the SDK's cache shares), not a
// second time in the catalog.
func Shared(schema any) map[string]any {
	if m, ok := schema.(map[string]any); ok {
		if _, typed := m["type"]; typed && m["properties"] != nil {
			return m
		}
	}
	return Normalize(schema)
}

// maxEnumHint is the number of enum values an argument hint lists.
const maxEnumHint = 8

// maxHintBytes bounds an argument hint: past it the remaining properties
// are only counted (the schema itself, which the root package's
// Tool.Parameters gives, has them all).
const maxHintBytes = 2 << 10

// Describe returns the description text agents see: text followed by a
// one-line hint of the arguments, because langchaingo's text agents (MRKL,
// conversational) show models each tool's description and no schema:
//
//	Get the weather. Input: JSON object {"city": string (required), "unit": "c"|"f"}
//
// A tool without properties gets no hint, and the hint of many properties
// stops after maxHintBytes: "…and 149990 more properties".
func Describe(text string, params map[string]any) string {
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
	names := jsonvalue.SortedKeys(props)
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

// typeHint summarizes a property schema for [Describe]: its enum values,
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
