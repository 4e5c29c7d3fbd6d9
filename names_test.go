package mcpadapter

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/tmc/langchaingo/llms"
)

// providerName is the tool-name rule of OpenAI and Anthropic.
var providerName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestSafeToolName(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct {
		name, want string
	}{
		{"fs__read_file", "fs__read_file"},
		{"fs__read-file", "fs__read-file"},
		{"fs__with space", "fs__with_space"},
		{"fs__dotted.name/v2", "fs__dotted_name_v2"},
		{"fs__天気", "fs____"}, // one '_' per character, not per byte
		{"fs__bad\xffbyte", "fs__bad_byte"},
		{"", ""},
		// Pinned: the suffix is the first 8 hex digits of SHA-256 of the
		// whole original name, the same in every process and version.
		{long, strings.Repeat("a", 55) + "_" + "6bd5e503"},
		{long + ".x", strings.Repeat("a", 55) + "_" + "2c65199e"},
	}
	for _, tt := range tests {
		got := SafeToolName(tt.name, maxToolNameLength)
		if got != tt.want {
			t.Errorf("SafeToolName(%q) = %q, want %q", tt.name, got, tt.want)
		}
		if tt.name != "" && !providerName.MatchString(got) {
			t.Errorf("SafeToolName(%q) = %q, which providers refuse", tt.name, got)
		}
	}
	if got := SafeToolName(long, 128); got != long {
		t.Errorf("SafeToolName(70 chars, 128) = %q, want it unchanged", got)
	}
	if got := SafeToolName(long, 3); len(got) != 16 {
		t.Errorf("SafeToolName(70 chars, 3) = %q, want 16 characters (the least maxLen)", got)
	}
}

func TestNewRefusesUnsafeServerNames(t *testing.T) {
	ok := testserver.New(testserver.Options{}).Transport()
	for _, name := range []string{"my fs", "fs.v2", "fs/x", "天気", "a:b"} {
		_, err := New(Config{Servers: map[string]Server{name: {Transport: ok}}})
		if err == nil || !strings.Contains(err.Error(), "ASCII letters, digits") || !strings.Contains(err.Error(), `"`+name+`"`) {
			t.Errorf("New(server %q) error = %v, want one naming the server and the allowed characters", name, err)
		}
	}
	for _, name := range []string{"fs", "my-fs_2", "A"} {
		if _, err := New(Config{Servers: map[string]Server{name: {Transport: ok}}}); err != nil {
			t.Errorf("New(server %q) = %v, want it accepted", name, err)
		}
	}
}

// TestToolNamesProviderSafe: exposed names fit the providers' rule, calls
// find tools by them, and the MCP name stays the server's, in both eras.
func TestToolNamesProviderSafe(t *testing.T) {
	long := "get_" + strings.Repeat("forecast_", 8) // 76 characters
	for _, mode := range []Mode{ModeModern, ModeLegacy} {
		t.Run(string(mode), func(t *testing.T) {
			s := testserver.New(testserver.Options{})
			s.AddTool("dotted.name")
			s.AddTool(long)
			var approvals []ToolCall
			a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, mode)},
				Approval: func(c ToolCall) bool { approvals = append(approvals, c); return c.MCPName == long }})
			ts, err := a.ListTools(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			short := SafeToolName("s__"+long, maxToolNameLength)
			for _, tool := range ts {
				if !providerName.MatchString(tool.Name()) {
					t.Errorf("tool %q: name %q does not fit the providers' rule", tool.MCPName(), tool.Name())
				}
				if fn := tool.LLMTool().Function; fn.Name != tool.Name() {
					t.Errorf("LLMTool().Function.Name = %q, want %q", fn.Name, tool.Name())
				}
			}
			if got := ts.Lookup("s__dotted_name"); got == nil || got.MCPName() != "dotted.name" {
				t.Fatalf("Lookup(s__dotted_name) = %v, want the tool dotted.name", got)
			}
			if got := ts.Lookup(short); got == nil || got.MCPName() != long || len(short) != maxToolNameLength {
				t.Fatalf("Lookup(%q) = %v, want the long tool under a 64-character name", short, got)
			}

			choice := &llms.ContentChoice{ToolCalls: []llms.ToolCall{
				{ID: "1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "s__dotted_name", Arguments: "{}"}},
				{ID: "2", Type: "function", FunctionCall: &llms.FunctionCall{Name: short, Arguments: "{}"}},
			}}
			msgs, err := ts.HandleToolCalls(t.Context(), choice)
			if got := toolResponseText(msgs, 0); got != "dotted.name ok" {
				t.Errorf("HandleToolCalls: first result %q, want the server's tool run", got)
			}
			var p *ApprovalRequired
			if !errors.As(err, &p) {
				t.Fatalf("HandleToolCalls error = %v, want *ApprovalRequired for the long tool", err)
			}
			if p.Call.Tool != short || p.Call.MCPName != long {
				t.Errorf("ApprovalRequired.Call = (%q, %q), want (%q, %q)", p.Call.Tool, p.Call.MCPName, short, long)
			}
			res, err := a.Resume(t.Context(), p, Approved())
			if err != nil || res.Text() != long+" ok" {
				t.Errorf("Approve() = %q, %v; want the server's tool %q run", res.Text(), err, long)
			}
		})
	}
}

// toolResponseText returns the content of the i-th tool response in msgs.
func toolResponseText(msgs []llms.MessageContent, i int) string {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if r, ok := p.(llms.ToolCallResponse); ok {
				if i == 0 {
					return r.Content
				}
				i--
			}
		}
	}
	return ""
}

func TestToolNamesCollideAfterShortening(t *testing.T) {
	s := testserver.New(testserver.Options{})
	s.AddTool("a.b")
	s.AddTool("a_b")
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(s, ModeAuto)}})
	_, err := a.ListTools(t.Context())
	if !errors.Is(err, ErrDuplicateToolName) || !strings.Contains(err.Error(), `"a.b"`) || !strings.Contains(err.Error(), `"a_b"`) {
		t.Fatalf("ListTools() error = %v, want ErrDuplicateToolName naming both MCP tools", err)
	}
	if _, err := a.ListToolsets(t.Context()); !errors.Is(err, ErrDuplicateToolName) {
		t.Fatalf("ListToolsets() error = %v, want ErrDuplicateToolName", err)
	}
}

func TestToolNamePolicy(t *testing.T) {
	s := testserver.New(testserver.Options{})
	s.AddTool("read.file")
	a := newAdapter(t, Config{Servers: map[string]Server{"fs": memServer(s, ModeAuto)},
		ToolName: func(server, tool string) string { return strings.ToUpper(server) + "." + tool }})
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(ts); len(got) != 1 || got[0] != "FS.read.file" {
		t.Fatalf("names = %q, want the policy's [FS.read.file]", got)
	}
	if res, err := ts.Lookup("FS.read.file").Invoke(t.Context(), nil); err != nil || res.Text() != "read.file ok" {
		t.Fatalf("Invoke = %v, %v", res, err)
	}

	empty := newAdapter(t, Config{Servers: map[string]Server{"fs": memServer(s, ModeAuto)},
		ToolName: func(string, string) string { return "" }})
	if _, err := empty.ListTools(t.Context()); err == nil || !strings.Contains(err.Error(), "empty name") {
		t.Fatalf("ListTools() with an empty policy name: error = %v, want one about the empty name", err)
	}
}

// rawToolNames is the ToolName that keeps the servers' own tool names, as
// Config.ToolName's doc gives it.
func rawToolNames(_, tool string) string { return SafeToolName(tool, 64) }
