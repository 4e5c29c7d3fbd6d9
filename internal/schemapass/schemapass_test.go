package schemapass

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// update makes the golden tests rewrite testdata/<pass>/<catalog>.json:
// go test -run TestGoldens -update. Read the diff before committing.
var update = flag.Bool("update", false, "rewrite golden files")

// passes are the goldens' passes: testdata/<name>/.
var passes = []struct {
	name string
	pass func(map[string]any) (map[string]any, error)
}{
	{"gemini", Gemini},
	{"openai", OpenAI},
	{"openai-strict", OpenAIStrict},
}

// A tool is a catalog entry: a name and its input schema.
type tool struct {
	Name        string         `json:"name"`
	InputSchema map[string]any `json:"inputSchema"`
}

// goldenEntry is one tool of a golden file.
type goldenEntry struct {
	Name       string         `json:"name"`
	Parameters map[string]any `json:"parameters,omitempty"`
	Error      string         `json:"error,omitempty"`
}

// input is a copy of t's input schema, for a pass to own.
func input(t tool) map[string]any {
	return jsonvalue.Copy(t.InputSchema)
}

// checkGoldens runs every pass on every tool of catalog, checks each
// provider's rules on the results, and compares with
// testdata/<pass>/<catalog>.json.
func checkGoldens(t *testing.T, tools []tool, catalog string) {
	t.Helper()
	for _, p := range passes {
		entries := make([]goldenEntry, 0, len(tools))
		for _, tl := range tools {
			out, err := p.pass(input(tl))
			if err != nil {
				if !errors.Is(err, ErrUnsupported) {
					t.Errorf("%s: %s: error %v does not wrap ErrUnsupported", p.name, tl.Name, err)
				}
				entries = append(entries, goldenEntry{Name: tl.Name, Error: err.Error()})
				continue
			}
			checkRules(t, p.name, tl.Name, out)
			entries = append(entries, goldenEntry{Name: tl.Name, Parameters: out})
		}
		b, err := json.MarshalIndent(entries, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, filepath.Join("testdata", p.name, catalog+".json"), append(b, '\n'))
	}
}

// checkGolden compares got with the golden file at path, or writes it
// under -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
		i := 0
		for i < len(w) && i < len(g) && w[i] == g[i] {
			i++
		}
		t.Errorf("%s differs from line %d:\n-%s\n+%s", path, i+1,
			strings.Join(w[i:min(i+8, len(w))], "\n-"), strings.Join(g[i:min(i+8, len(g))], "\n+"))
	}
}

// checkRules checks what the provider of pass accepts on a converted schema.
func checkRules(t testing.TB, pass, tool string, params map[string]any) {
	t.Helper()
	if params == nil {
		t.Errorf("%s: %s: parameters are not a JSON object", pass, tool)
		return
	}
	visitSchemas(params, "", func(m map[string]any, path string) {
		switch pass {
		case "gemini":
			for k, v := range m {
				if !slices.Contains(geminiKeywords, k) {
					t.Errorf("%s: %s: %s: keyword %q is not Google AI's", pass, tool, path, k)
				}
				// langchaingo googleai convertSchemaRecursive: type must be a
				// string and required a list of strings.
				if _, ok := v.(string); k == "type" && !ok {
					t.Errorf("%s: %s: %s: type %v is not a string", pass, tool, path, v)
				}
				if k == "required" && slices.ContainsFunc(v.([]any), func(r any) bool { _, ok := r.(string); return !ok }) {
					t.Errorf("%s: %s: %s: required %v holds a non-string", pass, tool, path, v)
				}
			}
			if e, ok := m["enum"]; ok && m["type"] != "string" {
				t.Errorf("%s: %s: %s: enum %v on type %v", pass, tool, path, e, m["type"])
			}
			// Google AI: "properties: should be non-empty for OBJECT type".
			if props, _ := m["properties"].(map[string]any); path != "" && m["type"] == "object" && len(props) == 0 {
				t.Errorf("%s: %s: %s: an object without properties", pass, tool, path)
			}
		case "openai-strict":
			if isObjectSchema(m) {
				props, _ := m["properties"].(map[string]any)
				req, _ := m["required"].([]any)
				if m["additionalProperties"] != false || len(req) != len(props) {
					t.Errorf("%s: %s: %s: object is not closed with every property required: %v", pass, tool, path, m)
				}
			}
		}
	})
	if pass == "gemini" {
		if _, ok := params["properties"].(map[string]any); !ok || params["type"] != "object" {
			t.Errorf("%s: %s: top level is not an object with properties (googleai refuses it)", pass, tool)
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
	copied := jsonvalue.Copy(m)
	_ = rewriteSubschemas(copied, path, func(sub any, at string) (any, error) {
		visitSchemas(sub, at, f)
		return sub, nil
	})
}

// zoo is testdata/zoo.json: schemas that providers take badly.
func zoo(t testing.TB) []tool {
	b, err := os.ReadFile(filepath.Join("testdata", "zoo.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tools []tool
	if err := json.Unmarshal(b, &tools); err != nil {
		t.Fatal(err)
	}
	return tools
}

// listTools lists the tools of the server at the other end of transport
// with a go-sdk client that declares what mcpadapter's does (elicitation,
// no roots): servers list some tools by the client's capabilities.
func listTools(t *testing.T, transport mcp.Transport) []tool {
	t.Helper()
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
		Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}
	client := mcp.NewClient(&mcp.Implementation{Name: "schemapass-test"}, &mcp.ClientOptions{Capabilities: caps})
	cs, err := client.Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	var tools []tool
	for d, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		schema, _ := d.InputSchema.(map[string]any)
		tools = append(tools, tool{Name: d.Name, InputSchema: schema})
	}
	return tools
}

func TestGoldensZoo(t *testing.T) {
	checkGoldens(t, zoo(t), "zoo")
}

// TestGoldensTestserver: the catalog of mcpadapter's test server.
func TestGoldensTestserver(t *testing.T) {
	s := testserver.New(testserver.Options{}).AddWeather().AddBooking().AddFeatures()
	transport, err := s.Transport()(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	checkGoldens(t, listTools(t, transport), "testserver")
}

// TestGoldensEverything: the real catalog of the TypeScript reference
// server (@modelcontextprotocol/server-everything, pinned).
func TestGoldensEverything(t *testing.T) {
	node, script := extserver.Everything(t)
	checkGoldens(t, listTools(t, &mcp.CommandTransport{Command: exec.Command(node, script, "stdio")}), "everything")
}

// TestInlineRefsBounded: references that double the schema at each step
// are refused before they exhaust memory.
func TestInlineRefsBounded(t *testing.T) {
	defs := map[string]any{"d0": map[string]any{"type": "string"}}
	for i := 1; i <= 40; i++ {
		ref := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i-1)}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"type": "object", "properties": map[string]any{"a": ref, "b": ref}}
	}
	schema := map[string]any{"type": "object", "$defs": defs, "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/d40"}}}
	if _, err := InlineRefs(schema); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "subschemas") {
		t.Fatalf("error = %v, want the inlining bound", err)
	}
}

// TestInlineRefsOwnsResult: the result shares no value with the input,
// though inlining copies one definition to several places.
func TestInlineRefsOwnsResult(t *testing.T) {
	enum := []any{"a", "b"}
	schema := map[string]any{"$defs": map[string]any{"e": map[string]any{"enum": enum}},
		"properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/e"}, "y": map[string]any{"$ref": "#/$defs/e"}}}
	out, err := InlineRefs(schema)
	if err != nil {
		t.Fatal(err)
	}
	props := out["properties"].(map[string]any)
	props["x"].(map[string]any)["enum"].([]any)[0] = "changed"
	if enum[0] != "a" || props["y"].(map[string]any)["enum"].([]any)[0] != "a" {
		t.Errorf("the inlined copies share their enum: input %v, y %v", enum, props["y"])
	}
}

// FuzzSchemaPass: no pass panics or loops on any schema, and what a pass
// accepts fits its provider and can be sent (marshals as JSON: no cycles).
func FuzzSchemaPass(f *testing.F) {
	for _, tl := range zoo(f) {
		b, err := json.Marshal(tl.InputSchema)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
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
		for _, p := range passes {
			out, err := p.pass(input(tool{Name: "t", InputSchema: schema}))
			if err != nil {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("%s: error %v does not wrap ErrUnsupported", p.name, err)
				}
				continue
			}
			if _, err := json.Marshal(out); err != nil {
				t.Fatalf("%s: result does not marshal: %v", p.name, err)
			}
			checkRules(t, p.name, "t", out)
		}
	})
}

// TestOpenAIStrictUnusedDefinitions: definitions no $ref reaches are
// dropped before strict mode converts the schema, so that one it cannot
// express refuses only the tools that use it (Notion's server gives every
// tool the same definitions: every tool was refused, API-get-self, which
// takes no argument, too); one that is used is refused as before, and
// nothing is dropped when a reference cannot be read.
func TestOpenAIStrictUnusedDefinitions(t *testing.T) {
	const defs = `"$defs":{"used":{"type":"object","properties":{"x":{"$ref":"#/definitions/d~1eep"}},"required":["x"],"additionalProperties":false},"open":{"type":"object","additionalProperties":true}},` +
		`"definitions":{"d/eep":{"type":"string"},"unused":{"type":"object","additionalProperties":{}}}`
	for _, tc := range []struct {
		name, schema string
		want         string // the output, or
		wantErr      string // the place of the refusal
	}{
		{"no argument", `{"type":"object","properties":{},` + defs + `}`,
			`{"type":"object","properties":{},"required":[],"additionalProperties":false}`, ""},
		{"one used", `{"type":"object","properties":{"a":{"$ref":"#/$defs/used"}},"required":["a"],` + defs + `}`,
			`{"type":"object","properties":{"a":{"$ref":"#/$defs/used"}},"required":["a"],"additionalProperties":false,` +
				`"$defs":{"used":{"type":"object","properties":{"x":{"$ref":"#/definitions/d~1eep"}},"required":["x"],"additionalProperties":false}},` +
				`"definitions":{"d/eep":{"type":"string"}}}`, ""},
		{"the root a reference", `{"$ref":"#/$defs/used",` + defs + `}`,
			`{"$ref":"#/$defs/used",` +
				`"$defs":{"used":{"type":"object","properties":{"x":{"$ref":"#/definitions/d~1eep"}},"required":["x"],"additionalProperties":false}},` +
				`"definitions":{"d/eep":{"type":"string"}}}`, ""},
		{"the open one used", `{"type":"object","properties":{"a":{"$ref":"#/$defs/open"}},` + defs + `}`, "", "/$defs/open"},
		{"an anchor", `{"type":"object","properties":{"a":{"$ref":"#top"}},` + defs + `}`, "", "/$defs/open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var schema map[string]any
			if err := json.Unmarshal([]byte(tc.schema), &schema); err != nil {
				t.Fatal(err)
			}
			out, err := OpenAIStrict(schema)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "at "+tc.wantErr+":") {
					t.Fatalf("OpenAIStrict = %v, %v; want refused at %s", out, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(out)
			if wantJSON, _ := json.Marshal(want); string(got) != string(wantJSON) {
				t.Errorf("OpenAIStrict =\n%s\nwant\n%s", got, wantJSON)
			}
		})
	}
}
