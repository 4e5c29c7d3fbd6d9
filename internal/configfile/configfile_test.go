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

// TestParseEnvFileText checks what dotenv text may hold: a byte order mark
// first, CRLF line ends, tabs and U+FFFD itself; not a NUL, another
// control character or invalid UTF-8, named by line.
func TestParseEnvFileText(t *testing.T) {
	env, err := parseEnvFile("ok.env", "\uFEFFA=1\r\nB=\tx\t\nC=\uFFFD\n")
	if err != nil || env["A"] != "1" || env["B"] != "x" || env["C"] != "\uFFFD" {
		t.Errorf("parseEnvFile = %q, %v", env, err)
	}
	for text, want := range map[string]string{
		"A=1\n\nB=\x00":       "f.env:3: not dotenv text (a NUL byte)",
		"A=\xff":              "f.env:1: not dotenv text (invalid UTF-8)",
		"# \x1b[0m\nA=1":      "f.env:1: not dotenv text (a control character)",
		"A=\u0085":            "f.env:1: not dotenv text (a control character)",
		"A=1\nB=\"x\\000\"\n": "f.env:2: a NUL in a double-quoted value",
	} {
		if _, err := parseEnvFile("f.env", text); err == nil || err.Error() != want {
			t.Errorf("parseEnvFile(%q) = %v, want %q", text, err, want)
		}
	}
}

// TestCheckScheme checks that a URL needs an http or https scheme, and
// that only a well-formed scheme is shown.
func TestCheckScheme(t *testing.T) {
	for _, ok := range []string{"http://x", "HTTPS://x/mcp", "https://u:p@x:1/mcp?q=1"} {
		if err := CheckScheme(ok); err != nil {
			t.Errorf("CheckScheme(%q) = %v", ok, err)
		}
	}
	for in, want := range map[string]string{
		"localhost:8080/mcp": "missing http:// or https://?",
		"example.com/mcp":    "missing http:// or https://?",
		"":                   "missing http:// or https://?",
		"pass word://x":      "missing http:// or https://?",
		"://x":               "missing http:// or https://?",
		"ws://x":             `scheme "ws" is not http or https`,
		"git+ssh://x":        `scheme "git+ssh" is not http or https`,
	} {
		if err := CheckScheme(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckScheme(%q) = %v, want %q", in, err, want)
		}
	}
}
