package schemapass

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
)

// geminiKeywords are the Schema fields of Google AI's function declarations
// (a subset of OpenAPI 3.0); the pass drops every other keyword.
var geminiKeywords = []string{"type", "format", "title", "description", "nullable", "enum", "items",
	"properties", "required", "minItems", "maxItems", "minProperties", "maxProperties", "minLength",
	"maxLength", "pattern", "minimum", "maximum", "example", "default", "anyOf", "propertyOrdering"}

// geminiFormats are the format values Google AI knows, by type.
var geminiFormats = map[string][]string{
	"string":  {"enum", "date-time"},
	"integer": {"int32", "int64"},
	"number":  {"float", "double"},
}

// Gemini is the pass for Google AI (Gemini), as reached through
// langchaingo's googleai provider or the REST API: local $ref are inlined
// ([InlineRefs]), types, enums, anyOf/oneOf/allOf and formats are brought
// to Google AI's subset of OpenAPI 3.0, every other keyword is dropped, and
// free-form object properties are left out when optional and refused when
// required. The top level is an object with "properties", which the
// googleai provider requires.
func Gemini(schema map[string]any) (map[string]any, error) {
	inlined, err := InlineRefs(schema)
	if err != nil {
		return nil, err
	}
	out, err := geminiSchema(inlined, "")
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	if m["properties"] == nil {
		m["properties"] = map[string]any{} // googleai refuses a top-level object without
	}
	m["type"] = "object"
	return m, nil
}

// geminiSchema converts one (inlined, owned) schema to Google AI's subset.
func geminiSchema(v any, path string) (any, error) {
	switch v {
	case true:
		return map[string]any{}, nil
	case false:
		return nil, unsupported(path, "the schema false (no value is valid) has no Google AI form")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, unsupported(path, "a schema is a %T, not a JSON object", v)
	}
	mergeAllOf(m)
	if one, ok := m["oneOf"]; ok {
		if _, ok := m["anyOf"]; !ok {
			m["anyOf"] = one
		}
	}
	geminiTypes(m)
	if c, ok := m["const"]; ok && m["enum"] == nil {
		m["enum"] = []any{c}
	}
	geminiEnum(m)
	if m["type"] == nil {
		switch {
		case m["properties"] != nil:
			m["type"] = "object"
		case m["items"] != nil:
			m["type"] = "array"
		}
	}
	// A tuple (Google AI has none): items that may be any of its members.
	if items, ok := m["items"].([]any); ok {
		m["items"] = anyOfSchemas(items)
	} else if prefix, ok := m["prefixItems"].([]any); ok && m["items"] == nil {
		m["items"] = anyOfSchemas(prefix)
	}
	if p, ok := m["properties"]; ok {
		if _, ok := p.(map[string]any); !ok {
			return nil, unsupported(path, "properties is a %T, not a JSON object", p)
		}
	}
	switch it := m["items"].(type) {
	case nil, bool, map[string]any:
	default:
		return nil, unsupported(path, "items is a %T, not a schema", it)
	}
	if t, ok := m["type"]; ok {
		if _, ok := t.(string); !ok {
			return nil, unsupported(path, "type is a %T, not a string", t)
		}
	}
	typ, _ := m["type"].(string)
	if f, ok := m["format"].(string); ok && !slices.Contains(geminiFormats[typ], f) {
		delete(m, "format")
	}
	for k := range m {
		if !slices.Contains(geminiKeywords, k) {
			delete(m, k)
		}
	}
	if err := rewriteSubschemas(m, path, geminiSchema); err != nil {
		return nil, err
	}
	geminiRequired(m)
	return m, dropFreeForm(m, path)
}

// dropFreeForm removes the properties of m that Google AI cannot describe:
// an object without properties (Google AI refuses an OBJECT with none), or
// an array of them. An optional one is left out, so the model cannot send
// it; a required one refuses the tool.
func dropFreeForm(m map[string]any, path string) error {
	props, _ := m["properties"].(map[string]any)
	required, _ := m["required"].([]any)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if !geminiFreeForm(props[name]) {
			continue
		}
		if slices.Contains(required, any(name)) {
			return unsupported(path+"/properties/"+jsonvalue.PointerToken(name),
				"a required free-form object (no properties) has no Google AI form")
		}
		delete(props, name)
	}
	return nil
}

// geminiFreeForm reports whether s is an object schema without properties,
// or an array of such.
func geminiFreeForm(s any) bool {
	m, _ := s.(map[string]any)
	switch m["type"] {
	case "object":
		props, _ := m["properties"].(map[string]any)
		return len(props) == 0
	case "array":
		return geminiFreeForm(m["items"])
	}
	return false
}

// mergeAllOf merges the object branches of m's allOf into m: properties
// and required are joined, other keywords are taken where m has none.
func mergeAllOf(m map[string]any) {
	all, ok := m["allOf"].([]any)
	if !ok {
		return
	}
	delete(m, "allOf")
	for _, b := range all {
		branch, ok := b.(map[string]any)
		if !ok {
			continue
		}
		mergeAllOf(branch)
		for k, v := range branch {
			switch k {
			case "properties":
				props, _ := m["properties"].(map[string]any)
				add, _ := v.(map[string]any)
				merged := make(map[string]any, len(props)+len(add))
				maps.Copy(merged, add)
				maps.Copy(merged, props) // m's own win
				m["properties"] = merged
			case "required":
				req, _ := m["required"].([]any)
				add, _ := v.([]any)
				m["required"] = slices.Concat(req, add)
			default:
				if _, ok := m[k]; !ok {
					m[k] = v
				}
			}
		}
	}
}

// geminiTypes turns a list of types, and the nullable anyOf pattern, into
// Google AI's one type plus nullable.
func geminiTypes(m map[string]any) {
	if types, ok := m["type"].([]any); ok {
		var rest []any
		for _, t := range types {
			if t == "null" {
				m["nullable"] = true
			} else if _, ok := t.(string); ok {
				rest = append(rest, t)
			}
		}
		delete(m, "type")
		switch len(rest) {
		case 0:
		case 1:
			m["type"] = rest[0]
		default:
			if m["anyOf"] == nil {
				branches := make([]any, len(rest))
				for i, t := range rest {
					branches[i] = map[string]any{"type": t}
				}
				m["anyOf"] = branches
			}
		}
	}
	if m["type"] == "null" {
		delete(m, "type")
		m["nullable"] = true
	}
	branches, ok := m["anyOf"].([]any)
	if !ok {
		return
	}
	rest := slices.DeleteFunc(slices.Clone(branches), isNullSchema)
	if len(rest) == len(branches) {
		return
	}
	m["nullable"] = true
	if len(rest) != 1 {
		m["anyOf"] = rest
		return
	}
	delete(m, "anyOf")
	if only, ok := rest[0].(map[string]any); ok {
		for k, v := range only {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
	}
}

// geminiEnum keeps string enums (typing them as strings) and moves any
// other enum into the description.
func geminiEnum(m map[string]any) {
	enum, ok := m["enum"].([]any)
	if !ok {
		delete(m, "enum")
		return
	}
	strs := !slices.ContainsFunc(enum, func(v any) bool { _, ok := v.(string); return !ok })
	if strs && (m["type"] == nil || m["type"] == "string") {
		m["type"] = "string"
		return
	}
	delete(m, "enum")
	vals := make([]string, 0, len(enum))
	for _, v := range enum {
		b, _ := json.Marshal(v) // decoded JSON always marshals
		vals = append(vals, string(b))
	}
	note := "Allowed values: " + strings.Join(vals, ", ") + "."
	if d, _ := m["description"].(string); d != "" {
		note = d + " " + note
	}
	m["description"] = note
}

// geminiRequired keeps the required names that are strings and, when the
// schema declares properties, name one of them.
func geminiRequired(m map[string]any) {
	req, ok := m["required"].([]any)
	if !ok {
		delete(m, "required")
		return
	}
	props, hasProps := m["properties"].(map[string]any)
	var out []any
	for _, r := range req {
		name, ok := r.(string)
		if !ok || slices.Contains(out, r) {
			continue
		}
		if _, declared := props[name]; declared || !hasProps {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		delete(m, "required")
		return
	}
	m["required"] = out
}

// anyOfSchemas is one schema for a list of them: the only one, or anyOf.
func anyOfSchemas(schemas []any) any {
	if len(schemas) == 1 {
		return schemas[0]
	}
	return map[string]any{"anyOf": slices.Clone(schemas)}
}
