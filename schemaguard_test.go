package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// cycleSchemas are input schemas whose references cycle without leaving
// the value, by tool name: jsonschema-go follows each until the stack
// overflows. cycleArgs are arguments that reach the cycle.
var (
	cycleSchemas = map[string]string{
		"root": `{"$ref":"#","type":"object","description":"cycle at the root"}`,
		"self": `{"type":"object","properties":{"a":{"$ref":"#/properties/a"}}}`,
		"defs": `{"type":"object","$defs":{"x":{"$ref":"#/$defs/y"},"y":{"$ref":"#/$defs/x"}},"$ref":"#/$defs/x"}`,
	}
	cycleArgs = map[string]any{"a": 1}
)

// treeSchema is recursive through properties, as a tree is: it validates.
const treeSchema = `{"type":"object","$defs":{"node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"properties":{"root":{"$ref":"#/$defs/node"}}}`

// rawSchema decodes the JSON object s.
func rawSchema(s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		panic(err)
	}
	return m
}

// cycleServer is a go-sdk server with a tool for each of cycleSchemas, a
// "plain" and a "tree" tool (their input schemas checkable), "out", whose
// output schema cycles, and "ask", which asks for input with a requested
// schema that cycles (an input-required result in the modern era, a live
// elicitation/create in the legacy one).
func cycleServer(legacy bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "cycles", Version: "1"}, nil)
	echo := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + req.Params.Name + " with " + string(req.Params.Arguments)}}}, nil
	}
	for name, schema := range cycleSchemas {
		s.AddTool(&mcp.Tool{Name: name, Description: "echo with a reference cycle (" + name + ")", InputSchema: rawSchema(schema)}, echo)
	}
	s.AddTool(&mcp.Tool{Name: "plain", Description: "plain echo", InputSchema: rawSchema(`{"type":"object","properties":{"a":{"type":"integer"}}}`)}, echo)
	s.AddTool(&mcp.Tool{Name: "tree", Description: "tree echo", InputSchema: rawSchema(treeSchema)}, echo)
	s.AddTool(&mcp.Tool{Name: "out", Description: "structured output", InputSchema: rawSchema(`{"type":"object"}`), OutputSchema: rawSchema(cycleSchemas["root"])},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"n": 1}, Content: []mcp.Content{&mcp.TextContent{Text: `{"n":1}`}}}, nil
		})
	asked := rawSchema(cycleSchemas["root"])
	s.AddTool(&mcp.Tool{Name: "ask", Description: "asks", InputSchema: rawSchema(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if !legacy {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"k": &mcp.ElicitParams{Mode: "form", Message: "?", RequestedSchema: asked}}, RequestState: "s"}, nil
			}
			if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "?", RequestedSchema: asked}); err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicitation failed: " + err.Error()}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil
		})
	return s
}

// tenant is a Middleware that rewrites every call's arguments, as an app
// that injects a tenant id does.
func tenant(next CallHandler) CallHandler {
	return func(ctx context.Context, req *CallRequest) (*Result, error) {
		req.Args["tenant"] = "t1"
		return next(ctx, req)
	}
}

// cycleAdapter is an Adapter over cycleServer in mode with the tenant
// middleware, logging to log at debug level.
func cycleAdapter(t *testing.T, mode Mode, log *syncBuffer) (*Adapter, Toolset) {
	t.Helper()
	a := newAdapter(t, Config{
		Servers:    map[string]Server{"g": inMemoryServer(cycleServer(mode == ModeLegacy), mode)},
		Middleware: []Middleware{tenant},
		Logger:     slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ElicitationHandler: func(context.Context, ElicitationRequest) (Answer, error) {
			return Answer{Action: Accept, Content: map[string]any{"a": 1}}, nil
		},
	})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	return a, ts
}

// wantUnsafe checks that err is the refusal of tool's input schema.
func wantUnsafe(t *testing.T, how, tool string, err error) {
	t.Helper()
	var se *ServerError
	if !errors.Is(err, ErrUnsafeSchema) || !errors.As(err, &se) || !strings.Contains(err.Error(), tool) || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("%s %s: error %v, want a *ServerError wrapping ErrUnsafeSchema that names the tool and the cycle", how, tool, err)
	} else if n := strings.Count(err.Error(), "mcpadapter:"); n != 1 {
		t.Errorf("%s %s: error %q says \"mcpadapter:\" %d times, want once", how, tool, err, n)
	}
}

// wantPlainWorks checks that the plain tool of ts runs, with the rewritten
// arguments.
func wantPlainWorks(t *testing.T, ts Toolset) {
	t.Helper()
	res, err := ts.Lookup("g__plain").Invoke(t.Context(), cycleArgs)
	if err != nil || res.IsError || !strings.Contains(res.Text(), `"tenant":"t1"`) {
		t.Errorf("plain tool after a refused one: %v, %v; want it run with the tenant", res, err)
	}
}

// TestSchemaGuardInputCycles: a server lists tools whose input schemas
// have each of the three reference cycles; with a Middleware that rewrites
// the arguments, a call of each through Invoke, Call, HandleToolCalls and
// tool search fails with ErrUnsafeSchema naming the tool, the process
// lives, and the server's other tools work: one with a plain schema, and
// one recursive through properties (a tree), whose rewritten arguments are
// still validated. Without a rewrite nothing needs the schema: the tools
// run. It runs in a child process, so that a stack overflow fails it.
func TestSchemaGuardInputCycles(t *testing.T) {
	if !testserver.InChild(t) {
		return
	}
	for _, mode := range []Mode{ModeModern, ModeLegacy} {
		_, ts := cycleAdapter(t, mode, &syncBuffer{})
		for name := range cycleSchemas {
			tool := ts.Lookup("g__" + name)
			_, err := tool.Invoke(t.Context(), cycleArgs)
			wantUnsafe(t, "Invoke", tool.Name(), err)
			wantPlainWorks(t, ts)

			_, err = tool.Call(t.Context(), `{"a":1}`)
			wantUnsafe(t, "Call", tool.Name(), err)

			calls := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
				{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "g__plain", Arguments: `{"a":1}`}},
				{ID: "c2", Type: "function", FunctionCall: &llms.FunctionCall{Name: tool.Name(), Arguments: `{"a":1}`}},
			}}
			msgs, err := ts.HandleToolCalls(t.Context(), calls)
			wantUnsafe(t, "HandleToolCalls", tool.Name(), err)
			if len(msgs) != 2 {
				t.Errorf("HandleToolCalls returned %d messages, want the plain call's 2", len(msgs))
			}

			search, err := NewToolSearch(ts, nil)
			if err != nil {
				t.Fatal(err)
			}
			searched := &llms.ContentChoice{ToolCalls: []llms.ToolCall{{ID: "s1", Type: "function",
				FunctionCall: &llms.FunctionCall{Name: search.Name(), Arguments: fmt.Sprintf(`{"query":"echo with a reference cycle %s"}`, name)}}}}
			history, err := search.HandleToolCalls(t.Context(), nil, searched)
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			if !strings.Contains(fmt.Sprint(history), tool.Name()) {
				t.Errorf("tool search for %s found %v", tool.Name(), history)
			}
			_, err = search.HandleToolCalls(t.Context(), history, &llms.ContentChoice{ToolCalls: calls.ToolCalls[1:]})
			wantUnsafe(t, "ToolSearch.HandleToolCalls", tool.Name(), err)
		}
		res, err := ts.Lookup("g__tree").Invoke(t.Context(), map[string]any{"root": map[string]any{"children": []any{map[string]any{}}}})
		if err != nil || res.IsError {
			t.Errorf("tree tool: %v, %v; want it run", res, err)
		}
		res, err = ts.Lookup("g__tree").Invoke(t.Context(), map[string]any{"root": map[string]any{"children": []any{5}}})
		if err != nil || !res.IsError || !strings.Contains(res.Text(), "do not match its input schema") {
			t.Errorf("tree tool with a bad child: %v, %v; want the schema's error", res, err)
		}
	}

	// Without a rewriting middleware, nothing checks the schema.
	a := newAdapter(t, Config{Servers: map[string]Server{"g": inMemoryServer(cycleServer(false), ModeModern)}})
	for name := range cycleSchemas {
		if res, err := lookupTool(t, a, "g__"+name).Invoke(t.Context(), cycleArgs); err != nil || res.IsError {
			t.Errorf("g__%s without middleware: %v, %v; want it run", name, res, err)
		}
	}
}

// TestSchemaGuardOutputCycle: a tool whose output schema cycles is called
// with its results unvalidated (a debug log names the tool and why), the
// process lives, and the other tools work.
func TestSchemaGuardOutputCycle(t *testing.T) {
	if !testserver.InChild(t) {
		return
	}
	var log syncBuffer
	_, ts := cycleAdapter(t, ModeModern, &log)
	res, err := ts.Lookup("g__out").Invoke(t.Context(), nil)
	if err != nil || res.IsError {
		t.Fatalf("out: %v, %v; want its result", res, err)
	}
	if got := log.String(); !strings.Contains(got, "not validating") || !strings.Contains(got, "tool=out") || !strings.Contains(got, "cycle") {
		t.Errorf("log = %s, want a line naming the tool and the cycle", got)
	}
	wantPlainWorks(t, ts)
}

// TestSchemaGuardElicitationCycle: a request whose requested schema
// cycles fails the call, naming the request, in both eras; the process
// lives and the other tools work.
func TestSchemaGuardElicitationCycle(t *testing.T) {
	if !testserver.InChild(t) {
		return
	}
	_, ts := cycleAdapter(t, ModeModern, &syncBuffer{})
	_, err := ts.Lookup("g__ask").Invoke(t.Context(), nil)
	if !errors.Is(err, ErrUnsupportedInputRequest) || !strings.Contains(err.Error(), `"k"`) || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("modern ask: %v, want ErrUnsupportedInputRequest naming request \"k\" and the cycle", err)
	}
	wantPlainWorks(t, ts)

	var log syncBuffer
	_, ts = cycleAdapter(t, ModeLegacy, &log)
	res, err := ts.Lookup("g__ask").Invoke(t.Context(), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "elicitation failed") {
		t.Errorf("legacy ask: %v, %v; want the server told the answer does not fit", res, err)
	}
	if !strings.Contains(log.String(), "does not fit") {
		t.Errorf("log = %s, want the refused answer", log.String())
	}
	wantPlainWorks(t, ts)
}
