package mcpadapter

// Fidelity: exactly what the server meant reaches the model and the app.
// Each test runs real go-sdk servers in both eras where the SDK can send
// the case, and the raw JSON-RPC peer where it cannot; the npm servers are
// in fidelity_npm_test.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/internal/modeltext"
	"github.com/mcpadapter/mcpadapter/internal/outputschema"
	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// modes are the two eras, forced on the client.
var modes = []struct {
	name string
	mode Mode
}{
	{"modern", ModeModern},
	{"legacy", ModeLegacy},
}

// sdkServer is an in-memory server entry for the go-sdk server s.
func sdkServer(s *mcp.Server, mode Mode) Server {
	return Server{Mode: mode, Transport: func(ctx context.Context) (mcp.Transport, error) {
		st, ct := mcp.NewInMemoryTransports()
		_, err := s.Connect(context.WithoutCancel(ctx), st, nil)
		return ct, err
	}}
}

// listSDK lists the tools of s as server "srv" in mode, with cfg and opts.
func listSDK(t *testing.T, s *mcp.Server, mode Mode, cfg Config, opts ...ListOption) (*Adapter, Toolset) {
	t.Helper()
	cfg.Servers = map[string]Server{"srv": sdkServer(s, mode)}
	a := newAdapter(t, cfg)
	ts, err := a.ListTools(t.Context(), opts...)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	return a, ts
}

// returns is a low-level tool handler that always answers res.
func returns(res *mcp.CallToolResult) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, nil }
}

// object is the empty object schema.
var object = json.RawMessage(`{"type":"object"}`)

// TestStructuredTextNeverBase64: a result whose only content is an image,
// mirrored into its structured content as base64 (server-filesystem's
// read_media_file), gives the model a placeholder, never the payload; with
// no media block, the payload inside the structured content becomes a
// placeholder; a huge structured content is cut. The app keeps it all.
func TestStructuredTextNeverBase64(t *testing.T) {
	img := bytes.Repeat(pngData, 4000) // 280 KB
	b64 := base64Std(img)
	s := mcp.NewServer(&mcp.Implementation{Name: "media", Version: "v1"}, nil)
	mirrored := map[string]any{"content": []any{map[string]any{"type": "image", "data": b64, "mimeType": "image/png"}}}
	s.AddTool(&mcp.Tool{Name: "mirror", InputSchema: object}, returns(&mcp.CallToolResult{
		Content: []mcp.Content{&mcp.ImageContent{Data: img, MIMEType: "image/png"}}, StructuredContent: mirrored}))
	s.AddTool(&mcp.Tool{Name: "audio_only", InputSchema: object}, returns(&mcp.CallToolResult{
		Content: []mcp.Content{}, StructuredContent: map[string]any{"audio": b64}}))
	s.AddTool(&mcp.Tool{Name: "blob", InputSchema: object}, returns(&mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.bin", MIMEType: "application/octet-stream", Blob: img}}},
		StructuredContent: map[string]any{"blob": b64}}))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, ts := listSDK(t, s, m.mode, Config{})
			for _, tc := range []struct{ tool, want string }{
				{"mirror", "[image image/png 273 KB]"},
				{"audio_only", `{"audio":"[base64 data, 273 KB]"}`},
				{"blob", "[file application/octet-stream 273 KB file:///a.bin]"},
			} {
				tool := lookup(t, ts, "srv__"+tc.tool)
				text, err := tool.Call(t.Context(), "{}")
				if err != nil || text != tc.want {
					t.Errorf("%s: Call() = %.200q, %v; want %q", tc.tool, text, err, tc.want)
				}
				res, err := tool.Invoke(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				msgs := res.Messages(testCall(tc.tool))
				if got := msgs[0].Parts[0].(llms.ToolCallResponse).Content; got != tc.want {
					t.Errorf("%s: tool message = %.200q, want %q", tc.tool, got, tc.want)
				}
				if sc, _ := json.Marshal(res.Artifact.StructuredContent); !bytes.Contains(sc, []byte(b64)) {
					t.Errorf("%s: Artifact lost the payload", tc.tool)
				}
			}
		})
	}
}

// base64Std is standard base64.
func base64Std(b []byte) string {
	out, _ := json.Marshal(b) // []byte marshals as a base64 string
	return string(out[1 : len(out)-1])
}

// TestLosslessBlocks: annotations, _meta, a link's title, description, size
// and icons and an embedded resource's _meta survive the adapter's path and
// Result's JSON, in both eras. (The goldens pin the whole conversion.)
func TestLosslessBlocks(t *testing.T) {
	size := int64(4096)
	ann := &mcp.Annotations{Audience: []mcp.Role{"assistant"}, Priority: 0.7, LastModified: "2026-01-02T03:04:05Z"}
	s := mcp.NewServer(&mcp.Implementation{Name: "lossless", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "all", InputSchema: object}, returns(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "t", Annotations: ann, Meta: mcp.Meta{"k": "text"}},
		&mcp.ResourceLink{URI: "file:///r.csv", Name: "r.csv", Title: "Report", Description: "Q3 figures", MIMEType: "text/csv", Size: &size,
			Icons:       []mcp.Icon{{Source: "https://example.com/i.png", MIMEType: "image/png", Sizes: []string{"16x16"}, Theme: "dark"}},
			Annotations: ann, Meta: mcp.Meta{"k": "link"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///n.txt", Text: "n", Meta: mcp.Meta{"k": "contents"}},
			Annotations: ann, Meta: mcp.Meta{"k": "item"}},
	}}))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, ts := listSDK(t, s, m.mode, Config{})
			res, err := lookup(t, ts, "srv__all").Invoke(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var back Result
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			for i, want := range []string{"text", "link", "item"} {
				blk := back.Content[i]
				if blk.Meta["k"] != want || blk.Annotations == nil || blk.Annotations.Priority != 0.7 ||
					blk.Annotations.LastModified != ann.LastModified || len(blk.Annotations.Audience) != 1 {
					t.Errorf("block %d after JSON = %+v, want its annotations and _meta", i, blk)
				}
			}
			link := back.Content[1]
			if link.Title != "Report" || link.Description != "Q3 figures" || link.Size == nil || *link.Size != size ||
				len(link.Icons) != 1 || link.Icons[0].Theme != "dark" || link.Icons[0].Sizes[0] != "16x16" {
				t.Errorf("link after JSON = %+v", link)
			}
			if back.Content[2].ResourceMeta["k"] != "contents" {
				t.Errorf("embedded resource after JSON = %+v, want the contents' _meta", back.Content[2])
			}
		})
	}
}

// TestAudience: items for the user only stay in Result.Content and reach
// neither Text, Parts, Messages nor HandleToolCalls; items for the
// assistant, for both, or for nobody in particular do.
func TestAudience(t *testing.T) {
	user := &mcp.Annotations{Audience: []mcp.Role{"user"}}
	s := mcp.NewServer(&mcp.Implementation{Name: "audience", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "mixed", InputSchema: object}, returns(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "for the model", Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant"}}},
		&mcp.TextContent{Text: "secret for the user", Annotations: user},
		&mcp.ImageContent{Data: pngData, MIMEType: "image/png", Annotations: user},
		&mcp.AudioContent{Data: wavData, MIMEType: "audio/wav", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user", "assistant"}}},
		&mcp.ResourceLink{URI: "file:///u.txt", Name: "u.txt", Annotations: user},
	}}))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, ts := listSDK(t, s, m.mode, Config{})
			tool := lookup(t, ts, "srv__mixed")
			res, err := tool.Invoke(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Content) != 5 {
				t.Fatalf("Content has %d blocks, want all 5", len(res.Content))
			}
			const want = "for the model\n[audio audio/wav 20 B]"
			if got := res.Text(); got != want {
				t.Errorf("Text() = %q, want %q", got, want)
			}
			if parts := res.Parts(); len(parts) != 2 {
				t.Errorf("Parts() = %v, want the model's text and the audio", parts)
			}
			msgs, err := ts.HandleToolCalls(t.Context(), &llms.ContentChoice{ToolCalls: []llms.ToolCall{mcpadaptertest.ToolCall("c1", "srv__mixed", `{}`)}})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(msgs)
			if len(msgs) != 3 || bytes.Contains(b, []byte("secret")) || bytes.Contains(b, []byte(base64Std(pngData))) || bytes.Contains(b, []byte("u.txt")) {
				t.Errorf("HandleToolCalls() = %s, want the AI, tool and audio messages without the user's items", b)
			}
		})
	}
}

// TestAppOnlyTools: an MCP Apps tool whose visibility leaves out the model
// is not offered to it, and the app still reaches it with IncludeAppOnly.
func TestAppOnlyTools(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "apps", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "shown", InputSchema: object, Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://x/app.html"}}}, returns(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "shown"}}}))
	s.AddTool(&mcp.Tool{Name: "both", InputSchema: object, Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app", "model"}}}}, returns(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "both"}}}))
	s.AddTool(&mcp.Tool{Name: "poll", InputSchema: object, Meta: mcp.Meta{"ui": map[string]any{"visibility": []any{"app"}}}}, returns(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "polled"}}}))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			a, ts := listSDK(t, s, m.mode, Config{})
			if got := strings.Join(toolNames(ts), ","); got != "srv__both,srv__shown" {
				t.Fatalf("ListTools() = %s, want the model-visible tools", got)
			}
			all, err := a.ListTools(t.Context(), IncludeAppOnly())
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(toolNames(all), ","); got != "srv__both,srv__poll,srv__shown" {
				t.Fatalf("ListTools(IncludeAppOnly()) = %s, want every tool", got)
			}
			poll := lookup(t, all, "srv__poll")
			if !poll.AppOnly() || lookup(t, all, "srv__both").AppOnly() {
				t.Errorf("AppOnly() wrong")
			}
			sets, err := a.ListToolsets(t.Context())
			if err != nil || len(sets["srv"]) != 2 {
				t.Errorf("ListToolsets() = %v, %v; want the two model-visible tools", sets, err)
			}
			// The model-facing views of the full set still leave it out.
			if n := len(all.Tools()); n != 2 {
				t.Errorf("Tools() has %d tools, want 2", n)
			}
			for _, lt := range all.LLMTools() {
				if lt.Function.Name == "srv__poll" {
					t.Errorf("LLMTools() offers the app-only tool")
				}
			}
			msgs, err := all.HandleToolCalls(t.Context(), &llms.ContentChoice{ToolCalls: []llms.ToolCall{mcpadaptertest.ToolCall("c1", "srv__poll", `{}`)}})
			if err != nil || len(msgs) != 2 || !strings.Contains(msgs[1].Parts[0].(llms.ToolCallResponse).Content, "is not a valid tool") {
				t.Errorf("HandleToolCalls(poll) = %v, %v; want an unknown-tool message", msgs, err)
			}
			// The app's way.
			if res, err := poll.Invoke(t.Context(), nil); err != nil || res.Text() != "polled" {
				t.Errorf("Invoke(poll) = %v, %v", resultText(res), err)
			}
		})
	}
}

// TestNamelessToolsDropped: a listed tool without a name is dropped with a
// debug log (a null entry the SDK drops itself); the go-sdk cannot list
// one, the raw peer can.
func TestNamelessToolsDropped(t *testing.T) {
	peer := faultserver.NewPeer(faultserver.PeerOptions{Tools: []string{
		`{"description":"no name","inputSchema":{"type":"object"}}`,
		`{"name":"","inputSchema":{"type":"object"}}`,
		`null`,
		faultserver.Descriptor(faultserver.ToolOK),
	}})
	var logs syncBuffer
	a := newAdapter(t, Config{
		Servers: map[string]Server{"test": {Transport: peer.Transport()}},
		Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(toolNames(ts), ","); got != "test__ok" {
		t.Errorf("ListTools() = %s, want only test__ok", got)
	}
	if n := strings.Count(logs.String(), "dropped a listed tool without a name"); n != 2 {
		t.Errorf("%d debug logs of dropped tools, want 2:\n%s", n, logs.String())
	}
}

// TestOutputSchemaValidation: structured content that breaks the tool's
// outputSchema fails the call with an *OutputSchemaError naming the path;
// matching content, isError results and results without structured
// content pass.
func TestOutputSchemaValidation(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"sky":{"type":"string"},"tempC":{"type":"number"}},"required":["sky"]}`)
	s := mcp.NewServer(&mcp.Implementation{Name: "output", Version: "v1"}, nil)
	add := func(name string, res *mcp.CallToolResult) {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: object, OutputSchema: schema}, returns(res))
	}
	add("good", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: map[string]any{"sky": "clear", "tempC": 21.5}})
	add("bad", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: map[string]any{"sky": 42}})
	add("missing", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}, StructuredContent: map[string]any{"tempC": 1}})
	add("error", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "failed"}}, StructuredContent: map[string]any{"code": 500}, IsError: true})
	add("none", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no structure"}}})
	// A reference cycle would overflow the validator's stack: not validated.
	s.AddTool(&mcp.Tool{Name: "cyclic", InputSchema: object, OutputSchema: json.RawMessage(`{"$ref":"#","type":"object"}`)},
		returns(&mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"x": 1}}))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, ts := listSDK(t, s, m.mode, Config{})
			for _, tool := range []string{"good", "error", "none", "cyclic"} {
				if _, err := lookup(t, ts, "srv__"+tool).Invoke(t.Context(), nil); err != nil {
					t.Errorf("Invoke(%s) error = %v, want a result", tool, err)
				}
			}
			for _, tc := range []struct{ tool, path, reason string }{
				{"bad", "/properties/sky", `want "string"`},
				{"missing", "", "sky"},
			} {
				tool := lookup(t, ts, "srv__"+tc.tool)
				for range 2 { // the schema is resolved once, used twice
					_, err := tool.Invoke(t.Context(), nil)
					var oe *OutputSchemaError
					var se *ServerError
					if !errors.As(err, &oe) || !errors.As(err, &se) || se.Server != "srv" {
						t.Fatalf("Invoke(%s) error = %v, want *OutputSchemaError in a *ServerError", tc.tool, err)
					}
					if oe.Tool != tc.tool || oe.Path != tc.path || !strings.Contains(oe.Reason, tc.reason) {
						t.Errorf("Invoke(%s) error = %+v, want path %q and a reason with %q", tc.tool, oe, tc.path, tc.reason)
					}
				}
				if _, err := tool.Call(t.Context(), "{}"); !errors.As(err, new(*OutputSchemaError)) {
					t.Errorf("Call(%s) error = %v, want *OutputSchemaError", tc.tool, err)
				}
			}
		})
	}
}

// TestOutputErrorBounded: the validator quotes the content; the error does
// not grow with it.
func TestOutputErrorBounded(t *testing.T) {
	e := outputError("x", errors.New("validating root: validating /properties/a: type: "+strings.Repeat("v", 1<<20)+` has type "string"`))
	if e.Path != "/properties/a" || len(e.Error()) > 2*outputschema.MaxReason {
		t.Errorf("outputError = %.100q (path %q), want a bounded error at /properties/a", e.Error(), e.Path)
	}
}

// TestParametersAddsType: a schema without "type" gets "type": "object"
// (OpenAI rejects parameters without it), and nothing else changes; the
// go-sdk cannot list such a tool, the raw peer can.
func TestParametersAddsType(t *testing.T) {
	peer := faultserver.NewPeer(faultserver.PeerOptions{Tools: []string{
		`{"name":"untyped","inputSchema":{"properties":{"q":{"type":"string"}},"required":["q"]}}`,
	}})
	a := newAdapter(t, Config{Servers: map[string]Server{"p": {Transport: peer.Transport()}}})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tool := lookup(t, ts, "p__untyped")
	want := `{"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}`
	if b, _ := json.Marshal(tool.Parameters()); string(b) != want {
		t.Errorf("Parameters() = %s, want %s", b, want)
	}
	if b, _ := json.Marshal(tool.LLMTool().Function.Parameters); string(b) != want {
		t.Errorf("LLMTool() parameters = %s, want %s", b, want)
	}
	if _, ok := tool.Descriptor().InputSchema["type"]; ok {
		t.Errorf("Descriptor() changed: %v", tool.Descriptor().InputSchema)
	}
}

// TestLiveElicitationWireErrors: when an ElicitationHandler's answer is
// refused, or the handler fails, the server gets a JSON-RPC error with a
// standard code and no adapter prefixes. Live requests exist in the legacy
// era only.
func TestLiveElicitationWireErrors(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: object}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_, err := req.Session.Elicit(ctx, testserver.DateRequest())
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("no JSON-RPC error: %v", err)}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%d %s", we.Code, we.Message)}}}, nil
	})
	tests := []struct {
		name    string
		handler func(context.Context, ElicitationRequest) (Answer, error)
		want    string
	}{
		{"answer breaks the schema", func(context.Context, ElicitationRequest) (Answer, error) {
			return Answer{Action: Accept, Content: map[string]any{"date": 42}}, nil
		}, "-32603 the client's answer does not fit the elicitation request"},
		{"content on a decline", func(context.Context, ElicitationRequest) (Answer, error) {
			return Answer{Action: Decline, Content: map[string]any{"date": "2026-01-01"}}, nil
		}, "-32603 the client's answer does not fit the elicitation request"},
		{"handler fails", func(context.Context, ElicitationRequest) (Answer, error) {
			return Answer{}, errors.New("no user around")
		}, "-32603 no user around"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ts := listSDK(t, s, ModeLegacy, Config{ElicitationHandler: tt.handler})
			res, err := lookup(t, ts, "srv__ask").Invoke(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Text(); got != tt.want {
				t.Errorf("the server saw %q, want %q", got, tt.want)
			}
		})
	}
}

// TestServerTitleAndReservedMeta: ServerInfo and the tools' metadata carry
// the server's title; Result.Meta keeps the server's own keys and leaves out
// the reserved io.modelcontextprotocol/* ones (go-sdk's modern server puts
// its serverInfo on every result).
func TestServerTitleAndReservedMeta(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "titled", Title: "The Titled Server", Version: "2.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "traced", InputSchema: object}, returns(&mcp.CallToolResult{
		Meta: mcp.Meta{"acme/trace": "t-1", "io.modelcontextprotocol/related": "x"}, Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}))
	s.AddTool(&mcp.Tool{Name: "plain", InputSchema: object}, returns(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			a, ts := listSDK(t, s, m.mode, Config{})
			info, err := a.ServerInfo(t.Context(), "srv")
			if err != nil || info.Title != "The Titled Server" || info.Name != "titled" {
				t.Fatalf("ServerInfo() = %+v, %v; want the title", info, err)
			}
			tool := lookup(t, ts, "srv__traced")
			if srv := tool.Metadata().Server(); srv == nil || srv.Title != "The Titled Server" {
				t.Errorf("Metadata().Server() = %+v, want the title", srv)
			}
			b, _ := json.Marshal(tool.Metadata())
			if !bytes.Contains(b, []byte(`"title":"The Titled Server"`)) {
				t.Errorf("Metadata JSON = %s, want the title", b)
			}
			res, err := tool.Invoke(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Meta) != 1 || res.Meta["acme/trace"] != "t-1" {
				t.Errorf("Meta = %v, want only acme/trace", res.Meta)
			}
			if res, err := lookup(t, ts, "srv__plain").Invoke(t.Context(), nil); err != nil || res.Meta != nil {
				t.Errorf("Meta of a result with only reserved keys = %v, %v; want nil", res.Meta, err)
			}
		})
	}
}

// TestJSONRPCErrorsForTheModel: a healthy server's JSON-RPC error (as
// server-postgres sends for every SQL error) is an isError result for the
// model-facing calls, which go on; Invoke keeps the typed error; failures
// of the connection still end the run.
func TestJSONRPCErrorsForTheModel(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "pg", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "query", InputSchema: object}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: `relation "userz" does not exist`}
	})
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: object}, returns(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "after"}}}))
	const want = `relation "userz" does not exist`
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			_, ts := listSDK(t, s, m.mode, Config{})
			query := lookup(t, ts, "srv__query")

			_, err := query.Invoke(t.Context(), nil)
			var se *ServerError
			var we *jsonrpc.Error
			if !errors.As(err, &se) || !errors.As(err, &we) || we.Code != jsonrpc.CodeInternalError {
				t.Errorf("Invoke() error = %v, want a *ServerError with the -32603", err)
			}
			if text, err := query.Call(t.Context(), "{}"); err != nil || text != want {
				t.Errorf("Call() = %q, %v; want the server's message", text, err)
			}
			msgs, err := ts.HandleToolCalls(t.Context(), &llms.ContentChoice{ToolCalls: []llms.ToolCall{
				mcpadaptertest.ToolCall("c1", "srv__query", `{}`),
				mcpadaptertest.ToolCall("c2", "srv__echo", `{}`),
			}})
			if err != nil || len(msgs) != 4 {
				t.Fatalf("HandleToolCalls() = %d messages, %v; want both calls answered", len(msgs), err)
			}
			for i, w := range []string{want, "after"} {
				if got := msgs[2*i+1].Parts[0].(llms.ToolCallResponse).Content; got != w {
					t.Errorf("tool message %d = %q, want %q", i, got, w)
				}
			}
		})
	}
	t.Run("connection failures still end the run", func(t *testing.T) {
		peer := faultserver.NewPeer(faultserver.PeerOptions{Tools: faultserver.BasicCatalog()})
		a := newAdapter(t, Config{Servers: map[string]Server{"p": {Transport: peer.Transport()}}, MaxMessageBytes: 4096})
		ts, err := a.ListTools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		// A message the adapter refused: its substitute error response is
		// no answer of the server.
		if _, err := lookup(t, ts, "p__big").Call(t.Context(), `{"size":10000}`); !errors.Is(err, ErrMessageTooLarge) {
			t.Errorf("Call(big) error = %v, want ErrMessageTooLarge", err)
		}
		// The connection dies with the call.
		if _, err := lookup(t, ts, "p__die").Call(t.Context(), "{}"); !errors.As(err, new(*ServerError)) {
			t.Errorf("Call(die) error = %v, want a *ServerError", err)
		}
	})
}

// TestOutputSchemaValidationOnResume: the result of a resumed call is
// validated too, also on an Adapter that has not listed the tool.
func TestOutputSchemaValidationOnResume(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "rounds", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: object, OutputSchema: json.RawMessage(`{"type":"object","properties":{"tempC":{"type":"number"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if len(req.Params.InputResponses) == 0 {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"date": testserver.DateRequest()}, RequestState: "s"}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "warm"}}, StructuredContent: map[string]any{"tempC": "warm"}}, nil
		})
	a, ts := listSDK(t, s, ModeModern, Config{})
	_, err := lookup(t, ts, "srv__ask").Invoke(t.Context(), nil)
	intr := must(t).interrupt(nil, err)
	answers := map[string]Answer{"date": {Action: Accept, Content: map[string]any{"date": "2026-09-18"}}}
	if _, err := a.Resume(t.Context(), intr, Answered(answers)); !errors.As(err, new(*OutputSchemaError)) {
		t.Errorf("Resume() error = %v, want *OutputSchemaError", err)
	}
	stored, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	var decoded Interrupt
	if err := json.Unmarshal(stored, &decoded); err != nil {
		t.Fatal(err)
	}
	fresh := newAdapter(t, Config{Servers: a.cfg.Servers})
	if _, err := fresh.Resume(t.Context(), &decoded, Answered(answers)); !errors.As(err, new(*OutputSchemaError)) {
		t.Errorf("Resume() on a fresh Adapter error = %v, want *OutputSchemaError", err)
	}
}

// TestStructuredTextBounded: structured content over 16 KB reaches the model
// cut, as valid UTF-8, with a note of its size; the Artifact keeps it all.
func TestStructuredTextBounded(t *testing.T) {
	rows := make([]any, 4000)
	for i := range rows {
		rows[i] = "row é"
	}
	res := &Result{Artifact: &Artifact{StructuredContent: map[string]any{"rows": rows}}}
	text := res.Text()
	const note = "… [structured content cut: 35 KB in all]"
	if !strings.HasSuffix(text, note) || len(text) > modeltext.MaxStructured+len(note) || !utf8.ValidString(text) || !strings.HasPrefix(text, `{"rows":["row é",`) {
		t.Errorf("Text() = %d bytes ending %q, want at most 16 KB of valid UTF-8 and the note", len(text), text[max(0, len(text)-60):])
	}
	if parts := res.Parts(); len(parts) != 1 || parts[0].(llms.TextContent).Text != text {
		t.Errorf("Parts() differ from Text()")
	}
	if got := res.Artifact.StructuredContent.(map[string]any)["rows"].([]any); len(got) != 4000 {
		t.Errorf("Artifact changed: %d rows", len(got))
	}
	// `{"ss":"` is 7 bytes: the bound falls inside a 2-byte rune.
	cut := (&Result{Artifact: &Artifact{StructuredContent: map[string]any{"ss": strings.Repeat("é", 10000)}}}).Text()
	if !utf8.ValidString(cut) || !strings.HasPrefix(cut, `{"ss":"é`) || len(cut) > modeltext.MaxStructured+len(note) {
		t.Errorf("Text() cut a rune: %q", cut[max(0, len(cut)-60):])
	}
}
