package redact

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:pw@example.com/mcp?token=abc&x=1": "https://u:xxxxx@example.com/mcp?token=xxxxx&x=xxxxx",
		"https://example.com/mcp":                    "https://example.com/mcp",
		"://bad":                                     "<invalid URL>",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestError: every spelling of the URL in an error's text is redacted, as
// given and as net/http prints it, and the error still unwraps.
func TestError(t *testing.T) {
	raw := "https://u:pw@example.com/mcp?token=abc"
	err := fmt.Errorf("Post %q: %w (as net/http: https://u:***@example.com/mcp?token=abc; a redirect: Post \"/mcp/?token=abc\")", raw, io.ErrUnexpectedEOF)
	got := Error(err, raw, "")
	if text := got.Error(); strings.Contains(text, "pw") || strings.Contains(text, "abc") {
		t.Errorf("Error() = %q, want no secret", text)
	}
	if !errors.Is(got, io.ErrUnexpectedEOF) {
		t.Errorf("errors.Is(%v, io.ErrUnexpectedEOF) = false", got)
	}
	if plain := errors.New("no URL"); Error(plain, "https://example.com") != plain || Error(nil, raw) != nil {
		t.Error("Error changed an error with nothing to redact")
	}
}
