package mcpadapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/extserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// providerPasses are the goldens' providers: testdata/providers/<name>/.
var providerPasses = []struct {
	name   string
	passes []SchemaPass
}{
	{"parameters", nil}, // LLMTools as it is: the server's schemas
	{"gemini", []SchemaPass{ForGemini()}},
	{"openai", []SchemaPass{ForOpenAI()}},
	{"openai-strict", []SchemaPass{ForOpenAIStrict()}},
}

// providerEntry is one tool of a provider golden.
type providerEntry struct {
	Name       string         `json:"name"`
	Strict     bool           `json:"strict,omitempty"`
	Parameters map[string]any `json:"parameters,omitempty"`
	Error      string         `json:"error,omitempty"`
}

// checkProviderGoldens converts ts for every provider, checks each
// provider's rules on the results and that the tools are unchanged, and
// compares with testdata/providers/<provider>/<catalog>.json.
func checkProviderGoldens(t *testing.T, ts Toolset, catalog string) {
	t.Helper()
	before := toolsJSON(t, ts)
	for _, p := range providerPasses {
		entries := make([]providerEntry, 0, len(ts))
		for _, tool := range ts {
			lt, err := tool.LLMToolFor(p.passes...)
			if err != nil {
				if !errors.Is(err, ErrUnsupportedSchema) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tool.Name())) {
					t.Errorf("%s: %s: error %v does not wrap ErrUnsupportedSchema and name the tool", p.name, tool.Name(), err)
				}
				entries = append(entries, providerEntry{Name: tool.Name(), Error: err.Error()})
				continue
			}
			params, _ := lt.Function.Parameters.(map[string]any)
			checkProviderRules(t, p.name, tool.Name(), params)
			entries = append(entries, providerEntry{Name: lt.Function.Name, Strict: lt.Function.Strict, Parameters: params})
		}
		b, err := json.MarshalIndent(entries, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "providers/"+p.name+"/"+catalog+".json", append(b, '\n'))
	}
	if after := toolsJSON(t, ts); after != before {
		t.Errorf("the passes changed Parameters() or Descriptor():\n%s", lineDiff(before, after))
	}
}

// toolsJSON is every tool's Parameters and Descriptor as JSON.
func toolsJSON(t *testing.T, ts Toolset) string {
	var b strings.Builder
	for _, tool := range ts {
		p, err1 := json.Marshal(tool.Parameters())
		d, err2 := json.Marshal(tool.Descriptor())
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\n%s\n", p, d)
	}
	return b.String()
}

// checkProviderRules checks what provider accepts on a converted schema.
func checkProviderRules(t testing.TB, provider, tool string, params map[string]any) {
	t.Helper()
	if params == nil {
		t.Errorf("%s: %s: parameters are not a JSON object", provider, tool)
		return
	}
	visitSchemas(params, "", func(m map[string]any, path string) {
		switch provider {
		case "gemini":
			for k, v := range m {
				if !slices.Contains(geminiKeywords, k) {
					t.Errorf("%s: %s: %s: keyword %q is not Google AI's", provider, tool, path, k)
				}
				// langchaingo googleai convertSchemaRecursive: type must be a
				// string and required a list of strings.
				if _, ok := v.(string); k == "type" && !ok {
					t.Errorf("%s: %s: %s: type %v is not a string", provider, tool, path, v)
				}
				if k == "required" && slices.ContainsFunc(v.([]any), func(r any) bool { _, ok := r.(string); return !ok }) {
					t.Errorf("%s: %s: %s: required %v holds a non-string", provider, tool, path, v)
				}
			}
			if e, ok := m["enum"]; ok && m["type"] != "string" {
				t.Errorf("%s: %s: %s: enum %v on type %v", provider, tool, path, e, m["type"])
			}
			// Google AI: "properties: should be non-empty for OBJECT type".
			if props, _ := m["properties"].(map[string]any); path != "" && m["type"] == "object" && len(props) == 0 {
				t.Errorf("%s: %s: %s: an object without properties", provider, tool, path)
			}
		case "openai-strict":
			if isObjectSchema(m) {
				props, _ := m["properties"].(map[string]any)
				req, _ := m["required"].([]any)
				if m["additionalProperties"] != false || len(req) != len(props) {
					t.Errorf("%s: %s: %s: object is not closed with every property required: %v", provider, tool, path, m)
				}
			}
		}
	})
	if provider == "gemini" {
		if _, ok := params["properties"].(map[string]any); !ok || params["type"] != "object" {
			t.Errorf("%s: %s: top level is not an object with properties (googleai refuses it)", provider, tool)
		}
	}
}

// visitSchemas calls f on every schema object in v.
func visitSchemas(v any, path string, f func(m map[string]any, path string)) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	f(m, path)
	_ = rewriteSubschemas(deepCopy(m), path, func(sub any, at string) (any, error) {
		visitSchemas(sub, at, f)
		return sub, nil
	})
}

// zooTools are the tools of testdata/providers/zoo.json: schemas that
// providers take badly.
func zooTools(t testing.TB) Toolset {
	b, err := os.ReadFile("testdata/providers/zoo.json")
	if err != nil {
		t.Fatal(err)
	}
	var descs []*mcp.Tool
	if err := json.Unmarshal(b, &descs); err != nil {
		t.Fatal(err)
	}
	a := &Adapter{}
	ts := make(Toolset, len(descs))
	for i, d := range descs {
		ts[i] = a.newTool(&conn{server: "zoo"}, d)
	}
	return ts
}

func TestProviderGoldensZoo(t *testing.T) {
	checkProviderGoldens(t, zooTools(t), "zoo")
}

// TestProviderGoldensTestserver: the test server's catalog, in both eras
// (one golden: schemas do not depend on the era).
func TestProviderGoldensTestserver(t *testing.T) {
	for _, mode := range []Mode{ModeModern, ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			s := testserver.New(testserver.Options{}).AddWeather().AddBooking().AddFeatures()
			a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, mode)}})
			ts, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			checkProviderGoldens(t, ts, "testserver")
		})
	}
}

// TestProviderGoldensEverything: the real catalog of the TypeScript
// reference server (@modelcontextprotocol/server-everything, pinned).
func TestProviderGoldensEverything(t *testing.T) {
	node, script := extserver.Everything(t)
	a := newAdapter(t, Config{Servers: map[string]Server{"everything": {Command: node, Args: []string{script, "stdio"}}}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	checkProviderGoldens(t, ts, "everything")
}

func TestInlineRefsRefusesCycles(t *testing.T) {
	ts := zooTools(t)
	for _, name := range []string{"zoo__cycle", "zoo__root_ref"} {
		_, err := ts.Lookup(name).LLMToolFor(ForGemini())
		if !errors.Is(err, ErrUnsupportedSchema) || !strings.Contains(err.Error(), "recursive $ref") || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error = %v, want a recursive-$ref refusal naming the tool", name, err)
		}
	}
}

// TestInlineRefsBounded: references that double the schema at each step
// are refused before they exhaust memory.
func TestInlineRefsBounded(t *testing.T) {
	defs := map[string]any{"d0": map[string]any{"type": "string"}}
	for i := 1; i <= 40; i++ {
		ref := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i-1)}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"type": "object", "properties": map[string]any{"a": ref, "b": ref}}
	}
	tool := (&Adapter{}).newTool(&conn{server: "s"}, &mcp.Tool{Name: "bomb", InputSchema: map[string]any{
		"type": "object", "$defs": defs, "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/d40"}},
	}})
	if _, err := tool.LLMToolFor(InlineRefs()); !errors.Is(err, ErrUnsupportedSchema) || !strings.Contains(err.Error(), "subschemas") {
		t.Fatalf("error = %v, want the inlining bound", err)
	}
}

func TestLLMToolsForJoinsFailures(t *testing.T) {
	ts := zooTools(t)
	tools, err := ts.LLMToolsFor(ForOpenAIStrict())
	if err == nil || !strings.Contains(err.Error(), "zoo__free_form") || !strings.Contains(err.Error(), "zoo__untyped") {
		t.Fatalf("error = %v, want one naming every tool strict mode refuses", err)
	}
	if len(tools) == 0 || len(tools) >= len(ts) {
		t.Fatalf("got %d tools of %d, want the convertible ones", len(tools), len(ts))
	}
	for _, lt := range tools {
		if !lt.Function.Strict {
			t.Errorf("%s: Strict is false", lt.Function.Name)
		}
	}
	if all, err := ts.LLMToolsFor(); err != nil || len(all) != len(ts) {
		t.Fatalf("LLMToolsFor() without passes = %d tools, %v; want all", len(all), err)
	}
}

// FuzzSchemaPass: no pass panics or loops on any schema, and what a pass
// accepts fits its provider and can be sent (marshals as JSON: no cycles).
func FuzzSchemaPass(f *testing.F) {
	b, err := os.ReadFile("testdata/providers/zoo.json")
	if err != nil {
		f.Fatal(err)
	}
	var zoo []struct{ InputSchema json.RawMessage }
	if err := json.Unmarshal(b, &zoo); err != nil {
		f.Fatal(err)
	}
	for _, z := range zoo {
		f.Add([]byte(z.InputSchema))
	}
	f.Add([]byte(`{"properties":{"a":{"$ref":"#/properties/a"}}}`))
	f.Add([]byte(`{"properties":{"a":{"$ref":"#/properties/b"},"b":{"$ref":"#/properties/a"}}}`))
	f.Add([]byte(`{"properties":{"a":{"allOf":[{"allOf":[{"properties":{"x":true}}]}],"type":["null"]}},"items":[1]}`))
	f.Add([]byte(`{"$defs":{"a~/b":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a~0~1b"},"y":{"$ref":"#/$defs/a%7E0~1b"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var schema map[string]any
		if json.Unmarshal(data, &schema) != nil {
			return
		}
		tool := (&Adapter{}).newTool(&conn{server: "f"}, &mcp.Tool{Name: "t", InputSchema: schema})
		before := toolsJSON(t, Toolset{tool})
		for _, p := range providerPasses {
			lt, err := tool.LLMToolFor(p.passes...)
			if err != nil {
				if !errors.Is(err, ErrUnsupportedSchema) {
					t.Fatalf("%s: error %v does not wrap ErrUnsupportedSchema", p.name, err)
				}
				continue
			}
			if _, err := json.Marshal(lt); err != nil {
				t.Fatalf("%s: result does not marshal: %v", p.name, err)
			}
			params, _ := lt.Function.Parameters.(map[string]any)
			checkProviderRules(t, p.name, "t", params)
		}
		if after := toolsJSON(t, Toolset{tool}); after != before {
			t.Fatalf("a pass changed the tool:\n%s", lineDiff(before, after))
		}
	})
}
