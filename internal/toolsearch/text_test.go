package toolsearch

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"
)

func TestDocOf(t *testing.T) {
	params := map[string]any{"type": "object", "properties": map[string]any{
		"path":  map[string]any{"type": "string", "description": "The file to read."},
		"count": map[string]any{"type": "integer"},
		"bad":   "not a schema",
	}}
	got := DocOf("files__read", "Read", "Reads a file.", params)
	want := Doc{Name: "files__read", Title: "Read", Description: "Reads a file.",
		Args: []string{"bad", "count", "path"}, ArgText: "The file to read."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DocOf() = %#v, want %#v", got, want)
	}
	if got := DocOf("x", "", "", nil); got.Args != nil || got.ArgText != "" {
		t.Errorf("DocOf(nil params) = %#v, want no arguments", got)
	}
}

func TestDescription(t *testing.T) {
	got := Description(3, []string{"b", "a", "b"}, 5)
	if !strings.Contains(got, "among 3 tools (servers: a, b)") || !strings.Contains(got, "the best 5 matches") {
		t.Errorf("Description() = %q", got)
	}
	var many []string
	for i := range maxServers + 3 {
		many = append(many, fmt.Sprintf("s%02d", i))
	}
	got = Description(100, many, 5)
	if !strings.Contains(got, "s19 and 3 more)") || strings.Contains(got, "s20") {
		t.Errorf("Description(23 servers) = %q, want the first 20 and \"and 3 more\"", got)
	}
}

// answer is a tool message answering a call of tool with text.
func answer(tool, text string) llms.MessageContent {
	return llms.MessageContent{Role: llms.ChatMessageTypeTool,
		Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: "c", Name: tool, Content: text}}}
}

// TestResultsFound: the names Results lists are what Found reads back from
// the search tool's messages, whatever the descriptions hold, and from
// nothing else.
func TestResultsFound(t *testing.T) {
	docs := []Doc{
		{Name: "files__read", Description: "Reads a file.\nSee: the docs"},
		{Name: "billing__new_invoice", Description: "  Creates:  an invoice  "},
	}
	text := Results("read a file", docs)
	if first, _, _ := strings.Cut(text, "\n"); first != `2 tools found for "read a file"; you can call them now:` {
		t.Errorf("Results() first line = %q", first)
	}
	if !strings.Contains(text, "\nbilling__new_invoice: Creates: an invoice") {
		t.Errorf("Results() = %q, want one line per tool with its summary", text)
	}
	none := Results("nothing", nil)
	if none != `No tool matches "nothing": search again with other words.` {
		t.Errorf("Results(none) = %q", none)
	}
	history := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeHuman, "first: line\nx: y"), // not a tool message
		answer("other_tool", "first: line\nx: y"),                      // not the search tool
		answer("SEARCH_TOOLS", text),
		answer("search_tools", none),
		answer("search_tools", "first: line\nno separator\nmemory__add: adds"),
	}
	got := slices.Collect(Found("search_tools", history))
	if want := []string{"files__read", "billing__new_invoice", "memory__add"}; !slices.Equal(got, want) {
		t.Errorf("Found() = %q, want %q", got, want)
	}
	for range Found("search_tools", history) {
		break // stops when asked
	}
}

func TestSummary(t *testing.T) {
	if got := Summary(" Reads\n\ta  file. "); got != "Reads a file." {
		t.Errorf("Summary() = %q", got)
	}
	long := strings.Repeat("é", maxSummary+10)
	got := Summary(long)
	if n := utf8.RuneCountInString(got); n != maxSummary || !strings.HasSuffix(got, "…") {
		t.Errorf("Summary(long) has %d runes (%q…), want %d ending in an ellipsis", n, got[:10], maxSummary)
	}
	if got := Summary(long[:2*maxSummary]); got != long[:2*maxSummary] {
		t.Errorf("Summary(%d runes) was cut", maxSummary)
	}
}

func TestTexts(t *testing.T) {
	if got := Usage("search_tools"); !strings.HasPrefix(got, "Error: search_tools takes {\"query\"") {
		t.Errorf("Usage() = %q", got)
	}
	if got := NotFound("a__b", "search_tools"); !strings.HasPrefix(got, "a__b is not available yet: call search_tools first") {
		t.Errorf("NotFound() = %q", got)
	}
	p := Parameters()
	if !reflect.DeepEqual(p["required"], []any{"query"}) || p["additionalProperties"] != false {
		t.Errorf("Parameters() = %v", p)
	}
	p["type"] = "changed"
	if Parameters()["type"] != "object" {
		t.Error("Parameters() shares its map between calls")
	}
}
