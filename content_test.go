package mcpadapter

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// update makes checkGolden rewrite golden files instead of comparing:
// go test -run TestX -update. Read the diff before committing.
var update = flag.Bool("update", false, "rewrite golden files")

// checkGolden compares got with the golden file testdata/<name>, or writes
// it under -update (and reads it back, so a rewrite is idempotent).
func checkGolden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", filepath.FromSlash(name))
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (-want +got):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// lineDiff is a minimal line diff: the lines from the first difference on,
// up to a few lines each side.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d\n", i+1)
	for j := i; j < len(w) && j < i+8; j++ {
		fmt.Fprintf(&b, "-%s\n", w[j])
	}
	for j := i; j < len(g) && j < i+8; j++ {
		fmt.Fprintf(&b, "+%s\n", g[j])
	}
	return b.String()
}

// Media fixtures.
var (
	// pngData is a 1x1 PNG.
	pngData = mustBase64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
	wavData = []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00")
	pdfData = []byte("%PDF-1.4\n%%EOF\n")
)

// linkSize is the size the annotated link declares.
var linkSize = func() *int64 { n := int64(2048); return &n }()

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// contentCases are the tools of the content test server, one per case; each
// returns its result.
var contentCases = []struct {
	name   string
	result *mcp.CallToolResult
}{
	{"text", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "hello"},
		&mcp.TextContent{Text: "world"},
	}}},
	{"image", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "a pixel"},
		&mcp.ImageContent{Data: pngData, MIMEType: "image/png"},
	}}},
	{"audio", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.AudioContent{Data: wavData, MIMEType: "audio/wav"},
	}}},
	{"embedded_text", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "some notes"}},
	}}},
	{"embedded_image", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///pixel.png", MIMEType: "image/png", Blob: pngData}},
	}}},
	{"embedded_pdf", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "the report"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///report.pdf", MIMEType: "application/pdf", Blob: pdfData}},
	}}},
	{"link", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ResourceLink{URI: "file:///data.csv", Name: "data.csv", Title: "Data", MIMEType: "text/csv"},
	}}},
	{"link_image", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ResourceLink{URI: "https://example.com/cat.png", Name: "cat.png", MIMEType: "image/png"},
		&mcp.ResourceLink{URI: "file:///dog.png", Name: "dog.png", MIMEType: "image/png"},
	}}},
	{"structured", &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: `{"sky":"clear","tempC":21.5}`}},
		StructuredContent: map[string]any{"sky": "clear", "tempC": 21.5},
	}},
	{"structured_only", &mcp.CallToolResult{
		Content:           []mcp.Content{},
		StructuredContent: map[string]any{"sky": "clear", "tempC": 21.5},
	}},
	{"structured_with_image", &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.ImageContent{Data: pngData, MIMEType: "image/png"}},
		StructuredContent: []any{"a", 1.0},
	}},
	{"structured_error", &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "city not found"}},
		StructuredContent: map[string]any{"code": 404.0},
		IsError:           true,
	}},
	{"error_empty", &mcp.CallToolResult{Content: []mcp.Content{}, IsError: true}},
	{"empty", &mcp.CallToolResult{Content: []mcp.Content{}}},
	{"meta", &mcp.CallToolResult{
		Meta:    mcp.Meta{"acme/trace": "t-1", "acme/cost": 3.0},
		Content: []mcp.Content{&mcp.TextContent{Text: "traced"}},
	}},
	{"annotated", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "for the model", Meta: mcp.Meta{"acme/id": "t1"},
			Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant"}, Priority: 0.9, LastModified: "2026-01-02T03:04:05Z"}},
		&mcp.TextContent{Text: "for the user only", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}}},
		&mcp.ImageContent{Data: pngData, MIMEType: "image/png", Meta: mcp.Meta{"acme/id": "i1"},
			Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}}},
		&mcp.ImageContent{Data: pngData, MIMEType: "image/png", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user", "assistant"}}},
		&mcp.AudioContent{Data: wavData, MIMEType: "audio/wav", Meta: mcp.Meta{"acme/id": "a1"}, Annotations: &mcp.Annotations{Priority: 0.2}},
		&mcp.ResourceLink{URI: "file:///data.csv", Name: "data.csv", Title: "Data", Description: "The figures.", MIMEType: "text/csv",
			Size: linkSize, Icons: []mcp.Icon{{Source: "https://example.com/csv.png", MIMEType: "image/png", Sizes: []string{"48x48"}}},
			Meta: mcp.Meta{"acme/id": "l1"}, Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant"}, Priority: 0.5}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "some notes", Meta: mcp.Meta{"acme/rev": 2.0}},
			Meta: mcp.Meta{"acme/id": "e1"}, Annotations: &mcp.Annotations{LastModified: "2026-01-02T03:04:05Z"}},
	}}},
	{"user_only", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.ImageContent{Data: pngData, MIMEType: "image/png", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}}},
	}}},
	{"structured_base64", &mcp.CallToolResult{
		Content: []mcp.Content{},
		StructuredContent: map[string]any{"content": []any{map[string]any{"type": "image", "mimeType": "image/png",
			"data": base64.StdEncoding.EncodeToString(bytes.Repeat(pngData, 40))}}, "preview": "data:image/png;base64,iVBORw0KGgo="},
	}},
	{"mixed", &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "everything at once"},
		&mcp.ImageContent{Data: pngData, MIMEType: "image/png"},
		&mcp.AudioContent{Data: wavData, MIMEType: "audio/wav"},
		&mcp.ResourceLink{URI: "file:///data.csv", Name: "data.csv", MIMEType: "text/csv"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///report.pdf", MIMEType: "application/pdf", Blob: pdfData}},
	}}},
}

// newContentServer returns a go-sdk server with one tool per content case.
func newContentServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "content-test", Version: "v1"}, nil)
	for _, c := range contentCases {
		s.AddTool(&mcp.Tool{Name: c.name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return c.result, nil })
	}
	return s
}

// eras are the two protocol eras, with the client options that select them.
var eras = []struct {
	name    string
	opts    *mcp.ClientSessionOptions
	version string
}{
	{"modern", nil, "2026-07-28"},
	{"legacy", &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}, "2025-11-25"},
}

// connectInMemory connects a client to s in memory, through wrap when it is
// not nil, and checks the negotiated protocol version.
func connectInMemory(t *testing.T, s *mcp.Server, opts *mcp.ClientSessionOptions, version string, wrap func(mcp.Transport) mcp.Transport) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	var transport mcp.Transport = ct
	if wrap != nil {
		transport = wrap(ct)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "content-client", Version: "v1"}, nil).Connect(t.Context(), transport, opts)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol %q, want %q", got, version)
	}
	return cs
}

// testCall is the tool call the golden messages answer.
func testCall(tool string) llms.ToolCall {
	return llms.ToolCall{ID: "call_1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "srv__" + tool, Arguments: "{}"}}
}

// renderResult is the golden form of a Result and of everything derived
// from it.
func renderResult(t *testing.T, r *Result, call llms.ToolCall) []byte {
	t.Helper()
	v := struct {
		Result          *Result               `json:"result"`
		Text            string                `json:"text"`
		Parts           []llms.ContentPart    `json:"parts"`
		PartsDataURL    []llms.ContentPart    `json:"partsDataURL"`
		Messages        []llms.MessageContent `json:"messages"`
		MessagesDataURL []llms.MessageContent `json:"messagesDataURL"`
	}{r, r.Text(), r.Parts(), r.Parts(ImagesAsDataURL()), r.Messages(call), r.Messages(call, ImagesAsDataURL())}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return append(b, '\n')
}

// TestContentGolden calls every content tool of a real go-sdk server in
// both eras and compares the converted Result, its Text, Parts and Messages
// with testdata/content/<case>.<era>.json. The same call through
// sanitizeTransport must give the same Result.
func TestContentGolden(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			s := newContentServer()
			raw := connectInMemory(t, s, era.opts, era.version, nil)
			wrapped := connectInMemory(t, s, era.opts, era.version, sanitizeTransport)
			for _, c := range contentCases {
				t.Run(c.name, func(t *testing.T) {
					res, err := raw.CallTool(t.Context(), &mcp.CallToolParams{Name: c.name})
					if err != nil {
						t.Fatalf("CallTool(%q): %v", c.name, err)
					}
					got := newResult(res)
					checkGolden(t, "content/"+c.name+"."+era.name+".json", renderResult(t, got, testCall(c.name)))

					res2, err := wrapped.CallTool(t.Context(), &mcp.CallToolParams{Name: c.name})
					if err != nil {
						t.Fatalf("CallTool(%q) through sanitizeTransport: %v", c.name, err)
					}
					if got2 := newResult(res2); !reflect.DeepEqual(got2, got) {
						t.Errorf("through sanitizeTransport: %+v, want %+v", got2, got)
					}
				})
			}
		})
	}
}

// TestResultText pins Text, Parts and Messages on hand-built results,
// including ones no server conversion produces.
func TestResultText(t *testing.T) {
	big := make([]byte, 14*1024+100)
	tests := []struct {
		name string
		r    *Result
		want string
	}{
		{"nil", nil, ""},
		{"zero", &Result{}, ""},
		{"zero error", &Result{IsError: true}, emptyErrorText},
		{"blank error", &Result{IsError: true, Content: []Block{{Type: BlockText, Text: " \n"}}}, emptyErrorText},
		{"texts", &Result{Content: []Block{{Type: BlockText, Text: "a"}, {Type: BlockText, Text: "b"}}}, "a\nb"},
		{"image size", &Result{Content: []Block{{Type: BlockImage, MIMEType: "image/png", Data: big}}}, "[image image/png 14 KB]"},
		{"audio size", &Result{Content: []Block{{Type: BlockAudio, MIMEType: "audio/wav", Data: make([]byte, 2048)}}}, "[audio audio/wav 2 KB]"},
		{"large", &Result{Content: []Block{{Type: BlockFile, MIMEType: "application/zip", Data: make([]byte, 5<<19), URI: "file:///a.zip"}}}, "[file application/zip 2.5 MB file:///a.zip]"},
		{"small", &Result{Content: []Block{{Type: BlockFile, Data: []byte("abc")}}}, "[file 3 B]"},
		{"image link", &Result{Content: []Block{{Type: BlockImage, MIMEType: "image/png", URI: "https://x/y.png", Name: "y.png"}}}, "[image image/png y.png https://x/y.png]"},
		{"link", &Result{Content: []Block{{Type: BlockLink, Name: "r", MIMEType: "text/csv", URI: "file:///r.csv"}}}, "[link r text/csv <file:///r.csv>]"},
		{"bare link", &Result{Content: []Block{{Type: BlockLink, URI: "file:///r"}}}, "[link <file:///r>]"},
		{"untyped block", &Result{Content: []Block{{}}}, "[content]"},
		{"other type", &Result{Content: []Block{{Type: "video", MIMEType: "video/mp4"}}}, "[video video/mp4]"},
		{"structured only", &Result{Artifact: &Artifact{StructuredContent: map[string]any{"b": 1, "a": []int{2}}}}, `{"a":[2],"b":1}`},
		{"structured and text", &Result{Content: []Block{{Type: BlockText, Text: "t"}}, Artifact: &Artifact{StructuredContent: 1}}, "t"},
		// Media mirrored into the structured content would reach the model twice.
		{"no structured after media", &Result{Content: []Block{{Type: BlockImage, MIMEType: "image/png", Data: []byte{1}}}, Artifact: &Artifact{StructuredContent: "s"}}, "[image image/png 1 B]"},
		{"structured after a link", &Result{Content: []Block{{Type: BlockLink, Name: "n"}}, Artifact: &Artifact{StructuredContent: "s"}}, "[link n]\n\"s\""},
		{"structured after user-only text", &Result{Content: []Block{{Type: BlockText, Text: "u", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}}}}, Artifact: &Artifact{StructuredContent: "s"}}, `"s"`},
		{"structured after user-only media", &Result{Content: []Block{{Type: BlockAudio, Data: []byte{1}, Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}}}}, Artifact: &Artifact{StructuredContent: "s"}}, `"s"`},
		{"base64 in Go values", &Result{Artifact: &Artifact{StructuredContent: struct{ Blob []byte }{make([]byte, 300)}}}, `{"Blob":"[base64 data, 300 B]"}`},
		{"structured nil", &Result{Artifact: &Artifact{}}, ""},
		{"structured unmarshalable", &Result{Artifact: &Artifact{StructuredContent: make(chan int)}}, "[structured content]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Text(); got != tt.want {
				t.Errorf("Text() = %q, want %q", got, tt.want)
			}
			// Parts and Messages must not panic on any of these, and the
			// tool message is never empty.
			tt.r.Parts()
			tt.r.Parts(ImagesAsDataURL(), nil)
			msgs := tt.r.Messages(llms.ToolCall{ID: "c"})
			if len(msgs) == 0 || len(msgs[0].Parts) != 1 {
				t.Fatalf("Messages() = %v, want a tool message with one part first", msgs)
			}
			resp, ok := msgs[0].Parts[0].(llms.ToolCallResponse)
			if !ok || strings.TrimSpace(resp.Content) == "" {
				t.Errorf("Messages()[0] part = %#v, want a non-empty ToolCallResponse", msgs[0].Parts[0])
			}
		})
	}
}

// TestResultParts pins the provider-specific choices of Parts and Messages.
func TestResultParts(t *testing.T) {
	r := &Result{Content: []Block{
		{Type: BlockText, Text: ""},
		{Type: BlockImage, Data: pngData}, // no MIME: sniffed
		{Type: BlockImage, MIMEType: "image/png", URI: "https://x/a.png"},
		{Type: BlockImage, MIMEType: "image/png", URI: "file:///b.png"},
		{Type: BlockAudio, MIMEType: "audio/wav", Data: wavData},
		{Type: BlockFile, MIMEType: "application/pdf", URI: "file:///x.pdf"}, // no data
	}}
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngData)
	tests := []struct {
		name string
		opts []PartOption
		want []llms.ContentPart
	}{
		{"binary", nil, []llms.ContentPart{
			llms.BinaryPart("image/png", pngData),
			llms.TextPart("[image image/png https://x/a.png]"),
			llms.TextPart("[image image/png file:///b.png]"),
			llms.BinaryPart("audio/wav", wavData),
			llms.TextPart("[file application/pdf file:///x.pdf]"),
		}},
		{"data URL", []PartOption{ImagesAsDataURL()}, []llms.ContentPart{
			llms.ImageURLPart(dataURL),
			llms.ImageURLPart("https://x/a.png"),
			llms.TextPart("[image image/png file:///b.png]"),
			llms.TextPart("[audio audio/wav 20 B]"),
			llms.TextPart("[file application/pdf file:///x.pdf]"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Parts(tt.opts...); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parts() = %#v\nwant %#v", got, tt.want)
			}
		})
	}

	t.Run("nil FunctionCall", func(t *testing.T) {
		msgs := r.Messages(llms.ToolCall{ID: "c7"})
		if len(msgs) != 2 {
			t.Fatalf("Messages() = %d messages, want 2", len(msgs))
		}
		if got, want := msgs[0].Parts[0], (llms.ToolCallResponse{ToolCallID: "c7", Content: r.Text()}); got != want {
			t.Errorf("tool part = %#v, want %#v", got, want)
		}
		if msgs[1].Role != llms.ChatMessageTypeHuman || len(msgs[1].Parts) != 3 {
			t.Errorf("media message = %#v, want a human message with an intro and 2 media parts", msgs[1])
		}
	})

	t.Run("empty success", func(t *testing.T) {
		msgs := (&Result{}).Messages(testCall("x"))
		want := []llms.MessageContent{{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
			llms.ToolCallResponse{ToolCallID: "call_1", Name: "srv__x", Content: emptyResultText},
		}}}
		if !reflect.DeepEqual(msgs, want) {
			t.Errorf("Messages() = %#v, want %#v", msgs, want)
		}
	})
}

// TestNewResult covers conversions that no go-sdk server sends over the
// wire: nil results and items, and sampling-only content.
func TestNewResult(t *testing.T) {
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want *Result
	}{
		{"nil", nil, &Result{}},
		{"nil items", &mcp.CallToolResult{Content: []mcp.Content{nil, (*mcp.TextContent)(nil), (*mcp.ImageContent)(nil), (*mcp.AudioContent)(nil),
			(*mcp.ResourceLink)(nil), (*mcp.EmbeddedResource)(nil), (*mcp.ToolUseContent)(nil), (*mcp.ToolResultContent)(nil)}},
			&Result{Content: []Block{}}},
		{"resource without contents", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{}}},
			&Result{Content: []Block{{Type: BlockText, Text: "[resource without contents]", Raw: json.RawMessage(`{"type":"resource"}`)}}}},
		{"empty blob", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///e", Blob: []byte{}}}}},
			&Result{Content: []Block{{Type: BlockFile, URI: "file:///e", Data: []byte{}}}}},
		{"tool_use", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ToolUseContent{ID: "u1", Name: "f"}}},
			&Result{Content: []Block{{Type: BlockText, Text: `[unsupported content type "tool_use"]`, Raw: json.RawMessage(`{"type":"tool_use","id":"u1","name":"f","input":{}}`)}}}},
		{"tool_result", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ToolResultContent{ToolUseID: "u1"}}},
			&Result{Content: []Block{{Type: BlockText, Text: `[unsupported content type "tool_result"]`, Raw: json.RawMessage(`{"type":"tool_result","toolUseId":"u1","content":[]}`)}}}},
		{"sanitized", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "[x]", Meta: mcp.Meta{originalMetaKey: map[string]any{"type": "video"}}}}},
			&Result{Content: []Block{{Type: BlockText, Text: "[x]", Raw: json.RawMessage(`{"type":"video"}`)}}}},
		{"meta", &mcp.CallToolResult{Meta: mcp.Meta{"k": "v"}}, &Result{Content: []Block{}, Meta: map[string]any{"k": "v"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newResult(tt.res); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("newResult() = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestUnsupportedText(t *testing.T) {
	tests := []struct{ typ, want string }{
		{"", "[unsupported content]"},
		{"video", `[unsupported content type "video"]`},
		{strings.Repeat("é", 40), `[unsupported content type "` + strings.Repeat("é", 32) + `…"]`},
	}
	for _, tt := range tests {
		if got := unsupportedText(tt.typ); got != tt.want {
			t.Errorf("unsupportedText(%q) = %q, want %q", tt.typ, got, tt.want)
		}
	}
}

// FuzzNewResultFromJSON decodes arbitrary bytes as a CallToolResult, as the
// SDK does, both as they are and after sanitizing, and checks that
// newResult, Text, Parts and Messages neither panic nor produce a Result
// that does not marshal.
func FuzzNewResultFromJSON(f *testing.F) {
	for _, c := range contentCases {
		b, err := json.Marshal(c.result)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sanitized, _ := sanitizeResultJSON(data)
		for _, in := range [][]byte{data, sanitized} {
			var res mcp.CallToolResult
			if err := json.Unmarshal(in, &res); err != nil {
				continue
			}
			r := newResult(&res)
			_ = r.Text()
			_ = r.Parts()
			_ = r.Parts(ImagesAsDataURL())
			_ = r.Messages(llms.ToolCall{})
			_ = r.Messages(testCall("fuzz"), ImagesAsDataURL())
			if _, err := json.Marshal(r); err != nil {
				t.Errorf("json.Marshal(newResult(%q)): %v", in, err)
			}
		}
	})
}
