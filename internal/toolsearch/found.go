package toolsearch

// The found set: the tools a conversation's searches found, read back from
// its messages ([Found]) and added to as a batch's searches run.

import (
	"encoding/json"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// Args are the search tool's arguments.
type Args struct {
	Query string `json:"query"`
}

// Query returns the query of a call of the search tool with arguments
// argsJSON (JSON of [Args]), and false when they are not that or the
// query is blank.
func Query(argsJSON string) (string, bool) {
	var args Args
	if err := json.Unmarshal([]byte(argsJSON), &args); err != nil || strings.TrimSpace(args.Query) == "" {
		return "", false
	}
	return args.Query, true
}

// A Set is the tools found so far in a conversation, in the order they
// were found, each once. The zero Set is empty.
type Set[T comparable] struct {
	items []T
	seen  map[T]bool
}

// Read adds the tools found by the search results in msgs, the tool
// messages of the search tool named search: those of the names they list
// ([Found]) that lookup knows (it returns the zero T for the others).
func (s *Set[T]) Read(search string, msgs []llms.MessageContent, lookup func(name string) T) {
	var zero T
	for name := range Found(search, msgs) {
		if t := lookup(name); t != zero {
			s.Add(t)
		}
	}
}

// Add adds items, each once.
func (s *Set[T]) Add(items ...T) {
	for _, t := range items {
		if s.Has(t) {
			continue
		}
		if s.seen == nil {
			s.seen = make(map[T]bool)
		}
		s.seen[t] = true
		s.items = append(s.items, t)
	}
}

// Has reports whether t was found.
func (s *Set[T]) Has(t T) bool { return s.seen[t] }

// Items returns the tools found, in the order they were found.
func (s *Set[T]) Items() []T { return s.items }
