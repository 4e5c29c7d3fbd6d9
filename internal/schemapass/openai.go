package schemapass

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// OpenAI is the pass for OpenAI's function calling without strict mode:
// the schema is kept, and each free-form object property (an object schema
// with no properties and no additionalProperties) gets
// "additionalProperties": true, which is what it means in JSON Schema, so
// that a conversion that closes objects without the keyword keeps
// accepting any keys.
func OpenAI(schema map[string]any) (map[string]any, error) {
	var walk func(v any, path string) (any, error)
	walk = func(v any, path string) (any, error) {
		m, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		if path != "" && isFreeFormObject(m) {
			m["additionalProperties"] = true
		}
		return m, rewriteSubschemas(m, path, walk)
	}
	_, err := walk(schema, "")
	return schema, err
}

// isFreeFormObject reports whether m is an object schema that names no
// properties and says nothing of others.
func isFreeFormObject(m map[string]any) bool {
	props, _ := m["properties"].(map[string]any)
	_, extra := m["additionalProperties"]
	_, pattern := m["patternProperties"]
	return m["type"] == "object" && len(props) == 0 && !extra && !pattern
}

// strictRefused are keywords OpenAI's strict mode does not support and
// that cannot be dropped without changing what the schema accepts.
var strictRefused = []string{"allOf", "not", "if", "then", "else", "patternProperties", "propertyNames",
	"dependentRequired", "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "contains",
	"prefixItems", "additionalItems"}

// strictDropped are annotations and constraints strict mode rejects whose
// loss only loosens a check: every property is required there, and the
// model is told the rest in descriptions.
var strictDropped = []string{"$schema", "$id", "$comment", "minProperties", "maxProperties", "minContains", "maxContains"}

// strictFormats are the formats strict mode knows; others are dropped.
var strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}

// OpenAIStrict is the pass for OpenAI's strict mode (Structured Outputs
// for function calls): every object lists all its properties in required
// (optional ones become nullable) and gets "additionalProperties": false;
// oneOf becomes anyOf; $ref and $defs are kept; keywords and formats strict
// mode rejects are dropped when that only loosens a check, and refused
// otherwise (free-form objects, schemas without a type, tuples, allOf, not,
// if/then/else, patternProperties, ...).
func OpenAIStrict(schema map[string]any) (map[string]any, error) {
	pruneDefs(schema)
	out, err := strictSchema(schema, "")
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	return m, nil
}

// defsKeys are the keywords that hold a schema's definitions.
var defsKeys = []string{"$defs", "definitions"}

// pruneDefs drops the definitions of schema (its root's $defs and
// definitions) that no local $ref reaches, from outside them or from a
// definition reached: they mean nothing, and strict mode would refuse the
// schema for one it cannot express (a server that gives each of its tools
// the same definitions, as Notion's does, had every tool refused for a
// definition that some use). Nothing is dropped when a reference into
// the definitions cannot be read here (an anchor, a pointer to the
// definitions themselves).
func pruneDefs(schema map[string]any) {
	reached := map[string]map[string]bool{}
	root := make(map[string]any, len(schema)) // the root without its definitions: its own $ref counts
	for k, v := range schema {
		if !slices.Contains(defsKeys, k) {
			root[k] = v
		}
	}
	queue := []any{root}
	for len(queue) > 0 {
		v := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				key, name, ok := definitionOf(ref)
				if !ok {
					return
				}
				if key != "" && !reached[key][name] {
					if reached[key] == nil {
						reached[key] = map[string]bool{}
					}
					reached[key][name] = true
					if defs, _ := schema[key].(map[string]any); defs != nil && defs[name] != nil {
						queue = append(queue, defs[name])
					}
				}
			}
			for _, x := range v {
				queue = append(queue, x)
			}
		case []any:
			queue = append(queue, v...)
		}
	}
	for _, key := range defsKeys {
		defs, ok := schema[key].(map[string]any)
		if !ok {
			continue
		}
		for name := range defs {
			if !reached[key][name] {
				delete(defs, name)
			}
		}
		if len(defs) == 0 {
			delete(schema, key)
		}
	}
}

// definitionOf returns the root definition that ref points into: its
// keyword ($defs or definitions) and name, or "" for a reference
// elsewhere (the root, a property, another document); ok is false for a
// reference it cannot read (an anchor, the definitions as a whole).
func definitionOf(ref string) (key, name string, ok bool) {
	if ref == "#" || !strings.HasPrefix(ref, "#") {
		return "", "", true
	}
	if !strings.HasPrefix(ref, "#/") {
		return "", "", false
	}
	toks := strings.SplitN(ref[2:], "/", 3)
	key = pointerToken(toks[0])
	if !slices.Contains(defsKeys, key) {
		return "", "", true
	}
	if len(toks) < 2 {
		return "", "", false
	}
	return key, pointerToken(toks[1]), true
}

// strictSchema converts one owned schema to strict mode.
func strictSchema(v any, path string) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, unsupported(path, "the schema %v cannot be strict (strict mode takes schema objects)", v)
	}
	for _, k := range strictRefused {
		if _, ok := m[k]; ok {
			return nil, unsupported(path, "strict mode does not support %s", k)
		}
	}
	for _, k := range strictDropped {
		delete(m, k)
	}
	if f, ok := m["format"].(string); ok && !slices.Contains(strictFormats, f) {
		delete(m, "format")
	}
	if one, ok := m["oneOf"]; ok {
		if _, both := m["anyOf"]; both {
			return nil, unsupported(path, "strict mode does not support oneOf beside anyOf")
		}
		m["anyOf"] = one
		delete(m, "oneOf")
	}
	if _, tuple := m["items"].([]any); tuple {
		return nil, unsupported(path, "strict mode does not support tuples (items as a list)")
	}
	if !hasAnyKey(m, "type", "anyOf", "$ref", "enum", "const") {
		if !hasAnyKey(m, "properties") {
			return nil, unsupported(path, "a schema without a type (any value) cannot be strict")
		}
		m["type"] = "object"
	}
	if ref, ok := m["$ref"].(string); ok && !strings.HasPrefix(ref, "#") {
		return nil, unsupported(path, "strict mode resolves only local $ref (#...), not %q", ref)
	}
	// additionalProperties is decided by strictObject, not converted.
	extra, hasExtra := m["additionalProperties"]
	delete(m, "additionalProperties")
	if err := rewriteSubschemas(m, path, strictSchema); err != nil {
		return nil, err
	}
	if hasExtra && extra != false {
		return nil, unsupported(path, "an object that takes other keys (additionalProperties %s) cannot be strict", jsonText(extra))
	}
	if isObjectSchema(m) {
		return m, strictObject(m, path, hasExtra)
	}
	return m, nil
}

// strictObject closes the object schema m: every property required
// (optional ones nullable), no other keys. closed says the server closed it
// itself (additionalProperties false).
func strictObject(m map[string]any, path string, closed bool) error {
	props, _ := m["properties"].(map[string]any)
	if len(props) == 0 && path != "" && !closed {
		return unsupported(path, "a free-form object (no properties) cannot be strict")
	}
	required, _ := m["required"].([]any)
	names := slices.Sorted(maps.Keys(props))
	all := make([]any, len(names))
	for i, name := range names {
		all[i] = name
		if !slices.Contains(required, any(name)) {
			props[name] = nullable(props[name])
		}
	}
	if props == nil {
		m["properties"] = map[string]any{}
	}
	m["required"] = all
	m["additionalProperties"] = false
	return nil
}

// nullable returns schema s (already strict) also accepting null.
func nullable(s any) any {
	m, _ := s.(map[string]any)
	switch t := m["type"].(type) {
	case string:
		if t != "null" {
			m["type"] = []any{t, "null"}
		}
		nullableEnum(m)
		return m
	case []any:
		if !slices.Contains(t, any("null")) {
			m["type"] = append(slices.Clone(t), "null")
		}
		nullableEnum(m)
		return m
	}
	if branches, ok := m["anyOf"].([]any); ok && len(m) == 1 {
		if !slices.ContainsFunc(branches, isNullSchema) {
			m["anyOf"] = append(slices.Clone(branches), map[string]any{"type": "null"})
		}
		return m
	}
	return map[string]any{"anyOf": []any{m, map[string]any{"type": "null"}}}
}

// isNullSchema reports whether s is {"type": "null"}.
func isNullSchema(s any) bool {
	m, ok := s.(map[string]any)
	return ok && len(m) == 1 && m["type"] == "null"
}

// nullableEnum adds null to m's enum, if it has one.
func nullableEnum(m map[string]any) {
	if enum, ok := m["enum"].([]any); ok && !slices.Contains(enum, nil) {
		m["enum"] = append(slices.Clone(enum), nil)
	}
}

// isObjectSchema reports whether m describes objects.
func isObjectSchema(m map[string]any) bool {
	if m["type"] == "object" {
		return true
	}
	t, _ := m["type"].([]any)
	return slices.Contains(t, any("object"))
}

// hasAnyKey reports whether m has one of keys.
func hasAnyKey(m map[string]any, keys ...string) bool {
	return slices.ContainsFunc(keys, func(k string) bool { _, ok := m[k]; return ok })
}

// jsonText is v as JSON, for messages.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
