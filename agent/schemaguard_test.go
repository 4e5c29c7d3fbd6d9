package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/chains"
)

// cycleTools are input schemas whose references cycle without leaving the
// value, by tool name.
var cycleTools = map[string]string{
	"root": `{"$ref":"#","type":"object"}`,
	"self": `{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`,
	"defs": `{"type":"object","$defs":{"x":{"$ref":"#/$defs/y"},"y":{"$ref":"#/$defs/x"}},"$ref":"#/$defs/x"}`,
}

// cycleToolset lists, in memory, a go-sdk server with a tool for each of
// cycleTools and a "plain" one, under a Middleware that rewrites every
// call's arguments.
func cycleToolset(t *testing.T) mcpadapter.Toolset {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "cycles", Version: "1"}, nil)
	echo := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran with " + string(req.Params.Arguments)}}}, nil
	}
	schemas := map[string]string{"plain": `{"type":"object","properties":{"a":{"type":"integer"}}}`}
	for name, schema := range cycleTools {
		schemas[name] = schema
	}
	for name, schema := range schemas {
		var m map[string]any
		if err := json.Unmarshal([]byte(schema), &m); err != nil {
			t.Fatal(err)
		}
		s.AddTool(&mcp.Tool{Name: name, Description: "echo with a reference cycle " + name, InputSchema: m}, echo)
	}
	transport := func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := s.Connect(context.WithoutCancel(ctx), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	tenant := func(next mcpadapter.CallHandler) mcpadapter.CallHandler {
		return func(ctx context.Context, req *mcpadapter.CallRequest) (*mcpadapter.Result, error) {
			req.Args["tenant"] = "t1"
			return next(ctx, req)
		}
	}
	return listTools(t, newAdapter(t, mcpadapter.Config{
		Servers:    map[string]mcpadapter.Server{"g": {Transport: transport}},
		Middleware: []mcpadapter.Middleware{tenant},
	}))
}

// TestAgentSchemaCycle: an agent run (Agent and Executor, with and without
// tool search) whose model calls a tool with a reference cycle in its
// input schema, under a rewriting Middleware, fails with ErrUnsafeSchema
// naming the tool; the process lives, and a run calling the server's plain
// tool succeeds. It runs in a child process, so that a stack overflow
// fails it.
func TestAgentSchemaCycle(t *testing.T) {
	if !testserver.InChild(t) {
		return
	}
	ts := cycleToolset(t)
	run := func(model *mcpadaptertest.Model, opts ...Option) (map[string]any, error) {
		ag, err := New(finalModel{Model: model}, ts, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return chains.Call(t.Context(), NewExecutor(ag), map[string]any{"input": "go"})
	}
	for name := range cycleTools {
		tool := "g__" + name
		_, err := run(mcpadaptertest.NewModel(mcpadaptertest.ToolCalls(
			mcpadaptertest.ToolCall("c1", "g__plain", `{"a":1}`),
			mcpadaptertest.ToolCall("c2", tool, `{"a":1}`),
		)))
		if !errors.Is(err, mcpadapter.ErrUnsafeSchema) || !strings.Contains(err.Error(), tool) {
			t.Errorf("run calling %s: %v, want ErrUnsafeSchema naming the tool", tool, err)
		}
		_, err = run(mcpadaptertest.NewModel(
			mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("s1", "search_tools", `{"query":"echo with a reference cycle `+name+`"}`)),
			mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("c2", tool, `{"a":1}`)),
		), WithToolSearch(nil))
		if !errors.Is(err, mcpadapter.ErrUnsafeSchema) || !strings.Contains(err.Error(), tool) {
			t.Errorf("run with tool search calling %s: %v, want ErrUnsafeSchema naming the tool", tool, err)
		}
	}
	out, err := run(mcpadaptertest.NewModel(mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("c1", "g__plain", `{"a":1}`))))
	if err != nil || !strings.Contains(out["output"].(string), `"tenant":"t1"`) {
		t.Errorf("run calling g__plain: %v, %v; want its result with the tenant", out, err)
	}
}
