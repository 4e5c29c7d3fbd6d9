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

// TestSet: a Set reads the names a search result lists, keeps those the
// lookup knows, once each, in the order they were found.
func TestSet(t *testing.T) {
	known := map[string]*int{"a": new(int), "b": new(int), "c": new(int)}
	lookup := func(name string) *int { return known[name] }
	var s Set[*int]
	if s.Has(known["a"]) || s.Items() != nil {
		t.Fatal("the zero Set is not empty")
	}
	history := []llms.MessageContent{
		answer("search_tools", "3 tools found:\nb: bee\nunknown: gone\na: ay"),
		answer("search_tools", "2 tools found:\na: ay\nb: bee"),
	}
	s.Read("search_tools", history, lookup)
	s.Add(known["c"], known["a"])
	if want := []*int{known["b"], known["a"], known["c"]}; !slices.Equal(s.Items(), want) {
		t.Errorf("Items() = %v, want b, a, c", s.Items())
	}
	if !s.Has(known["c"]) || s.Has(new(int)) {
		t.Error("Has() disagrees with Items()")
	}
}
