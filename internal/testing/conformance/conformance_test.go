package conformance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
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

// specVersions are the protocol versions a scenario is run at, each where
// the suite says it applies: the last legacy-era version and the modern one.
var specVersions = []string{"2025-11-25", "2026-07-28"}

// defaultVersion labels the runs without --spec-version, of the scenarios
// that apply to none of specVersions (OAuth extensions, 2025-03-26 OAuth
// back-compat): the suite picks their version.
const defaultVersion = "default"

// modes are the client's -mode values the suite is run with: the era the
// suite asks for (what its README requires of clients), then the adapter's
// default, ModeAuto (try the modern protocol, fall back to legacy).
var modes = []string{"era", "auto"}

// unobservable lists, with the reason, the client scenarios of extensions
// that the adapter does not implement and whose checks the suite cannot
// observe from a client without them: it reports every check SKIPPED and
// passes the run. baseline.yml cannot list them (the suite calls such an
// entry stale), and a run with no check that passed is otherwise a
// failure (NO CHECKS). A run of one passes when the suite passes with no
// check counted and one at least SKIPPED; a check counted fails it (the
// entry is stale then).
var unobservable = map[string]string{
	"sep-2640-client-no-prefetch":        skillsReason,
	"sep-2640-client-verify-digest":      skillsReason,
	"sep-2640-client-verify-frontmatter": skillsReason,
	"sep-2640-client-verify-size":        skillsReason,
}

// skillsReason is why the SEP-2640 scenarios are unobservable.
const skillsReason = "the skills extension (SEP-2640): the adapter has no skills support, and go-sdk v1.8.0 has no skills/list; the suite sees no skills/list and skips its check"

// Timeouts: the suite kills a client after clientTimeout; a whole run of
// the suite (one scenario: node's start, the test servers, the client) gets
// runTimeout.
const (
	clientTimeout = 30 * time.Second
	runTimeout    = 3 * time.Minute
)

// A job is one run of the suite: one scenario, at one version, in one mode.
type job struct {
	mode, version, scenario string
}

func (j job) name() string { return j.mode + "/" + j.version + "/" + j.scenario }

// An outcome is what one job came to.
type outcome struct {
	verdict string // "passed", "expected failure", or what went wrong
	checks  string // the suite's count, e.g. "13/13"
}

// TestConformance runs every client scenario of the conformance suite
// against the adapter (the client program in ./client), one run of the
// suite per scenario, version and mode, as parallel subtests named
// mode/version/scenario. A subtest fails on an unexpected failure, on a
// baseline entry that passes, when the client itself failed although the
// checks passed, when the suite skipped the scenario, or when no check
// passed (unless unobservable lists the scenario); its log holds the
// suite's output. The parent test logs the table of outcomes.
func TestConformance(t *testing.T) {
	node, script := extserver.Conformance(t)
	baseline, err := filepath.Abs("baseline.yml")
	if err != nil {
		t.Fatal(err)
	}
	expected := readBaseline(t, baseline)
	client := buildClient(t)

	all := listScenarios(t, node, script, "")
	if len(all) == 0 {
		t.Fatalf("%s@%s lists no client scenarios", extserver.ConformancePackage, extserver.ConformanceVersion)
	}
	for name := range expected {
		if !slices.Contains(all, name) {
			t.Errorf("baseline.yml lists %q, which is no client scenario of %s@%s", name, extserver.ConformancePackage, extserver.ConformanceVersion)
		}
		if unobservable[name] != "" {
			t.Errorf("baseline.yml and unobservable both list %q", name)
		}
	}
	for name := range unobservable {
		if !slices.Contains(all, name) {
			t.Errorf("unobservable lists %q, which is no client scenario of %s@%s", name, extserver.ConformancePackage, extserver.ConformanceVersion)
		}
	}
	var jobs []job
	versioned := map[string]bool{}
	for _, version := range specVersions {
		for _, name := range listScenarios(t, node, script, version) {
			versioned[name] = true
			jobs = append(jobs, job{version: version, scenario: name})
		}
	}
	for _, name := range all {
		if !versioned[name] {
			jobs = append(jobs, job{version: defaultVersion, scenario: name})
		}
	}
	runModes := modes
	if testing.Short() {
		runModes = modes[:1]
	}

	var mu sync.Mutex
	outcomes := map[string]outcome{}
	t.Run("scenarios", func(t *testing.T) {
		for _, mode := range runModes {
			for _, j := range jobs {
				j.mode = mode
				t.Run(j.name(), func(t *testing.T) {
					t.Parallel()
					o := runJob(t, node, script, client, baseline, j, expected[j.scenario])
					mu.Lock()
					outcomes[j.name()] = o
					mu.Unlock()
				})
			}
		}
	})
	t.Log(table(outcomes))
}

// runJob runs the suite for one job and judges the run. expected tells
// whether baseline.yml lists the scenario.
func runJob(t *testing.T, node, script, client, baseline string, j job, expected bool) outcome {
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	args := []string{script, "client",
		"--command", client + " -mode=" + j.mode,
		"--scenario", j.scenario,
		"--expected-failures", baseline,
		"--timeout", strconv.Itoa(int(clientTimeout / time.Millisecond)),
	}
	if j.version != defaultVersion {
		args = append(args, "--spec-version", j.version)
	}
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = t.TempDir() // where the suite would write results
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	start := time.Now()
	raw, err := extserver.Run(ctx, cmd)
	out := ansi.ReplaceAllString(string(raw), "")
	o := outcome{checks: checkCount(out)}
	t.Logf("%s in %v, checks passed %s", j.name(), time.Since(start).Round(time.Millisecond), o.checks)

	fail := func(verdict, format string, args ...any) outcome {
		t.Errorf("%s: %s\nsuite output:\n%s", j.name(), fmt.Sprintf(format, args...), out)
		o.verdict = verdict
		return o
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fail("TIMED OUT", "the suite did not finish within %v: %v", runTimeout, err)
	case err != nil && !errors.As(err, &exit):
		return fail("SUITE ERROR", "running the suite: %v", err)
	case strings.Contains(out, "SKIPPED: scenario"):
		return fail("SKIPPED", "the suite skipped the scenario")
	case strings.Contains(out, "Stale baseline entries"):
		return fail("STALE BASELINE", "baseline.yml lists the scenario, but it passes: remove it from baseline.yml")
	case err != nil:
		return fail("UNEXPECTED FAILURE", "the suite failed (%v) on a scenario that baseline.yml does not list", err)
	case expected:
		if !strings.Contains(out, "Expected failures (in baseline)") {
			return fail("SUITE ERROR", "baseline.yml lists the scenario, and the suite reports no expected failure")
		}
		o.verdict = "expected failure"
		return o
	case strings.Contains(out, "Client timed out"), strings.Contains(out, "Client exited with code"):
		return fail("CLIENT FAILED", "the suite's checks passed, but the client failed")
	case unobservable[j.scenario] != "":
		if o.checks != "0/0" || !skippedRE.MatchString(out) {
			return fail("STALE UNOBSERVABLE", "unobservable lists the scenario (%s), but the suite counted checks %q, or skipped none: remove it from unobservable", unobservable[j.scenario], o.checks)
		}
		o.verdict = "unobservable"
		return o
	case strings.HasPrefix(o.checks, "0/"), o.checks == "":
		return fail("NO CHECKS", "no check of the scenario passed")
	}
	o.verdict = "passed"
	return o
}

// ansi matches terminal color sequences.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// checkRE matches the suite's count of passed checks in one scenario.
var checkRE = regexp.MustCompile(`(?m)^Passed: (\d+/\d+)`)

// skippedRE matches a check the suite reports SKIPPED ("<time> [id] SKIPPED
// description", the id padded with spaces).
var skippedRE = regexp.MustCompile(`(?m)^\S+ \[[^\]]*\] +SKIPPED `)

// checkCount returns the suite's "passed/counted" checks, or "".
func checkCount(out string) string {
	if m := checkRE.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// table formats the outcomes, one line per job, sorted, with totals.
func table(outcomes map[string]outcome) string {
	names := make([]string, 0, len(outcomes))
	width := 0
	for name := range outcomes {
		names = append(names, name)
		width = max(width, len(name))
	}
	slices.Sort(names)
	var b strings.Builder
	counts := map[string]int{}
	fmt.Fprintf(&b, "conformance (%s@%s), %d runs:\n", extserver.ConformancePackage, extserver.ConformanceVersion, len(names))
	for _, name := range names {
		o := outcomes[name]
		counts[o.verdict]++
		fmt.Fprintf(&b, "  %-*s  %-18s checks %s\n", width, name, o.verdict, o.checks)
	}
	verdicts := make([]string, 0, len(counts))
	for v := range counts {
		verdicts = append(verdicts, v)
	}
	slices.Sort(verdicts)
	for _, v := range verdicts {
		fmt.Fprintf(&b, "  %s: %d\n", v, counts[v])
	}
	return b.String()
}

// listScenarios returns the suite's client scenarios that apply at version,
// or all of them when version is empty.
func listScenarios(t *testing.T, node, script, version string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	args := []string{script, "list", "--client"}
	if version != "" {
		args = append(args, "--spec-version", version)
	}
	out, err := extserver.Run(ctx, exec.CommandContext(ctx, node, args...))
	if err != nil {
		t.Fatalf("listing the suite's client scenarios: %v\n%s", err, out)
	}
	// "  - name [versions]" lines under "Client scenarios".
	var names []string
	sc := bufio.NewScanner(strings.NewReader(ansi.ReplaceAllString(string(out), "")))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "  - ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		names = append(names, name)
	}
	return names
}

// readBaseline returns the client scenarios that baseline.yml lists. It
// reads the file's one list ("client:" then "  - name" lines), and fails t
// on anything else, so that a change to the file that this reader would
// misread is caught.
func readBaseline(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	inClient := false
	for n, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		switch trimmed := strings.TrimSpace(line); {
		case trimmed == "":
		case trimmed == "client:":
			inClient = true
		case inClient && strings.HasPrefix(trimmed, "- "):
			name := strings.TrimSpace(strings.TrimPrefix(trimmed, "- "))
			if strings.Contains(name, ":") {
				t.Fatalf("%s:%d: per-check entries (%q) are not read here", path, n+1, name)
			}
			names[name] = true
		default:
			t.Fatalf("%s:%d: cannot read %q: want a client: list", path, n+1, line)
		}
	}
	return names
}

// buildClient builds the client program into a temporary directory and
// returns its path (the suite splits its --command at spaces: the path must
// have none).
func buildClient(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "client")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if strings.ContainsAny(bin, " \t") {
		t.Skipf("the temporary directory %q has a space, which the suite's --command cannot carry", bin)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(t), "build", "-o", bin, "./client")
	if out, err := extserver.Run(ctx, cmd); err != nil {
		t.Fatalf("go build ./client: %v\n%s", err, out)
	}
	return bin
}

// goTool returns the go command of the toolchain running the test.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := extserver.GoTool()
	if err != nil {
		t.Fatalf("the go command is needed to build the client: %v", err)
	}
	return p
}
