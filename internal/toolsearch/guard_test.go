package toolsearch

import "testing"

// TestDocOfUnsafeSchema: the arguments of a schema the schema guard
// refuses are not read; the tool keeps its name, title and description.
func TestDocOfUnsafeSchema(t *testing.T) {
	params := map[string]any{"$ref": "#", "type": "object", "properties": map[string]any{
		"path": map[string]any{"type": "string", "description": "The file to read."},
	}}
	got := DocOf("files__read", "Read", "Reads a file.", params)
	if got.Name != "files__read" || got.Title != "Read" || got.Description != "Reads a file." || got.Args != nil || got.ArgText != "" {
		t.Errorf("DocOf(cyclic schema) = %#v, want the name, title and description alone", got)
	}
}
