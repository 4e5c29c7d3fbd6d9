package mcpadapter

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/elicit"
	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/mcpadapter/mcpadapter/internal/outputschema"
	"github.com/mcpadapter/mcpadapter/internal/schemaguard"
	"github.com/mcpadapter/mcpadapter/internal/schemapass"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/internal/toolsearch"
)

// FuzzSchemaGuard runs schemas with references through every path that
// hands a server's schema to a resolver, validator, inliner or indexer:
// a tool's input schema checking rewritten arguments (checkArgs), an
// output schema, an elicitation's requested schema, the provider passes,
// tool search's index, the argument hint and DropAbsentNulls. None may
// crash or hang; a schema the guard refuses fails checkArgs with
// ErrUnsafeSchema. Outside fuzzing its corpus runs first in a child
// process (testserver.InChild), so that a stack overflow fails the target
// instead of ending the run, then, having passed there, here too; under
// -fuzz the workers are child processes already.
func FuzzSchemaGuard(f *testing.F) {
	testserver.InChild(f)
	for _, schema := range []string{
		`{"$ref":"#","type":"object"}`,
		`{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`,
		`{"type":"object","$defs":{"x":{"$ref":"#/$defs/y"},"y":{"$ref":"#/$defs/x"}},"$ref":"#/$defs/x"}`,
		`{"type":"object","properties":{"a":{"allOf":[{"$ref":"#/properties/a"}]}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#"},"n":{"type":"integer"}}}`,
		`{"type":"object","$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"properties":{"a":{"$ref":"#/$defs/node"}}}`,
		`{"type":"object","$defs":{"n":{"$anchor":"n","type":["integer","null"]}},"properties":{"a":{"$ref":"#n"}},"required":["a"]}`,
		`{"type":"object","properties":{"a":{"$dynamicRef":"#meta"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`,
		`{"type":"object","$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"},{"$ref":"#/$defs/b"}]},"b":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/a"}}}`,
		`{"type":"object","dependentSchemas":{"a":{"$ref":"#"}}}`,
		`{"type":"object","properties":{"a":{"not":{"$ref":"#/properties/b"}},"b":{"if":{"$ref":"#/properties/a"}}}}`,
	} {
		f.Add(schema, `{"a":1}`)
		f.Add(schema, `{"a":{"a":{"children":[{}]}},"n":null}`)
	}
	f.Fuzz(func(t *testing.T, schemaJSON, argsJSON string) {
		var schema, args map[string]any
		if json.Unmarshal([]byte(schemaJSON), &schema) != nil || schema == nil {
			return
		}
		if json.Unmarshal([]byte(argsJSON), &args) != nil {
			args = nil
		}
		guardErr := schemaguard.Check(schema)

		tool := &Tool{server: "f", name: "f__t", desc: &ToolDescriptor{Name: "t", InputSchema: schema}, params: schemapass.Shared(schema)}
		if err := tool.checkArgs(args); guardErr != nil && !errors.Is(err, ErrUnsafeSchema) {
			t.Fatalf("checkArgs under a refused schema (%v) = %v, want ErrUnsafeSchema", guardErr, err)
		}
		var out outputschema.Lazy
		out.Validate(schema, args, func(string) {})
		if err := elicit.CheckSchema(schema); guardErr != nil && err == nil {
			t.Fatalf("elicit.CheckSchema under a refused schema (%v) = nil", guardErr)
		}
		elicit.Content(schema, args)
		for _, pass := range []func(map[string]any) (map[string]any, error){schemapass.InlineRefs, schemapass.Gemini, schemapass.OpenAI, schemapass.OpenAIStrict} {
			pass(jsonvalue.Copy(schema))
		}
		toolsearch.New([]toolsearch.Doc{toolsearch.DocOf(tool.name, "", "", tool.params)}).Search("a", 1)
		schemapass.Describe("t", tool.params)
		schemapass.DropAbsentNulls(schema, args)
	})
}
