// Package examples_test builds every example and runs it, as a user would
// with go run, checking that it exits 0 and prints what its story promises.
package examples_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
)

// expect lists, per example, lines or fragments its output must contain. An
// example missing here must still build, exit 0 and print something.
var expect = map[string][]string{
	"quickstart": {
		"server booking  booking-service 0.3.0, modern era (protocol 2026-07-28)",
		"server weather  weather-service 1.2.0, legacy era (protocol 2025-11-25)",
		"tool weather__get_forecast",
		`_meta:       {"example.com/data-source":"quickstart"}`,
		"model calls weather__get_forecast {\"city\":\"Paris\"}",
		"tool result: Tomorrow in Paris: sunny, 24°C.",
		"answer: Tomorrow in Paris: sunny, 24°C, light wind.",
		`interrupt: server "booking", tool booking__book_table needs user input:`,
		"[date] Which date should I book at Chez Nous for 2?",
		"saved the run as JSON, to wait for the user",
		"result: Booked a table for 2 at Chez Nous on 2026-09-18.",
		"answer: Done: your table for 2 at Chez Nous is booked for 18 September 2026.",
		"Done in ",
	},
	"multiserver": {
		`skipping server "broken": mcpadapter: server "broken": dial:`,
		"toolset clock (clock-server, modern era): clock__now",
		"toolset notes (notes-server, modern era): notes__add_note, notes__list_notes",
		"ListTools: 3 tools in all, 2 from notes alone",
		"notes__add_note -> note 1 saved (server pid ",
		"clock__now -> today is ",
	},
	"configfile": {
		"server secure-filesystem-server ",
		"tool files__list_directory",
		"tool files__read_text_file",
		"files__list_directory of the config's folder:",
		"[FILE] main.go",
		"[FILE] mcp.json",
	},
	"nativeloop": {
		`math__add {"additionalProperties":false,"properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"type":"object"}`,
		`tool  response to call_1 from math__add: "42"`,
		`human text "Media returned by tool call call_2 (math__bar_chart):"; binary image/png`,
		`tool  response to call_3 from math__bar_chart: "values must not be empty"`,
		`tool  response to call_4 from math__plot: "math__plot is not a valid tool, try another one"`,
		"turn 3: the model answers: 19.5 + 22.5 = 42.",
	},
	"replicas": replicasOutput("sqlite"),
}

// replicasOutput is what the replicas example prints with its claims in a
// database of dialect.
func replicasOutput(dialect string) []string {
	return []string{
		"replica A: claims in " + dialect + ", table mcpadapter_claims",
		`replica A: the run paused: restaurant__book_table asks "Which date should I book at Chez Nous for 2?"`,
		"sealed with Config.State.Key",
		"replica B (pid ",
		"Booked a table for 2 at Chez Nous on 2026-09-19.",
		"replica B: answer: Your table for 2 at Chez Nous is booked for 19 September.",
		"replica A: replaying the same run is refused, nothing sent: ",
	}
}

// setup prepares, per example, the command that runs it. The configfile
// example needs the pinned npm filesystem server: a missing package skips
// it, or fails it under MCPADAPTER_REQUIRE_INTEGRATION=1 (extserver.NPM).
var setup = map[string]func(t *testing.T, cmd *exec.Cmd){
	"configfile": func(t *testing.T, cmd *exec.Cmd) {
		_, script := extserver.NPM(t, extserver.ServerFilesystem) // <dir>/dist/index.js
		dir := filepath.Dir(filepath.Dir(script))
		cmd.Args = append(cmd.Args, "-config", filepath.Join("configfile", "mcp.json"))
		cmd.Env = append(os.Environ(), extserver.ServerFilesystem.Env+"="+dir)
	},
}

// TestExamples builds every example (each directory here holding a main
// package) in one go build, then runs each binary with a timeout, in a
// process group that is killed when it ends or times out.
func TestExamples(t *testing.T) {
	names := exampleNames(t)
	for name := range expect {
		if !slices.Contains(names, name) {
			t.Errorf("example %q is expected but has no directory", name)
		}
	}

	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(os.PathSeparator)}
	if raceEnabled {
		args = append(args, "-race")
	}
	for _, name := range names {
		args = append(args, "./"+name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := extserver.Run(ctx, exec.Command(goTool(t), args...)); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	t.Run("quickstart -base-url", func(t *testing.T) {
		t.Parallel()
		quickstartWithModelServer(t, filepath.Join(bin, "quickstart"))
	})
	t.Run("replicas -postgres", func(t *testing.T) {
		t.Parallel()
		replicasOnPostgres(t, filepath.Join(bin, "replicas"))
	})
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			exe := filepath.Join(bin, name)
			if runtime.GOOS == "windows" {
				exe += ".exe"
			}
			cmd := exec.Command(exe)
			if prepare := setup[name]; prepare != nil {
				prepare(t, cmd)
			}
			start := time.Now()
			out, err := extserver.Run(ctx, cmd)
			t.Logf("%s ran in %v", name, time.Since(start).Round(time.Millisecond))
			if err != nil {
				t.Fatalf("%s: %v\n%s", name, err, out)
			}
			if len(strings.TrimSpace(string(out))) == 0 {
				t.Fatalf("%s printed nothing", name)
			}
			for _, want := range expect[name] {
				if !strings.Contains(string(out), want) {
					t.Errorf("%s: output lacks %q", name, want)
				}
			}
			if name == "quickstart" {
				checkREADME(t, string(out))
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// mainPackage matches the package clause of a main package.
var mainPackage = regexp.MustCompile(`(?m)^package main\s*$`)

// exampleNames returns the directories here that hold a main package.
func exampleNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(e.Name(), "*.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err == nil && mainPackage.Match(b) && !strings.HasSuffix(f, "_test.go") {
				names = append(names, e.Name())
				break
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("no examples found")
	}
	return names
}

// goTool returns the go command of the toolchain running the test.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := extserver.GoTool()
	if err != nil {
		t.Fatalf("the go command is needed to build the examples: %v", err)
	}
	return p
}

// checkREADME checks that the quickstart output shown in the README is what
// the quickstart prints: every line of the README's block that starts with
// "1. Discovery" appears in the output, "..." standing for any text.
func checkREADME(t *testing.T, out string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```\n1. Discovery\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("README.md has no quickstart output block starting with 1. Discovery")
	}
	lines := strings.Split(out, "\n")
	for want := range strings.Lines(block) {
		want = strings.TrimSpace(want)
		if want == "" || want == "..." {
			continue
		}
		if !slices.ContainsFunc(lines, func(line string) bool { return matchesElided(line, want) }) {
			t.Errorf("README.md shows quickstart output %q, which the quickstart does not print", want)
		}
	}
}

// matchesElided reports whether line contains the parts of pattern between
// "..." elisions, in order.
func matchesElided(line, pattern string) bool {
	for _, part := range strings.Split(pattern, "...") {
		i := strings.Index(line, part)
		if i < 0 {
			return false
		}
		line = line[i+len(part):]
	}
	return true
}

// quickstartWithModelServer runs the quickstart with -base-url pointing at a
// fake OpenAI-compatible server on loopback that plays the same script as
// the quickstart's own model, and checks the requests it received.
func quickstartWithModelServer(t *testing.T, exe string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	call := func(id, name, args string) string {
		return `{"role":"assistant","content":null,"tool_calls":[{"id":"` + id + `","type":"function","function":{"name":"` + name + `","arguments":` + strconv.Quote(args) + `}}]}`
	}
	answer := func(text string) string { return `{"role":"assistant","content":` + strconv.Quote(text) + `}` }
	script := []string{
		call("call_1", "weather__get_forecast", `{"city":"Paris"}`),
		answer("It will be sunny in Paris."),
		call("call_2", "booking__book_table", `{"restaurant":"Chez Nous","party":2}`),
		answer("Your table is booked."),
	}
	var (
		mu       sync.Mutex
		requests []map[string]any
		auth     []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.URL.Path != "/chat/completions" {
			http.Error(w, fmt.Sprintf("bad request %s: %v", r.URL.Path, err), http.StatusBadRequest)
			return
		}
		mu.Lock()
		n := len(requests)
		requests = append(requests, body)
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		if n >= len(script) {
			http.Error(w, "script exhausted", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"r%d","object":"chat.completion","created":0,"model":"fake","choices":[{"index":0,"message":%s,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`, n, script[n])
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(exe, "-base-url", srv.URL, "-model", "fake-model")
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=test-key")
	out, err := extserver.Run(ctx, cmd)
	if err != nil {
		t.Fatalf("quickstart -base-url: %v\n%s", err, out)
	}
	for _, want := range []string{
		"answer: It will be sunny in Paris.",
		`interrupt: server "booking", tool booking__book_table needs user input:`,
		"result: Booked a table for 2 at Chez Nous on 2026-09-18.",
		"answer: Your table is booked.",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != len(script) {
		t.Fatalf("%d model requests, want %d", len(requests), len(script))
	}
	for i, a := range auth {
		if a != "Bearer test-key" {
			t.Errorf("request %d: Authorization %q, want the key from $OPENAI_API_KEY", i, a)
		}
	}
	if requests[0]["model"] != "fake-model" {
		t.Errorf("model %v, want fake-model", requests[0]["model"])
	}
	b, _ := json.Marshal(requests[0]["tools"])
	for _, name := range []string{"weather__get_forecast", "booking__book_table"} {
		if !strings.Contains(string(b), `"name":"`+name+`"`) {
			t.Errorf("the first request offers tools %s, want %s among them", b, name)
		}
	}
}

// replicasOnPostgres runs the replicas example with its claims in
// PostgreSQL (extserver.Postgres: a throwaway server, skipped under -short
// or when PostgreSQL is not installed, unless
// MCPADAPTER_REQUIRE_INTEGRATION=1), and checks that exactly one booking
// was made, by the second process.
func replicasOnPostgres(t *testing.T, exe string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	dsn := extserver.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := extserver.Run(ctx, exec.Command(exe, "-postgres", dsn))
	if err != nil {
		t.Fatalf("replicas -postgres: %v\n%s", err, out)
	}
	for _, want := range replicasOutput("postgres") {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(string(out), "Booked a table"); n != 1 {
		t.Errorf("%d bookings, want 1", n)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out)
	}
}
