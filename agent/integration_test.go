package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
)

// npmToolset starts the npm server pkg with args after its script, as
// server "s", and returns its tools.
func npmToolset(t *testing.T, pkg extserver.NPMServer, args ...string) mcpadapter.Toolset {
	t.Helper()
	node, script := extserver.NPM(t, pkg)
	a := newAdapter(t, mcpadapter.Config{Servers: map[string]mcpadapter.Server{"s": {Command: node, Args: append([]string{script}, args...)}}})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ts, err := a.ListTools(ctx)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	return ts
}

// A strictNullCall is a call with the nulls a strict-mode model sends for
// the optional properties it leaves out, and how its result must start.
type strictNullCall struct {
	tool, args, want string
}

// checkStrictNulls runs each call through HandleToolCalls and through the
// tool-calling agent (offering the tool in strict mode, whose schema makes
// the model send those nulls), and checks that the server answered it.
func checkStrictNulls(t *testing.T, ts mcpadapter.Toolset, calls []strictNullCall) {
	for _, c := range calls {
		tool := ts.Lookup(c.tool)
		if tool == nil {
			t.Fatalf("no tool %s", c.tool)
		}
		strict, err := tool.LLMToolFor(mcpadapter.ForOpenAIStrict())
		if err != nil {
			t.Fatalf("%s in strict mode: %v", c.tool, err)
		}
		params := strict.Function.Parameters.(map[string]any)
		if required, _ := params["required"].([]any); len(required) != len(params["properties"].(map[string]any)) {
			t.Fatalf("%s: strict mode does not require every property: %v", c.tool, params)
		}

		msgs, err := ts.HandleToolCalls(t.Context(), &llms.ContentChoice{ToolCalls: []llms.ToolCall{mcpadaptertest.ToolCall("c1", c.tool, c.args)}})
		if err != nil {
			t.Fatalf("HandleToolCalls(%s %s): %v", c.tool, c.args, err)
		}
		if got := msgs[1].Parts[0].(llms.ToolCallResponse).Content; !strings.HasPrefix(got, c.want) {
			t.Errorf("HandleToolCalls(%s %s) = %q, want %q…", c.tool, c.args, got, c.want)
		}

		model := finalModel{Model: mcpadaptertest.NewModel(mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("c1", c.tool, c.args)))}
		ag, err := New(model, mcpadapter.Toolset{tool}, WithSchemaPasses(mcpadapter.ForOpenAIStrict()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := chains.Run(t.Context(), NewExecutor(ag), "q")
		if want := "The result: " + c.want; err != nil || !strings.HasPrefix(out, want) {
			t.Errorf("agent run of %s %s = %q, %v; want %q…", c.tool, c.args, out, err, want)
		}
	}
}

// TestIntegrationStrictNullsFilesystemNPM: server-filesystem's
// read_text_file (a TypeScript-SDK server, which refuses null for its
// optional head and tail) reads the file when a strict-mode model sends
// head and tail as null.
func TestIntegrationStrictNullsFilesystemNPM(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("one\ntwo\nthree"), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := npmToolset(t, extserver.ServerFilesystem, dir)
	checkStrictNulls(t, ts, []strictNullCall{
		{"s__read_text_file", `{"path":"` + filepath.ToSlash(file) + `","head":null,"tail":null}`, "one\ntwo\nthree"},
		{"s__list_directory_with_sizes", `{"path":"` + filepath.ToSlash(dir) + `","sortBy":null}`, "[FILE] notes.txt"},
		{"s__directory_tree", `{"path":"` + filepath.ToSlash(dir) + `","excludePatterns":null}`, "[\n  {\n    \"name\": \"notes.txt\""},
		// The same edit twice (once per path): a no-op, so that both apply.
		{"s__edit_file", `{"path":"` + filepath.ToSlash(file) + `","edits":[{"oldText":"two","newText":"two"}],"dryRun":null}`, "```diff"},
	})
}

// TestIntegrationStrictNullsEverythingNPM: server-everything's tools with
// optional arguments answer when those arrive as null.
func TestIntegrationStrictNullsEverythingNPM(t *testing.T) {
	ts := npmToolset(t, extserver.ServerEverything, "stdio")
	checkStrictNulls(t, ts, []strictNullCall{
		{"s__get-annotated-message", `{"messageType":"error","includeImage":null}`, "Error: Operation failed"},
		{"s__get-resource-links", `{"count":null}`, "Here are 3 resource links"},                                                                 // the default count, not 0
		{"s__trigger-long-running-operation", `{"duration":1,"steps":null}`, "Long running operation completed. Duration: 1 seconds, Steps: 5."}, // the default steps,
	})
}
