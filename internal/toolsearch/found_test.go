package toolsearch

import (
	"slices"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

func TestQuery(t *testing.T) {
	for args, want := range map[string]string{
		`{"query": "read a file"}`: "read a file",
		`{"query": " spaced "}`:    " spaced ",
	} {
		if got, ok := Query(args); !ok || got != want {
			t.Errorf("Query(%s) = %q, %v, want %q", args, got, ok, want)
		}
	}
	for _, args := range []string{``, `{}`, `{"query": "  "}`, `{"query": 1}`, `"read"`} {
		if got, ok := Query(args); ok {
			t.Errorf("Query(%s) = %q, true, want false", args, got)
		}
	}
}

// TestSet: a Set reads the names a search result lists, keeps those
// known, once each, in the order they were found.
func TestSet(t *testing.T) {
	known := map[string]bool{"a": true, "b": true, "c": true}
	lookup := func(name string) bool { return known[name] }
	var s Set
	if s.Has("a") || s.Names() != nil {
		t.Fatal("the zero Set is not empty")
	}
	history := []llms.MessageContent{
		answer("search_tools", "3 tools found:\nb: bee\nunknown: gone\na: ay"),
		answer("search_tools", "2 tools found:\na: ay\nb: bee"),
	}
	s.Read("search_tools", history, lookup)
	s.Add("c", "a")
	if want := []string{"b", "a", "c"}; !slices.Equal(s.Names(), want) {
		t.Errorf("Names() = %v, want b, a, c", s.Names())
	}
	if !s.Has("c") || s.Has("unknown") {
		t.Error("Has() disagrees with Names()")
	}
}
