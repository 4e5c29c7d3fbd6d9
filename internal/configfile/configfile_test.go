package configfile

import (
	"strings"
	"testing"
)

// The root package's config tests (ParseConfig, LoadConfig) check the
// dialects, variables and errors through the API; these check the parts
// that have no way in from there.

// TestParseEnvFile checks that a bad dotenv line is named by its number
// only.
func TestParseEnvFile(t *testing.T) {
	for _, text := range []string{"NOT A LINE\n", "1BAD=x\n", `Q="bad\q"` + "\n"} {
		if _, err := parseEnvFile("f.env", text); err == nil || !strings.Contains(err.Error(), "f.env:1") || strings.Contains(err.Error(), "unterminated") {
			t.Errorf("parseEnvFile(%q) = %v, want an error naming line 1 only", text, err)
		}
	}
}

// TestStripJSONC checks comments and trailing commas: removed outside
// strings, kept inside, offsets unchanged.
func TestStripJSONC(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": 1} // c`, `{"a": 1}     `},
		{"{/* c\n */\"a\": [1, 2,],}", "{    \n   \"a\": [1, 2 ] }"},
		{`{"u": "https://x/*y*/", "q": "a\"//b"}`, `{"u": "https://x/*y*/", "q": "a\"//b"}`},
		{`[1, /* , */ ]`, "[1" + strings.Repeat(" ", 10) + "]"},
		{`{"a": ","}`, `{"a": ","}`},
	}
	for _, tt := range tests {
		got, err := stripJSONC([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("stripJSONC(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := stripJSONC([]byte(`{"a": 1} /* open`)); err == nil || !strings.Contains(err.Error(), "unterminated") {
		t.Errorf("unterminated comment: %v", err)
	}
	if _, problems := Parse([]byte(`{"mcpServers": {"s": {"command": "x"}}} /*`), Options{}); len(problems) == 0 {
		t.Error("Parse accepted an unterminated comment")
	}
}

// TestParseSyntaxPosition: a syntax error names its line and column in
// the file as written (comments included), counted in characters.
func TestParseSyntaxPosition(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"missing comma", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\" \"args\": []}\n}}",
			`line 2, column 24: invalid character '"' after object key:value pair`},
		{"after a comment", "// héllo\n/* a\n b */ {\"s\": {\"command\": x}}",
			"line 3, column 25: invalid character 'x' looking for beginning of value"},
		{"first byte", "}", "line 1, column 1: invalid character '}'"},
		{"truncated", "{\"s\": ", "line 1, column 6: unexpected end of JSON input"},
		{"unterminated comment", "{}\n  /* open", "unterminated /* comment at line 2, column 3"},
	}
	for _, tt := range tests {
		_, problems := Parse([]byte(tt.in), Options{})
		if len(problems) != 1 || !strings.Contains(problems[0].Err.Error(), tt.want) {
			t.Errorf("%s: problems %v, want one with %q", tt.name, problems, tt.want)
		}
	}
}
