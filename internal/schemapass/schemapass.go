// Package schemapass rewrites a tool's JSON schema into what one LLM
// provider accepts: OpenAI ([OpenAI]), OpenAI's strict mode
// ([OpenAIStrict]) and Google AI ([Gemini]), with [InlineRefs] as the
// building block that removes $ref.
//
// Each pass is a pure function of a decoded JSON schema (map[string]any,
// []any and scalars, as encoding/json decodes into any). It owns its input,
// which it may change in place, and returns a schema that shares nothing
// with anything else the caller holds. A pass refuses, with an error
// wrapping [ErrUnsupported] and naming the place (a JSON pointer), what it
// cannot convert faithfully, rather than return a schema the provider would
// reject or misread. [Definition] (definition.go) adapts them to
// llms.FunctionDefinition, which the root package's SchemaPass rewrites;
// its docs state each provider's rules.
//
// Before any pass, [Normalize] (or [Shared]) makes a server's input schema
// an object schema, and [Describe] writes the argument hint that text
// agents read in a tool's description (normalize.go). Nothing here knows
// the adapter.
package schemapass

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/mcpadapter/mcpadapter/internal/schemaguard"
)

// ErrUnsupported is the error every refusal wraps (the root package
// exports it as ErrUnsupportedSchema).
var ErrUnsupported = errors.New("mcpadapter: schema not supported by the provider")

// unsupported is an ErrUnsupported at path (a JSON pointer).
func unsupported(path, format string, args ...any) error {
	if path == "" {
		path = "/"
	}
	return fmt.Errorf("%w: at %s: %s", ErrUnsupported, path, fmt.Sprintf(format, args...))
}

// The keywords whose values are subschemas.
var (
	schemaValued = []string{"items", "additionalProperties", "not", "if", "then", "else", "contains",
		"propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems"}
	schemaListValued = []string{"anyOf", "oneOf", "allOf", "prefixItems"}                                      // and "items" in tuple form
	schemaMapValued  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"} // name → schema
)

// rewriteSubschemas replaces every direct subschema of m, in a fixed order,
// with what f returns for it. path is m's JSON pointer, and f gets each
// subschema's.
func rewriteSubschemas(m map[string]any, path string, f func(v any, path string) (any, error)) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		at := path + "/" + jsonvalue.PointerToken(k)
		var err error
		switch v := m[k].(type) {
		case map[string]any:
			switch {
			case slices.Contains(schemaValued, k):
				m[k], err = f(v, at)
			case slices.Contains(schemaMapValued, k):
				out := make(map[string]any, len(v))
				for _, name := range slices.Sorted(maps.Keys(v)) {
					if out[name], err = f(v[name], at+"/"+jsonvalue.PointerToken(name)); err != nil {
						return err
					}
				}
				m[k] = out
			}
		case []any:
			if slices.Contains(schemaListValued, k) || k == "items" {
				out := make([]any, len(v))
				for i, e := range v {
					if out[i], err = f(e, at+"/"+strconv.Itoa(i)); err != nil {
						return err
					}
				}
				m[k] = out
			}
		case bool:
			if slices.Contains(schemaValued, k) {
				m[k], err = f(v, at)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// maxInlined bounds the subschemas of a schema once its $ref are inlined:
// references used many times can multiply a small schema (a chain of
// definitions each using the next twice doubles it at every step).
const maxInlined = 10_000

// InlineRefs replaces every local $ref of schema ("#", "#/$defs/name",
// "#/definitions/name" or any JSON pointer into the schema) by a copy of
// what it points to, merged with the keywords beside it, and drops $defs
// and definitions. It refuses what the schema guard refuses
// (internal/schemaguard: too deep or large, references that cannot be
// followed, reference cycles), recursive references (which inlining cannot
// express, even those the guard lets a validator follow), references to
// anchors, and schemas that would grow past 10,000 subschemas.
func InlineRefs(schema map[string]any) (map[string]any, error) {
	var ge *schemaguard.Error
	if err := schemaguard.Check(schema); errors.As(err, &ge) {
		return nil, unsupported(ge.Path, "%s", ge.Reason)
	}
	in := &inliner{root: schema}
	out, err := in.schema(schema, "")
	if err != nil {
		return nil, err
	}
	// Inlined copies share the values that are not subschemas (enum
	// lists, defaults): copy once, so that later passes own every value.
	m, _ := jsonvalue.Copy(out).(map[string]any)
	return m, nil
}

// An inliner inlines the $ref of one schema.
type inliner struct {
	root  map[string]any
	stack []string // the references being inlined, outermost first
	nodes int
}

func (in *inliner) schema(v any, path string) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return v, nil
	}
	if in.nodes++; in.nodes > maxInlined {
		return nil, unsupported(path, "more than %d subschemas once $ref are inlined", maxInlined)
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		if k != "$ref" && k != "$defs" && k != "definitions" {
			out[k] = e
		}
	}
	if err := rewriteSubschemas(out, path, in.schema); err != nil {
		return nil, err
	}
	ref, ok := m["$ref"]
	if !ok {
		return out, nil
	}
	s, ok := ref.(string)
	if !ok {
		return nil, unsupported(path, "$ref is a %T, not a string", ref)
	}
	if slices.Contains(in.stack, s) {
		return nil, unsupported(path, "recursive $ref %q cannot be inlined (the type refers to itself through %s)", s, strings.Join(in.stack, " → "))
	}
	target, err := resolveRef(in.root, s)
	if err != nil {
		return nil, unsupported(path, "%v", err)
	}
	in.stack = append(in.stack, s)
	resolved, err := in.schema(target, path)
	in.stack = in.stack[:len(in.stack)-1]
	if err != nil {
		return nil, err
	}
	merged, ok := resolved.(map[string]any)
	switch {
	case resolved == true:
		merged = map[string]any{}
	case !ok:
		return nil, unsupported(path, "$ref %q points to %v, not a schema object", s, resolved)
	}
	merged = maps.Clone(merged)
	maps.Copy(merged, out) // keywords beside $ref apply too; they win
	return merged, nil
}

// pointerToken decodes tok, one token of a $ref's JSON pointer (URL
// escapes, then ~1 and ~0).
func pointerToken(tok string) string {
	if t, err := url.PathUnescape(tok); err == nil {
		tok = t
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// resolveRef returns what the local reference ref points to in root.
func resolveRef(root map[string]any, ref string) (any, error) {
	if ref == "#" {
		return root, nil
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("$ref %q is not a local JSON pointer (#/...); only those can be inlined", ref)
	}
	var cur any = root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = pointerToken(tok)
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("$ref %q points to nothing", ref)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("$ref %q points to nothing", ref)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("$ref %q points to nothing", ref)
		}
	}
	return cur, nil
}
