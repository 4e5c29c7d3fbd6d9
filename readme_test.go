package mcpadapter_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// fencedBlocks returns the sh and go code blocks of a Markdown text, fences
// included.
func fencedBlocks(text string) []string {
	return regexp.MustCompile("(?s)```(?:sh|go)\n.*?```").FindAllString(text, -1)
}

// TestReadmeZhCN checks that every command and Go code block of the Chinese
// README stands, to the letter, in the English one, so that the two cannot
// drift apart silently.
func TestReadmeZhCN(t *testing.T) {
	en, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	zh, err := os.ReadFile("README.zh-CN.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := fencedBlocks(string(zh))
	if len(blocks) < 2 {
		t.Fatalf("README.zh-CN.md has %d code blocks, want at least the two commands and the usage example", len(blocks))
	}
	english := fencedBlocks(string(en))
	for _, b := range blocks {
		found := false
		for _, e := range english {
			if e == b {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.zh-CN.md has a code block that README.md does not have:\n%s", b)
		}
	}
	if !strings.Contains(string(zh), "go run ./examples/quickstart") {
		t.Error("README.zh-CN.md does not show the first command")
	}
}
