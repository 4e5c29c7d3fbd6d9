// Package examples_test builds every example and runs it, as a user would
// with go run, checking that it exits 0 and prints what its story promises.
package examples_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/extserver"
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
		"saved the interrupt as JSON, to wait for the user",
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
	"nativeloop": {
		`math__add {"additionalProperties":false,"properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"type":"object"}`,
		`tool  response to call_1 from math__add: "42"`,
		`human text "Media returned by tool call call_2 (math__bar_chart):"; binary image/png`,
		`tool  response to call_3 from math__bar_chart: "values must not be empty"`,
		`tool  response to call_4 from math__plot: "math__plot is not a valid tool, try another one"`,
		"turn 3: the model answers: 19.5 + 22.5 = 42.",
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

	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			exe := filepath.Join(bin, name)
			if runtime.GOOS == "windows" {
				exe += ".exe"
			}
			start := time.Now()
			out, err := extserver.Run(ctx, exec.Command(exe))
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

// goTool returns the go command that runs these tests.
func goTool(t *testing.T) string {
	t.Helper()
	if goroot := os.Getenv("GOROOT"); goroot != "" {
		if p := filepath.Join(goroot, "bin", "go"); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the examples: %v", err)
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
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
