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

// TestDocFileTable: internal/README.md's tables of files name every
// non-test .go file of the root package and of internal/, and nothing
// else, so that the map a newcomer reads cannot fall behind the code.
func TestDocFileTable(t *testing.T) {
	// A row is a Markdown row "| `<path>.go` | <job> |": a root file's
	// path has no slash, one of internal/ names its package.
	checkFileTable(t, "internal/README.md", "(?m)^\\| `([\\w.-]+\\.go)` \\|", ".", "")
	checkFileTable(t, "internal/README.md", "(?m)^\\| `([\\w.-]+/[\\w./-]+\\.go)` \\|", "internal", "internal/")
}

// checkFileTable checks that the table in file lists, by the first group
// of row, every non-test .go file under dir (the root: its own files
// only), each once, with prefix before the path it lists.
func checkFileTable(t *testing.T, file, row, dir, prefix string) {
	t.Helper()
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile(row).FindAllStringSubmatch(string(doc), -1) {
		listed = append(listed, prefix+m[1])
	}
	var files []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "testdata" || dir == "." && path != "."):
			return fs.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
			files = append(files, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) < len(files)/2 {
		t.Fatalf("%s lists %d of %d files; is its table's format still the one this test reads?", file, len(listed), len(files))
	}
	for _, f := range files {
		if !slices.Contains(listed, f) {
			t.Errorf("%s's table of files does not list %s", file, f)
		}
	}
	for _, f := range listed {
		if !slices.Contains(files, f) {
			t.Errorf("%s's table of files lists %s, which is not a non-test file there", file, f)
		}
	}
}
