package everything

import (
	"os/exec"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBuild builds the server, checks that the path is stable, and talks to
// it over stdio with a plain go-sdk client.
func TestBuild(t *testing.T) {
	path := Build(t)
	if again := Build(t); again != path {
		t.Fatalf("Build() = %q, then %q; want the same path", path, again)
	}
	// A new build (another test process) reuses the published binary.
	if p, err := build(); err != nil || p != path {
		t.Fatalf("build() = %q, %v; want %q", p, err, path)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "everything-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(path)}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	for _, want := range []string{
		"test_simple_text",
		"test_input_required_result_elicitation",
		"test_input_required_result_multi_round",
		"test_input_required_result_tampered_state",
		"test_input_required_result_sampling",
		"test_input_required_result_list_roots",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("tools = %v, want %s among them", names, want)
		}
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_simple_text"})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("CallTool(test_simple_text) = %+v, want content", res)
	}
}

func TestBinaryName(t *testing.T) {
	name, cacheable, err := binaryName("go")
	if err != nil {
		t.Fatal(err)
	}
	if !cacheable {
		t.Errorf("binaryName() cacheable = false, want true for module-cache versions")
	}
	if got, want := name[:len("everything-server-v1.8.0-")], "everything-server-v1.8.0-"; got != want {
		t.Errorf("binaryName() = %q, want the prefix %q", name, want)
	}
}
