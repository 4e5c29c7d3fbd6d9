package mcpadapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ConfigOptions controls how [ParseConfig] and [LoadConfig] expand the
// variables of a configuration file. A nil *ConfigOptions means the zero
// value.
type ConfigOptions struct {
	// LookupEnv resolves ${NAME} and ${env:NAME}. Nil means [os.LookupEnv].
	LookupEnv func(name string) (value string, ok bool)

	// Input answers ${input:id} (VS Code's input variables, typically
	// secrets the user is prompted for). It is called at most once per id,
	// in a deterministic order, and only when the file's structure is valid.
	// Nil means that a reference to an input is an error.
	Input func(in ConfigInput) (string, error)

	// WorkspaceFolder is the value of ${workspaceFolder}. Empty means that
	// the variable is an error; [LoadConfig] defaults it.
	WorkspaceFolder string
}

// A ConfigInput is an input variable (${input:id}) to be answered by
// [ConfigOptions.Input], with what the file's "inputs" section declares
// about it (VS Code's mcp.json). Only ID is set for an undeclared input.
type ConfigInput struct {
	ID          string
	Type        string // "promptString", "pickString", ...
	Description string
	Password    bool // the answer is a secret: do not echo it
	Default     string
}

// A ConfigError is a problem in a configuration file: its syntax, a field
// that is unknown or does not apply to the server's transport, an unknown
// transport, or a variable that cannot be expanded. It names the server
// and the field, never their values (which may hold secrets).
type ConfigError struct {
	File   string // the path given to [LoadConfig]; empty for [ParseConfig]
	Server string // the server's name; empty for the file's top level
	Field  string // e.g. "type", "args[1]", "env.API_KEY"; empty for the whole server
	Err    error
}

// Error implements error.
func (e *ConfigError) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString("mcpadapter: config")
	if e.File != "" {
		b.WriteString(" " + e.File)
	}
	if e.Server != "" {
		fmt.Fprintf(&b, ": server %q", e.Server)
	}
	if e.Field != "" {
		b.WriteString(": field " + e.Field)
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads the configuration file at path with [ParseConfig]. When
// opts.WorkspaceFolder is empty, ${workspaceFolder} is the directory holding
// the file, or its parent when that directory is .vscode or .cursor (where
// editors keep mcp.json).
func LoadConfig(path string, opts *ConfigOptions) (Config, error) {
	var o ConfigOptions
	if opts != nil {
		o = *opts
	}
	if o.WorkspaceFolder == "" {
		dir, err := filepath.Abs(filepath.Dir(path))
		if err != nil {
			return Config{}, &ConfigError{File: path, Err: err}
		}
		if base := filepath.Base(dir); base == ".vscode" || base == ".cursor" {
			dir = filepath.Dir(dir)
		}
		o.WorkspaceFolder = dir
	}
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = fmt.Errorf("%s: %w", pe.Op, pe.Err) // the path is in File
		}
		return Config{}, &ConfigError{File: path, Err: err}
	}
	return parseConfig(path, data, &o)
}

// ParseConfig reads the MCP server configuration files that hosts and
// LangChain already use, and returns a [Config] whose Servers [New]
// validates as usual. Three shapes are recognised by their top level:
//
//   - "mcpServers" (Claude Desktop, Claude Code's .mcp.json, Cursor's
//     mcp.json, LangChain JS's MultiServerMCPClient): other top-level keys
//     belong to the host application and are ignored;
//   - "servers", with an optional "inputs" list (VS Code's mcp.json);
//   - otherwise the object itself maps names to servers, as the
//     connections of LangChain Python's MultiServerMCPClient do.
//
// Comments (// and /* */) and trailing commas are allowed, as in VS Code's
// mcp.json.
//
// A server is a stdio program (command, args, env, cwd, envFile) or a URL
// (url, headers). Its transport comes from "type" or "transport": "stdio";
// "http", "streamable_http" or "streamable-http" (Streamable HTTP, falling
// back to SSE); or "sse", which sets [ModeLegacy] so that any 4xx answer
// to a Streamable HTTP POST falls back to SSE. Without either, a server with
// a command is stdio and one with a url is http. envFile names a dotenv
// file (NAME=value lines; a relative path is relative to the current
// directory, as cwd is) whose variables come before env's. LangChain JS's
// restart and reconnect ({enabled, maxAttempts, delayMs}),
// automaticSSEFallback and defaultToolTimeout (milliseconds) set
// [Server.Restart], [Server.Reconnect], [Server.DisableSSEFallback] and
// [Server.DefaultToolTimeout].
//
// Every string value may use ${NAME} or ${env:NAME} (an environment
// variable; ${NAME:-default} when it is unset or empty), ${input:id}
// (answered by opts.Input), ${workspaceFolder} and ${userHome}. Everything
// else is an error, reported as a [*ConfigError] naming the server and the
// field: invalid JSON, an unknown field, a field that does not apply to the
// server's transport, an unknown transport, an unset variable (never
// replaced by an empty string), an unknown variable. All errors are
// returned together, joined, and no input is asked for while the file has
// an error of structure (JSON, fields, transports).
func ParseConfig(data []byte, opts *ConfigOptions) (Config, error) {
	return parseConfig("", data, opts)
}

func parseConfig(file string, data []byte, opts *ConfigOptions) (Config, error) {
	if opts == nil {
		opts = &ConfigOptions{}
	}
	f, errs := decodeConfigFile(data)
	if len(errs) > 0 {
		return Config{}, joinConfigErrors(file, errs)
	}
	r := &expander{opts: opts, inputs: f.inputs, answers: map[string]inputAnswer{}}
	servers := make(map[string]Server, len(f.servers))
	for _, name := range slices.Sorted(maps.Keys(f.servers)) {
		s, serr := r.server(name, f.servers[name])
		errs = append(errs, serr...)
		servers[name] = s
	}
	if len(errs) > 0 {
		return Config{}, joinConfigErrors(file, errs)
	}
	return Config{Servers: servers}, nil
}

// joinConfigErrors names file in each of errs and joins them.
func joinConfigErrors(file string, errs []*ConfigError) error {
	all := make([]error, len(errs))
	for i, err := range errs {
		err.File = file
		all[i] = err
	}
	return errors.Join(all...)
}

// A configFile is a decoded configuration file, before expansion.
type configFile struct {
	servers map[string]fileServer
	inputs  map[string]ConfigInput
}

// A fileServer is one server entry of a configuration file, its strings
// not yet expanded.
type fileServer struct {
	transport string // "stdio", "http" or "sse"
	command   string
	args      []string
	env       map[string]string
	cwd       string
	envFile   string
	url       string
	headers   map[string]string

	// LangChain JS's options.
	restart, reconnect *RetryPolicy
	noSSEFallback      bool
	toolTimeout        time.Duration
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
// and only to URL servers.
var (
	stdioFields = []string{"command", "args", "env", "cwd", "envFile", "restart"}
	urlFields   = []string{"url", "headers", "reconnect", "automaticSSEFallback"}
)

// decodeConfigFile decodes the structure of a configuration file and
// checks it, without expanding variables.
func decodeConfigFile(data []byte) (configFile, []*ConfigError) {
	data, err := stripJSONC(data)
	if err != nil {
		return configFile{}, []*ConfigError{{Err: err}}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return configFile{}, []*ConfigError{{Err: fmt.Errorf("invalid JSON: %w", err)}}
	}
	if top == nil {
		return configFile{}, []*ConfigError{{Err: errors.New("want a JSON object")}}
	}
	var errs []*ConfigError
	raw := top
	_, isHost := top["mcpServers"]
	_, isVSCode := top["servers"]
	wrapper := ""
	switch {
	case isHost && isVSCode:
		return configFile{}, []*ConfigError{{Field: "servers", Err: errors.New(`"mcpServers" and "servers" are both set`)}}
	case isHost:
		wrapper = "mcpServers"
	case isVSCode:
		wrapper = "servers"
		for _, key := range slices.Sorted(maps.Keys(top)) {
			if key != "servers" && key != "inputs" {
				errs = append(errs, &ConfigError{Field: key, Err: errors.New("unknown field")})
			}
		}
	}
	if wrapper != "" {
		raw = nil
		if err := json.Unmarshal(top[wrapper], &raw); err != nil || raw == nil {
			return configFile{}, []*ConfigError{{Field: wrapper, Err: errors.New("want an object mapping names to servers")}}
		}
	}
	f := configFile{servers: make(map[string]fileServer, len(raw))}
	if wrapper != "" {
		if in, ok := top["inputs"]; ok {
			inputs, err := decodeInputs(in)
			if err != nil {
				errs = append(errs, &ConfigError{Field: "inputs", Err: err})
			}
			f.inputs = inputs
		}
	}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		s, serr := decodeServer(name, raw[name])
		errs = append(errs, serr...)
		f.servers[name] = s
	}
	return f, errs
}

// decodeInputs decodes VS Code's "inputs" list.
func decodeInputs(raw json.RawMessage) (map[string]ConfigInput, error) {
	var list []struct {
		ID          string `json:"id"`
		Type        string `json:"type"`
		Description string `json:"description"`
		Password    bool   `json:"password"`
		Default     string `json:"default"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("want a list of {id, type, description, password, default} objects")
	}
	inputs := make(map[string]ConfigInput, len(list))
	for _, in := range list {
		inputs[in.ID] = ConfigInput{ID: in.ID, Type: in.Type, Description: in.Description, Password: in.Password, Default: in.Default}
	}
	return inputs, nil
}

// decodeServer decodes and checks one server entry.
func decodeServer(name string, raw json.RawMessage) (fileServer, []*ConfigError) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return fileServer{}, []*ConfigError{{Server: name, Err: errors.New("want a JSON object")}}
	}
	var (
		s    fileServer
		errs []*ConfigError
	)
	fail := func(field string, err error) {
		errs = append(errs, &ConfigError{Server: name, Field: field, Err: err})
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
			case s.transport != "" && s.transport != kind:
				err = errors.New(`"type" and "transport" disagree`)
			default:
				s.transport = kind
			}
		case "command":
			err = decodeField(v, &s.command, "a string")
		case "args":
			err = decodeField(v, &s.args, "a list of strings")
		case "env":
			var bad string
			if s.env, bad, err = decodeEnv(v); bad != "" {
				key += "." + bad
			}
		case "cwd":
			err = decodeField(v, &s.cwd, "a string")
		case "envFile":
			err = decodeField(v, &s.envFile, "a string")
		case "url":
			err = decodeField(v, &s.url, "a string")
		case "headers":
			err = decodeField(v, &s.headers, "an object of strings")
		case "restart":
			s.restart, err = decodeRetry(v)
		case "reconnect":
			s.reconnect, err = decodeRetry(v)
		case "automaticSSEFallback":
			var fallback bool
			err = decodeField(v, &fallback, "true or false")
			s.noSSEFallback = !fallback
		case "defaultToolTimeout":
			var ms float64
			if err = decodeField(v, &ms, "a number of milliseconds"); err == nil {
				s.toolTimeout, err = millis(ms)
			}
			if err == nil && s.toolTimeout == 0 {
				err = errors.New("want a positive number of milliseconds")
			}
		default:
			err = errors.New("unknown field")
		}
		if err != nil {
			fail(key, err)
		}
	}
	if s.transport == "" {
		switch {
		case fields["command"] != nil:
			s.transport = "stdio"
		case fields["url"] != nil:
			s.transport = "http"
		default:
			fail("", errors.New("a server needs a command or a url"))
			return s, errs
		}
	}
	required, other := "command", urlFields
	if s.transport != "stdio" {
		required, other = "url", stdioFields
	}
	if fields[required] == nil {
		fail(required, fmt.Errorf("required for %s servers", s.transport))
	}
	for _, key := range other {
		if fields[key] != nil {
			fail(key, fmt.Errorf("does not apply to %s servers", s.transport))
		}
	}
	if s.transport == "sse" && s.noSSEFallback {
		fail("automaticSSEFallback", errors.New("false would never reach an sse server"))
	}
	return s, errs
}

// decodeRetry decodes LangChain JS's restart and reconnect options,
// {enabled, maxAttempts, delayMs}: nil unless enabled.
func decodeRetry(v json.RawMessage) (*RetryPolicy, error) {
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
	return &RetryPolicy{MaxAttempts: r.MaxAttempts, Delay: delay}, nil
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
				return nil, fmt.Errorf("unterminated /* comment at offset %d", start)
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
