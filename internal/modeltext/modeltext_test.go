package modeltext

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutText(t *testing.T) {
	// About 1 MB of lines.
	file := strings.Repeat("line x: the quick brown fox jumps over the lazy dog\n", 20_000)
	tests := []struct {
		name  string
		text  string
		limit int
	}{
		{"lines", file, 10_000},
		{"one long line", strings.Repeat("x", 50_000), 1_000},
		{"multi-byte", strings.Repeat("天気é", 10_000), 999},
		{"tiny budget", file, 10},
	}
	for _, tt := range tests {
		got := Cut(tt.text, tt.limit)
		n := utf8.RuneCountInString(got)
		if !utf8.ValidString(got) {
			t.Errorf("%s: cut inside a character", tt.name)
		}
		if !strings.Contains(got, "characters left out") || !strings.Contains(got, fmt.Sprint(utf8.RuneCountInString(tt.text))) {
			t.Errorf("%s: no note with the original length in %.200q", tt.name, got)
		}
		if tt.limit >= 200 && n > tt.limit {
			t.Errorf("%s: %d characters, want at most %d", tt.name, n, tt.limit)
		}
		if tt.limit < 200 {
			continue
		}
		head, tail, _ := strings.Cut(got, "\n[…")
		if !strings.HasPrefix(tt.text, head) || !strings.HasSuffix(tt.text, tail[strings.Index(tail, "]\n")+2:]) {
			t.Errorf("%s: the kept text is not the head and tail of the original", tt.name)
		}
		if utf8.RuneCountInString(head) < tt.limit/2 {
			t.Errorf("%s: head of %d characters, want most of the budget", tt.name, utf8.RuneCountInString(head))
		}
		if tt.name == "lines" {
			if !strings.HasSuffix(head, "dog\n") || !strings.HasSuffix(tail, "dog\n") || !strings.HasPrefix(tail[strings.Index(tail, "]\n")+2:], "line ") {
				t.Errorf("lines: not cut at line breaks: ...%q | %q...", head[len(head)-20:], tail[:80])
			}
		}
	}
	for _, limit := range []int{-1, 100} {
		if got := Cut("short", limit); got != "short" {
			t.Errorf("Cut(short, %d) = %q, want it unchanged", limit, got)
		}
	}
}

// TestBase64Size pins which strings the structured fallback of Text takes
// for base64 data.
func TestBase64Size(t *testing.T) {
	long := strings.Repeat("QUJD", 64) // 256 characters
	tests := []struct {
		s    string
		size int
		ok   bool
	}{
		{long, 192, true},
		{long + "QQ==", 193, true},
		{strings.Repeat("QUJD", 16) + "\n" + strings.Repeat("QUJD", 48), 192, true}, // wrapped lines
		{strings.Repeat("a-_b", 64), 192, true},                                     // URL alphabet
		{"data:image/png;base64,QUJD", 3, true},
		{long[:255], 0, false},              // too short to tell from a word or an id
		{long[:128] + " " + long, 0, false}, // prose has spaces
		{long[:128] + "=" + long, 0, false}, // padding in the middle
		{long + "===", 0, false},
		{"data:text/plain,hello", 0, false},
		{"short", 0, false},
	}
	for _, tt := range tests {
		if size, ok := base64Size(tt.s); size != tt.size || ok != tt.ok {
			t.Errorf("base64Size(%.40q…) = %d, %t; want %d, %t", tt.s, size, ok, tt.size, tt.ok)
		}
	}
}
