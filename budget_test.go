package mcpadapter

import (
	"context"
	"fmt"
	"github.com/mcpadapter/mcpadapter/internal/modeltext"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/llms"
)

// fileText is a text file of n numbered lines, about 1 MB for n = 20,000.
func fileText(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %05d: the quick brown fox jumps over the lazy dog\n", i)
	}
	return b.String()
}

// addFileTool adds a tool "file" to s that returns text as one block.
func addFileTool(s *testserver.Server, text string) {
	s.Server.AddTool(&mcp.Tool{Name: "file", Description: "Reads a file.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
}

// TestResultBudget: a 1 MB text file is cut for the model by default, in
// Call and in HandleToolCalls, in both eras; the Result keeps it whole;
// Config.ResultBudget and the ResultBudget option change the bound.
func TestResultBudget(t *testing.T) {
	file := fileText(20_000)
	if len(file) < 1_000_000 {
		t.Fatalf("fixture has %d bytes, want 1 MB", len(file))
	}
	choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
		{ID: "1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "s__file", Arguments: "{}"}},
	}}
	for _, mode := range []Mode{ModeModern, ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			s := testserver.New(testserver.Options{})
			addFileTool(s, file)
			for _, tt := range []struct {
				name   string
				budget int
				opts   []PartOption
				want   int // characters the model gets at most; -1: everything
			}{
				{"default", 0, nil, defaultResultBudget},
				{"config", 5_000, nil, 5_000},
				{"off", -1, nil, -1},
				{"option wins", 5_000, []PartOption{withBudget(2_000)}, 2_000},
			} {
				a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, mode)}, ResultBudget: tt.budget})
				ts, err := a.ListTools(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				check := func(what, got string, want int) {
					t.Helper()
					n := utf8.RuneCountInString(got)
					switch {
					case want < 0 && got != file:
						t.Errorf("%s: %s: got %d characters, want the whole file", tt.name, what, n)
					case want >= 0 && (n > want || n < want/2 || !strings.Contains(got, "characters left out")):
						t.Errorf("%s: %s: got %d characters, want at most %d with a note", tt.name, what, n, want)
					}
				}
				// Each call moves 1 MB through the SDK: only those that
				// show something.
				tool := ts.Lookup("s__file")
				if tt.opts == nil {
					text, err := tool.Call(t.Context(), "{}")
					if err != nil {
						t.Fatal(err)
					}
					check("Call", text, tt.want)
				}
				if tt.opts != nil || tt.budget == 0 {
					msgs, err := ts.HandleToolCalls(t.Context(), choice, tt.opts...)
					if err != nil {
						t.Fatal(err)
					}
					check("HandleToolCalls", toolResponseText(msgs, 0), tt.want)
				}
				if tt.budget == 0 {
					res, err := tool.Invoke(t.Context(), nil)
					if err != nil || res.Text() != file || len(res.Content) != 1 || res.Content[0].Text != file {
						t.Fatalf("%s: Invoke: the Result does not hold the whole file (%v)", tt.name, err)
					}
				}
			}
		})
	}
}

// TestResultBudgetMedia: media count modeltext.MediaCost each; those past the
// budget are left out with a note, in Messages and in Parts.
func TestResultBudgetMedia(t *testing.T) {
	r := &Result{Content: []Block{{Type: BlockText, Text: "thirty images"}}}
	for range 30 {
		r.Content = append(r.Content, Block{Type: BlockImage, MIMEType: "image/png", Data: pngData})
	}
	call := llms.ToolCall{ID: "1", FunctionCall: &llms.FunctionCall{Name: "x"}}
	wantKept := (defaultResultBudget - defaultResultBudget/10) / modeltext.MediaCost // 22

	msgs := r.Messages(call)
	if len(msgs) != 2 || len(msgs[1].Parts) != 1+wantKept {
		t.Fatalf("Messages: %d messages, media message of %d parts; want 2 and %d", len(msgs), len(msgs[1].Parts), 1+wantKept)
	}
	if text := toolResponseText(msgs, 0); !strings.Contains(text, "8 media part(s) left out") {
		t.Errorf("Messages: tool text %q does not say what was left out", text)
	}
	parts := r.Parts()
	media := 0
	var text string
	for _, p := range parts {
		if tp, ok := p.(llms.TextContent); ok {
			text += tp.Text
		} else {
			media++
		}
	}
	if media != wantKept || !strings.Contains(text, "8 media part(s) left out") || !strings.HasPrefix(text, "thirty images") {
		t.Errorf("Parts: %d media and text %q; want %d and a note", media, text, wantKept)
	}
	if all := r.Parts(withBudget(-1)); len(all) != 31 {
		t.Errorf("Parts(withBudget(-1)) = %d parts, want all 31", len(all))
	}
	if len(r.Content) != 31 {
		t.Error("the Result was changed")
	}
	if small := r.Parts(withBudget(1_000)); len(small) != 1 {
		t.Errorf("Parts(withBudget(1000)) = %d parts, want the text alone (no room for an image)", len(small))
	}
}
