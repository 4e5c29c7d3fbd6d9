package suggest

import "testing"

// TestNearest checks the suggestions for the misspellings config files
// hold, and that unrelated or short names get none.
func TestNearest(t *testing.T) {
	top := []string{"mcpServers", "servers", "inputs"}
	tests := []struct {
		name  string
		known []string
		want  string
	}{
		{"mcpServer", top, "mcpServers"},
		{"mcp_servers", top, "mcpServers"},
		{"MCPServers", top, "mcpServers"},
		{"server", top, "servers"},
		{"Servers", top, "servers"},
		{"input", top, "inputs"},
		{"srevers", top, "servers"}, // a transposition is two edits
		{"filesystem", top, ""},
		{"reviewers", top, ""},
		{"", top, ""},
		{"x", []string{"env", "cwd", "url"}, ""}, // a third of a short name is no edit at all
		{"Command", []string{"command", "args"}, "command"},
		{"envfile", []string{"env", "envFile"}, "envFile"},
		{"héaders", []string{"headers"}, "headers"},
	}
	for _, tt := range tests {
		if got := Nearest(tt.name, tt.known); got != tt.want {
			t.Errorf("Nearest(%q, %q) = %q, want %q", tt.name, tt.known, got, tt.want)
		}
	}
}
