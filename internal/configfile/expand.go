package configfile

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxEnvFileBytes bounds an envFile: it is read whole.
const maxEnvFileBytes = 1 << 20

// An expander expands the variables of one configuration file.
type expander struct {
	opts    Options
	inputs  map[string]Input       // declared in the file
	answers map[string]inputAnswer // by input id: each is asked once
}

// An inputAnswer is what Options.Input answered for one id.
type inputAnswer struct {
	value string
	err   error
}

// server expands the strings of one server entry and reads its envFile.
func (r *expander) server(name string, fs fileServer) (Server, []Problem) {
	var problems []Problem
	fail := func(field string, err error) {
		problems = append(problems, Problem{Server: name, Field: field, Err: err})
	}
	expand := func(field, v string) string {
		out, err := r.expand(v)
		if err != nil {
			fail(field, err)
		}
		return out
	}
	s := fs.Server
	if s.Transport != "stdio" {
		rawURL, err := r.expand(s.URL)
		if err == nil {
			err = CheckScheme(rawURL)
		}
		if err != nil {
			fail("url", err)
		}
		s.URL = rawURL
		expandMap(s.Headers, "headers", expand)
		return s, problems
	}
	s.Command = expand("command", s.Command)
	args := s.Args
	s.Args = nil // nil for "args": [] too
	for i, a := range args {
		s.Args = append(s.Args, expand(fmt.Sprintf("args[%d]", i), a))
	}
	s.Dir = expand("cwd", s.Dir)
	env := s.Env
	s.Env = nil
	if fs.envFile != "" {
		if path := expand("envFile", fs.envFile); path != "" {
			vars, err := readEnvFile(path)
			if err != nil {
				fail("envFile", err)
			}
			s.Env = vars
		}
	}
	if env != nil {
		expandMap(env, "env", expand)
		if s.Env == nil {
			s.Env = env
		} else {
			maps.Copy(s.Env, env) // env wins over envFile
		}
	}
	return s, problems
}

// CheckScheme refuses a URL without an http or https scheme, saying what
// is missing rather than what net/url makes of it ("first path segment in
// URL cannot contain colon" for localhost:8080/mcp); [mcpadapter.New]
// checks with it too, then validates the rest. The URL, which may hold a
// secret, is not shown.
func CheckScheme(rawURL string) error {
	scheme, _, found := strings.Cut(rawURL, "://")
	switch {
	case found && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")):
		return nil
	case found && isScheme(scheme):
		return fmt.Errorf("scheme %q is not http or https", scheme)
	}
	return errors.New("not an absolute URL (missing http:// or https://?)")
}

// isScheme reports whether s has the syntax of a URL scheme (RFC 3986,
// section 3.1).
func isScheme(s string) bool {
	for i, c := range []byte(s) {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || (c < '0' || c > '9') && c != '+' && c != '-' && c != '.') {
			return false
		}
	}
	return s != ""
}

// expandMap expands the values of m in place, in key order, naming each
// field prefix.key.
func expandMap(m map[string]string, prefix string, expand func(field, v string) string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		m[k] = expand(prefix+"."+k, m[k])
	}
}

// expand replaces every ${...} in v. The values put in are not scanned
// again, so v is read once, left to right.
func (r *expander) expand(v string) (string, error) {
	if !strings.Contains(v, "${") {
		return v, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		b.WriteString(v[:i])
		ref, rest, ok := strings.Cut(v[i+2:], "}")
		if !ok {
			return "", errors.New("unterminated ${")
		}
		val, err := r.variable(ref)
		if err != nil {
			return "", err
		}
		b.WriteString(val)
		v = rest
	}
}

// variable returns the value of the variable ${ref}.
func (r *expander) variable(ref string) (string, error) {
	if id, ok := strings.CutPrefix(ref, "input:"); ok {
		return r.input(id)
	}
	switch ref {
	case "workspaceFolder":
		if r.opts.WorkspaceFolder == "" {
			return "", errors.New("${workspaceFolder} needs ConfigOptions.WorkspaceFolder")
		}
		return r.opts.WorkspaceFolder, nil
	case "userHome":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("${userHome}: %w", err)
		}
		return home, nil
	}
	name, def, hasDefault := strings.Cut(ref, ":-")
	name = strings.TrimPrefix(name, "env:")
	if !isEnvName(name) {
		return "", fmt.Errorf("unknown variable ${%s}", ref)
	}
	if r.opts.AllowedEnv != nil && !slices.Contains(r.opts.AllowedEnv, name) {
		return "", fmt.Errorf("environment variable %s is not in ConfigOptions.AllowedEnv", name)
	}
	lookup := r.opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	val, ok := lookup(name)
	switch {
	case hasDefault && val == "":
		return def, nil
	case !ok:
		return "", fmt.Errorf("environment variable %s is not set", name)
	}
	return val, nil
}

// input answers ${input:id}, asking opts.Input once per id.
func (r *expander) input(id string) (string, error) {
	if a, ok := r.answers[id]; ok {
		return a.value, a.err
	}
	if id == "" {
		return "", errors.New("${input:} names no input")
	}
	if r.opts.Input == nil {
		return "", fmt.Errorf("${input:%s} needs ConfigOptions.Input", id)
	}
	in, ok := r.inputs[id]
	if !ok {
		in = Input{ID: id}
	}
	val, err := r.opts.Input(in)
	if err != nil {
		err = fmt.Errorf("input %q: %w", id, err)
	}
	r.answers[id] = inputAnswer{val, err}
	return val, err
}

// isEnvName reports whether name is a portable environment variable name.
func isEnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// readEnvFile reads a dotenv file: UTF-8 text (a byte order mark is
// skipped) of NAME=value lines, blank lines and # comments, an optional
// "export " prefix, values optionally quoted (a double-quoted value is
// unquoted as a Go string literal: \n, \", \\). A NUL, another control
// character than a tab or a line end, or invalid UTF-8 (a binary file,
// /proc/self/environ) is refused. Errors name the line, never its text.
func readEnvFile(path string) (map[string]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxEnvFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxEnvFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxEnvFileBytes)
	}
	return parseEnvFile(path, string(data))
}

// parseEnvFile parses the dotenv text of the file path.
func parseEnvFile(path, text string) (map[string]string, error) {
	env := map[string]string{}
	n := 0
	for line := range strings.Lines(strings.TrimPrefix(text, "\uFEFF")) {
		n++
		if what := notText(line); what != "" {
			return nil, fmt.Errorf("%s:%d: not dotenv text (%s)", path, n, what)
		}
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		name, val, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || !isEnvName(name) {
			return nil, fmt.Errorf("%s:%d: want NAME=value", path, n)
		}
		val = strings.TrimSpace(val)
		switch {
		case len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"':
			s, err := strconv.Unquote(val)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: bad double-quoted value", path, n)
			}
			if strings.ContainsRune(s, 0) {
				return nil, fmt.Errorf("%s:%d: a NUL in a double-quoted value", path, n)
			}
			val = s
		case len(val) >= 2 && val[0] == '\'' && val[len(val)-1] == '\'':
			val = val[1 : len(val)-1]
		default:
			if i := strings.Index(val, " #"); i >= 0 {
				val = strings.TrimSpace(val[:i])
			}
		}
		env[name] = val
	}
	return env, nil
}

// notText says what in line dotenv text cannot hold: a NUL, another control
// character than a tab or a line end, or invalid UTF-8. It returns "" for
// a line of text.
func notText(line string) string {
	for i, r := range line {
		switch {
		case r == 0:
			return "a NUL byte"
		case r == utf8.RuneError && !strings.HasPrefix(line[i:], "\uFFFD"):
			return "invalid UTF-8"
		case unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r':
			return "a control character"
		}
	}
	return ""
}
