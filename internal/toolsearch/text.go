package toolsearch

// The search tool's texts: what the model reads of it (its description and
// parameters), what a search answers, and how the tools a search found are
// read back from that answer (the found set lives in the conversation).

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/mcpadapter/mcpadapter/internal/schemaguard"
	"github.com/tmc/langchaingo/llms"
)

// maxSummary bounds, in characters, the description of each tool in a
// search result: the model reads the whole schema once the tool is
// offered.
const maxSummary = 200

// maxServers bounds the server names the search tool's description lists.
const maxServers = 20

// DocOf is the Doc of a tool named name, with title and description, whose
// input schema has the properties of params (a JSON schema object). A
// schema that the schema guard refuses (internal/schemaguard) is not read:
// the tool is found by its name, title and description alone.
func DocOf(name, title, description string, params map[string]any) Doc {
	d := Doc{Name: name, Title: title, Description: description}
	if schemaguard.Check(params) != nil {
		return d
	}
	props, _ := params["properties"].(map[string]any)
	var argText []string
	for _, name := range jsonvalue.SortedKeys(props) {
		d.Args = append(d.Args, name)
		if p, ok := props[name].(map[string]any); ok {
			if s, ok := p["description"].(string); ok {
				argText = append(argText, s)
			}
		}
	}
	d.ArgText = strings.Join(argText, "\n")
	return d
}

// Description is the search tool's description, for a catalog of n tools
// from servers (one name per tool, sorted and deduplicated in place; the
// first 20 are named), limit found per search.
func Description(n int, servers []string, limit int) string {
	slices.Sort(servers)
	servers = slices.Compact(servers)
	from := strings.Join(servers, ", ")
	if len(servers) > maxServers {
		from = strings.Join(servers[:maxServers], ", ") + fmt.Sprintf(" and %d more", len(servers)-maxServers)
	}
	return fmt.Sprintf("Find the tools for a task among %d tools (servers: %s). "+
		"Only tools that a search returned can be called, so search first. "+
		"Describe what you need in a few words, such as \"read a text file\" or \"create an invoice\"; "+
		"the best %d matches (or fewer: weak ones are left out) are returned and can be called from then on. "+
		"If none fits, search again with other words.", n, from, limit)
}

// Parameters is the search tool's input schema: {"query": string}.
func Parameters() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "What the tool should do, in a few words."},
		},
		"required":             []any{"query"},
		"additionalProperties": false,
	}
}

// Usage is the error text that answers a call of the search tool named
// search without a query.
func Usage(search string) string {
	return fmt.Sprintf(`Error: %s takes {"query": "what you need, in a few words"}`, search)
}

// NotFound is the error text that answers a call of tool, which no search
// found yet, telling the model to call the search tool named search.
func NotFound(tool, search string) string {
	return fmt.Sprintf("%s is not available yet: call %s first, with what you need in a few words, "+
		"then call one of the tools it returns", tool, search)
}

// Results is the text of a search's answer to query: a first line, then
// one line "name: summary" per tool found (docs' names and descriptions),
// which [Found] reads back.
func Results(query string, found []Doc) string {
	if len(found) == 0 {
		return fmt.Sprintf("No tool matches %q: search again with other words.", query)
	}
	var b strings.Builder
	if len(found) == 1 {
		fmt.Fprintf(&b, "1 tool found for %q; you can call it now:", query)
	} else {
		fmt.Fprintf(&b, "%d tools found for %q; you can call them now:", len(found), query)
	}
	for _, d := range found {
		fmt.Fprintf(&b, "\n%s: %s", d.Name, Summary(d.Description))
	}
	return b.String()
}

// Found returns the names the search results in msgs list, in order: the
// part before ": " of each line after the first ([Results]) of the tool
// messages answering a call of the search tool named search (case
// ignored). The names may repeat.
func Found(search string, msgs []llms.MessageContent) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, m := range msgs {
			if m.Role != llms.ChatMessageTypeTool {
				continue
			}
			for _, part := range m.Parts {
				resp, ok := part.(llms.ToolCallResponse)
				if !ok || !strings.EqualFold(resp.Name, search) {
					continue
				}
				_, list, _ := strings.Cut(resp.Content, "\n")
				for line := range strings.Lines(list) {
					if name, _, ok := strings.Cut(line, ": "); ok && !yield(name) {
						return
					}
				}
			}
		}
	}
}

// Summary is description on one line, cut to 200 characters.
func Summary(description string) string {
	s := strings.Join(strings.Fields(description), " ")
	if utf8.RuneCountInString(s) <= maxSummary {
		return s
	}
	return string([]rune(s)[:maxSummary-1]) + "…"
}
