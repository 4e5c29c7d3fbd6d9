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

// TestErrorSameOrigin: the query values of any URL on a given URL's host,
// or of a path alone, are redacted (an SSE message endpoint carries its
// session's id in its query), those of other hosts are not, and an error
// with nothing to redact is returned as is.
func TestErrorSameOrigin(t *testing.T) {
	err := fmt.Errorf(`Post "http://127.0.0.1:8080/message?sessionid=s3cr3t": %w; Post "http://u:***@127.0.0.1:8080/?sessionid=s3cr3t"; Post "/m?sessionid=s3cr3t"; see https://docs.example/x?page=2`, io.EOF)
	got := Error(err, "http://127.0.0.1:8080/sse").Error()
	if want := `Post "http://127.0.0.1:8080/message?sessionid=xxxxx": EOF; Post "http://u:xxxxx@127.0.0.1:8080/?sessionid=xxxxx"; Post "/m?sessionid=xxxxx"; see https://docs.example/x?page=2`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	plain := errors.New(`Post "http://127.0.0.1:8080/message": EOF`)
	if Error(plain, "http://127.0.0.1:8080/sse") != plain {
		t.Error("Error wrapped an error with nothing to redact")
	}
}

// TestValues: each value of at least 4 bytes is redacted.
func TestValues(t *testing.T) {
	err := fmt.Errorf("failed to connect (session ID: 5f1e-77): %w", io.EOF)
	got := Values(err, "5f1e-77", "", "ab")
	if text := got.Error(); text != "failed to connect (session ID: xxxxx): EOF" {
		t.Errorf("Values() = %q", text)
	}
	if !errors.Is(got, io.EOF) || Values(err, "ab") != err || Values(nil, "5f1e-77") != nil {
		t.Error("Values: the error does not unwrap, or was wrapped with nothing to redact")
	}
}
