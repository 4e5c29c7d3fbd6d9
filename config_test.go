package mcpadapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
)

// configEnv is the environment the config tests expand against.
var configEnv = map[string]string{
	"API_KEY":       "env-key",
	"WEATHER_TOKEN": "weather-token",
	"LOG_LEVEL":     "",
	"MCPADAPTER_FS": "/opt/fs",
}

func configLookup(name string) (string, bool) {
	v, ok := configEnv[name]
	return v, ok
}

// configOptions returns options with configEnv, ${workspaceFolder} =
// testdata/config, and an Input func that answers "secret-<id>" and
// records what it was asked.
func configOptions(asked *[]ConfigInput) *ConfigOptions {
	return &ConfigOptions{
		LookupEnv:       configLookup,
		WorkspaceFolder: filepath.Join("testdata", "config"),
		Input: func(in ConfigInput) (string, error) {
			*asked = append(*asked, in)
			return "secret-" + in.ID, nil
		},
	}
}

// TestParseConfigFormats reads one real file of each format in
// testdata/config and pins the Servers it yields (their JSON form) in a
// golden file; New must accept each result.
func TestParseConfigFormats(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "config", "*.json"))
	if err != nil || len(files) < 6 {
		t.Fatalf("config files: %v, %v", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			var asked []ConfigInput
			cfg, err := LoadConfig(file, configOptions(&asked))
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			if len(cfg.Servers) == 0 {
				t.Fatal("no servers")
			}
			a, err := New(cfg)
			if err != nil {
				t.Fatalf("New refuses the parsed config: %v", err)
			}
			a.Close()
			golden := make(map[string]goldenServer, len(cfg.Servers))
			for name, s := range cfg.Servers {
				golden[name] = newGoldenServer(s)
			}
			got, err := json.MarshalIndent(golden, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "config/"+strings.TrimSuffix(filepath.Base(file), ".json")+".golden", append(got, '\n'))
		})
	}
}

// A goldenServer is the golden form of a parsed Server: its JSON form plus
// the fields that form leaves out, durations as strings.
type goldenServer struct {
	Server
	ToolTimeout string       `json:"defaultToolTimeout,omitempty"`
	Retry       *goldenRetry `json:"retry,omitempty"`
}

type goldenRetry struct {
	MaxAttempts int    `json:"maxAttempts"`
	Delay       string `json:"delay"`
}

func newGoldenServer(s Server) goldenServer {
	g := goldenServer{Server: s}
	if s.DefaultToolTimeout != 0 {
		g.ToolTimeout = s.DefaultToolTimeout.String()
	}
	retry := func(p *RetryPolicy) *goldenRetry {
		if p == nil {
			return nil
		}
		return &goldenRetry{p.MaxAttempts, p.Delay.String()}
	}
	g.Retry = retry(s.Retry)
	return g
}

// TestParseConfigInputs checks that ${input:id} is answered by the caller's
// func with what the file declares, once per id, and that undeclared
// inputs are asked by id.
func TestParseConfigInputs(t *testing.T) {
	var asked []ConfigInput
	cfg, err := LoadConfig(filepath.Join("testdata", "config", "vscode.mcp.json"), configOptions(&asked))
	if err != nil {
		t.Fatal(err)
	}
	want := []ConfigInput{{ID: "perplexity-key", Type: "promptString", Description: "Perplexity API Key", Password: true}}
	if !slices.Equal(asked, want) {
		t.Errorf("asked %+v, want %+v (once, though referenced twice)", asked, want)
	}
	if got := cfg.Servers["github"].Headers["Authorization"]; got != "Bearer secret-perplexity-key" {
		t.Errorf("Authorization = %q", got)
	}

	asked = nil
	cfg, err = ParseConfig([]byte(`{"mcpServers": {"a": {"url": "https://a.example/mcp", "headers": {"X-Key": "${input:key}"}}}}`), configOptions(&asked))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []ConfigInput{{ID: "key"}}) || cfg.Servers["a"].Headers["X-Key"] != "secret-key" {
		t.Errorf("undeclared input: asked %+v, headers %v", asked, cfg.Servers["a"].Headers)
	}
}

// TestLoadConfigWorkspaceFolder checks the default ${workspaceFolder}: the
// file's directory, or its parent for .vscode and .cursor.
func TestLoadConfigWorkspaceFolder(t *testing.T) {
	root := t.TempDir()
	entry := []byte(`{"mcpServers": {"s": {"command": "srv", "args": ["${workspaceFolder}"]}}}`)
	for _, tt := range []struct{ dir, want string }{
		{".vscode", root},
		{".cursor", root},
		{"conf", filepath.Join(root, "conf")},
	} {
		path := filepath.Join(root, tt.dir, "mcp.json")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, entry, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Servers["s"].Args; !slices.Equal(got, []string{tt.want}) {
			t.Errorf("%s: ${workspaceFolder} = %v, want %s", tt.dir, got, tt.want)
		}
	}
}

// TestParseConfigVariables checks the expansion rules, one case each.
func TestParseConfigVariables(t *testing.T) {
	t.Setenv("MCPADAPTER_TEST_FROM_OS", "from-os")
	tests := []struct{ in, want string }{
		{"${API_KEY}", "env-key"},
		{"${env:API_KEY}", "env-key"},
		{"a-${API_KEY}-b-${WEATHER_TOKEN}", "a-env-key-b-weather-token"},
		{"${UNSET:-fallback}", "fallback"},
		{"${env:UNSET:-fallback}", "fallback"},
		{"${LOG_LEVEL:-info}", "info"}, // set but empty
		{"${LOG_LEVEL}", ""},           // set to empty: not an error
		{"${API_KEY:-fallback}", "env-key"},
		{"$API_KEY $x {y}", "$API_KEY $x {y}"},
		{"${workspaceFolder}/x", "/work/x"},
		{"${input:k}", "answer-k"},
		{"${MCPADAPTER_FS}${API_KEY}", "/opt/fsenv-key"},
		{"plain $ text", "plain $ text"},
	}
	for _, tt := range tests {
		opts := &ConfigOptions{LookupEnv: configLookup, WorkspaceFolder: "/work",
			Input: func(in ConfigInput) (string, error) { return "answer-" + in.ID, nil }}
		got, err := expandOne(tt.in, opts)
		if err != nil || got != tt.want {
			t.Errorf("%q = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	// LookupEnv nil: the process environment.
	got, err := expandOne("${MCPADAPTER_TEST_FROM_OS}", nil)
	if err != nil || got != "from-os" {
		t.Errorf("os environment: %q, %v", got, err)
	}
}

// expandOne expands v as the command of a stdio server.
func expandOne(v string, opts *ConfigOptions) (string, error) {
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": v}}})
	cfg, err := ParseConfig(b, opts)
	return cfg.Servers["s"].Command, err
}

// TestParseConfigErrors checks one case per kind of error: each is a
// *ConfigError naming the server and the field, and never showing a value.
func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name, json    string
		server, field string
		msg           string // in the error
		noInput       bool   // opts.Input is nil
	}{
		{"invalid JSON", `{"mcpServers": {`, "", "", "invalid JSON", false},
		{"not an object", `[1, 2]`, "", "", "invalid JSON", false},
		{"null", `null`, "", "", "want a JSON object", false},
		{"both wrappers", `{"mcpServers": {}, "servers": {}}`, "", "servers", "both set", false},
		{"mcpServers not an object", `{"mcpServers": [1]}`, "", "mcpServers", "want an object", false},
		{"vscode unknown top-level field", `{"servers": {}, "extra": 1}`, "", "extra", "unknown field", false},
		{"vscode bad inputs", `{"servers": {}, "inputs": {"id": "x"}}`, "", "inputs", "want a list", false},
		{"server not an object", `{"mcpServers": {"s": "npx"}}`, "s", "", "want a JSON object", false},
		{"unknown field", `{"mcpServers": {"s": {"command": "npx", "autoApprove": ["x"]}}}`, "s", "autoApprove", "unknown field", false},
		{"field case matters", `{"mcpServers": {"s": {"Command": "npx"}}}`, "s", "Command", "unknown field", false},
		{"unknown transport", `{"s": {"transport": "websocket", "url": "wss://x"}}`, "s", "transport", `unknown transport "websocket"`, false},
		{"unknown type", `{"servers": {"s": {"type": "grpc", "url": "https://x"}}}`, "s", "type", `unknown transport "grpc"`, false},
		{"type and transport disagree", `{"mcpServers": {"s": {"type": "http", "transport": "sse", "url": "https://x"}}}`, "s", "type", "disagree", false},
		{"stdio field on http", `{"servers": {"s": {"type": "http", "url": "https://x", "env": {"A": "1"}}}}`, "s", "env", "does not apply to http servers", false},
		{"stdio field on sse", `{"servers": {"s": {"type": "sse", "url": "https://x", "cwd": "/"}}}`, "s", "cwd", "does not apply to sse servers", false},
		{"url field on stdio", `{"mcpServers": {"s": {"command": "npx", "headers": {"A": "b"}}}}`, "s", "headers", "does not apply to stdio servers", false},
		{"url and command", `{"mcpServers": {"s": {"command": "npx", "url": "https://x"}}}`, "s", "url", "does not apply to stdio servers", false},
		{"stdio without command", `{"servers": {"s": {"type": "stdio", "args": ["a"]}}}`, "s", "command", "required", false},
		{"http without url", `{"servers": {"s": {"type": "http", "headers": {}}}}`, "s", "url", "required", false},
		{"no target", `{"mcpServers": {"s": {}}}`, "s", "", "needs a command or a url", false},
		{"wrong type", `{"mcpServers": {"s": {"command": "npx", "args": "-y"}}}`, "s", "args", "want a list of strings", false},
		{"bad env value", `{"mcpServers": {"s": {"command": "npx", "env": {"A": true}}}}`, "s", "env.A", "want a string", false},
		{"null env value", `{"mcpServers": {"s": {"command": "npx", "env": {"A": null}}}}`, "s", "env.A", "not supported", false},
		{"unset variable", `{"mcpServers": {"s": {"url": "https://x", "headers": {"Authorization": "Bearer sk-literal ${NOPE}"}}}}`, "s", "headers.Authorization", "environment variable NOPE is not set", false},
		{"unset env: variable", `{"mcpServers": {"s": {"command": "npx", "args": ["a", "${env:NOPE}"]}}}`, "s", "args[1]", "environment variable NOPE is not set", false},
		{"unknown variable", `{"mcpServers": {"s": {"command": "${/}"}}}`, "s", "command", "unknown variable ${/}", false},
		{"unknown namespace", `{"mcpServers": {"s": {"command": "${config:x}"}}}`, "s", "command", "unknown variable ${config:x}", false},
		{"unterminated", `{"mcpServers": {"s": {"command": "${API_KEY"}}}`, "s", "command", "unterminated", false},
		{"input without func", `{"mcpServers": {"s": {"command": "x", "env": {"K": "${input:key}"}}}}`, "s", "env.K", "needs ConfigOptions.Input", true},
		{"empty input id", `{"mcpServers": {"s": {"command": "${input:}"}}}`, "s", "command", "names no input", false},
		{"workspaceFolder unset", `{"mcpServers": {"s": {"command": "x", "cwd": "${workspaceFolder}"}}}`, "s", "cwd", "needs ConfigOptions.WorkspaceFolder", false},
		{"restart on http", `{"mcpServers": {"s": {"url": "https://x", "restart": {"enabled": true}}}}`, "s", "restart", "does not apply to http servers", false},
		{"reconnect on stdio", `{"mcpServers": {"s": {"command": "x", "reconnect": {"enabled": true}}}}`, "s", "reconnect", "does not apply to stdio servers", false},
		{"bad retry", `{"mcpServers": {"s": {"command": "x", "restart": {"enabled": true, "tries": 2}}}}`, "s", "restart", "want {enabled, maxAttempts, delayMs}", false},
		{"negative delay", `{"mcpServers": {"s": {"command": "x", "restart": {"enabled": true, "delayMs": -1}}}}`, "s", "restart", "delayMs: want between 0", false},
		{"huge timeout", `{"mcpServers": {"s": {"command": "x", "defaultToolTimeout": 1e300}}}`, "s", "defaultToolTimeout", "want between 0", false},
		{"zero timeout", `{"mcpServers": {"s": {"command": "x", "defaultToolTimeout": 0}}}`, "s", "defaultToolTimeout", "positive", false},
		{"sse without fallback", `{"mcpServers": {"s": {"type": "sse", "url": "https://x", "automaticSSEFallback": false}}}`, "s", "automaticSSEFallback", "never reach", false},
		{"envFile missing", `{"mcpServers": {"s": {"command": "x", "envFile": "testdata/config/no-such.env"}}}`, "s", "envFile", "no such file", false},
		{"envFile not a file", `{"mcpServers": {"s": {"command": "x", "envFile": "testdata"}}}`, "s", "envFile", "not a regular file", false},
		{"misspelled field", `{"mcpServers": {"s": {"command": "x", "envfile": "a.env"}}}`, "s", "envfile", `unknown field (did you mean "envFile"?)`, false},
		{"misspelled mcpServers", `{"mcpServer": {"fs": {"command": "npx"}}}`, "", "mcpServer", `unknown top-level key (did you mean "mcpServers"?)`, false},
		{"snake_case mcpServers", `{"globalShortcut": "", "mcp_servers": {"fs": {"command": "npx"}}}`, "", "mcp_servers", `(did you mean "mcpServers"?)`, false},
		{"capitalised servers", `{"Servers": {"fs": {"command": "npx"}}}`, "", "Servers", `(did you mean "servers"?)`, false},
		{"inputs without servers", `{"inputs": [], "fs": {"command": "npx"}}`, "", "inputs", `applies only with "servers"`, false},
		{"vscode misspelled inputs", `{"servers": {}, "input": []}`, "", "input", `unknown field (did you mean "inputs"?)`, false},
		{"no servers key", `{"globalShortcut": "Ctrl+Space"}`, "", "", `no "mcpServers" or "servers" key`, false},
		{"empty file", `{}`, "", "", `no "mcpServers" or "servers" key`, false},
		{"url without scheme", `{"mcpServers": {"s": {"url": "localhost:8080/mcp"}}}`, "s", "url", "not an absolute URL (missing http:// or https://?)", false},
		{"url host only", `{"mcpServers": {"s": {"url": "localhost:8080"}}}`, "s", "url", "missing http:// or https://?", false},
		{"url secret without scheme", `{"mcpServers": {"s": {"url": "user:sk-literal@host/mcp"}}}`, "s", "url", "missing http:// or https://?", false},
		{"url expanded without scheme", `{"mcpServers": {"s": {"url": "${API_KEY}/mcp"}}}`, "s", "url", "missing http:// or https://?", false},
		{"url other scheme", `{"mcpServers": {"s": {"type": "sse", "url": "ws://host/mcp"}}}`, "s", "url", `scheme "ws" is not http or https`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := &ConfigOptions{LookupEnv: configLookup, Input: func(in ConfigInput) (string, error) { return "x", nil }}
			if tt.noInput {
				opts.Input = nil
			}
			cfg, err := ParseConfig([]byte(tt.json), opts)
			if err == nil {
				t.Fatalf("ParseConfig = %v, want an error", cfg)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T) is not a *ConfigError", err, err)
			}
			if ce.Server != tt.server || ce.Field != tt.field {
				t.Errorf("error names server %q field %q, want %q %q: %v", ce.Server, ce.Field, tt.server, tt.field, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.msg) || !strings.HasPrefix(msg, "mcpadapter: config") {
				t.Errorf("error %q lacks %q", msg, tt.msg)
			}
			if tt.server != "" && !strings.Contains(msg, `server "`+tt.server+`"`) || tt.field != "" && !strings.Contains(msg, "field "+tt.field) {
				t.Errorf("error %q does not name server %q and field %q", msg, tt.server, tt.field)
			}
			if strings.Contains(msg, "sk-literal") || strings.Contains(msg, "env-key") {
				t.Errorf("error %q shows a value", msg)
			}
			if cfg.Servers != nil {
				t.Errorf("a failed parse returned servers %v", cfg.Servers)
			}
		})
	}
}

// TestParseConfigErrorsTogether checks that every problem is reported at
// once, and that no input is asked for when the file is invalid.
func TestParseConfigErrorsTogether(t *testing.T) {
	asked := 0
	opts := &ConfigOptions{LookupEnv: configLookup, Input: func(ConfigInput) (string, error) { asked++; return "", nil }}
	_, err := ParseConfig([]byte(`{"mcpServers": {
		"a": {"command": "x", "bogus": 1},
		"b": {"url": "https://x", "args": []},
		"c": {"command": "${input:secret}"}}}`), opts)
	for _, want := range []string{`server "a": field bogus`, `server "b": field args`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	if asked != 0 {
		t.Errorf("asked for %d inputs of an invalid file", asked)
	}

	_, err = ParseConfig([]byte(`{"mcpServers": {"a": {"command": "${NOPE1}"}, "b": {"command": "${NOPE2}"}}}`), opts)
	if err == nil || !strings.Contains(err.Error(), "NOPE1") || !strings.Contains(err.Error(), "NOPE2") {
		t.Errorf("error %v does not name both unset variables", err)
	}

	// An input's own error names the input and wraps the cause.
	cause := errors.New("user cancelled")
	opts.Input = func(ConfigInput) (string, error) { return "", cause }
	_, err = ParseConfig([]byte(`{"mcpServers": {"a": {"command": "${input:pw}"}}}`), opts)
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), `input "pw"`) {
		t.Errorf("input failure: %v", err)
	}
}

// TestLoadConfigErrorFiles checks the error files of testdata/config/errors:
// LoadConfig names the file, the server and the field.
func TestLoadConfigErrorFiles(t *testing.T) {
	tests := map[string][2]string{ // file: server, field
		"invalid_json.json":      {"", ""},
		"unknown_field.json":     {"files", "autoApprove"},
		"unknown_transport.json": {"math", "transport"},
		"not_applicable.json":    {"remote", "command"},
		"unset_variable.json":    {"github", "headers.Authorization"},
	}
	for file, want := range tests {
		path := filepath.Join("testdata", "config", "errors", file)
		_, err := LoadConfig(path, &ConfigOptions{LookupEnv: configLookup})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.File != path || ce.Server != want[0] || ce.Field != want[1] {
			t.Errorf("%s: %v, want a *ConfigError for server %q field %q", file, err, want[0], want[1])
			continue
		}
		if !strings.HasPrefix(err.Error(), "mcpadapter: config "+path) {
			t.Errorf("%s: error %q does not name the file", file, err)
		}
	}
	_, err := LoadConfig(filepath.Join("testdata", "config", "no-such.json"), nil)
	if !errors.Is(err, os.ErrNotExist) || strings.Count(err.Error(), "no-such.json") != 1 {
		t.Errorf("missing file: %v", err)
	}
}

// TestParseConfigEnvFile checks the dotenv reader and that env wins over
// envFile.
func TestParseConfigEnvFile(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"mcpServers": {"s": {"command": "x", "envFile": "testdata/config/cursor.env", "env": {"API_KEY": "from-env"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"REGION":   "eu-west-1",
		"API_KEY":  "from-env",
		"GREETING": "hello\nworld",
		"QUOTED":   "single # not a comment",
		"PLAIN":    "value",
	}
	if got := cfg.Servers["s"].Env; !maps.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
}

// TestParseConfigDials connects to the servers of a parsed config: stdio,
// Streamable HTTP, and "sse", which works only because it maps to
// ModeLegacy (an SSE endpoint answers a Streamable HTTP POST with 400,
// which auto mode does not fall back from).
func TestParseConfigDials(t *testing.T) {
	command, args, env := testserver.Command(t, "legacy")
	stdio, _ := json.Marshal(map[string]any{"command": command, "args": args, "env": env})
	http := testserver.New(testserver.Options{}).AddWeather().StreamableHTTP(t, true)
	sse := testserver.New(testserver.Options{Legacy: true}).AddWeather().SSE(t)
	data := `{"servers": {
		"local": ` + string(stdio) + `,
		"remote": {"type": "http", "url": "` + http.URL + `"},
		"old": {"type": "sse", "url": "` + sse.URL + `"}}}`
	cfg, err := ParseConfig([]byte(data), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := newAdapter(t, cfg)
	ts, err := a.ListTools(t.Context())
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	for _, name := range []string{"local__get_weather", "remote__get_weather", "old__get_weather"} {
		if ts.Lookup(name) == nil {
			t.Errorf("no tool %s among %v", name, toolNames(ts))
		}
	}

	// The same SSE URL in auto mode is not reached: what "sse" must not map to.
	auto := cfg.Servers["old"]
	auto.Mode = ModeAuto
	b := newAdapter(t, Config{Servers: map[string]Server{"old": auto}})
	if _, err := b.ListTools(t.Context()); err == nil {
		t.Error("an SSE endpoint in auto mode was reached; the test no longer shows why sse maps to ModeLegacy")
	}
}

// TestServerJSON checks Server's JSON form: the configuration files' field
// names, nothing unset, no func or client, and a round trip through
// ParseConfig.
func TestServerJSON(t *testing.T) {
	s := Server{Command: "npx", Args: []string{"-y", "srv"}, Env: map[string]string{"A": "1"}, Dir: "/tmp",
		Transport: InMemory(testserver.New(testserver.Options{}).Server).Transport, Client: nil, HTTPClient: nil}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if want := `{"command":"npx","args":["-y","srv"],"env":{"A":"1"},"cwd":"/tmp"}`; string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
	cfg, err := ParseConfig([]byte(`{"mcpServers": {"s": `+string(b)+`}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Transport = nil
	back := cfg.Servers["s"]
	if back.Command != s.Command || !slices.Equal(back.Args, s.Args) || !maps.Equal(back.Env, s.Env) || back.Dir != s.Dir {
		t.Errorf("round trip = %+v, want %+v", back, s)
	}
	u, _ := json.Marshal(Server{URL: "https://x.example/mcp", Headers: map[string]string{"A": "b"}, Mode: ModeLegacy,
		DefaultToolTimeout: time.Second, Retry: &RetryPolicy{MaxAttempts: 2}})
	if want := `{"url":"https://x.example/mcp","mode":"legacy","headers":{"A":"b"}}`; string(u) != want {
		t.Errorf("Marshal = %s, want %s", u, want)
	}
}

// FuzzParseConfig feeds configuration files to ParseConfig: it never
// panics, fails only with *ConfigError values, and what it accepts New
// either accepts or refuses with an error.
func FuzzParseConfig(f *testing.F) {
	for _, pattern := range []string{"*.json", "errors/*.json"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "config", pattern))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`{"s": {"command": "${A:-${B}}", "args": ["${", "}", "${input:x}${env:}"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := &ConfigOptions{
			LookupEnv:       func(name string) (string, bool) { return name, len(name)%2 == 0 },
			Input:           func(in ConfigInput) (string, error) { return in.ID, nil },
			WorkspaceFolder: "/w",
		}
		cfg, err := ParseConfig(data, opts)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			return
		}
		if a, err := New(cfg); err == nil {
			a.Close()
		}
	})
}

// TestParseConfigEnvFileNotText checks that an envFile holding anything but
// dotenv text (a binary file, /proc/self/environ) is refused by a
// *ConfigError naming the file and the line, never showing its contents.
func TestParseConfigEnvFileNotText(t *testing.T) {
	const secret = "sk-not-to-be-shown"
	t.Setenv("MCPADAPTER_TEST_SECRET", secret)
	dir := t.TempDir()
	files := map[string]struct {
		data []byte
		want string // in the error, after the path
	}{
		"binary.env":  {[]byte("\x7fELF\x02\x01\x01\x00\x00" + secret), ":1: not dotenv text (a control character)"},
		"nul.env":     {[]byte("# env\nA=1\x00TOKEN=" + secret), ":2: not dotenv text (a NUL byte)"},
		"latin1.env":  {[]byte("A=1\n# ok\nPASS=caf\xe9 " + secret + "\n"), ":3: not dotenv text (invalid UTF-8)"},
		"escapes.env": {[]byte("A=1\nB=\x1b[31m" + secret + "\n"), ":2: not dotenv text (a control character)"},
		"quoted.env":  {[]byte(`TOKEN="` + secret + `\x00"` + "\n"), ":1: a NUL in a double-quoted value"},
	}
	paths := make(map[string]string, len(files)+1)
	for name, f := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
		paths[path] = f.want
	}
	if runtime.GOOS == "linux" {
		// One line, the whole environment, its variables ended by NULs.
		paths["/proc/self/environ"] = ":1: not dotenv text (a NUL byte)"
	}
	for path, want := range paths {
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": "x", "envFile": path}}})
		cfg, err := ParseConfig(b, nil)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Server != "s" || ce.Field != "envFile" {
			t.Errorf("%s: %v (%d servers), want a *ConfigError for field envFile", path, err, len(cfg.Servers))
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, path+want) || strings.Contains(msg, secret) {
			t.Errorf("%s: error %q, want %q and no contents", path, msg, path+want)
		}
	}
}

// TestParseConfigAllowedEnv checks ConfigOptions.AllowedEnv: the variables
// it names are read, any other is refused by name, its value neither
// shown nor read, its default not taken; an empty list allows none.
func TestParseConfigAllowedEnv(t *testing.T) {
	var read []string
	opts := &ConfigOptions{
		AllowedEnv: []string{"API_KEY"},
		LookupEnv: func(name string) (string, bool) {
			read = append(read, name)
			return configLookup(name)
		},
	}
	if got, err := expandOne("${API_KEY}", opts); err != nil || got != "env-key" {
		t.Errorf("allowed variable: %q, %v", got, err)
	}
	for _, in := range []string{"${WEATHER_TOKEN}", "${env:WEATHER_TOKEN}", "${WEATHER_TOKEN:-default}", "${API_KEY}${WEATHER_TOKEN}"} {
		read = nil
		_, err := expandOne(in, opts)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "command" {
			t.Errorf("%s: %v, want a *ConfigError for field command", in, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "environment variable WEATHER_TOKEN is not in ConfigOptions.AllowedEnv") || strings.Contains(msg, "weather-token") {
			t.Errorf("%s: error %q, want the variable named and its value not shown", in, msg)
		}
		if slices.Contains(read, "WEATHER_TOKEN") {
			t.Errorf("%s: the refused variable was read", in)
		}
	}
	if _, err := expandOne("${API_KEY}", &ConfigOptions{AllowedEnv: []string{}, LookupEnv: configLookup}); err == nil ||
		!strings.Contains(err.Error(), "API_KEY is not in ConfigOptions.AllowedEnv") {
		t.Errorf("an empty AllowedEnv: %v, want API_KEY refused", err)
	}
}

// TestParseConfigErrorsBounded checks that a file with 50,000 bad servers
// gives an error under 64 KB that lists the first problems and counts the
// rest, and that one huge name cannot make a problem's text huge.
func TestParseConfigErrorsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i := range 50_000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"server-%05d-%s": {"command": "x", "bogus": 1}`, i, strings.Repeat("n", 40))
	}
	b.WriteString("}}")
	_, err := ParseConfig([]byte(b.String()), nil)
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.HasPrefix(ce.Server, "server-00000-") {
		t.Fatalf("error %T, first problem %v: want the first server's *ConfigError", err, ce)
	}
	msg := err.Error()
	if len(msg) >= 64<<10 || !strings.Contains(msg, "server-00019-") || strings.Contains(msg, "server-00020-") ||
		!strings.HasSuffix(msg, "mcpadapter: config: 49980 more problems not shown") {
		t.Errorf("error of %d bytes, ending %q: want under 64 KB, 20 problems and a count", len(msg), msg[max(0, len(msg)-200):])
	}

	huge := strings.Repeat("é", 1<<20)
	_, err = ParseConfig([]byte(`{"mcpServers": {"`+huge+`": {"command": "x", "`+huge+`": 1}}}`), nil)
	if !errors.As(err, &ce) || ce.Server != huge {
		t.Fatalf("huge names: %v, want a *ConfigError keeping the whole server name", err)
	}
	if msg := err.Error(); len(msg) > 1024 || !utf8.ValidString(msg) || !strings.HasSuffix(msg, "…") {
		t.Errorf("huge names: error of %d bytes (valid UTF-8 %v), want at most 1 KiB, cut between characters", len(msg), utf8.ValidString(msg))
	}
}

// TestParseConfigTopLevelNames checks that the names the top-level check
// looks at still work as server names where they hold servers.
func TestParseConfigTopLevelNames(t *testing.T) {
	for _, data := range []string{
		`{"server": {"command": "x"}, "inputs": {"url": "https://x.example/mcp"}}`, // LangChain Python
		`{"mcpServer": {"command": "x"}}`,
		`{"mcpServers": {"servers": {"command": "x"}}, "mcpServer": 1}`, // other keys belong to the host
		`{"servers": {"inputs": {"command": "x"}}}`,
	} {
		if cfg, err := ParseConfig([]byte(data), nil); err != nil || len(cfg.Servers) == 0 {
			t.Errorf("%s: %v, %v", data, cfg.Servers, err)
		}
	}
}
