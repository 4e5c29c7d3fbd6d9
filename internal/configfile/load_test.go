package configfile

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWorkspace(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		filepath.Join(dir, "mcp.json"):            dir,
		filepath.Join(dir, ".vscode", "mcp.json"): dir,
		filepath.Join(dir, ".cursor", "mcp.json"): dir,
		filepath.Join(dir, "conf", "mcp.json"):    filepath.Join(dir, "conf"),
	} {
		if got, err := Workspace(path); err != nil || got != want {
			t.Errorf("Workspace(%s) = %q, %v, want %q", path, got, err, want)
		}
	}
}

func TestReadFileError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.json")
	_, err := ReadFile(path)
	if err == nil || strings.Contains(err.Error(), path) {
		t.Errorf("ReadFile(missing) = %v, want an error without the path", err)
	}
}

func TestShown(t *testing.T) {
	problems := make([]Problem, 25)
	shown := Shown(problems)
	if len(shown) != 21 || shown[20].Err == nil || shown[20].Err.Error() != "5 more problems not shown" {
		t.Errorf("Shown(25) = %d problems, last %v", len(shown), shown[len(shown)-1].Err)
	}
	if len(problems) != 25 || problems[20].Err != nil {
		t.Error("Shown changed its input")
	}
	if got := Shown(problems[:20]); len(got) != 20 {
		t.Errorf("Shown(20) = %d problems", len(got))
	}
}

func TestErrorText(t *testing.T) {
	if got := ErrorText("f.json", "s", "args[1]", errors.New("bad")); got != `mcpadapter: config f.json: server "s": field args[1]: bad` {
		t.Errorf("ErrorText() = %q", got)
	}
	long := ErrorText("", strings.Repeat("é", 1000), "", nil)
	if len(long) > maxErrorLen || !utf8.ValidString(long) || !strings.HasSuffix(long, "…") {
		t.Errorf("ErrorText(long) = %d bytes, valid %v", len(long), utf8.ValidString(long))
	}
}
