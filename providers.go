package mcpadapter

// Schema passes: what each provider accepts of a tool's JSON schema.
//
// [Tool.Parameters] is the server's schema, kept as written. Providers take
// less: Google AI a subset of OpenAPI 3.0 without $ref, OpenAI's strict
// mode a closed subset of JSON Schema. A SchemaPass rewrites a copy of one
// definition for one provider; [Toolset.LLMToolsFor] applies passes to every
// tool. Passes are pure functions of their input, never touch the tool, and
// refuse (with [ErrUnsupportedSchema]) what they cannot convert faithfully
// rather than send a schema the provider would reject or misread.

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// ErrUnsupportedSchema is returned, wrapped with the tool's name and the
// place in its schema, when a [SchemaPass] cannot convert a tool's schema
// for its provider: a recursive $ref for Google AI, a free-form object for
// OpenAI's strict mode.
var ErrUnsupportedSchema = errors.New("mcpadapter: schema not supported by the provider")

// A SchemaPass rewrites one tool definition for a provider. It gets a
// definition of its own: Parameters is a map[string]any deep copy of
// [Tool.Parameters] (or what the pass before it left), which it may change
// in place or replace. An error should wrap [ErrUnsupportedSchema].
// [ForGemini], [ForOpenAI] and [ForOpenAIStrict] are the ready-made passes;
// [InlineRefs] is a building block.
type SchemaPass func(fn *llms.FunctionDefinition) error

// LLMToolFor is [Tool.LLMTool] with passes applied in order, for one
// provider: t.LLMToolFor(mcpadapter.ForGemini()). Nil passes are ignored.
// An error names the server, the tool and where its schema failed.
func (t *Tool) LLMToolFor(passes ...SchemaPass) (llms.Tool, error) {
	tool := t.LLMTool()
	for _, pass := range passes {
		if pass == nil {
			continue
		}
		if err := pass(tool.Function); err != nil {
			return llms.Tool{}, fmt.Errorf("mcpadapter: server %q: tool %q: %w", t.server, t.name, err)
		}
	}
	return tool, nil
}

// LLMToolsFor is [Toolset.LLMTools] with passes applied to each tool (see
// [Tool.LLMToolFor]). When some tools cannot be converted it returns the
// others, in order, with an error joining one per failed tool: a caller may
// go on without them, or stop.
func (s Toolset) LLMToolsFor(passes ...SchemaPass) ([]llms.Tool, error) {
	out := make([]llms.Tool, 0, len(s))
	var errs []error
	for _, t := range s {
		tool, err := t.LLMToolFor(passes...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, tool)
	}
	return out, errors.Join(errs...)
}

// schemaPass adapts a function of the parameters to a SchemaPass.
func schemaPass(f func(params map[string]any) (map[string]any, error)) SchemaPass {
	return func(fn *llms.FunctionDefinition) error {
		params, ok := fn.Parameters.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: parameters are a %T, not a JSON object", ErrUnsupportedSchema, fn.Parameters)
		}
		out, err := f(params)
		if err != nil {
			return err
		}
		fn.Parameters = out
		return nil
	}
}

// unsupported is an ErrUnsupportedSchema at path (a JSON pointer).
func unsupported(path, format string, args ...any) error {
	if path == "" {
		path = "/"
	}
	return fmt.Errorf("%w: at %s: %s", ErrUnsupportedSchema, path, fmt.Sprintf(format, args...))
}

// The keywords whose values are subschemas.
var (
	schemaValued = []string{"items", "additionalProperties", "not", "if", "then", "else", "contains",
		"propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems"}
	schemaListValued = []string{"anyOf", "oneOf", "allOf", "prefixItems"}                                      // and "items" in tuple form
	schemaMapValued  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"} // name → schema
)

// rewriteSubschemas replaces every direct subschema of m, in a fixed order,
// with what f returns for it. path is m's JSON pointer.
func rewriteSubschemas(m map[string]any, path string, f func(v any, path string) (any, error)) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		at := path + "/" + escapePointer(k)
		var err error
		switch v := m[k].(type) {
		case map[string]any:
			switch {
			case slices.Contains(schemaValued, k):
				m[k], err = f(v, at)
			case slices.Contains(schemaMapValued, k):
				out := make(map[string]any, len(v))
				for _, name := range slices.Sorted(maps.Keys(v)) {
					if out[name], err = f(v[name], at+"/"+escapePointer(name)); err != nil {
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

// escapePointer escapes one JSON pointer token.
func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// maxInlined bounds the subschemas of a schema once its $ref are inlined:
// references used many times can multiply a small schema (a chain of
// definitions each using the next twice doubles it at every step).
const maxInlined = 10_000

// InlineRefs returns a [SchemaPass] that replaces every local $ref ("#",
// "#/$defs/name", "#/definitions/name" or any JSON pointer into the schema)
// by a copy of what it points to, merged with the keywords beside it, and
// drops $defs and definitions. It refuses recursive references (a tree or
// list type: they cannot be written without $ref), references to other
// documents or to anchors, and schemas that would grow past 10,000
// subschemas.
func InlineRefs() SchemaPass { return schemaPass(inlineRefs) }

func inlineRefs(params map[string]any) (map[string]any, error) {
	in := &inliner{root: params}
	out, err := in.schema(params, "")
	if err != nil {
		return nil, err
	}
	// Inlined copies share the values that are not subschemas (enum
	// lists, defaults): copy once, so that later passes own every value.
	m, _ := copyJSON(out).(map[string]any)
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
		if t, err := url.PathUnescape(tok); err == nil {
			tok = t
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
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
