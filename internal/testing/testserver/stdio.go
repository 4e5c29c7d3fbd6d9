package testserver

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvKind is the environment variable that makes a test binary run as a stdio
// server (see [Main]). Its value is a kind, as accepted by [ParseKind].
const EnvKind = "MCPADAPTER_TESTSERVER"

// Main is for TestMain. When the environment variable [EnvKind] is set, the
// process is a stdio server started by [Command]: Main builds the server for
// that kind ([FromKind]), serves it over stdin/stdout until the client goes
// away, and exits with status 0 (2 for a bad kind). Otherwise it runs the
// tests and exits with their status:
//
//	func TestMain(m *testing.M) { testserver.Main(m) }
func Main(m *testing.M) {
	if kind := os.Getenv(EnvKind); kind != "" {
		os.Unsetenv(EnvKind)
		os.Exit(runStdio(kind))
	}
	os.Exit(m.Run())
}

// runStdio serves the server of kind over stdio and returns the exit status.
func runStdio(kind string) int {
	s, err := FromKind(kind)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		return 2
	}
	s.stdio = true
	if err := s.Server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "testserver: stdio server:", err)
	}
	return 0
}

// Command returns how to start the current test binary as a stdio server of
// kind: the executable, arguments that keep a binary without [Main] in its
// TestMain from running any test, and the environment the server needs
// (mcpadapter passes a stdio server an allowlist of the current one, plus
// Server.Env): [EnvKind]=kind, GORACE extended with atexit_sleep_ms=0 so
// that a race-enabled server exits without the race runtime's 1s delay,
// and GOCOVERDIR when set (see [ProcessEnv]). The test binary's TestMain
// must call [Main]. Command fails the test if kind is invalid or the
// executable cannot be found. See [ParseKind] for the kind syntax.
func Command(t testing.TB, kind string) (command string, args []string, env map[string]string) {
	t.Helper()
	if _, err := ParseKind(kind); err != nil {
		t.Fatalf("testserver.Command: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("testserver.Command: %v", err)
	}
	env = ProcessEnv()
	env[EnvKind] = kind
	return exe, []string{"-test.run=^$", "-test.bench=^$", "-test.fuzz=^$"}, env
}

// ProcessEnv returns the variables of the current environment that a test
// binary re-executed as a server process needs: GORACE extended with
// atexit_sleep_ms=0 (a race-enabled binary sleeps 1s at exit unless told
// otherwise, which would slow every stdio server shutdown under go test
// -race), and GOCOVERDIR when set, so that a coverage-enabled server
// writes its counters.
func ProcessEnv() map[string]string {
	env := map[string]string{"GORACE": strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")}
	if dir, ok := os.LookupEnv("GOCOVERDIR"); ok {
		env["GOCOVERDIR"] = dir
	}
	return env
}

// ParseKind parses a stdio server kind into Options. The syntax is
//
//	era[:option[,option]...]
//
// where era is "modern" (a default server, both eras) or "legacy" (Legacy
// true), and each option is one of
//
//	ttl=<ms>             Options.TTLMs
//	pagesize=<n>         Options.PageSize
//	delay=<duration>     Options.ConnectDelay (Go syntax, e.g. 50ms)
//	name=<s>             Options.Name
//	version=<s>          Options.Version
//	instructions=<s>     Options.Instructions
//	key=<s>              Options.StateKey (stable requestState across restarts)
//	nodiscover           Options.NoDiscover (also nodiscover=true|false)
//	modernonly           Options.ModernOnly
//	noresources          Options.NoResources
//	lean                 Options.Lean (the bare echo server of [Lean])
//	runs                 Options.Runs (the "runs" tool)
//	progress=<n>         Options.ProgressSteps
//
// Values cannot contain commas. Examples: "modern", "legacy",
// "modern:ttl=60000,pagesize=2", "legacy:nodiscover", "modern:key=k1".
func ParseKind(kind string) (Options, error) {
	var o Options
	era, rest, hasOpts := strings.Cut(kind, ":")
	switch era {
	case "modern":
	case "legacy":
		o.Legacy = true
	default:
		return o, fmt.Errorf("kind %q: era must be \"modern\" or \"legacy\"", kind)
	}
	if !hasOpts {
		return o, nil
	}
	for opt := range strings.SplitSeq(rest, ",") {
		if opt == "" {
			continue
		}
		key, val, hasVal := strings.Cut(opt, "=")
		var err error
		flag := func(dst *bool) {
			if !hasVal {
				*dst = true
				return
			}
			*dst, err = strconv.ParseBool(val)
		}
		switch key {
		case "ttl":
			o.TTLMs, err = strconv.Atoi(val)
		case "pagesize":
			o.PageSize, err = strconv.Atoi(val)
		case "delay":
			o.ConnectDelay, err = time.ParseDuration(val)
		case "name":
			o.Name = val
		case "version":
			o.Version = val
		case "instructions":
			o.Instructions = val
		case "key":
			o.StateKey = val
		case "nodiscover":
			flag(&o.NoDiscover)
		case "modernonly":
			flag(&o.ModernOnly)
		case "noresources":
			flag(&o.NoResources)
		case "lean":
			flag(&o.Lean)
		case "runs":
			flag(&o.Runs)
		case "progress":
			o.ProgressSteps, err = strconv.Atoi(val)
		default:
			return o, fmt.Errorf("kind %q: unknown option %q", kind, key)
		}
		if err != nil {
			return o, fmt.Errorf("kind %q: option %q: %v", kind, opt, err)
		}
	}
	return o, nil
}

// FromKind builds the server of a kind (see [ParseKind]) with every tool set:
// [Server.AddWeather], [Server.AddBooking], [Server.AddFeatures] and
// [Server.AddResources] (or the bare server of [Lean] for "lean").
func FromKind(kind string) (*Server, error) {
	o, err := ParseKind(kind)
	if err != nil {
		return nil, err
	}
	return Full(o), nil
}

// Full returns a server built with opts and every tool set:
// [Server.AddWeather], [Server.AddBooking], [Server.AddFeatures] and
// [Server.AddResources]; with opts.Lean, the bare server of [Lean].
func Full(opts Options) *Server {
	if opts.Lean {
		return Lean(opts)
	}
	return New(opts).AddWeather().AddBooking().AddFeatures().AddResources()
}
