package mcpadapter

// Configuration files: the mcp.json dialects are read by
// internal/configfile; this file maps what it returns onto [Server].

import (
	"cmp"
	"errors"

	"github.com/mcpadapter/mcpadapter/internal/configfile"
)

// ConfigOptions controls how [ParseConfig] and [LoadConfig] expand the
// variables of a configuration file. A nil *ConfigOptions means the zero
// value.
type ConfigOptions struct {
	// LookupEnv resolves ${NAME} and ${env:NAME}. Nil means [os.LookupEnv].
	LookupEnv func(name string) (value string, ok bool)

	// AllowedEnv, when not nil, holds the only environment variables that
	// ${NAME} and ${env:NAME} may read; any other, defaults included
	// (${NAME:-default}), is an error naming the variable, which is not
	// read. Nil, the default, lets a file read every variable: a file can
	// then put any secret of the process (OPENAI_API_KEY, say) in a header
	// or a URL of a server it chooses. An app that loads its users' config
	// files should set it, e.g. []string{"GITHUB_TOKEN", "PROJECT_DIR"}, or
	// []string{} to allow none. It bounds variables only: a file's envFile
	// can name any file the app can read, and its stdio servers run with
	// the app's rights, so such an app checks the Servers it gets too.
	AllowedEnv []string

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

// A ConfigError is a problem in a configuration file (its syntax, a field
// that is unknown or does not apply to the server's transport, an unknown
// transport, or a variable that cannot be expanded), or in a [Config]
// given to [New]. It names the server and the field, never their values
// (which may hold secrets).
type ConfigError struct {
	File   string // the path given to [LoadConfig]; empty for [ParseConfig] and [New]
	Server string // the server's name; empty for the top level
	Field  string // e.g. "type", "args[1]", "env.API_KEY" in a file, "URL" or "DialTimeout" for New; empty for the whole server
	Err    error
}

// Error implements error. The text is cut to 1 KiB: the names it quotes
// come from the file and can be of any length.
func (e *ConfigError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return configfile.ErrorText(e.File, e.Server, e.Field, e.Err)
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
	var err error
	if o.WorkspaceFolder == "" {
		if o.WorkspaceFolder, err = configfile.Workspace(path); err != nil {
			return Config{}, &ConfigError{File: path, Err: err}
		}
	}
	data, err := configfile.ReadFile(path)
	if err != nil {
		return Config{}, &ConfigError{File: path, Err: err} // the path is in File
	}
	return parseConfig(path, data, &o)
}

// ParseConfig reads the MCP server configuration files that hosts and
// LangChain already use (Claude Desktop's and Cursor's "mcpServers", VS
// Code's "servers" with "inputs", LangChain Python's bare map of
// connections), and returns a [Config] whose Servers [New] validates as
// usual. Variables (${NAME}, ${input:id}, ...) are expanded; opts.AllowedEnv
// bounds those a file from a user may read. Every problem is a
// [*ConfigError] naming the server and the field, all returned together.
// LangChain JS's restart and reconnect set [Server.Retry]. The shapes,
// fields, transports and variables are in docs/reference.md,
// "ParseConfig".
func ParseConfig(data []byte, opts *ConfigOptions) (Config, error) {
	return parseConfig("", data, opts)
}

// parseConfig is ParseConfig of the file at path file (empty for
// ParseConfig): internal/configfile reads it, and its servers and problems
// become Servers and ConfigErrors.
func parseConfig(file string, data []byte, opts *ConfigOptions) (Config, error) {
	var o configfile.Options
	if opts != nil {
		o = configfile.Options{LookupEnv: opts.LookupEnv, AllowedEnv: opts.AllowedEnv, WorkspaceFolder: opts.WorkspaceFolder}
		if input := opts.Input; input != nil {
			o.Input = func(in configfile.Input) (string, error) { return input(ConfigInput(in)) }
		}
	}
	parsed, problems := configfile.Parse(data, o)
	if len(problems) > 0 {
		return Config{}, configErrors(file, problems)
	}
	servers := make(map[string]Server, len(parsed))
	for name, s := range parsed {
		servers[name] = configServer(s)
	}
	return Config{Servers: servers}, nil
}

// configErrors joins the problems of the file at path file that are shown
// (configfile.Shown: the first 20, then a count of the rest) as
// ConfigErrors.
func configErrors(file string, problems []configfile.Problem) error {
	shown := configfile.Shown(problems)
	errs := make([]error, len(shown))
	for i, p := range shown {
		errs[i] = &ConfigError{File: file, Server: p.Server, Field: p.Field, Err: p.Err}
	}
	return errors.Join(errs...)
}

// configServer is the Server of a configuration file's entry.
func configServer(s configfile.Server) Server {
	out := Server{
		Command: s.Command, Args: s.Args, Env: s.Env, Dir: s.Dir, Retry: (*RetryPolicy)(cmp.Or(s.Restart, s.Reconnect)),
		URL: s.URL, Headers: s.Headers, DisableSSEFallback: s.DisableSSEFallback,
		DefaultToolTimeout: s.DefaultToolTimeout,
	}
	if s.Transport == "sse" {
		// Legacy mode falls back to SSE on any 4xx to the Streamable HTTP
		// POST, which an SSE-only endpoint answers.
		out.Mode = ModeLegacy
	}
	return out
}
