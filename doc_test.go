package mcpadapter_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocFileTable: doc.go's table of files names every non-test .go file
// of the root package and of internal/, and nothing else, so that the map a
// newcomer reads cannot fall behind the code.
func TestDocFileTable(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	// A row of the table is a comment line "//\t<path>.go  <job>".
	row := regexp.MustCompile(`(?m)^//\t+([\w./-]+\.go)\s`)
	var listed []string
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		listed = append(listed, m[1])
	}
	var files []string
	for _, root := range []string{".", "internal"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && (d.Name() == "testdata" || root == "." && path != "."):
				return fs.SkipDir
			case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
				files = append(files, filepath.ToSlash(path))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(listed) < len(files)/2 {
		t.Fatalf("doc.go lists %d files; is the table's format still \"//\\t<path>.go  <job>\"?", len(listed))
	}
	for _, f := range files {
		if !slices.Contains(listed, f) {
			t.Errorf("doc.go's table of files does not list %s", f)
		}
	}
	for _, f := range listed {
		if !slices.Contains(files, f) {
			t.Errorf("doc.go's table of files lists %s, which is not a non-test file of the root or internal/", f)
		}
	}
}
