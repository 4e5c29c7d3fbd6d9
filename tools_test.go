package mcpadapter

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/callinput"
	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/mcpadapter/mcpadapter/internal/schemapass"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/callbacks"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/tools"
)

// serverEras are the protocol eras of the in-memory test servers: every go-sdk
// server speaks both, a Legacy one only the old.
var serverEras = []struct {
	name   string
	legacy bool
}{
	{"modern", false},
	{"legacy", true},
}

// eraServer returns a test server with every tool set, legacy-only when
// legacy is set.
func eraServer(legacy bool) *testserver.Server {
	return testserver.Full(testserver.Options{Legacy: legacy})
}

// discover lists the tools of s, configured as server "srv" in ModeAuto on
// top of cfg, and checks that the negotiated era is the server's.
func discover(t *testing.T, s *testserver.Server, cfg Config) (*Adapter, Toolset) {
	t.Helper()
	cfg.Servers = map[string]Server{"srv": memServer(s, ModeAuto)}
	a := newAdapter(t, cfg)
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	info, err := a.ServerInfo(t.Context(), "srv")
	if err != nil {
		t.Fatalf("ServerInfo: %v", err)
	}
	if want := map[bool]Era{false: EraModern, true: EraLegacy}[s.Opts().Legacy]; info.Era != want {
		t.Fatalf("negotiated era %s, want %s", info.Era, want)
	}
	return a, ts
}

// lookup returns the tool named name, failing the test when it is missing.
func lookup(t *testing.T, ts Toolset, name string) *Tool {
	t.Helper()
	tool := ts.Lookup(name)
	if tool == nil {
		t.Fatalf("no tool %q in %v", name, toolNames(ts))
	}
	return tool
}

// receive waits for a value on ch. The timer only turns a hang into a
// failure; it orders nothing.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// outcome is what a call returned.
type outcome struct {
	res *Result
	err error
}

// async runs call in a goroutine; the channel receives its outcome.
func async(call func() (*Result, error)) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		res, err := call()
		ch <- outcome{res, err}
	}()
	return ch
}

// asyncInvoke runs tool.Invoke(ctx, args) in a goroutine.
func asyncInvoke(ctx context.Context, tool *Tool, args map[string]any) <-chan outcome {
	return async(func() (*Result, error) { return tool.Invoke(ctx, args) })
}

// wantServerError checks that err is a *ServerError naming server "srv".
func wantServerError(t *testing.T, err error) *ServerError {
	t.Helper()
	var se *ServerError
	if !errors.As(err, &se) || se.Server != "srv" {
		t.Fatalf("error = %v (%T), want a *ServerError naming \"srv\"", err, err)
	}
	return se
}

// waitCancelled waits for the call behind done to fail with a *ServerError
// wrapping want, and for the slow tool of s to see its context cancelled.
func waitCancelled(t *testing.T, s *testserver.Server, done <-chan outcome, want error) {
	t.Helper()
	o := receive(t, done, "the call to end")
	if o.res != nil || !errors.Is(o.err, want) {
		t.Fatalf("call = %+v, %v; want no result and %v", o.res, o.err, want)
	}
	wantServerError(t, o.err)
	receive(t, s.Cancelled(), "the server to see the cancellation")
}

// catalogEntry is the golden form of one converted tool.
type catalogEntry struct {
	Name             string         `json:"name"`
	MCPName          string         `json:"mcpName"`
	Server           string         `json:"server"`
	Description      string         `json:"description"`
	Parameters       map[string]any `json:"parameters"`
	LLMTool          llms.Tool      `json:"llmTool"`
	Metadata         Metadata       `json:"metadata"`
	MayBeDestructive bool           `json:"mayBeDestructive"`
}

// TestCatalogGolden converts the catalog of a full test server in both eras
// and compares it with testdata/tools/catalog.<era>.json: names,
// descriptions with their argument hints, normalized parameters, the
// llms.Tool, metadata and MayBeDestructive.
func TestCatalogGolden(t *testing.T) {
	for _, era := range serverEras {
		t.Run(era.name, func(t *testing.T) {
			_, ts := discover(t, testserver.Full(testserver.Options{Legacy: era.legacy, Title: "Test Server"}), Config{})
			entries := make([]catalogEntry, 0, len(ts))
			for _, tool := range ts {
				entries = append(entries, catalogEntry{
					Name: tool.Name(), MCPName: tool.MCPName(), Server: tool.Server(),
					Description: tool.Description(), Parameters: tool.Parameters(), LLMTool: tool.LLMTool(),
					Metadata: tool.Metadata(), MayBeDestructive: tool.Metadata().Annotations().MayBeDestructive(),
				})
			}
			slices.SortFunc(entries, func(a, b catalogEntry) int { return strings.Compare(a.Name, b.Name) })
			b, err := json.MarshalIndent(entries, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "tools/catalog."+era.name+".json", append(b, '\n'))
		})
	}
}

// TestNormalizeSchema pins Parameters: "properties" is added where missing
// and nothing else changes.
func TestNormalizeSchema(t *testing.T) {
	refs := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"$defs":                map[string]any{"unit": map[string]any{"type": "string", "enum": []any{"c", "f", nil}}},
		"properties":           map[string]any{"unit": map[string]any{"$ref": "#/$defs/unit"}, "when": map[string]any{"type": []any{"string", "null"}, "format": "date-time"}},
		"additionalProperties": false,
		"required":             []any{"unit"},
	}
	tests := []struct {
		name   string
		schema any
		want   map[string]any
	}{
		{"no properties", map[string]any{"type": "object"}, map[string]any{"type": "object", "properties": map[string]any{}}},
		{"no type", map[string]any{"properties": map[string]any{"a": map[string]any{}}},
			map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{}}}},
		{"nothing", map[string]any{}, map[string]any{"type": "object", "properties": map[string]any{}}},
		{"null properties", map[string]any{"type": "object", "properties": nil}, map[string]any{"type": "object", "properties": map[string]any{}}},
		{"absent", nil, map[string]any{"type": "object", "properties": map[string]any{}}},
		{"not an object", json.RawMessage(`[1]`), map[string]any{"type": "object", "properties": map[string]any{}}},
		{"raw JSON", json.RawMessage(`{"type":"object","$ref":"#/$defs/x","$defs":{"x":{}}}`),
			map[string]any{"type": "object", "$ref": "#/$defs/x", "$defs": map[string]any{"x": map[string]any{}}, "properties": map[string]any{}}},
		{"kept as is", refs, jsonvalue.Copy(refs)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := schemapass.Normalize(tt.schema); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("schemapass.Normalize() = %#v\nwant %#v", got, tt.want)
			}
			// schemapass.Shared: the same, and the input itself when it needs
			// no addition (as refs does).
			got := schemapass.Shared(tt.schema)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("schemapass.Shared() = %#v\nwant %#v", got, tt.want)
			}
			if m, ok := tt.schema.(map[string]any); ok && sameMap(got, m) != (tt.name == "kept as is") {
				t.Errorf("schemapass.Shared() is its input: %v, want %v", sameMap(got, m), tt.name == "kept as is")
			}
		})
	}
	t.Run("input not modified", func(t *testing.T) {
		for _, f := range []func(any) map[string]any{schemapass.Normalize, schemapass.Shared} {
			in := map[string]any{"type": "object"}
			f(in)
			if _, ok := in["properties"]; ok {
				t.Error("schemapass.Normalize added properties to its input")
			}
		}
	})
}

// sameMap reports whether a and b are the same map, not copies.
func sameMap(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestToolSchemaShared: a listed tool whose schema needs no addition holds
// it once, in its descriptor (which the SDK's cache shares), not again as
// a copy for Parameters and calls; Parameters still hands out a copy.
func TestToolSchemaShared(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(testserver.Lean(testserver.Options{}), ModeAuto)}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tool := ts.Lookup("s__echo")
	schema := tool.Descriptor().InputSchema
	if !sameMap(tool.params, schema) {
		t.Error("the tool holds a copy of its descriptor's schema")
	}
	if params := tool.Parameters(); sameMap(params, schema) || !reflect.DeepEqual(params, schema) {
		t.Errorf("Parameters() = %v, want a copy of the descriptor's schema %v", params, schema)
	}
}

// TestParameters checks Parameters and LLMTool on tools discovered from a
// server: the server's exact schema ($schema, $defs, $ref untouched),
// "properties" added where the server left it out, and a fresh map on every
// call.
func TestParameters(t *testing.T) {
	refs := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"$defs":{"unit":{"type":"string","enum":["c","f"]}},"properties":{"unit":{"$ref":"#/$defs/unit"},` +
		`"at":{"type":["string","null"],"format":"date-time"}},"additionalProperties":false}`
	s := testserver.New(testserver.Options{})
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	s.Server.AddTool(&mcp.Tool{Name: "refs", Description: "Uses refs.", InputSchema: json.RawMessage(refs)}, noop)
	s.Server.AddTool(&mcp.Tool{Name: "bare", Description: "No properties.", InputSchema: json.RawMessage(`{"type":"object"}`)}, noop)
	_, ts := discover(t, s, Config{})

	var want map[string]any
	if err := json.Unmarshal([]byte(refs), &want); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool string
		want map[string]any
	}{
		{"srv__refs", want},
		{"srv__bare", map[string]any{"type": "object", "properties": map[string]any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			tool := lookup(t, ts, tt.tool)
			got := tool.Parameters()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parameters() = %#v\nwant %#v", got, tt.want)
			}
			if lt := tool.LLMTool(); lt.Type != "function" || lt.Function == nil || lt.Function.Name != tt.tool ||
				lt.Function.Strict || !reflect.DeepEqual(lt.Function.Parameters, tt.want) {
				t.Errorf("LLMTool() = %+v, want a function named %q with the schema", lt, tt.tool)
			}
			// Fresh maps: changing one result changes neither the tool nor
			// the next result.
			got["type"] = "changed"
			got["properties"].(map[string]any)["injected"] = true
			if again := tool.Parameters(); !reflect.DeepEqual(again, tt.want) {
				t.Errorf("Parameters() after the caller changed an earlier result = %#v", again)
			}
			if d := tool.Descriptor().InputSchema; d["type"] != "object" {
				t.Errorf("Descriptor().InputSchema changed: %#v", d)
			}
		})
	}
}

// TestSummary pins the text that says what a tool does: description,
// title, annotations' title.
func TestSummary(t *testing.T) {
	for _, tt := range []struct {
		d    *ToolDescriptor
		want string
	}{
		{&ToolDescriptor{Description: " Desc. ", Title: "T"}, "Desc."},
		{&ToolDescriptor{Title: "Title"}, "Title"},
		{&ToolDescriptor{Annotations: &ToolAnnotations{Title: "Ann"}}, "Ann"},
		{&ToolDescriptor{}, ""},
	} {
		if got := summary(tt.d); got != tt.want {
			t.Errorf("summary(%+v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestMetadata checks the mcp metadata namespace: annotations, _meta and
// server identity when provided, nil nested fields when not, and accessors
// that never panic.
func TestMetadata(t *testing.T) {
	_, ts := discover(t, eraServer(false), Config{})
	weather := lookup(t, ts, "srv__get_weather").Metadata()
	if ann := weather.Annotations(); ann == nil || ann.ReadOnlyHint == nil || !*ann.ReadOnlyHint || ann.Title != "Weather" ||
		ann.DestructiveHint == nil || *ann.DestructiveHint {
		t.Errorf("get_weather Annotations() = %+v, want the server's", ann)
	}
	if meta := weather.Meta(); !reflect.DeepEqual(meta, map[string]any{"acme/owner": "team-weather"}) {
		t.Errorf("get_weather Meta() = %v", meta)
	}
	if srv := weather.Server(); srv == nil || *srv != (ServerMetadata{Name: "test-server", Version: "1.0.0"}) {
		t.Errorf("get_weather Server() = %+v", srv)
	}
	if echo := lookup(t, ts, "srv__echo").Metadata(); echo.MCP == nil || echo.MCP.Tool != nil || echo.Annotations() != nil || echo.Meta() != nil {
		t.Errorf("echo Metadata() = %+v, want no tool metadata", echo.MCP)
	}

	// A server that does not say who it is.
	anon := mcp.NewServer(&mcp.Implementation{}, nil)
	anon.AddTool(&mcp.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	a := newAdapter(t, Config{Servers: map[string]Server{"anon": {Transport: func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		_, err := anon.Connect(context.WithoutCancel(ctx), st, nil)
		return ct, err
	}}}})
	anonTools, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if m := lookup(t, anonTools, "anon__x").Metadata(); m.MCP == nil || m.MCP.Server != nil || m.Server() != nil || m.MCP.Tool != nil {
		t.Errorf("anonymous server: Metadata().MCP = %+v, want nil Server and Tool", m.MCP)
	}

	// Accessors on partial metadata return nil.
	for _, m := range []Metadata{{}, {MCP: &MCPMetadata{}}, {MCP: &MCPMetadata{Tool: &ToolMetadata{}}}} {
		if m.Annotations() != nil || m.Meta() != nil || m.Server() != nil {
			t.Errorf("accessors of %+v are not nil", m)
		}
	}
}

// TestAnnotationQuestions: ReadOnly and MayBeDestructive of real
// descriptors, by the MCP specification's defaults; a hint the server left
// out is nil.
func TestAnnotationQuestions(t *testing.T) {
	tru := true
	s := testserver.New(testserver.Options{}).AddFeatures().AddWeather()
	noop := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	s.Server.AddTool(&mcp.Tool{Name: "read_only_destructive", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &tru}}, noop)
	s.Server.AddTool(&mcp.Tool{Name: "unset_hint", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{Title: "no hints"}}, noop)
	_, ts := discover(t, s, Config{})
	tests := []struct {
		tool                       string
		readOnly, mayBeDestructive bool
	}{
		{"srv__destroy", false, true},               // destructiveHint true
		{"srv__get_weather", true, false},           // read-only, destructiveHint false
		{"srv__echo", false, true},                  // no annotations
		{"srv__unset_hint", false, true},            // annotations without the hints
		{"srv__read_only_destructive", true, false}, // destructiveHint is meaningless on a read-only tool
	}
	for _, tt := range tests {
		ann := lookup(t, ts, tt.tool).Metadata().Annotations()
		if got := ann.ReadOnly(); got != tt.readOnly {
			t.Errorf("%s: ReadOnly() = %v, want %v", tt.tool, got, tt.readOnly)
		}
		if got := ann.MayBeDestructive(); got != tt.mayBeDestructive {
			t.Errorf("%s: MayBeDestructive() = %v, want %v", tt.tool, got, tt.mayBeDestructive)
		}
	}
	// As sent: go-sdk's server writes readOnlyHint and idempotentHint
	// always (false here), and leaves the pointer hints out: nil, not false.
	if ann := lookup(t, ts, "srv__unset_hint").Descriptor().Annotations; ann == nil || ann.DestructiveHint != nil || ann.OpenWorldHint != nil ||
		ann.ReadOnlyHint == nil || *ann.ReadOnlyHint || ann.IdempotentHint == nil || *ann.IdempotentHint {
		t.Errorf("unset_hint annotations = %+v, want readOnlyHint and idempotentHint false, the others nil", ann)
	}
	if (&Tool{}).Metadata().Annotations().MayBeDestructive() != true {
		t.Error("a zero tool's annotations: MayBeDestructive() = false")
	}
}

// TestZeroTool checks that a Tool not made by an Adapter fails its calls
// instead of panicking.
func TestZeroTool(t *testing.T) {
	var tool Tool
	if tool.MCPName() != "" || tool.Name() != "" || tool.Metadata().MCP != nil {
		t.Error("accessors of a zero Tool are not zero")
	}
	if p := tool.Parameters(); !reflect.DeepEqual(p, map[string]any{"type": "object", "properties": map[string]any{}}) {
		t.Errorf("zero Tool Parameters() = %v", p)
	}
	if _, err := tool.Invoke(t.Context(), nil); !errors.Is(err, errNoAdapter) {
		t.Errorf("zero Tool Invoke() error = %v, want errNoAdapter", err)
	}
	if _, err := tool.Call(t.Context(), "{}"); !errors.Is(err, errNoAdapter) {
		t.Errorf("zero Tool Call() error = %v, want errNoAdapter", err)
	}
}

// addFaultTools adds tools whose results the full server lacks: a JSON-RPC
// invalid-params error, and an isError result with structured content.
func addFaultTools(s *testserver.Server) {
	s.Server.AddTool(&mcp.Tool{Name: "strict", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `"city" must be a real city`}
		})
	s.Server.AddTool(&mcp.Tool{Name: "structured_fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: "quota exceeded"}},
				StructuredContent: map[string]any{"code": 429, "retryAfter": 30},
				IsError:           true,
			}, nil
		})
}

// TestInvokeResults calls tools of every result kind in both eras: success
// with and without structured content, isError (with and without structured
// content), JSON-RPC invalid params, other JSON-RPC errors, and a tool the
// server no longer has.
func TestInvokeResults(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		want     *Result // nil when an error is expected
		wantCode int64   // the *jsonrpc.Error code behind the *ServerError
	}{
		{"structured content", "get_weather", map[string]any{"city": "Paris"}, &Result{
			Content:  []Block{{Type: BlockText, Text: "Sunny, 21°C in Paris"}},
			Artifact: &Artifact{StructuredContent: map[string]any{"city": "Paris", "tempC": 21.0, "sky": "sunny"}},
		}, 0},
		{"no structured content", "echo", map[string]any{"text": "hi"}, &Result{Content: []Block{{Type: BlockText, Text: "hi"}}}, 0},
		{"structured only", "structured_only", nil, &Result{Content: []Block{}, Artifact: &Artifact{StructuredContent: map[string]any{"answer": 42.0}}}, 0},
		{"isError", "fail", nil, &Result{Content: []Block{{Type: BlockText, Text: "it failed"}}, IsError: true}, 0},
		{"isError with structured content", "structured_fail", nil, &Result{
			Content:  []Block{{Type: BlockText, Text: "quota exceeded"}},
			Artifact: &Artifact{StructuredContent: map[string]any{"code": 429.0, "retryAfter": 30.0}},
			IsError:  true,
		}, 0},
		{"invalid params", "strict", nil, &Result{Content: []Block{{Type: BlockText, Text: `"city" must be a real city`}}, IsError: true}, 0},
		{"other JSON-RPC error", "rpc_error", nil, nil, -32001},
	}
	for _, era := range serverEras {
		t.Run(era.name, func(t *testing.T) {
			s := eraServer(era.legacy)
			addFaultTools(s)
			_, ts := discover(t, s, Config{})
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					res, err := lookup(t, ts, "srv__"+tt.tool).Invoke(t.Context(), tt.args)
					if tt.want != nil {
						if err != nil {
							t.Fatalf("Invoke() error = %v", err)
						}
						// Modern results carry the server's identity in
						// _meta, a reserved key Result.Meta leaves out.
						if _, hasInfo := res.Meta["io.modelcontextprotocol/serverInfo"]; hasInfo {
							t.Errorf("Invoke() Meta = %v, want no reserved keys", res.Meta)
						}
						got := *res
						got.Meta = nil
						if !reflect.DeepEqual(&got, tt.want) {
							t.Errorf("Invoke() = %#v\nwant %#v", &got, tt.want)
						}
						return
					}
					if res != nil {
						t.Errorf("Invoke() result = %+v, want nil with the error", res)
					}
					wantServerError(t, err)
					var we *jsonrpc.Error
					if !errors.As(err, &we) || we.Code != tt.wantCode {
						t.Fatalf("Invoke() error = %v, want a *jsonrpc.Error with code %d", err, tt.wantCode)
					}
					if string(we.Data) != `{"retry":true}` {
						t.Errorf("jsonrpc.Error data = %s, want the server's", we.Data)
					}
				})
			}
			t.Run("tool removed from the server", func(t *testing.T) {
				tool := lookup(t, ts, "srv__echo")
				s.RemoveTool("echo")
				res, err := tool.Invoke(t.Context(), map[string]any{"text": "x"})
				if err != nil || !res.IsError || !strings.Contains(res.Text(), "echo") {
					t.Fatalf("Invoke() of a removed tool = %+v, %v; want an isError result naming it", res, err)
				}
			})
		})
	}
}

// TestContentThroughAdapter runs every content case of content_test.go
// through Tool.Invoke, in both eras, against the content goldens: the
// adapter's path (sanitizing transport, call rounds) converts exactly as
// newResult does.
func TestContentThroughAdapter(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			s := newContentServer()
			mode := map[string]Mode{"modern": ModeModern, "legacy": ModeLegacy}[era.name]
			a := newAdapter(t, Config{Servers: map[string]Server{"srv": sdkServer(s, mode)}})
			ts, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range contentCases {
				t.Run(c.name, func(t *testing.T) {
					res, err := lookup(t, ts, "srv__"+c.name).Invoke(t.Context(), nil)
					if err != nil {
						t.Fatal(err)
					}
					checkGolden(t, "content/"+c.name+"."+era.name+".json", renderResult(t, res, testCall(c.name)))
				})
			}
		})
	}
}

// rawToolsPeer is a hand-written server speaking newline-delimited JSON-RPC
// over a net.Pipe: a go-sdk server cannot send a content type the SDK does
// not know. It answers like rawReply, and lists the tools of rawResults.
func rawToolsPeer(t *testing.T) func(context.Context) (mcp.Transport, error) {
	return func(context.Context) (mcp.Transport, error) {
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer server.Close()
			lines := bufio.NewScanner(server)
			for lines.Scan() {
				var req struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				reply := rawReply(lines.Bytes())
				if json.Unmarshal(lines.Bytes(), &req) == nil && req.Method == "tools/list" {
					reply = []byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"tools":[` +
						`{"name":"mixed","inputSchema":{"type":"object"}},{"name":"plain","inputSchema":{"type":"object"}}]}}`)
				}
				if reply == nil {
					continue
				}
				if _, err := server.Write(append(reply, '\n')); err != nil {
					return
				}
			}
		}()
		t.Cleanup(func() {
			server.Close()
			<-done
		})
		return &mcp.IOTransport{Reader: client, Writer: client}, nil
	}
}

// TestUnknownContentThroughAdapter calls a tool whose result holds a content
// type the SDK does not know: the call succeeds and keeps the other blocks
// (the SDK alone fails the whole call; see TestSanitizeTransport).
func TestUnknownContentThroughAdapter(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"srv": {Transport: rawToolsPeer(t)}}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tool := lookup(t, ts, "srv__mixed")
	res, err := tool.Invoke(t.Context(), nil)
	if err != nil {
		t.Fatalf("Invoke() error = %v, want the result with a placeholder", err)
	}
	if len(res.Content) != 3 || res.Content[0].Text != "before" || res.Content[2].Type != BlockImage || len(res.Content[2].Data) == 0 {
		t.Fatalf("Invoke() content = %+v, want text, placeholder, image", res.Content)
	}
	if b := res.Content[1]; b.Type != BlockText || !strings.Contains(string(b.Raw), `"video"`) {
		t.Errorf("unknown block = %+v, want a placeholder keeping the original", b)
	}
	text, err := tool.Call(t.Context(), "{}")
	if err != nil || !strings.HasPrefix(text, "before\n") || !strings.Contains(text, "video") || !strings.Contains(text, "[image image/png") {
		t.Errorf("Call() = %q, %v; want every block as text", text, err)
	}
}

// TestCallInputShapes sends every input shape langchaingo agents and models
// produce through Tool.Call, and checks the arguments the server received.
// Input that cannot be decoded comes back as text naming the problem and the
// schema, with a nil error, and the server is not called.
func TestCallInputShapes(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		input    string
		wantArgs map[string]any // nil: invalid input, the server must not be called
		wantText string         // a substring of the output
	}{
		{"JSON object", "get_weather", `{"city":"Paris","unit":"f"}`, map[string]any{"city": "Paris", "unit": "f"}, "69°F in Paris"},
		{"JSON object with spaces", "get_weather", " \n{\"city\": \"Rome\"}\n", map[string]any{"city": "Rome"}, "in Rome"},
		{"__arg1 string", "get_weather", `{"__arg1":"{\"city\":\"Oslo\"}"}`, map[string]any{"city": "Oslo"}, "in Oslo"},
		{"__arg1 object", "get_weather", `{"__arg1":{"city":"Lima"}}`, map[string]any{"city": "Lima"}, "in Lima"},
		{"__arg1 bare string", "get_weather", `{"__arg1":"Quito"}`, map[string]any{"city": "Quito"}, "in Quito"},
		{"__arg1 number", "get_weather", `{"__arg1":5}`, map[string]any{"__arg1": 5.0}, `missing required property "city"`},
		{"fenced JSON", "get_weather", "```json\n{\"city\":\"Bern\"}\n```", map[string]any{"city": "Bern"}, "in Bern"},
		{"fence without language", "get_weather", "```\n{\"city\":\"Graz\"}\n```", map[string]any{"city": "Graz"}, "in Graz"},
		{"backticks", "get_weather", "`{\"city\":\"Kyiv\"}`", map[string]any{"city": "Kyiv"}, "in Kyiv"},
		{"bare string, one string property", "echo", "hello world", map[string]any{"text": "hello world"}, "hello world"},
		{"quoted string", "echo", `"quoted"`, map[string]any{"text": "quoted"}, "quoted"},
		{"bare string, one required string", "get_weather", "Turin", map[string]any{"city": "Turin"}, "in Turin"},
		{"numbers", "add", `{"a": 1.5, "b": 2}`, map[string]any{"a": 1.5, "b": 2.0}, "3.5"},
		{"no arguments, empty", "era", "", map[string]any{}, "20"},
		{"no arguments, words", "era", "None", map[string]any{}, "20"},
		{"isError", "fail", "{}", map[string]any{}, "it failed"},
		{"broken JSON", "get_weather", `{"city": `, nil, "Error: invalid input for tool srv__get_weather: invalid JSON"},
		{"trailing data", "get_weather", `{"city":"A"} {"city":"B"}`, nil, "data after the object"},
		{"bare string, no string property", "add", "one and two", nil, "input is not a JSON object"},
		{"empty input, required arguments", "echo", "  ", nil, "empty input"},
	}
	s := eraServer(false)
	_, ts := discover(t, s, Config{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := s.Runs(tt.tool)
			out, err := lookup(t, ts, "srv__"+tt.tool).Call(t.Context(), tt.input)
			if err != nil {
				t.Fatalf("Call(%q) error = %v, want text", tt.input, err)
			}
			if !strings.Contains(out, tt.wantText) {
				t.Errorf("Call(%q) = %q, want it to contain %q", tt.input, out, tt.wantText)
			}
			if tt.wantArgs == nil {
				if s.Runs(tt.tool) != runs {
					t.Errorf("the server ran the tool on invalid input")
				}
				if !strings.Contains(out, `"properties"`) {
					t.Errorf("Call(%q) = %q, want the schema in the correction", tt.input, out)
				}
				return
			}
			if s.Runs(tt.tool) != runs+1 {
				t.Fatalf("server ran %s %d times, want once", tt.tool, s.Runs(tt.tool)-runs)
			}
			if got := s.LastArgs(tt.tool); !reflect.DeepEqual(got, tt.wantArgs) {
				t.Errorf("server got %v, want %v", got, tt.wantArgs)
			}
		})
	}
}

// TestDecodeCallInput covers the decoding rules that need schemas the test
// server does not have.
func TestDecodeCallInput(t *testing.T) {
	str := map[string]any{"type": "string"}
	tests := []struct {
		name    string
		schema  map[string]any
		input   string
		want    map[string]any
		wantErr string
	}{
		{"a real __arg1 property is not unwrapped", map[string]any{"properties": map[string]any{"__arg1": str}},
			`{"__arg1":"x"}`, map[string]any{"__arg1": "x"}, ""},
		{"__arg1 among other keys is not unwrapped", map[string]any{"properties": map[string]any{"q": str}},
			`{"__arg1":"x","q":"y"}`, map[string]any{"__arg1": "x", "q": "y"}, ""},
		{"nested __arg1", map[string]any{"properties": map[string]any{"q": str}},
			`{"__arg1":"{\"__arg1\":\"{\\\"q\\\":\\\"deep\\\"}\"}"}`, map[string]any{"q": "deep"}, ""},
		{"fenced __arg1", map[string]any{"properties": map[string]any{"q": str}},
			`{"__arg1":"` + "```" + `json\n{\"q\":\"f\"}\n` + "```" + `"}`, map[string]any{"q": "f"}, ""},
		{"two strings, none required", map[string]any{"properties": map[string]any{"a": str, "b": str}},
			"word", nil, "input is not a JSON object"},
		{"two strings, one required", map[string]any{"properties": map[string]any{"a": str, "b": str}, "required": []any{"b"}},
			"word", map[string]any{"b": "word"}, ""},
		{"one required, not a string", map[string]any{"properties": map[string]any{"n": map[string]any{"type": "integer"}, "a": str, "b": str}, "required": []any{"n"}},
			"7", nil, "input is not a JSON object"},
		{"no properties but required", map[string]any{"properties": map[string]any{}, "required": []any{"x"}},
			"word", nil, "input is not a JSON object"},
		{"JSON null", map[string]any{"properties": map[string]any{"q": str}}, `{"q": null}`, map[string]any{"q": nil}, ""},
		{"not an object in braces", map[string]any{"properties": map[string]any{"q": str}}, `{]`, nil, "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := callinput.Decode(tt.input, tt.schema)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("callinput.Decode(%q) = %v, %v; want error %q", tt.input, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("callinput.Decode(%q) = %#v, %v; want %#v", tt.input, got, err, tt.want)
			}
		})
	}
}

// TestTimeouts checks which timeout bounds a call: Config.DefaultToolTimeout
// wins over Server.DefaultToolTimeout, longer or shorter, and a deadline on
// the caller's context shortens either. A call that times out fails with a
// *ServerError wrapping context.DeadlineExceeded, and the server's handler
// sees its context cancelled. Each case runs in a synctest bubble: the call
// times out after exactly the shorter bound, whatever the machine's load.
func TestTimeouts(t *testing.T) {
	const short, long = 100 * time.Millisecond, time.Hour
	tests := []struct {
		name        string
		config      time.Duration // Config.DefaultToolTimeout
		server      time.Duration // Server.DefaultToolTimeout
		ctx         time.Duration // deadline of the caller's context; 0: none
		wantTimeout bool
	}{
		{"config shorter than server", short, long, 0, true},
		{"config longer than server", long, time.Nanosecond, 0, false},
		{"server alone", 0, short, 0, true},
		{"ctx shortens config", long, 0, short, true},
		{"ctx shortens server", 0, long, short, true},
		{"ctx shortens both", long, long, short, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := eraServer(false)
				srv := memServer(s, ModeAuto)
				srv.DefaultToolTimeout = tt.server
				a := newAdapter(t, Config{DefaultToolTimeout: tt.config, Servers: map[string]Server{"srv": srv}})
				ts, err := a.ListTools(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now() // before any deadline is set (the bubble's clock)
				ctx := t.Context()
				if tt.ctx > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.ctx)
					defer cancel()
				}
				done := asyncInvoke(ctx, lookup(t, ts, "srv__slow"), nil)
				if !tt.wantTimeout {
					select {
					case <-s.SlowStarted():
					case o := <-done:
						t.Fatalf("Invoke() = %v, %v before the server ran it; want it to wait for the server", o.res, o.err)
					}
					s.Release()
					o := receive(t, done, "the released call")
					if o.err != nil || o.res.Text() != "released" {
						t.Fatalf("Invoke() = %+v, %v; want the released result", o.res, o.err)
					}
					return
				}
				receive(t, s.SlowStarted(), "the slow call to start")
				waitCancelled(t, s, done, context.DeadlineExceeded)
				if elapsed := time.Since(start); elapsed != short {
					t.Errorf("the call timed out after %v, want %v", elapsed, short)
				}
			})
		})
	}
}

// TestCancellation cancels calls in flight in both eras, through Invoke
// and Call: the caller gets the cancellation as an error (Call returns no
// text), and the server's handler sees it.
func TestCancellation(t *testing.T) {
	for _, era := range serverEras {
		t.Run(era.name, func(t *testing.T) {
			s := eraServer(era.legacy)
			_, ts := discover(t, s, Config{})
			slow := lookup(t, ts, "srv__slow")
			calls := []struct {
				name string
				call func(ctx context.Context) (*Result, error)
			}{
				{"Invoke", func(ctx context.Context) (*Result, error) { return slow.Invoke(ctx, nil) }},
				{"Call", func(ctx context.Context) (*Result, error) {
					out, err := slow.Call(ctx, "{}")
					if out != "" {
						return &Result{Content: []Block{{Type: BlockText, Text: out}}}, err
					}
					return nil, err
				}},
			}
			for _, c := range calls {
				t.Run(c.name, func(t *testing.T) {
					ctx, cancel := context.WithCancel(t.Context())
					done := async(func() (*Result, error) { return c.call(ctx) })
					receive(t, s.SlowStarted(), "the slow call to start")
					cancel()
					waitCancelled(t, s, done, context.Canceled)
				})
			}
		})
	}
}

// TestKilledServer ends the server's sessions in both eras, with a call in
// flight and between calls: every call fails with a *ServerError, also
// through Call (a transport failure is not text for the model).
func TestKilledServer(t *testing.T) {
	for _, era := range serverEras {
		t.Run(era.name, func(t *testing.T) {
			s := eraServer(era.legacy)
			_, ts := discover(t, s, Config{})
			done := asyncInvoke(t.Context(), lookup(t, ts, "srv__slow"), nil)
			receive(t, s.SlowStarted(), "the slow call to start")
			s.KillSessions()
			o := receive(t, done, "the call in flight")
			wantServerError(t, o.err)
			if o.res != nil {
				t.Errorf("in-flight Invoke() result = %+v, want nil", o.res)
			}

			echo := lookup(t, ts, "srv__echo")
			if res, err := echo.Invoke(t.Context(), map[string]any{"text": "x"}); res != nil || err == nil {
				t.Fatalf("Invoke() after the kill = %+v, %v; want an error", res, err)
			} else {
				wantServerError(t, err)
			}
			out, err := echo.Call(t.Context(), `{"text":"x"}`)
			if out != "" {
				t.Errorf("Call() after the kill = %q, want no text", out)
			}
			wantServerError(t, err)
		})
	}
}

// recordingHandler records the tool callbacks it receives.
type recordingHandler struct {
	callbacks.SimpleHandler
	mu     sync.Mutex
	events []string
}

func (h *recordingHandler) add(e string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func (h *recordingHandler) HandleToolStart(_ context.Context, input string) { h.add("start " + input) }
func (h *recordingHandler) HandleToolEnd(_ context.Context, output string)  { h.add("end " + output) }
func (h *recordingHandler) HandleToolError(_ context.Context, err error) {
	var ar *ApprovalRequired
	var se *ServerError
	switch {
	case errors.As(err, &ar):
		h.add("error approval")
	case errors.As(err, &se):
		h.add("error server")
	default:
		h.add("error " + err.Error())
	}
}

// take returns the events so far and forgets them.
func (h *recordingHandler) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.events
	h.events = nil
	return e
}

// TestCallbacks checks that every call reports HandleToolStart, then
// exactly one of HandleToolEnd or HandleToolError, whatever its outcome.
func TestCallbacks(t *testing.T) {
	h := &recordingHandler{}
	a, ts := discover(t, eraServer(false), Config{
		CallbacksHandler: h,
		Approval:         func(call ToolCall) bool { return call.MCPName == "destroy" },
	})
	tests := []struct {
		name string
		run  func(t *testing.T) error
		want []string
	}{
		{"Call", func(t *testing.T) error {
			_, err := lookup(t, ts, "srv__echo").Call(t.Context(), "hello")
			return err
		}, []string{"start hello", "end hello"}},
		{"Call with invalid input", func(t *testing.T) error {
			_, err := lookup(t, ts, "srv__add").Call(t.Context(), "{")
			return err
		}, []string{"start {", "end Error: invalid input for tool srv__add: invalid JSON: unexpected EOF. " +
			`Expected a JSON object matching this schema: {"properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"type":"object"}`}},
		{"Call with isError", func(t *testing.T) error {
			_, err := lookup(t, ts, "srv__fail").Call(t.Context(), "{}")
			return err
		}, []string{"start {}", "end it failed"}},
		{"Invoke", func(t *testing.T) error {
			_, err := lookup(t, ts, "srv__add").Invoke(t.Context(), map[string]any{"a": 1, "b": 2})
			return err
		}, []string{`start {"a":1,"b":2}`, "end 3"}},
		{"Invoke with a JSON-RPC error", func(t *testing.T) error {
			_, err := lookup(t, ts, "srv__rpc_error").Invoke(t.Context(), nil)
			if err == nil {
				return errors.New("no error")
			}
			return nil
		}, []string{"start {}", "error server"}},
		{"InvokeJSON", func(t *testing.T) error {
			_, err := lookup(t, ts, "srv__echo").InvokeJSON(t.Context(), `{"text":"j"}`)
			return err
		}, []string{`start {"text":"j"}`, "end j"}},
		{"approval, then Approve", func(t *testing.T) error {
			_, err := lookup(t, ts, "srv__destroy").Invoke(t.Context(), map[string]any{"target": "x"})
			var ar *ApprovalRequired
			if !errors.As(err, &ar) {
				return errors.New("no ApprovalRequired")
			}
			_, err = a.Resume(t.Context(), ar, Approved())
			return err
		}, []string{`start {"target":"x"}`, "error approval", `start {"target":"x"}`, "end destroyed x"}},
		{"HandleToolCalls", func(t *testing.T) error {
			_, err := ts.HandleToolCalls(t.Context(), &llms.ContentChoice{ToolCalls: []llms.ToolCall{
				mcpadaptertest.ToolCall("c1", "srv__echo", `{"text":"one"}`),
				mcpadaptertest.ToolCall("c2", "srv__nope", `{}`), // unknown: no tool, no callbacks
				mcpadaptertest.ToolCall("c3", "srv__echo", `{"text":"two"}`),
			}})
			return err
		}, []string{`start {"text":"one"}`, "end one", `start {"text":"two"}`, "end two"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.take()
			if err := tt.run(t); err != nil {
				t.Fatal(err)
			}
			if got := h.take(); !slices.Equal(got, tt.want) {
				t.Errorf("callbacks = %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestNativeLoop drives a native tool-calling loop with a scripted model in
// both eras and both part styles: the model is offered every tool with its
// real schema, asks for two calls in one turn (the weather, and an image),
// and gets back AI[call 1], Tool(result 1), AI[call 2], Tool(result 2) and
// a human message with the image. The messages are pinned in
// testdata/tools/native_loop.<era>.<style>.json.
func TestNativeLoop(t *testing.T) {
	styles := []struct {
		name string
		opts []PartOption
	}{
		{"binary", nil},
		{"dataurl", []PartOption{ImagesAsDataURL()}},
	}
	for _, era := range serverEras {
		for _, style := range styles {
			t.Run(era.name+"/"+style.name, func(t *testing.T) {
				_, ts := discover(t, eraServer(era.legacy), Config{})
				model := mcpadaptertest.NewModel(
					mcpadaptertest.ToolCalls(
						mcpadaptertest.ToolCall("call_1", "srv__get_weather", `{"city":"Paris"}`),
						mcpadaptertest.ToolCall("call_2", "srv__image", `{}`),
					).WithText("Let me look."),
					mcpadaptertest.FinalAnswer("Sunny in Paris; the picture is a single pixel."),
				)
				prompt := llms.TextParts(llms.ChatMessageTypeHuman, "Weather in Paris, and a picture?")
				history := []llms.MessageContent{prompt}
				var turns [][]llms.MessageContent
				var answer string
				for range 3 {
					resp, err := model.GenerateContent(t.Context(), history, llms.WithTools(ts.LLMTools()))
					if err != nil {
						t.Fatal(err)
					}
					choice := resp.Choices[0]
					if len(choice.ToolCalls) == 0 {
						answer = choice.Content
						break
					}
					msgs, err := ts.HandleToolCalls(t.Context(), choice, style.opts...)
					if err != nil {
						t.Fatalf("HandleToolCalls: %v", err)
					}
					turns = append(turns, msgs)
					history = append(history, msgs...)
				}
				if answer != "Sunny in Paris; the picture is a single pixel." || len(turns) != 1 {
					t.Fatalf("loop ended with %q after %d tool turns", answer, len(turns))
				}

				// Every tool was offered with its real schema.
				offered := model.Options()[0].Tools
				if len(offered) != len(ts) {
					t.Fatalf("offered %d tools, want %d", len(offered), len(ts))
				}
				for _, lt := range offered {
					tool := lookup(t, ts, lt.Function.Name)
					// The schema as it came from the server, with
					// "properties" added where the server left it out.
					want := tool.Descriptor().InputSchema
					if _, ok := want["properties"]; !ok {
						want = schemapass.Normalize(want)
					}
					if !reflect.DeepEqual(lt.Function.Parameters, want) {
						t.Errorf("%s offered with %v, want %v", lt.Function.Name, lt.Function.Parameters, want)
					}
				}

				// The layout, and what the model saw next.
				msgs := turns[0]
				roles := make([]llms.ChatMessageType, len(msgs))
				for i, m := range msgs {
					roles[i] = m.Role
				}
				wantRoles := []llms.ChatMessageType{llms.ChatMessageTypeAI, llms.ChatMessageTypeTool, llms.ChatMessageTypeAI, llms.ChatMessageTypeTool, llms.ChatMessageTypeHuman}
				if !slices.Equal(roles, wantRoles) {
					t.Fatalf("roles = %v, want %v", roles, wantRoles)
				}
				wantResponses := []llms.ToolCallResponse{
					{ToolCallID: "call_1", Name: "srv__get_weather", Content: "Sunny, 21°C in Paris"},
					{ToolCallID: "call_2", Name: "srv__image", Content: "[image image/png 68 B]"},
				}
				for i, want := range wantResponses {
					if call, ok := msgs[2*i].Parts[0].(llms.ToolCall); len(msgs[2*i].Parts) != 1 || !ok || call.ID != want.ToolCallID {
						t.Errorf("message %d = %+v, want only tool call %s", 2*i, msgs[2*i], want.ToolCallID)
					}
					if len(msgs[2*i+1].Parts) != 1 || msgs[2*i+1].Parts[0] != want {
						t.Errorf("message %d = %+v, want only %+v", 2*i+1, msgs[2*i+1], want)
					}
				}
				media := msgs[4].Parts[len(msgs[4].Parts)-1]
				switch p := media.(type) {
				case llms.BinaryContent:
					if style.opts != nil || p.MIMEType != "image/png" || !slices.Equal(p.Data, testserver.PNG()) {
						t.Errorf("media part = %v, want the PNG as binary", p)
					}
				case llms.ImageURLContent:
					if style.opts == nil || !strings.HasPrefix(p.URL, "data:image/png;base64,") {
						t.Errorf("media part = %v, want the PNG as a data URL", p)
					}
				default:
					t.Errorf("media part = %T, want an image", media)
				}
				if got := model.Requests()[1]; !reflect.DeepEqual(got, append([]llms.MessageContent{prompt}, msgs...)) {
					t.Errorf("second request = %+v, want the prompt and the tool messages", got)
				}

				b, err := json.MarshalIndent(msgs, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, "tools/native_loop."+era.name+"."+style.name+".json", append(b, '\n'))
			})
		}
	}
}

// TestHandleToolCalls covers the calls a model gets wrong, which become tool
// messages, and the failures that stop the loop.
func TestHandleToolCalls(t *testing.T) {
	s := eraServer(false)
	_, ts := discover(t, s, Config{Approval: func(call ToolCall) bool { return call.MCPName == "destroy" }})

	t.Run("model mistakes", func(t *testing.T) {
		choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
			mcpadaptertest.ToolCall("c1", "srv__nope", `{}`),
			mcpadaptertest.ToolCall("c2", "srv__echo", `{"text":`),
			mcpadaptertest.ToolCall("c3", "srv__echo", `["x"]`),
			{ID: "c4", Type: "function"},
			mcpadaptertest.ToolCall("c5", "SRV__ECHO", `{"text":"case"}`),
			mcpadaptertest.ToolCall("c6", "srv__era", ``),
			mcpadaptertest.ToolCall("c7", "srv__fail", `{}`),
			mcpadaptertest.ToolCall("c8", "srv__rpc_error", `{}`), // a healthy server's JSON-RPC error
			mcpadaptertest.ToolCall("c9", "echo", `{}`),           // the server's own name, without the prefix
			mcpadaptertest.ToolCall("c10", "srv__ehco", `{}`),     // misspelt
		}}
		msgs, err := ts.HandleToolCalls(t.Context(), choice)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"srv__nope is not a valid tool, try another one",
			"Error: invalid input for tool srv__echo: invalid JSON: unexpected EOF. Expected",
			"Error: invalid input for tool srv__echo: invalid JSON: json: cannot unmarshal array",
			"Error: tool call without a function",
			"case",
			"2026-07-28",
			"it failed",
			"backend unavailable",
			"echo is not a valid tool; did you mean srv__echo?",
			"srv__ehco is not a valid tool; did you mean srv__echo?",
		}
		if len(msgs) != 2*len(want) {
			t.Fatalf("got %d messages, want %d", len(msgs), 2*len(want))
		}
		for i, w := range want {
			resp, ok := msgs[2*i+1].Parts[0].(llms.ToolCallResponse)
			if !ok || resp.ToolCallID != choice.ToolCalls[i].ID || !strings.HasPrefix(resp.Content, w) {
				t.Errorf("tool message %d = %+v, want %q", i, msgs[2*i+1], w)
			}
		}
	})

	t.Run("approval stops the loop", func(t *testing.T) {
		choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
			mcpadaptertest.ToolCall("c1", "srv__image", `{}`),
			mcpadaptertest.ToolCall("c2", "srv__destroy", `{"target":"db"}`),
			mcpadaptertest.ToolCall("c3", "srv__echo", `{"text":"later"}`),
		}}
		runs := s.Runs("echo")
		msgs, err := ts.HandleToolCalls(t.Context(), choice)
		var ar *ApprovalRequired
		if !errors.As(err, &ar) || ar.Call.MCPName != "destroy" || ar.Call.Args["target"] != "db" {
			t.Fatalf("HandleToolCalls() error = %v, want *ApprovalRequired for destroy", err)
		}
		// The call before it, with its media; nothing of the failed call or
		// the ones after.
		roles := []llms.ChatMessageType{}
		for _, m := range msgs {
			roles = append(roles, m.Role)
		}
		if !slices.Equal(roles, []llms.ChatMessageType{llms.ChatMessageTypeAI, llms.ChatMessageTypeTool, llms.ChatMessageTypeHuman}) {
			t.Fatalf("roles = %v, want the first call's AI, tool and media messages", roles)
		}
		if s.Runs("echo") != runs || s.Runs("destroy") != 0 {
			t.Errorf("calls after the stop ran")
		}
	})

	t.Run("nothing to do", func(t *testing.T) {
		for _, choice := range []*llms.ContentChoice{nil, {Content: "just text"}} {
			if msgs, err := ts.HandleToolCalls(t.Context(), choice); msgs != nil || err != nil {
				t.Errorf("HandleToolCalls(%v) = %v, %v; want nothing", choice, msgs, err)
			}
		}
	})

	t.Run("server failure", func(t *testing.T) {
		// The call is cancelled while the server works on it: no answer.
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go func() {
			select {
			case <-s.SlowStarted():
				cancel()
			case <-ctx.Done():
			}
		}()
		msgs, err := ts.HandleToolCalls(ctx, &llms.ContentChoice{ToolCalls: []llms.ToolCall{
			mcpadaptertest.ToolCall("c1", "srv__echo", `{"text":"ok"}`),
			mcpadaptertest.ToolCall("c2", "srv__slow", `{}`),
		}})
		wantServerError(t, err)
		if len(msgs) != 2 {
			t.Errorf("got %d messages, want the first call's 2", len(msgs))
		}
	})
}

// TestLookup: an exact name wins over a match that ignores case, which
// langchaingo's executor also accepts.
func TestLookup(t *testing.T) {
	lower, upper := &Tool{name: "srv__a"}, &Tool{name: "SRV__A"}
	ts := Toolset{lower, upper}
	tests := []struct {
		name string
		want *Tool
	}{
		{"srv__a", lower},
		{"SRV__A", upper},
		{"Srv__A", lower},
		{"srv__b", nil},
	}
	for _, tt := range tests {
		if got := ts.Lookup(tt.name); got != tt.want {
			t.Errorf("Lookup(%q) = %p, want %p", tt.name, got, tt.want)
		}
	}
	if got := toolNames(ts); !slices.Equal(got, []string{"srv__a", "SRV__A"}) {
		t.Errorf("Tools() names = %v", got)
	}
	if got := ts.Tools(); len(got) != 2 || got[1] != tools.Tool(upper) {
		t.Errorf("Tools() = %v, want the same tools in order", got)
	}
}

// blockingServer is a go-sdk server whose tool "block" answers only when
// its request is cancelled, and whose tool "echo" answers "after" at once.
func blockingServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "block", Description: "Blocks until cancelled.", InputSchema: object},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echoes at once.", InputSchema: object},
		returns(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "after"}}}))
	return s
}

// TestHandleToolCallsTimeout: in a batch, a tool that does not answer
// within its timeout gives the model a tool message saying so, and the
// calls after it run; with TimeoutErrors the batch stops with the
// timeout's *ServerError; the caller's own deadline stops it either way.
// The same holds for a ToolSearch's batch, in both eras.
func TestHandleToolCallsTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, ts := listSDK(t, blockingServer(), m.mode, Config{DefaultToolTimeout: timeout})
			search, err := NewToolSearch(ts, nil)
			if err != nil {
				t.Fatal(err)
			}
			calls := []llms.ToolCall{
				mcpadaptertest.ToolCall("c1", "srv__block", `{}`),
				mcpadaptertest.ToolCall("c2", "srv__echo", `{}`),
			}
			loops := []struct {
				name  string
				first int // the messages before the calls: the searches'
				run   func(ctx context.Context, opts ...PartOption) ([]llms.MessageContent, error)
			}{
				{"Toolset", 0, func(ctx context.Context, opts ...PartOption) ([]llms.MessageContent, error) {
					return ts.HandleToolCalls(ctx, &llms.ContentChoice{ToolCalls: calls}, opts...)
				}},
				{"ToolSearch", 4, func(ctx context.Context, opts ...PartOption) ([]llms.MessageContent, error) {
					found := []llms.ToolCall{
						mcpadaptertest.ToolCall("s1", defaultSearchToolName, `{"query":"block"}`),
						mcpadaptertest.ToolCall("s2", defaultSearchToolName, `{"query":"echo"}`),
					}
					return search.HandleToolCalls(ctx, nil, &llms.ContentChoice{ToolCalls: append(found, calls...)}, opts...)
				}},
			}
			for _, loop := range loops {
				t.Run(loop.name, func(t *testing.T) {
					msgs, err := loop.run(t.Context())
					if err != nil || len(msgs) != loop.first+4 {
						t.Fatalf("HandleToolCalls() = %d messages, %v; want the messages of both calls", len(msgs), err)
					}
					want := "Error: tool srv__block did not answer within 100ms and may still be running on the server"
					if got := lastToolText(msgs[:loop.first+2]); !strings.HasPrefix(got, want) {
						t.Errorf("the timed-out call's tool message = %q, want it to start with %q", got, want)
					}
					if got := lastToolText(msgs); got != "after" {
						t.Errorf("the next call's tool message = %q, want its result", got)
					}

					msgs, err = loop.run(t.Context(), TimeoutErrors())
					var se *ServerError
					if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &se) || len(msgs) != loop.first {
						t.Errorf("HandleToolCalls(TimeoutErrors()) = %d messages, %v; want the %d before the call and its *ServerError", len(msgs), err, loop.first)
					}

					ctx, cancel := context.WithTimeout(t.Context(), timeout/4)
					defer cancel()
					msgs, err = loop.run(ctx)
					if !errors.Is(err, context.DeadlineExceeded) || len(msgs) != loop.first {
						t.Errorf("HandleToolCalls(ctx with a deadline) = %d messages, %v; want the caller's deadline to stop the batch", len(msgs), err)
					}
				})
			}

			// With MaxToolTimeout the bound is a time without progress, and
			// the message says so.
			_, ts = listSDK(t, blockingServer(), m.mode, Config{DefaultToolTimeout: timeout, MaxToolTimeout: time.Hour})
			msgs, err := ts.HandleToolCalls(t.Context(), &llms.ContentChoice{ToolCalls: calls[:1]})
			want := "Error: tool srv__block did not answer nor report progress within 100ms and may still be running"
			if got := lastToolText(msgs); err != nil || !strings.HasPrefix(got, want) {
				t.Errorf("HandleToolCalls(MaxToolTimeout) = %q, %v; want a tool message starting with %q", got, err, want)
			}
		})
	}
}
