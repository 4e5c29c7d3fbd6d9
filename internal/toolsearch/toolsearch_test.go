package toolsearch

import (
	"maps"
	"slices"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"snake", "read_text_file", []string{"read", "text", "fil"}},
		{"camel", "readTextFile", []string{"read", "text", "fil"}},
		{"kebab", "read-text-file", []string{"read", "text", "fil"}},
		{"acronym", "getHTTPServerURL", []string{"get", "http", "server", "url"}},
		{"digits", "utf8Decode v2", []string{"utf", "8", "decod", "2"}},
		{"prefixed", "files__list_directories", []string{"fil", "list", "directori"}},
		{"inflections", "Creates created creating create", []string{"creat", "creat", "creat", "creat"}},
		{"plurals", "entities entity processes status", []string{"entiti", "entiti", "process", "status"}},
		{"doubled", "running setting", []string{"run", "set"}},
		{"stop words", "Please find me the tools for a task", []string{"find", "tool", "task"}},
		{"string kept", "string", []string{"string"}},
		{"not english", "Größe straße", []string{"größe", "straße"}},
		{"empty", " _-/ ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tokens(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// catalog is a small catalog whose tools share words, as real ones do.
var catalog = []Doc{
	{Name: "files__read_text_file", Description: "Read the complete contents of a file as text.", Args: []string{"path", "head", "tail"}, ArgText: "Path of the file. First N lines. Last N lines."},
	{Name: "files__write_file", Description: "Create a new file or overwrite an existing file with new content.", Args: []string{"path", "content"}},
	{Name: "files__list_directory", Description: "Get a detailed listing of all files and directories in a specified path.", Args: []string{"path"}},
	{Name: "files__move_file", Description: "Move or rename files and directories.", Args: []string{"source", "destination"}},
	{Name: "memory__create_entities", Title: "Create entities", Description: "Create multiple new entities in the knowledge graph.", Args: []string{"entities"}},
	{Name: "memory__search_nodes", Description: "Search for nodes in the knowledge graph based on a query.", Args: []string{"query"}},
	{Name: "billing__createInvoice", Title: "New invoice", Description: "Creates an invoice for a customer.", Args: []string{"customerId", "lineItems", "dueDate"}},
}

func TestSearch(t *testing.T) {
	ix := New(catalog)
	tests := []struct {
		query string
		limit int
		want  []int
	}{
		{"rename a file", 1, []int{3}},
		{"put this content into a file", 1, []int{1}},
		{"read the contents of a text file", 1, []int{0}},
		{"what is in this folder? list the directory", 1, []int{2}},
		{"add people to the knowledge graph", 2, []int{4, 5}},
		{"bill a customer: create an invoice due next week", 1, []int{6}},
		{"", 0, nil},
		{"zebra", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			if got := ix.Search(tt.query, tt.limit); !slices.Equal(got, tt.want) {
				t.Errorf("Search(%q, %d) = %v, want %v", tt.query, tt.limit, got, tt.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	got := Expand(Tokens("Show and remove the deleted items, then show them again"))
	want := []QueryTerm{{"show", 1}, {"remov", 1}, {"delet", 1}, {"item", 1}, {"again", 1}, {"get", synonymWeight}, {"list", synonymWeight}}
	if !slices.Equal(got, want) {
		t.Errorf("Expand() = %v, want %v", got, want)
	}
}

// TestSearchFloor: Search leaves out what matches much less than the best
// hit, and, for a query holding a word that no tool holds, what shares
// with it only words that many tools hold; a query that nothing matches
// well enough gets nothing. Rank still returns every hit.
func TestSearchFloor(t *testing.T) {
	ix := New(catalog)
	tests := []struct {
		query  string
		ranked int   // hits of Rank
		want   []int // of Search
	}{
		{"rename a file", 4, []int{3}},     // the other file tools score 0.37 of move_file or less
		{"list the files", 4, []int{2}},    // the same under list_directory
		{"files", 4, []int{1, 3, 0, 2}},    // nothing stands out: all of them
		{"delete a file", 4, nil},          // no tool deletes, and 4 of the 7 say "file"
		{"book a flight to Paris", 0, nil}, // no word of it
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			if got := ix.Rank(tt.query); len(got) != tt.ranked {
				t.Errorf("Rank(%q) = %v, want %d hits", tt.query, got, tt.ranked)
			}
			if got := ix.Search(tt.query, 0); !slices.Equal(got, tt.want) {
				t.Errorf("Search(%q, 0) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
}

// TestSearchOrder: every hit is returned when limit is 0, best first, and
// equal scores keep catalog order.
func TestSearchOrder(t *testing.T) {
	twins := []Doc{{Name: "a__ping"}, {Name: "b__ping"}, {Name: "c__ping_ping"}, {Name: "d__pong"}}
	if got, want := New(twins).Search("ping", 0), []int{2, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("Search(ping) = %v, want %v", got, want)
	}
	if got := New(nil).Search("ping", 3); got != nil {
		t.Errorf("Search on an empty index = %v, want none", got)
	}
}

// bigCatalog is testserver's catalog of 1,000 tools as the index sees
// them.
func bigCatalog(b *testing.B) []Doc {
	var docs []Doc
	for _, d := range testserver.CatalogDomains() {
		for _, tool := range testserver.CatalogTools(d) {
			doc := Doc{Name: d + "__" + tool.Name, Description: tool.Description}
			props := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
			for _, name := range slices.Sorted(maps.Keys(props)) {
				doc.Args = append(doc.Args, name)
				doc.ArgText += props[name].(map[string]any)["description"].(string) + "\n"
			}
			docs = append(docs, doc)
		}
	}
	if len(docs) != 1000 {
		b.Fatalf("%d tools, want 1000", len(docs))
	}
	return docs
}

// BenchmarkIndex builds the index of 1,000 tools (what NewToolSearch
// does once per catalog).
func BenchmarkIndex(b *testing.B) {
	docs := bigCatalog(b)
	for b.Loop() {
		New(docs)
	}
}

// BenchmarkSearch ranks 1,000 tools for a task's sentence (what each
// search call costs).
func BenchmarkSearch(b *testing.B) {
	ix := New(bigCatalog(b))
	for b.Loop() {
		ix.Search("Refund the payment Acme was charged twice", 5)
	}
}
