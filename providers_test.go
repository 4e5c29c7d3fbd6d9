package mcpadapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/schemapass"
	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// providerPasses are the passes beside the internal/schemapass function
// each wraps (whose goldens are internal/schemapass/testdata/<name>/).
var providerPasses = []struct {
	name string
	pass SchemaPass
	pure func(map[string]any) (map[string]any, error)
}{
	{"inline-refs", schemapass.Definition(schemapass.InlineRefs), schemapass.InlineRefs},
	{"gemini", ForGemini(), schemapass.Gemini},
	{"openai", ForOpenAI(), schemapass.OpenAI},
	{"openai-strict", ForOpenAIStrict(), schemapass.OpenAIStrict},
}

// providerEntry is one tool of a parameters golden.
type providerEntry struct {
	Name       string         `json:"name"`
	Strict     bool           `json:"strict,omitempty"`
	Parameters map[string]any `json:"parameters,omitempty"`
	Error      string         `json:"error,omitempty"`
}

// checkProviderGoldens compares the definitions of [Toolset.LLMTools]
// with testdata/providers/parameters/<catalog>.json, and checks that each
// pass gives every tool the definition its internal/schemapass function
// gives the tool's Parameters, or an error wrapping
// ErrUnsupportedSchema that names the server and the tool, and that no
// pass changes the tools.
func checkProviderGoldens(t *testing.T, ts Toolset, catalog string) {
	t.Helper()
	before := toolsJSON(t, ts)
	entries := make([]providerEntry, 0, len(ts))
	for _, tool := range ts {
		lt, err := tool.LLMToolFor()
		if err != nil {
			t.Fatalf("%s: LLMToolFor without passes: %v", tool.Name(), err)
		}
		params, _ := lt.Function.Parameters.(map[string]any)
		entries = append(entries, providerEntry{Name: lt.Function.Name, Strict: lt.Function.Strict, Parameters: params})
		for _, p := range providerPasses {
			lt, err := tool.LLMToolFor(p.pass)
			want, wantErr := p.pure(tool.Parameters())
			switch {
			case wantErr != nil:
				wantMsg := fmt.Sprintf("mcpadapter: server %q: tool %q: %s", tool.server, tool.Name(), strings.TrimPrefix(wantErr.Error(), "mcpadapter: "))
				if !errors.Is(err, ErrUnsupportedSchema) || err.Error() != wantMsg {
					t.Errorf("%s: %s: error %v, want %s", p.name, tool.Name(), err, wantMsg)
				}
			case err != nil:
				t.Errorf("%s: %s: %v; the pure pass accepts the schema", p.name, tool.Name(), err)
			case !reflect.DeepEqual(lt.Function.Parameters, want):
				t.Errorf("%s: %s: parameters %v, want %v", p.name, tool.Name(), lt.Function.Parameters, want)
			}
		}
	}
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "providers/parameters/"+catalog+".json", append(b, '\n'))
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

// zooTools are the tools of internal/schemapass/testdata/zoo.json:
// schemas that providers take badly.
func zooTools(t testing.TB) Toolset {
	b, err := os.ReadFile(filepath.Join("internal", "schemapass", "testdata", "zoo.json"))
	if err != nil {
		t.Fatal(err)
	}
	var descs []*mcp.Tool
	if err := json.Unmarshal(b, &descs); err != nil {
		t.Fatal(err)
	}
	policy := toolPolicy{cfg: &Config{}}
	c := &conn{server: "zoo", a: &Adapter{}}
	ts := make(Toolset, len(descs))
	for i, d := range descs {
		ts[i] = newTool(c, policy.name(c.server, d.Name), d, nil)
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

// TestSchemaPassStrict: the OpenAI passes set Strict, the others leave it
// as the pass before them did.
func TestSchemaPassStrict(t *testing.T) {
	tool := zooTools(t).Lookup("zoo__refs")
	for _, tt := range []struct {
		passes []SchemaPass
		want   bool
	}{
		{[]SchemaPass{ForOpenAIStrict()}, true},
		{[]SchemaPass{ForOpenAIStrict(), schemapass.Definition(schemapass.InlineRefs)}, true},
		{[]SchemaPass{ForOpenAIStrict(), ForGemini()}, true},
		{[]SchemaPass{ForOpenAIStrict(), ForOpenAI()}, false},
		{[]SchemaPass{schemapass.Definition(schemapass.InlineRefs), ForGemini()}, false},
	} {
		lt, err := tool.LLMToolFor(tt.passes...)
		if err != nil || lt.Function.Strict != tt.want {
			t.Errorf("%d passes: Strict = %t, %v; want %t", len(tt.passes), lt.Function.Strict, err, tt.want)
		}
	}
}

// TestLLMToolsForLeavesOutAppOnly: like LLMTools, LLMToolsFor never offers
// the model a tool for the app alone, also from a set listed with
// IncludeAppOnly (an agent made over such a set offered it, and the
// model's calls of it then failed as unknown tools).
func TestLLMToolsForLeavesOutAppOnly(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "apps", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "shown", InputSchema: object}, returns(&mcp.CallToolResult{}))
	s.AddTool(&mcp.Tool{Name: "poll", InputSchema: object, Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}}, returns(&mcp.CallToolResult{}))
	_, all := listSDK(t, s, ModeAuto, Config{}, IncludeAppOnly())
	if len(all) != 2 {
		t.Fatalf("ListTools(IncludeAppOnly()) = %d tools, want 2", len(all))
	}
	for _, passes := range [][]SchemaPass{nil, {ForOpenAI()}, {ForGemini()}} {
		tools, err := all.LLMToolsFor(passes...)
		if err != nil || len(tools) != 1 || tools[0].Function.Name != "srv__shown" {
			t.Errorf("LLMToolsFor(%d passes) = %v, %v; want srv__shown alone", len(passes), toolNamesOf(tools), err)
		}
	}
}
