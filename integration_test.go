package mcpadapter_test

// Integration tests against MCP servers that nobody here wrote:
//
//   - go-sdk's conformance everything-server, built from the module cache
//     (internal/testing/everything), over stdio, stateless Streamable HTTP (modern
//     era) and stateful Streamable HTTP (legacy era);
//   - @modelcontextprotocol/server-everything, the reference server of the
//     TypeScript SDK, from the npm registry (pinned in internal/testing/extserver),
//     over stdio, Streamable HTTP and SSE.
//
// The npm tests skip, naming what is missing, when node or npm are not
// installed, unless MCPADAPTER_REQUIRE_INTEGRATION=1 (as in .ci/run), which
// makes a missing prerequisite fail them.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/everything"
	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"
)

// integrationTimeout bounds each integration subtest.
const integrationTimeout = 60 * time.Second

// pngSignature starts every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// integAdapter builds an Adapter with one server named "everything" and
// closes it when the test ends.
func integAdapter(t *testing.T, s mcpadapter.Server, edit func(*mcpadapter.Config)) *mcpadapter.Adapter {
	t.Helper()
	cfg := mcpadapter.Config{Servers: map[string]mcpadapter.Server{"everything": s}}
	if edit != nil {
		edit(&cfg)
	}
	a, err := mcpadapter.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return a
}

// integTools discovers the adapter's tools or fails t.
func integTools(t *testing.T, ctx context.Context, a *mcpadapter.Adapter) mcpadapter.Toolset {
	t.Helper()
	ts, err := a.ListTools(ctx)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	return ts
}

// integTool returns the named tool or fails t.
func integTool(t *testing.T, ts mcpadapter.Toolset, name string) *mcpadapter.Tool {
	t.Helper()
	tool := ts.Lookup(name)
	if tool == nil {
		t.Fatalf("no tool %q among %v", name, integNames(ts))
	}
	return tool
}

// integNames returns the server-side names of the tools.
func integNames(ts mcpadapter.Toolset) []string {
	var names []string
	for _, t := range ts {
		names = append(names, t.MCPName())
	}
	return names
}

// integInvoke invokes tool with args and fails t on an error.
func integInvoke(t *testing.T, ctx context.Context, tool *mcpadapter.Tool, args map[string]any) *mcpadapter.Result {
	t.Helper()
	res, err := tool.Invoke(ctx, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", tool.Name(), args, err)
	}
	return res
}

// blockTypes lists the types of a result's blocks.
func blockTypes(res *mcpadapter.Result) []mcpadapter.BlockType {
	var out []mcpadapter.BlockType
	for _, b := range res.Content {
		out = append(out, b.Type)
	}
	return out
}

// wantBlocks fails t unless res is a success with blocks of the given types.
func wantBlocks(t *testing.T, what string, res *mcpadapter.Result, types ...mcpadapter.BlockType) {
	t.Helper()
	if res.IsError || !slices.Equal(blockTypes(res), types) {
		t.Fatalf("%s: IsError=%v blocks %v, want a success with %v; text %q", what, res.IsError, blockTypes(res), types, res.Text())
	}
}

// wantInterrupt returns the *Interrupt in err, or fails t.
func wantInterrupt(t *testing.T, what string, err error) *mcpadapter.Interrupt {
	t.Helper()
	var in *mcpadapter.Interrupt
	if !errors.As(err, &in) {
		t.Fatalf("%s: error %v, want an *Interrupt", what, err)
	}
	return in
}

// wantRequest fails t unless in asks exactly one form request under key,
// with message, whose schema requires prop.
func wantRequest(t *testing.T, in *mcpadapter.Interrupt, key, message, prop string) {
	t.Helper()
	if len(in.Requests) != 1 {
		t.Fatalf("interrupt requests %+v, want one", in.Requests)
	}
	r := in.Requests[0]
	if r.Key != key || r.Mode != "form" || r.Message != message {
		t.Fatalf("request %+v, want key %q, form mode, message %q", r, key, message)
	}
	if req, _ := r.RequestedSchema["required"].([]any); !slices.Contains(req, any(prop)) {
		t.Fatalf("request schema %v, want %q required", r.RequestedSchema, prop)
	}
	if in.Server != "everything" || in.Tool == "" {
		t.Fatalf("interrupt server %q tool %q", in.Server, in.Tool)
	}
}

// accept answers one request with content.
func accept(key string, content map[string]any) map[string]mcpadapter.Answer {
	return map[string]mcpadapter.Answer{key: {Action: mcpadapter.Accept, Content: content}}
}

// goEverythingTools are the tools of go-sdk v1.8.0's conformance server.
var goEverythingTools = []string{
	"json_schema_2020_12_tool",
	"test_audio_content",
	"test_elicitation",
	"test_elicitation_sep1034_defaults",
	"test_elicitation_sep1330_enums",
	"test_embedded_resource",
	"test_error_handling",
	"test_image_content",
	"test_input_required_result_capabilities",
	"test_input_required_result_elicitation",
	"test_input_required_result_list_roots",
	"test_input_required_result_multi_round",
	"test_input_required_result_multiple_inputs",
	"test_input_required_result_request_state",
	"test_input_required_result_sampling",
	"test_input_required_result_tampered_state",
	"test_logging_tool",
	"test_missing_capability",
	"test_multiple_content_types",
	"test_reconnection",
	"test_sampling",
	"test_simple_text",
	"test_streaming_elicitation",
	"test_tool_with_logging",
	"test_tool_with_progress",
	"test_trigger_prompt_change",
	"test_trigger_tool_change",
	"test_x_mcp_header",
}

// goEverything starts go-sdk's conformance server over transport ("stdio",
// "stateless" or "stateful" Streamable HTTP) and returns the Server that
// reaches it.
func goEverything(t *testing.T, transport string) mcpadapter.Server {
	t.Helper()
	bin := everything.Build(t)
	if transport == "stdio" {
		return mcpadapter.Server{Command: bin}
	}
	addr := extserver.FreeAddr(t)
	stateless := "-stateless=true"
	if transport == "stateful" {
		stateless = "-stateless=false"
	}
	extserver.Start(t, exec.Command(bin, "-http="+addr, stateless)).WaitListening(t, addr, 30*time.Second)
	return mcpadapter.Server{URL: "http://" + addr + "/mcp"}
}

// TestIntegrationGoEverything runs go-sdk's conformance server over stdio
// and stateless HTTP (both negotiate the modern era) and stateful HTTP (the
// legacy era), lists every tool and calls the content, error, progress,
// logging and input-required ones, checking each conversion.
func TestIntegrationGoEverything(t *testing.T) {
	for _, tc := range []struct {
		transport string
		era       mcpadapter.Mode
		protocol  string
	}{
		{"stdio", mcpadapter.ModeModern, "2026-07-28"},
		{"stateless", mcpadapter.ModeModern, "2026-07-28"},
		{"stateful", mcpadapter.ModeLegacy, "2025-11-25"},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
			defer cancel()
			srv := goEverything(t, tc.transport)
			a := integAdapter(t, srv, nil)

			info, err := a.ServerInfo(ctx, "everything")
			if err != nil {
				t.Fatalf("ServerInfo: %v", err)
			}
			if info.Name != "mcp-conformance-test-server" || info.Version != "1.0.0" || info.Era != mcpadapter.Era(tc.era) || info.ProtocolVersion != tc.protocol {
				t.Fatalf("ServerInfo = %+v, want mcp-conformance-test-server 1.0.0, era %s, protocol %s", info, tc.era, tc.protocol)
			}
			ts := integTools(t, ctx, a)
			goEverythingDiscovery(t, ts)
			goEverythingContent(t, ctx, ts)
			goEverythingErrors(t, ctx, ts, tc.era)
			if tc.era == mcpadapter.ModeModern {
				goEverythingInterrupts(t, ctx, a, ts, srv)
			} else {
				goEverythingLegacyElicitation(t, ctx, srv)
			}
		})
	}
}

// goEverythingDiscovery checks the catalog: every tool, named and described
// as the server says, with metadata and schemas kept verbatim.
func goEverythingDiscovery(t *testing.T, ts mcpadapter.Toolset) {
	t.Helper()
	if got := integNames(ts); !slices.Equal(slices.Sorted(slices.Values(got)), goEverythingTools) {
		t.Fatalf("tools = %v\nwant %v", got, goEverythingTools)
	}
	for _, tool := range ts {
		if tool.Name() != "everything__"+tool.MCPName() || tool.Server() != "everything" {
			t.Errorf("tool %q: server %q, MCP name %q", tool.Name(), tool.Server(), tool.MCPName())
		}
		if !strings.HasPrefix(tool.Description(), tool.Descriptor().Description) {
			t.Errorf("%s: description %q does not start with the server's %q", tool.Name(), tool.Description(), tool.Descriptor().Description)
		}
		if _, ok := tool.Parameters()["properties"].(map[string]any); !ok {
			t.Errorf("%s: parameters without properties: %v", tool.Name(), tool.Parameters())
		}
		if si := tool.Metadata().Server(); si == nil || si.Name != "mcp-conformance-test-server" || si.Version != "1.0.0" {
			t.Errorf("%s: server metadata %+v", tool.Name(), si)
		}
		if lt := tool.LLMTool(); lt.Type != "function" || lt.Function.Name != tool.Name() {
			t.Errorf("%s: LLMTool %+v", tool.Name(), lt)
		}
	}
	// A JSON Schema 2020-12 input schema reaches the model unchanged.
	tool := integTool(t, ts, "everything__json_schema_2020_12_tool")
	var want map[string]any
	raw, err := json.Marshal(tool.Descriptor().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	params := tool.Parameters()
	if !reflect.DeepEqual(params, want) {
		t.Errorf("json_schema_2020_12_tool parameters changed:\n got %v\nwant %v", params, want)
	}
	for _, key := range []string{"$schema", "$defs", "allOf", "if", "then", "else", "additionalProperties"} {
		if _, ok := params[key]; !ok {
			t.Errorf("json_schema_2020_12_tool parameters lack %q", key)
		}
	}
}

// goEverythingContent checks every content type's conversion.
func goEverythingContent(t *testing.T, ctx context.Context, ts mcpadapter.Toolset) {
	t.Helper()
	res := integInvoke(t, ctx, integTool(t, ts, "everything__test_simple_text"), nil)
	wantBlocks(t, "test_simple_text", res, mcpadapter.BlockText)
	if got := res.Text(); got != "This is a simple text response for testing." {
		t.Errorf("test_simple_text text %q", got)
	}

	res = integInvoke(t, ctx, integTool(t, ts, "everything__test_image_content"), nil)
	wantBlocks(t, "test_image_content", res, mcpadapter.BlockImage)
	if b := res.Content[0]; b.MIMEType != "image/png" || !bytes.HasPrefix(b.Data, pngSignature) {
		t.Errorf("image block %s, %d bytes %q", b.MIMEType, len(b.Data), b.Data)
	}
	if got := res.Text(); got != "[image image/png 70 B]" {
		t.Errorf("image text %q, want a placeholder", got)
	}
	if parts := res.Parts(); len(parts) != 1 || !reflect.DeepEqual(parts[0], llms.BinaryPart("image/png", res.Content[0].Data)) {
		t.Errorf("image parts %#v, want one BinaryPart", parts)
	}
	wantURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(res.Content[0].Data)
	if parts := res.Parts(mcpadapter.ImagesAsDataURL()); len(parts) != 1 || !reflect.DeepEqual(parts[0], llms.ImageURLPart(wantURL)) {
		t.Errorf("image parts with ImagesAsDataURL %#v, want ImageURLPart(%s)", parts, wantURL)
	}

	res = integInvoke(t, ctx, integTool(t, ts, "everything__test_audio_content"), nil)
	wantBlocks(t, "test_audio_content", res, mcpadapter.BlockAudio)
	if b := res.Content[0]; b.MIMEType != "audio/wav" || !bytes.HasPrefix(b.Data, []byte("RIFF")) || len(b.Data) != 44 {
		t.Errorf("audio block %s, %d bytes", b.MIMEType, len(b.Data))
	}

	res = integInvoke(t, ctx, integTool(t, ts, "everything__test_embedded_resource"), nil)
	wantBlocks(t, "test_embedded_resource", res, mcpadapter.BlockText)
	if b := res.Content[0]; b.Text != "This is an embedded resource" || b.URI != "test://embedded-resource" || b.MIMEType != "text/plain" {
		t.Errorf("embedded resource block %+v", b)
	}

	res = integInvoke(t, ctx, integTool(t, ts, "everything__test_multiple_content_types"), nil)
	wantBlocks(t, "test_multiple_content_types", res, mcpadapter.BlockText, mcpadapter.BlockImage, mcpadapter.BlockText)
	if got, want := res.Text(), "This is text content\n[image image/png 70 B]\nThis is an embedded resource"; got != want {
		t.Errorf("multiple content text %q, want %q", got, want)
	}
	if res.Content[2].URI != "test://embedded-in-multiple" {
		t.Errorf("embedded block %+v", res.Content[2])
	}
	msgs := res.Messages(llms.ToolCall{ID: "call_1", FunctionCall: &llms.FunctionCall{Name: "everything__test_multiple_content_types"}})
	if len(msgs) != 2 || msgs[0].Role != llms.ChatMessageTypeTool || msgs[1].Role != llms.ChatMessageTypeHuman {
		t.Fatalf("messages %+v, want a tool message then a human message with the image", msgs)
	}
	if resp, ok := msgs[0].Parts[0].(llms.ToolCallResponse); !ok || resp.ToolCallID != "call_1" || resp.Content != res.Text() {
		t.Errorf("tool message part %#v", msgs[0].Parts[0])
	}

	// Progress and logging notifications do not disturb the call.
	res = integInvoke(t, ctx, integTool(t, ts, "everything__test_tool_with_progress"), nil)
	wantBlocks(t, "test_tool_with_progress", res, mcpadapter.BlockText)
	res = integInvoke(t, ctx, integTool(t, ts, "everything__test_tool_with_logging"), nil)
	wantBlocks(t, "test_tool_with_logging", res, mcpadapter.BlockText)
	if got := res.Text(); got != "Tool with logging executed successfully" {
		t.Errorf("test_tool_with_logging text %q", got)
	}
}

// goEverythingErrors checks tool errors (results the model sees), invalid
// arguments, and protocol errors (Go errors).
func goEverythingErrors(t *testing.T, ctx context.Context, ts mcpadapter.Toolset, era mcpadapter.Mode) {
	t.Helper()
	tool := integTool(t, ts, "everything__test_error_handling")
	res := integInvoke(t, ctx, tool, nil)
	if !res.IsError || res.Text() != "this tool intentionally returns an error for testing" {
		t.Errorf("test_error_handling: IsError=%v text %q", res.IsError, res.Text())
	}
	out, err := tool.Call(ctx, "{}")
	if err != nil || out != "this tool intentionally returns an error for testing" {
		t.Errorf("test_error_handling Call = %q, %v; want the message and a nil error", out, err)
	}

	// Arguments the server's schema rejects: an error result, not an error.
	res = integInvoke(t, ctx, integTool(t, ts, "everything__test_sampling"), map[string]any{})
	if !res.IsError || !strings.Contains(res.Text(), "prompt") {
		t.Errorf("test_sampling without prompt: IsError=%v text %q", res.IsError, res.Text())
	}

	// A JSON-RPC error other than invalid params is a *ServerError.
	_, err = integTool(t, ts, "everything__test_missing_capability").Invoke(ctx, nil)
	var se *mcpadapter.ServerError
	if !errors.As(err, &se) || se.Server != "everything" {
		t.Errorf("test_missing_capability: error %v, want a *ServerError of server everything", err)
	}

	// test_reconnection closes the response stream mid-call (SEP-1699). The
	// stateful server keeps no events to replay, so the call is lost: a
	// *ServerError, as with a plain go-sdk client. Elsewhere it completes.
	res, err = integTool(t, ts, "everything__test_reconnection").Invoke(ctx, nil)
	if era == mcpadapter.ModeLegacy {
		if !errors.As(err, &se) {
			t.Errorf("test_reconnection on stateful HTTP = %v, %v; want a *ServerError", res, err)
		}
	} else if err != nil || !strings.HasPrefix(res.Text(), "Reconnection test completed successfully") {
		t.Errorf("test_reconnection = %v, %v", res, err)
	}
}

// goEverythingInterrupts checks the SEP-2322 input-required tools on a
// modern-era connection: interrupts, resumption (also from JSON), several
// rounds, tampered state, and input kinds the adapter does not serve.
func goEverythingInterrupts(t *testing.T, ctx context.Context, a *mcpadapter.Adapter, ts mcpadapter.Toolset, srv mcpadapter.Server) {
	t.Helper()
	_, err := integTool(t, ts, "everything__test_input_required_result_elicitation").Invoke(ctx, nil)
	in := wantInterrupt(t, "test_input_required_result_elicitation", err)
	wantRequest(t, in, "user_name", "What is your name?", "name")
	res, err := a.Resume(ctx, in, mcpadapter.Answered(accept("user_name", map[string]any{"name": "Ada"})))
	if err != nil || res.Text() != "Hello, Ada!" {
		t.Fatalf("Resume = %q, %v; want Hello, Ada!", res.Text(), err)
	}
	// Answers that do not match the requested schema are refused before
	// anything is sent.
	if _, err := a.Resume(ctx, in, mcpadapter.Answered(accept("user_name", map[string]any{"name": 42}))); err == nil {
		t.Error("Resume with a number for a string: nil error")
	}

	_, err = integTool(t, ts, "everything__test_input_required_result_multi_round").Invoke(ctx, nil)
	in = wantInterrupt(t, "multi_round", err)
	wantRequest(t, in, "step1", "Step 1: What is your name?", "name")
	_, err = a.Resume(ctx, in, mcpadapter.Answered(accept("step1", map[string]any{"name": "Ada"})))
	in = wantInterrupt(t, "multi_round, round 2", err)
	wantRequest(t, in, "step2", "Step 2: What is your favorite color?", "color")
	res, err = a.Resume(ctx, in, mcpadapter.Answered(accept("step2", map[string]any{"color": "blue"})))
	if err != nil || res.Text() != "Multi-round complete: Ada likes blue" {
		t.Fatalf("multi_round = %q, %v", res.Text(), err)
	}

	// requestState travels through JSON, to another Adapter.
	_, err = integTool(t, ts, "everything__test_input_required_result_request_state").Invoke(ctx, nil)
	in = wantInterrupt(t, "request_state", err)
	saved, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var restored mcpadapter.Interrupt
	if err := json.Unmarshal(saved, &restored); err != nil {
		t.Fatal(err)
	}
	res, err = a.Resume(ctx, &restored, mcpadapter.Answered(accept("confirm", map[string]any{"ok": true})))
	if err != nil || res.Text() != "state-ok: requestState received and confirmation accepted" {
		t.Fatalf("request_state resumed from JSON = %q, %v", res.Text(), err)
	}

	// A tampered requestState is the server's invalid-params error: an
	// error result.
	_, err = integTool(t, ts, "everything__test_input_required_result_tampered_state").Invoke(ctx, nil)
	in = wantInterrupt(t, "tampered_state", err)
	saved, err = json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var wire map[string]any
	if err := json.Unmarshal(saved, &wire); err != nil {
		t.Fatal(err)
	}
	state, _ := wire["requestState"].(string)
	if state == "" {
		t.Fatalf("interrupt JSON without requestState: %s", saved)
	}
	wire["requestState"] = state + "-TAMPERED"
	tampered, _ := json.Marshal(wire)
	restored = mcpadapter.Interrupt{}
	if err := json.Unmarshal(tampered, &restored); err != nil {
		t.Fatal(err)
	}
	res, err = a.Resume(ctx, &restored, mcpadapter.Answered(accept("confirm", map[string]any{"ok": true})))
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "invalid requestState") {
		t.Errorf("tampered state: %q (IsError=%v), %v; want an invalid requestState error result", res.Text(), res.IsError, err)
	}

	// Sampling and roots are not served: a clear error, not an interrupt.
	for _, name := range []string{"sampling", "list_roots", "multiple_inputs"} {
		_, err := integTool(t, ts, "everything__test_input_required_result_"+name).Invoke(ctx, nil)
		if !errors.Is(err, mcpadapter.ErrUnsupportedInputRequest) {
			t.Errorf("test_input_required_result_%s: error %v, want ErrUnsupportedInputRequest", name, err)
		}
	}

	// With an ElicitationHandler, rounds are answered inline: no interrupt.
	var asked []string
	inline := integAdapter(t, srv, func(cfg *mcpadapter.Config) {
		cfg.ElicitationHandler = func(_ context.Context, req mcpadapter.ElicitationRequest) (mcpadapter.Answer, error) {
			asked = append(asked, req.Key) // rounds are sequential: no lock needed
			if req.Key == "step2" {
				return mcpadapter.Answer{Action: mcpadapter.Accept, Content: map[string]any{"color": "green"}}, nil
			}
			return mcpadapter.Answer{Action: mcpadapter.Accept, Content: map[string]any{"name": "Grace"}}, nil
		}
	})
	res = integInvoke(t, ctx, integTool(t, integTools(t, ctx, inline), "everything__test_input_required_result_multi_round"), nil)
	if res.Text() != "Multi-round complete: Grace likes green" || !slices.Equal(asked, []string{"step1", "step2"}) {
		t.Errorf("multi_round with a handler = %q after requests %v", res.Text(), asked)
	}
}

// goEverythingLegacyElicitation checks elicitation on a legacy-era
// connection: the server asks with live elicitation/create requests (its
// input-required results too, through go-sdk's legacy shim), answered by
// Config.ElicitationHandler, or declined without one.
func goEverythingLegacyElicitation(t *testing.T, ctx context.Context, srv mcpadapter.Server) {
	t.Helper()
	var (
		mu    sync.Mutex
		asked []mcpadapter.ElicitationRequest
	)
	a := integAdapter(t, srv, func(cfg *mcpadapter.Config) {
		cfg.ElicitationHandler = func(_ context.Context, req mcpadapter.ElicitationRequest) (mcpadapter.Answer, error) {
			mu.Lock()
			asked = append(asked, req)
			mu.Unlock()
			switch {
			case strings.Contains(req.Message, "color"):
				return mcpadapter.Answer{Action: mcpadapter.Accept, Content: map[string]any{"color": "green"}}, nil
			case strings.Contains(req.Message, "defaults"):
				return mcpadapter.Answer{Action: mcpadapter.Accept, Content: map[string]any{}}, nil
			case strings.Contains(req.Message, "username"):
				return mcpadapter.Answer{Action: mcpadapter.Accept, Content: map[string]any{"username": "grace"}}, nil
			}
			return mcpadapter.Answer{Action: mcpadapter.Accept, Content: map[string]any{"name": "Grace"}}, nil
		}
	})
	ts := integTools(t, ctx, a)

	res := integInvoke(t, ctx, integTool(t, ts, "everything__test_elicitation"), map[string]any{"message": "Pick a username"})
	if res.IsError || res.Text() != "Elicitation result: action=accept, content=map[username:grace]" {
		t.Errorf("test_elicitation = %q (IsError=%v)", res.Text(), res.IsError)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0].Key != "" || asked[0].Mode != "form" || asked[0].Message != "Pick a username" {
		t.Errorf("live requests %+v, want one form request without a key", asked)
	}
	mu.Unlock()

	// The adapter applies the schema's defaults to the answer.
	res = integInvoke(t, ctx, integTool(t, ts, "everything__test_elicitation_sep1034_defaults"), nil)
	for _, want := range []string{"action=accept", "name:John Doe", "age:30", "score:95.5", "status:active", "verified:true"} {
		if !strings.Contains(res.Text(), want) {
			t.Errorf("test_elicitation_sep1034_defaults = %q, lacks %q", res.Text(), want)
		}
	}

	res = integInvoke(t, ctx, integTool(t, ts, "everything__test_input_required_result_multi_round"), nil)
	if res.Text() != "Multi-round complete: Grace likes green" {
		t.Errorf("multi_round on the legacy era = %q", res.Text())
	}

	// Without a handler, a live request is a live interrupt, resumed on
	// the same Adapter (over Streamable HTTP: the server's request came on
	// the call's stream, the answer goes in a POST of its own).
	bare := integAdapter(t, srv, nil)
	_, err := integTool(t, integTools(t, ctx, bare), "everything__test_elicitation").Invoke(ctx, map[string]any{"message": "Pick a username"})
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &intr) || !intr.Live() || len(intr.Requests) != 1 || intr.Requests[0].Message != "Pick a username" {
		t.Fatalf("test_elicitation without a handler = %v, want a live interrupt", err)
	}
	res, err = bare.Resume(ctx, intr, mcpadapter.Answered(map[string]mcpadapter.Answer{intr.Requests[0].Key: {Action: mcpadapter.Accept, Content: map[string]any{"username": "grace"}}}))
	if err != nil || res.Text() != "Elicitation result: action=accept, content=map[username:grace]" {
		t.Errorf("resumed test_elicitation = %v, %v", res, err)
	}

	// With the decline setting, live requests are declined.
	declining := integAdapter(t, srv, func(cfg *mcpadapter.Config) { cfg.State.LiveMaxAge = -1 })
	res = integInvoke(t, ctx, integTool(t, integTools(t, ctx, declining), "everything__test_elicitation"), map[string]any{"message": "Pick a username"})
	if res.Text() != "Elicitation result: action=decline, content=map[]" {
		t.Errorf("test_elicitation with the decline setting = %q, want a decline", res.Text())
	}
}

// npmEverythingTools are tools of @modelcontextprotocol/server-everything
// the tests call (it has more).
var npmEverythingTools = []string{
	"echo", "get-annotated-message", "get-resource-links", "get-resource-reference",
	"get-structured-content", "get-sum", "get-tiny-image", "trigger-elicitation-request",
}

// npmEverything starts @modelcontextprotocol/server-everything over the
// named transport ("stdio", "streamableHttp" or "sse") and returns the
// Server that reaches it.
func npmEverything(t *testing.T, transport string) mcpadapter.Server {
	t.Helper()
	node, script := extserver.Everything(t)
	if transport == "stdio" {
		return mcpadapter.Server{Command: node, Args: []string{script, "stdio"}}
	}
	addr := extserver.FreeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	cmd := exec.Command(node, script, transport)
	cmd.Env = append(cmd.Environ(), "PORT="+port)
	extserver.Start(t, cmd).WaitListening(t, addr, 30*time.Second)
	if transport == "sse" {
		// Streamable HTTP at /sse answers 404, so the adapter falls back
		// to SSE at the same URL.
		return mcpadapter.Server{URL: "http://" + addr + "/sse"}
	}
	return mcpadapter.Server{URL: "http://" + addr + "/mcp"}
}

// TestIntegrationServerEverythingNPM runs the TypeScript reference server
// over its three transports and checks discovery, metadata, every content
// conversion, a langchaingo agent run, and live elicitation through
// Config.ElicitationHandler.
func TestIntegrationServerEverythingNPM(t *testing.T) {
	for _, transport := range []string{"stdio", "streamableHttp", "sse"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
			defer cancel()
			srv := npmEverything(t, transport)

			var (
				mu     sync.Mutex
				asked  []mcpadapter.ElicitationRequest
				answer = mcpadapter.Answer{Action: mcpadapter.Accept, Content: map[string]any{"name": "Ada Lovelace", "check": true}}
			)
			a := integAdapter(t, srv, func(cfg *mcpadapter.Config) {
				cfg.ElicitationHandler = func(_ context.Context, req mcpadapter.ElicitationRequest) (mcpadapter.Answer, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req)
					return answer, nil
				}
			})

			info, err := a.ServerInfo(ctx, "everything")
			if err != nil {
				t.Fatalf("ServerInfo: %v", err)
			}
			if info.Name != "mcp-servers/everything" || info.Era != mcpadapter.EraLegacy || info.ProtocolVersion != "2025-11-25" || info.Instructions == "" {
				t.Fatalf("ServerInfo = %+v, want mcp-servers/everything on the legacy era (2025-11-25) with instructions", info)
			}
			ts := integTools(t, ctx, a)
			for _, name := range npmEverythingTools {
				integTool(t, ts, "everything__"+name)
			}
			npmEverythingMetadata(t, ts)
			npmEverythingCalls(t, ctx, ts)
			npmEverythingAgent(t, ctx, ts)

			// A legacy-only server, which ModeModern refuses as such.
			srv.Mode = mcpadapter.ModeModern
			if _, err := integAdapter(t, srv, nil).ListTools(ctx); !errors.Is(err, mcpadapter.ErrLegacyOnly) {
				t.Errorf("ListTools(ModeModern) = %v, want ErrLegacyOnly", err)
			}

			// Live elicitation, answered by the handler; the adapter adds
			// the schema's defaults to the answer.
			res := integInvoke(t, ctx, integTool(t, ts, "everything__trigger-elicitation-request"), nil)
			for _, want := range []string{"User provided the requested information", "- Name: Ada Lovelace", "- Agreed to terms: true", "- Favorite Integer: 42", `"untitledSingleSelectEnum": "Monica"`} {
				if !strings.Contains(res.Text(), want) {
					t.Errorf("trigger-elicitation-request = %q, lacks %q", res.Text(), want)
				}
			}
			mu.Lock()
			if len(asked) != 1 || asked[0].Key != "" || asked[0].Mode != "form" || asked[0].Message != "Please provide inputs for the following fields:" {
				t.Errorf("elicitation requests %+v, want one live form request", asked)
			} else if req, _ := asked[0].RequestedSchema["required"].([]any); !slices.Equal(req, []any{"name"}) {
				t.Errorf("requested schema %v, want name required", asked[0].RequestedSchema)
			}
			answer = mcpadapter.Answer{Action: mcpadapter.Decline}
			mu.Unlock()
			res = integInvoke(t, ctx, integTool(t, ts, "everything__trigger-elicitation-request"), nil)
			if !strings.Contains(res.Text(), "User declined to provide the requested information") {
				t.Errorf("declined trigger-elicitation-request = %q", res.Text())
			}
		})
	}
}

// npmEverythingMetadata checks what the adapter keeps of the server's
// descriptors: names, titles, annotations, schemas, server identity.
func npmEverythingMetadata(t *testing.T, ts mcpadapter.Toolset) {
	t.Helper()
	echo := integTool(t, ts, "everything__echo")
	if echo.MCPName() != "echo" || echo.Server() != "everything" || echo.Descriptor().Title != "Echo Tool" {
		t.Errorf("echo: MCP name %q, server %q, title %q", echo.MCPName(), echo.Server(), echo.Descriptor().Title)
	}
	ann := echo.Metadata().Annotations()
	if ann == nil || ann.ReadOnlyHint == nil || !*ann.ReadOnlyHint || ann.DestructiveHint == nil || *ann.DestructiveHint || ann.IdempotentHint == nil || !*ann.IdempotentHint || ann.OpenWorldHint == nil || *ann.OpenWorldHint {
		t.Errorf("echo annotations %+v, want read-only, not destructive, idempotent, closed world", ann)
	}
	if ann.MayBeDestructive() {
		t.Error("echo: MayBeDestructive() = true")
	}
	if si := echo.Metadata().Server(); si == nil || si.Name != "mcp-servers/everything" || si.Version != "2.0.0" {
		t.Errorf("echo server metadata %+v", si)
	}
	params := echo.Parameters()
	msg, _ := params["properties"].(map[string]any)["message"].(map[string]any)
	if params["type"] != "object" || msg["type"] != "string" || !slices.Equal(params["required"].([]any), []any{"message"}) {
		t.Errorf("echo parameters %v", params)
	}
	if lt := echo.LLMTool(); lt.Function.Name != "everything__echo" || lt.Function.Description != "Echoes back the input string" || !reflect.DeepEqual(lt.Function.Parameters, params) {
		t.Errorf("echo LLMTool %+v", lt.Function)
	}
	// A tool without arguments gets the empty properties providers need.
	if props, ok := integTool(t, ts, "everything__get-tiny-image").Parameters()["properties"].(map[string]any); !ok || len(props) != 0 {
		t.Errorf("get-tiny-image parameters %v", integTool(t, ts, "everything__get-tiny-image").Parameters())
	}
	if integTool(t, ts, "everything__get-structured-content").Descriptor().OutputSchema == nil {
		t.Error("get-structured-content: no output schema")
	}
}

// npmEverythingCalls calls the content tools and checks the conversions.
func npmEverythingCalls(t *testing.T, ctx context.Context, ts mcpadapter.Toolset) {
	t.Helper()
	echo := integTool(t, ts, "everything__echo")
	res := integInvoke(t, ctx, echo, map[string]any{"message": "hello"})
	wantBlocks(t, "echo", res, mcpadapter.BlockText)
	if res.Text() != "Echo: hello" {
		t.Errorf("echo = %q", res.Text())
	}
	// langchaingo's text API takes JSON, the {"__arg1": ...} wrapper, or a
	// bare string for a one-string-argument tool.
	for _, input := range []string{`{"message":"hi"}`, `{"__arg1":"{\"message\":\"hi\"}"}`, "hi", "```json\n{\"message\":\"hi\"}\n```"} {
		if out, err := echo.Call(ctx, input); err != nil || out != "Echo: hi" {
			t.Errorf("echo.Call(%q) = %q, %v", input, out, err)
		}
	}

	sum := integTool(t, ts, "everything__get-sum")
	res = integInvoke(t, ctx, sum, map[string]any{"a": 2, "b": 3})
	if res.Text() != "The sum of 2 and 3 is 5." {
		t.Errorf("get-sum = %q", res.Text())
	}
	if res, err := sum.InvokeJSON(ctx, `{"a": 1.5, "b": 2}`); err != nil || res.Text() != "The sum of 1.5 and 2 is 3.5." {
		t.Errorf("get-sum InvokeJSON = %q, %v", res.Text(), err)
	}
	// Bad arguments: the server's message as an error result, and as text
	// with a nil error for an agent.
	res = integInvoke(t, ctx, sum, map[string]any{"a": "two", "b": 3})
	if !res.IsError || !strings.Contains(res.Text(), "expected number") {
		t.Errorf("get-sum with a string: IsError=%v %q", res.IsError, res.Text())
	}
	if out, err := sum.Call(ctx, `{"a":"two","b":3}`); err != nil || !strings.Contains(out, "expected number") {
		t.Errorf("get-sum.Call with a string = %q, %v", out, err)
	}

	res = integInvoke(t, ctx, integTool(t, ts, "everything__get-tiny-image"), nil)
	wantBlocks(t, "get-tiny-image", res, mcpadapter.BlockText, mcpadapter.BlockImage, mcpadapter.BlockText)
	img := res.Content[1]
	if img.MIMEType != "image/png" || !bytes.HasPrefix(img.Data, pngSignature) {
		t.Errorf("tiny image %s, %d bytes", img.MIMEType, len(img.Data))
	}
	if got, want := res.Text(), "Here's the image you requested:\n[image image/png 4 KB]\nThe image above is the MCP logo."; got != want {
		t.Errorf("tiny image text %q, want %q", got, want)
	}
	msgs := res.Messages(llms.ToolCall{ID: "call_7", FunctionCall: &llms.FunctionCall{Name: "everything__get-tiny-image"}}, mcpadapter.ImagesAsDataURL())
	if len(msgs) != 2 || msgs[1].Role != llms.ChatMessageTypeHuman {
		t.Fatalf("tiny image messages %+v", msgs)
	}
	if !slices.ContainsFunc(msgs[1].Parts, func(p llms.ContentPart) bool {
		u, ok := p.(llms.ImageURLContent)
		return ok && strings.HasPrefix(u.URL, "data:image/png;base64,iVBORw0KGgo")
	}) {
		t.Errorf("tiny image human message parts %v, want a data URL", msgs[1].Parts)
	}

	res = integInvoke(t, ctx, integTool(t, ts, "everything__get-structured-content"), map[string]any{"location": "Chicago"})
	wantBlocks(t, "get-structured-content", res, mcpadapter.BlockText)
	want := map[string]any{"temperature": float64(36), "conditions": "Light rain / drizzle", "humidity": float64(82)}
	if res.Artifact == nil || !reflect.DeepEqual(res.Artifact.StructuredContent, want) {
		t.Errorf("structured content %+v, want %v", res.Artifact, want)
	}
	if res.Text() != `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}` {
		t.Errorf("structured content text %q", res.Text())
	}

	res = integInvoke(t, ctx, integTool(t, ts, "everything__get-annotated-message"), map[string]any{"messageType": "error", "includeImage": true})
	wantBlocks(t, "get-annotated-message", res, mcpadapter.BlockText, mcpadapter.BlockImage)
	if res.Content[0].Text != "Error: Operation failed" || !bytes.HasPrefix(res.Content[1].Data, pngSignature) {
		t.Errorf("annotated message %q, image %d bytes", res.Content[0].Text, len(res.Content[1].Data))
	}
	// The text is for both audiences, the image for the user alone: the
	// app keeps it, the model does not see it.
	if ann := res.Content[1].Annotations; ann == nil || !slices.Equal(ann.Audience, []mcp.Role{"user"}) || res.Content[0].Annotations == nil || res.Content[0].Annotations.Priority != 1 {
		t.Errorf("annotations %+v, %+v; want the image for the user", res.Content[0].Annotations, ann)
	}
	if msgs := res.Messages(mcpadaptertest.ToolCall("c1", "everything__get-annotated-message", "{}")); res.Text() != "Error: Operation failed" || len(msgs) != 1 {
		t.Errorf("for the model: Text() = %q, %d messages; want the text alone", res.Text(), len(msgs))
	}

	res = integInvoke(t, ctx, integTool(t, ts, "everything__get-resource-links"), map[string]any{"count": 2})
	wantBlocks(t, "get-resource-links", res, mcpadapter.BlockText, mcpadapter.BlockLink, mcpadapter.BlockLink)
	for i, want := range []mcpadapter.Block{
		{Type: mcpadapter.BlockLink, URI: "demo://resource/dynamic/blob/1", Name: "Blob Resource 1", MIMEType: "text/plain", Description: "Resource 1: plaintext resource"},
		{Type: mcpadapter.BlockLink, URI: "demo://resource/dynamic/text/2", Name: "Text Resource 2", MIMEType: "text/plain", Description: "Resource 2: plaintext resource"},
	} {
		if got := res.Content[i+1]; !reflect.DeepEqual(got, want) {
			t.Errorf("link %d = %+v, want %+v", i+1, got, want)
		}
	}
	if !strings.Contains(res.Text(), "[link Blob Resource 1 text/plain <demo://resource/dynamic/blob/1>]") {
		t.Errorf("links text %q", res.Text())
	}

	ref := integTool(t, ts, "everything__get-resource-reference")
	res = integInvoke(t, ctx, ref, map[string]any{"resourceType": "Text", "resourceId": 1})
	wantBlocks(t, "get-resource-reference Text", res, mcpadapter.BlockText, mcpadapter.BlockText, mcpadapter.BlockText)
	if b := res.Content[1]; b.URI != "demo://resource/dynamic/text/1" || b.MIMEType != "text/plain" || !strings.HasPrefix(b.Text, "Resource 1: This is a plaintext resource") {
		t.Errorf("embedded text resource %+v", b)
	}
	res = integInvoke(t, ctx, ref, map[string]any{"resourceType": "Blob", "resourceId": 2})
	wantBlocks(t, "get-resource-reference Blob", res, mcpadapter.BlockText, mcpadapter.BlockFile, mcpadapter.BlockText)
	if b := res.Content[1]; b.URI != "demo://resource/dynamic/blob/2" || !bytes.HasPrefix(b.Data, []byte("Resource 2: This is a base64 blob")) {
		t.Errorf("embedded blob %+v", b)
	}
}

// npmEverythingAgent runs a langchaingo agent (OpenAIFunctionsAgent in an
// Executor) whose scripted model calls get-sum and answers.
func npmEverythingAgent(t *testing.T, ctx context.Context, ts mcpadapter.Toolset) {
	t.Helper()
	model := mcpadaptertest.NewModel(
		mcpadaptertest.ToolCalls(mcpadaptertest.ToolCall("call_1", "everything__get-sum", `{"a":40,"b":2}`)),
		mcpadaptertest.FinalAnswer("40 + 2 = 42"),
	)
	exec := agents.NewExecutor(agents.NewOpenAIFunctionsAgent(model, ts.Tools()), agents.WithMaxIterations(3))
	out, err := chains.Run(ctx, exec, "What is 40 + 2?")
	if err != nil || out != "40 + 2 = 42" {
		t.Fatalf("agent run = %q, %v", out, err)
	}
	reqs := model.Requests()
	last := reqs[len(reqs)-1]
	if !slices.ContainsFunc(last, func(m llms.MessageContent) bool {
		r, ok := m.Parts[0].(llms.ToolCallResponse)
		return ok && m.Role == llms.ChatMessageTypeTool && r.Content == "The sum of 40 and 2 is 42."
	}) {
		t.Errorf("the model never saw the tool's answer: %+v", last)
	}
}

// TestIntegrationTimeoutNamesSettingNPM: a DefaultToolTimeout of 500 ms on
// server-everything's trigger-long-running-operation (10 s) fails the call
// with an error that names Config.DefaultToolTimeout and is still a
// context.DeadlineExceeded (issue 33).
func TestIntegrationTimeoutNamesSettingNPM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
	defer cancel()
	a := integAdapter(t, npmEverything(t, "stdio"), func(cfg *mcpadapter.Config) {
		cfg.DefaultToolTimeout = 500 * time.Millisecond
	})
	tool := integTool(t, integTools(t, ctx, a), "everything__trigger-long-running-operation")
	_, err := tool.Invoke(ctx, map[string]any{"duration": 10, "steps": 5})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Invoke() error = %v, want a context.DeadlineExceeded", err)
	}
	if want := "did not answer within 500ms (Config.DefaultToolTimeout)"; !strings.Contains(err.Error(), want) {
		t.Errorf("Invoke() error = %q, want it to say %q", err, want)
	}
}
