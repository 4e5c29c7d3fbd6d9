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

// A Set is the names of the tools found so far in a conversation, in the
// order they were found, each once. The zero Set is empty.
type Set struct {
	names []string
	seen  map[string]bool
}

// Read adds the tools found by the search results in msgs, the tool
// messages of the search tool named search: those of the names they list
// ([Found]) that known reports.
func (s *Set) Read(search string, msgs []llms.MessageContent, known func(name string) bool) {
	for name := range Found(search, msgs) {
		if known(name) {
			s.Add(name)
		}
	}
}

// Add adds names, each once.
func (s *Set) Add(names ...string) {
	for _, name := range names {
		if s.Has(name) {
			continue
		}
		if s.seen == nil {
			s.seen = make(map[string]bool)
		}
		s.seen[name] = true
		s.names = append(s.names, name)
	}
}

// Has reports whether the tool name was found.
func (s *Set) Has(name string) bool { return s.seen[name] }

// Names returns the names found, in the order they were found.
func (s *Set) Names() []string { return s.names }
