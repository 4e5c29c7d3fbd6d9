package modeltext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShort(t *testing.T) {
	if got := Short("tool_use"); got != "tool_use" {
		t.Errorf("Short(short) = %q", got)
	}
	long := strings.Repeat("a", maxShort-1) + "é" + "tail" // the cut falls inside é
	got := Short(long)
	if !utf8.ValidString(got) || got != strings.Repeat("a", maxShort-1)+"…" {
		t.Errorf("Short(long) = %q, want %d a's and an ellipsis", got, maxShort-1)
	}
}

func TestIsImage(t *testing.T) {
	for mt, want := range map[string]bool{"image/png": true, " IMAGE/jpeg": true, "image/": true, "audio/wav": false, "imag": false, "": false} {
		if got := IsImage(mt); got != want {
			t.Errorf("IsImage(%q) = %v, want %v", mt, got, want)
		}
	}
}

func TestMediaType(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	if got := MediaType(" image/webp ", png); got != "image/webp" {
		t.Errorf("MediaType(declared) = %q, want the declared type", got)
	}
	if got := MediaType("  ", png); got != "image/png" {
		t.Errorf("MediaType(undeclared PNG) = %q, want image/png", got)
	}
}

func TestFetchable(t *testing.T) {
	for uri, want := range map[string]bool{"https://x/y.png": true, "HTTP://x": true, "data:image/png;base64,AA": true,
		"file:///etc/passwd": false, "ui://widget": false, "no-scheme": false, "": false} {
		if got := Fetchable(uri); got != want {
			t.Errorf("Fetchable(%q) = %v, want %v", uri, got, want)
		}
	}
}

func TestPlaceholder(t *testing.T) {
	if got := Placeholder("image", "image/png", "", "14 KB"); got != "[image image/png 14 KB]" {
		t.Errorf("Placeholder() = %q", got)
	}
	if got := Placeholder("content", "", ""); got != "[content]" {
		t.Errorf("Placeholder(empty fields) = %q", got)
	}
}
