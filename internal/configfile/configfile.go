// Package configfile reads the MCP server configuration files that hosts
// and LangChain use (mcp.json and its kin): Claude Desktop's and Claude
// Code's, Cursor's and LangChain JS's "mcpServers", VS Code's "servers"
// with "inputs", and LangChain Python's bare name → connection object;
// JSON with comments and trailing commas; variables (${env:NAME},
// ${input:id}, ${workspaceFolder}, ...) and envFile.
//
// [Parse] returns plain [Server] values of its own; the root package's
// ParseConfig and LoadConfig map them onto mcpadapter.Server and document
// the format for users. load.go reads a file ([ReadFile], [Workspace]) and
// writes the text of its problems ([Shown], [ErrorText]).
package configfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/internal/suggest"
)

// Options controls how [Parse] expands variables.
type Options struct {
	// LookupEnv resolves ${NAME} and ${env:NAME}. Nil means [os.LookupEnv].
	LookupEnv func(name string) (value string, ok bool)

	// AllowedEnv, when not nil, holds the only names ${NAME} and
	// ${env:NAME} may read; any other is an error naming the variable.
	AllowedEnv []string

	// Input answers ${input:id}, at most once per id, in a deterministic
	// order, and only when the file's structure is valid. Nil means that a
	// reference to an input is an error.
	Input func(in Input) (string, error)

	// WorkspaceFolder is the value of ${workspaceFolder}. Empty means that
	// the variable is an error.
	WorkspaceFolder string
}

// An Input is an input variable (${input:id}) with what the file's
// "inputs" section declares about it (VS Code's mcp.json). Only ID is set
// for an undeclared input.
type Input struct {
	ID          string
	Type        string // "promptString", "pickString", ...
	Description string
	Password    bool // the answer is a secret: do not echo it
	Default     string
}

// A Problem is one thing wrong with a file: its syntax, a field, or a
// variable. It names the server and the field, never their values.
type Problem struct {
	Server string // the server's name; empty for the file's top level
	Field  string // e.g. "type", "args[1]", "env.API_KEY"; empty for the whole server
	Err    error
}

// A Server is one server entry of a file, its variables expanded. A stdio
// server has Command (and maybe Args, Env, Dir, Restart); the others have
// URL (and maybe Headers, Reconnect, DisableSSEFallback).
type Server struct {
	Transport          string // "stdio", "http" (Streamable HTTP) or "sse"
	Command            string
	Args               []string
	Env                map[string]string // envFile's variables, then env's
	Dir                string            // "cwd"
	URL                string
	Headers            map[string]string
	Restart, Reconnect *Retry // LangChain JS's options; nil unless enabled
	DisableSSEFallback bool   // LangChain JS's "automaticSSEFallback": false
	DefaultToolTimeout time.Duration
}

// A Retry is LangChain JS's restart or reconnect option.
type Retry struct {
	MaxAttempts int
	Delay       time.Duration
}

// Parse reads a configuration file and returns its servers by name, or
// every problem it found. No input is asked for while the file has a
// problem of structure (JSON, fields, transports).
func Parse(data []byte, opts Options) (map[string]Server, []Problem) {
	f, problems := decodeFile(data)
	if len(problems) > 0 {
		return nil, problems
	}
	r := &expander{opts: opts, inputs: f.inputs, answers: map[string]inputAnswer{}}
	servers := make(map[string]Server, len(f.servers))
	for _, name := range slices.Sorted(maps.Keys(f.servers)) {
		s, sp := r.server(name, f.servers[name])
		problems = append(problems, sp...)
		servers[name] = s
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return servers, nil
}

// A file is a decoded configuration file, before expansion.
type file struct {
	servers map[string]fileServer
	inputs  map[string]Input
}

// A fileServer is one server entry of a configuration file, its strings
// not yet expanded, with the envFile to read into its Env.
type fileServer struct {
	Server
	envFile string
}

// configTransports maps the transport names of every format to ours.
var configTransports = map[string]string{
	"stdio":           "stdio",
	"http":            "http",
	"streamable_http": "http",
	"streamable-http": "http",
	"sse":             "sse",
}

// stdioFields and urlFields are the fields that apply only to stdio servers
// and only to URL servers; serverFields are all the fields of a server.
var (
	stdioFields  = []string{"command", "args", "env", "cwd", "envFile", "restart"}
	urlFields    = []string{"url", "headers", "reconnect", "automaticSSEFallback"}
	serverFields = slices.Concat([]string{"type", "transport"}, stdioFields, urlFields, []string{"defaultToolTimeout"})
)

// isServer reports whether fields, those of a JSON object, hold a field of
// a server entry.
func isServer(fields map[string]json.RawMessage) bool {
	for key := range fields {
		if slices.Contains(serverFields, key) {
			return true
		}
	}
	return false
}

// decodeFile decodes the structure of a configuration file and checks it,
// without expanding variables.
func decodeFile(data []byte) (file, []Problem) {
	stripped, err := stripJSONC(data)
	if err != nil {
		return file{}, []Problem{{Err: err}}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(stripped, &top); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			line, col := position(data, syntax.Offset-1)
			return file{}, []Problem{{Err: fmt.Errorf("invalid JSON at line %d, column %d: %w", line, col, err)}}
		}
		return file{}, []Problem{{Err: fmt.Errorf("invalid JSON: %w", err)}}
	}
	if top == nil {
		return file{}, []Problem{{Err: errors.New("want a JSON object")}}
	}
	var errs []Problem
	raw := top
	_, isHost := top["mcpServers"]
	_, isVSCode := top["servers"]
	wrapper := ""
	switch {
	case isHost && isVSCode:
		return file{}, []Problem{{Field: "servers", Err: errors.New(`"mcpServers" and "servers" are both set`)}}
	case isHost:
		wrapper = "mcpServers"
	case isVSCode:
		wrapper = "servers"
		for _, key := range slices.Sorted(maps.Keys(top)) {
			if !slices.Contains(vsCodeKeys, key) {
				errs = append(errs, Problem{Field: key, Err: unknownField(key, vsCodeKeys)})
			}
		}
	default:
		if problems := checkBareTop(top); len(problems) > 0 {
			return file{}, problems
		}
	}
	var f file
	if wrapper != "" {
		var ok bool
		if raw, ok = jsonObject(top[wrapper]); !ok {
			return file{}, []Problem{{Field: wrapper, Err: errors.New("want an object mapping names to servers")}}
		}
		if in, ok := top["inputs"]; ok {
			inputs, err := decodeInputs(in)
			if err != nil {
				errs = append(errs, Problem{Field: "inputs", Err: err})
			}
			f.inputs = inputs
		}
	}
	f.servers = make(map[string]fileServer, len(raw))
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		s, serr := decodeServer(name, raw[name])
		errs = append(errs, serr...)
		f.servers[name] = s
	}
	return f, errs
}

// topLevelKeys are the keys that give a file its shape: "mcpServers", or
// "servers" with "inputs". vsCodeKeys are those of VS Code's mcp.json.
var (
	topLevelKeys = []string{"mcpServers", "servers", "inputs"}
	vsCodeKeys   = []string{"servers", "inputs"}
)

// checkBareTop checks the top level of a file that has neither
// "mcpServers" nor "servers", which [decodeFile] reads as names mapping to
// servers (LangChain Python's connections). A key that is not a server and
// is spelled like a top-level key ("mcpServer", "Servers") is named as a
// misspelled top-level key, without the problems of the other keys (which
// then belong to the host application); a file without a single server
// object is named as missing its top-level key.
func checkBareTop(top map[string]json.RawMessage) []Problem {
	var problems []Problem
	objects := 0
	for _, key := range slices.Sorted(maps.Keys(top)) {
		fields, isObject := jsonObject(top[key])
		if isObject {
			objects++
		}
		if isServer(fields) {
			continue
		}
		switch near := suggest.Nearest(key, topLevelKeys); {
		case near == key: // "inputs", which belongs beside "servers"
			problems = append(problems, Problem{Field: key, Err: errors.New(`applies only with "servers"`)})
		case near != "":
			problems = append(problems, Problem{Field: key, Err: fmt.Errorf("unknown top-level key (did you mean %q?)", near)})
		}
	}
	if len(problems) == 0 && objects == 0 {
		problems = append(problems, Problem{Err: errors.New(`no "mcpServers" or "servers" key, and no other key holds a server object`)})
	}
	return problems
}

// jsonObject returns the fields of v when v is a JSON object.
func jsonObject(v json.RawMessage) (map[string]json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(v, &fields) != nil || fields == nil {
		return nil, false
	}
	return fields, true
}

// unknownField is the error of an unknown key, naming the nearest of known.
func unknownField(key string, known []string) error {
	if near := suggest.Nearest(key, known); near != "" {
		return fmt.Errorf("unknown field (did you mean %q?)", near)
	}
	return errors.New("unknown field")
}

// decodeInputs decodes VS Code's "inputs" list.
func decodeInputs(raw json.RawMessage) (map[string]Input, error) {
	var list []Input // its fields are the JSON keys, matched without regard to case
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("want a list of {id, type, description, password, default} objects")
	}
	inputs := make(map[string]Input, len(list))
	for _, in := range list {
		inputs[in.ID] = in
	}
	return inputs, nil
}

// decodeServer decodes and checks one server entry.
func decodeServer(name string, raw json.RawMessage) (fileServer, []Problem) {
	fields, ok := jsonObject(raw)
	if !ok {
		return fileServer{}, []Problem{{Server: name, Err: errors.New("want a JSON object")}}
	}
	var (
		s    fileServer
		errs []Problem
	)
	fail := func(field string, err error) {
		errs = append(errs, Problem{Server: name, Field: field, Err: err})
	}
	for _, key := range slices.Sorted(maps.Keys(fields)) {
		v := fields[key]
		var err error
		switch key {
		case "type", "transport":
			var t string
			if err = decodeField(v, &t, "a string"); err != nil {
				break
			}
			kind, ok := configTransports[t]
			switch {
			case !ok:
				err = fmt.Errorf("unknown transport %q (want stdio, http, streamable_http or sse)", t)
			case s.Transport != "" && s.Transport != kind:
				err = errors.New(`"type" and "transport" disagree`)
			default:
				s.Transport = kind
			}
		case "command":
			err = decodeField(v, &s.Command, "a string")
		case "args":
			err = decodeField(v, &s.Args, "a list of strings")
		case "env":
			var bad string
			if s.Env, bad, err = decodeEnv(v); bad != "" {
				key += "." + bad
			}
		case "cwd":
			err = decodeField(v, &s.Dir, "a string")
		case "envFile":
			err = decodeField(v, &s.envFile, "a string")
		case "url":
			err = decodeField(v, &s.URL, "a string")
		case "headers":
			err = decodeField(v, &s.Headers, "an object of strings")
		case "restart":
			s.Restart, err = decodeRetry(v)
		case "reconnect":
			s.Reconnect, err = decodeRetry(v)
		case "automaticSSEFallback":
			var fallback bool
			err = decodeField(v, &fallback, "true or false")
			s.DisableSSEFallback = !fallback
		case "defaultToolTimeout":
			var ms float64
			if err = decodeField(v, &ms, "a number of milliseconds"); err == nil {
				s.DefaultToolTimeout, err = millis(ms)
			}
			if err == nil && s.DefaultToolTimeout == 0 {
				err = errors.New("want a positive number of milliseconds")
			}
		default:
			err = unknownField(key, serverFields)
		}
		if err != nil {
			fail(key, err)
		}
	}
	if s.Transport == "" {
		switch {
		case fields["command"] != nil:
			s.Transport = "stdio"
		case fields["url"] != nil:
			s.Transport = "http"
		default:
			fail("", errors.New("a server needs a command or a url"))
			return s, errs
		}
	}
	required, other := "command", urlFields
	if s.Transport != "stdio" {
		required, other = "url", stdioFields
	}
	if fields[required] == nil {
		fail(required, fmt.Errorf("required for %s servers", s.Transport))
	}
	for _, key := range other {
		if fields[key] != nil {
			fail(key, fmt.Errorf("does not apply to %s servers", s.Transport))
		}
	}
	if s.Transport == "sse" && s.DisableSSEFallback {
		fail("automaticSSEFallback", errors.New("false would never reach an sse server"))
	}
	return s, errs
}

// decodeRetry decodes LangChain JS's restart and reconnect options,
// {enabled, maxAttempts, delayMs}: nil unless enabled.
func decodeRetry(v json.RawMessage) (*Retry, error) {
	var r struct {
		Enabled     bool    `json:"enabled"`
		MaxAttempts int     `json:"maxAttempts"`
		DelayMs     float64 `json:"delayMs"`
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, errors.New("want {enabled, maxAttempts, delayMs}")
	}
	delay, err := millis(r.DelayMs)
	switch {
	case err != nil:
		return nil, fmt.Errorf("delayMs: %w", err)
	case r.MaxAttempts < 0:
		return nil, errors.New("maxAttempts: want a number of at least 0")
	case !r.Enabled:
		return nil, nil
	}
	return &Retry{MaxAttempts: r.MaxAttempts, Delay: delay}, nil
}

// maxMillis bounds a duration in milliseconds (about 31 years).
const maxMillis = 1e12

// millis converts a JSON number of milliseconds to a Duration.
func millis(ms float64) (time.Duration, error) {
	if ms < 0 || ms > maxMillis {
		return 0, fmt.Errorf("want between 0 and %g milliseconds", float64(maxMillis))
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

// decodeField decodes v into ptr, or says what it wants instead.
func decodeField(v json.RawMessage, ptr any, want string) error {
	if err := json.Unmarshal(v, ptr); err != nil {
		return errors.New("want " + want)
	}
	return nil
}

// decodeEnv decodes an env object. VS Code allows numbers as values; they
// are kept as written. A bad value is reported with its variable's name.
func decodeEnv(v json.RawMessage) (env map[string]string, bad string, err error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return nil, "", errors.New("want an object of strings")
	}
	env = make(map[string]string, len(raw))
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		val := raw[k]
		var s string
		var n json.Number
		switch {
		case string(val) == "null":
			return nil, k, errors.New("want a string (null, which VS Code reads as removing the variable, is not supported)")
		case json.Unmarshal(val, &s) == nil:
			env[k] = s
		case json.Unmarshal(val, &n) == nil:
			env[k] = n.String()
		default:
			return nil, k, errors.New("want a string")
		}
	}
	return env, "", nil
}

// stripJSONC turns JSON with comments (// and /* */) and trailing commas,
// which VS Code's mcp.json allows, into JSON: comments become spaces (so
// that syntax error offsets stay true) and a comma before } or ] becomes a
// space. It reads each byte once.
func stripJSONC(data []byte) ([]byte, error) {
	out := make([]byte, len(data))
	copy(out, data)
	last := -1 // index of the last byte outside strings, comments and whitespace
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == '"':
			for i++; i < len(out) && out[i] != '"'; i++ {
				if out[i] == '\\' {
					i++
				}
			}
			last = i
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			start := i
			out[i], out[i+1] = ' ', ' '
			for i += 2; i+1 < len(out) && !(out[i] == '*' && out[i+1] == '/'); i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			if i+1 >= len(out) {
				line, col := position(data, int64(start))
				return nil, fmt.Errorf("unterminated /* comment at line %d, column %d", line, col)
			}
			out[i], out[i+1] = ' ', ' '
			i++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case (c == '}' || c == ']') && last >= 0 && out[last] == ',':
			out[last] = ' '
			last = i
		default:
			last = i
		}
	}
	return out, nil
}

// position returns the line and column (both from 1, the column in
// characters) of the byte at offset in data.
func position(data []byte, offset int64) (line, col int) {
	offset = max(0, min(offset, int64(len(data))))
	before := data[:offset]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte{'\n'}) + 1, utf8.RuneCount(before[start:]) + 1
}
