package configfile

// A file on disk, and the text of the problems found in one.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// maxErrorLen bounds the text of one error ([ErrorText]): a file's names
// (of servers, fields, variables) can be of any length.
const maxErrorLen = 1024

// maxShown bounds the problems an error lists; the rest are counted
// ([Shown]).
const maxShown = 20

// Workspace is the default ${workspaceFolder} of the file at path: the
// directory holding it, or its parent when that directory is .vscode or
// .cursor (where editors keep mcp.json).
func Workspace(path string) (string, error) {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return "", err
	}
	if base := filepath.Base(dir); base == ".vscode" || base == ".cursor" {
		dir = filepath.Dir(dir)
	}
	return dir, nil
}

// ReadFile reads the file at path. Its error does not repeat the path
// (the caller names the file).
func ReadFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
		}
		return nil, err
	}
	return data, nil
}

// Shown returns the first 20 problems, and a last one (of the top level)
// counting the rest when there are more.
func Shown(problems []Problem) []Problem {
	shown := problems[:min(len(problems), maxShown)]
	if rest := len(problems) - len(shown); rest > 0 {
		shown = append(shown[:len(shown):len(shown)], Problem{Err: fmt.Errorf("%d more problems not shown", rest)})
	}
	return shown
}

// ErrorText is the text of a configuration error: of the file at file
// (empty for none), of the server named server (empty for the top level),
// of the field named field (empty for the whole server), caused by err
// (may be nil). It is cut to 1 KiB: the names it quotes come from the file
// and can be of any length.
func ErrorText(file, server, field string, err error) string {
	var b strings.Builder
	b.WriteString("mcpadapter: config")
	if file != "" {
		b.WriteString(" " + file)
	}
	if server != "" {
		fmt.Fprintf(&b, ": server %q", server)
	}
	if field != "" {
		b.WriteString(": field " + field)
	}
	if err != nil {
		b.WriteString(": " + err.Error())
	}
	return clip(b.String(), maxErrorLen)
}

// clip cuts s to at most n bytes, at a character boundary, marking the cut
// with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
