// Package faultserver builds misbehaving MCP servers for mcpadapter's
// reliability and security tests: servers that die mid-call, hang, answer
// slowly, send malformed JSON, unknown content types, invalid or huge
// schemas, odd tool names, endless pagination, endless input rounds and
// oversized results.
//
// Two kinds of server are provided:
//
//   - [Server] is a go-sdk server ([testserver.Full] plus fault tools, see
//     [New]): faults a well-behaved SDK can still produce.
//   - [Peer] is a hand-written JSON-RPC peer (see [NewPeer]): output the SDK
//     refuses to produce, over an in-memory pipe ([Peer.Transport], an
//     *mcp.IOTransport over net.Pipe), stdio ([Command]) or HTTP
//     ([Peer.HTTPHandler]).
//
// Faults are triggered by what the test calls (a tool, an option), never by
// a timer; the "slow" tools wait for a duration the test passes.
//
// Stdio servers re-execute the test binary: its TestMain must call [Main].
//
// The package must not import mcpadapter itself: the root package's tests
// import it.
package faultserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvKind is the environment variable that makes a test binary run as a
// fault server process (see [Main] and [Command]).
const EnvKind = "MCPADAPTER_FAULTSERVER"

// Process kinds, as accepted by [Command].
const (
	// KindSDK is a go-sdk stdio server built by [New] (both eras), whose
	// "die" tool exits the process and whose "grandchild" tool works.
	KindSDK = "sdk"
	// KindRaw is a [Peer] with default options serving stdio. Append
	// options after a colon, comma separated: "raw:hanghandshake",
	// "raw:repeatcursor", "raw:hanglist" (see [PeerOptions]), and
	// "raw:basic" (Tools: [BasicCatalog]).
	KindRaw = "raw"
	// KindSleep is a process that does nothing until it is killed: the
	// grandchild the "grandchild" tool starts.
	KindSleep = "sleep"
	// KindTask is a [TaskPeer] of the legacy era whose "job" requires a
	// task, serving stdio: its tasks live as long as its process;
	// "task:modern" speaks the modern era.
	KindTask = "task"
)

// Main is for TestMain. When [EnvKind] is set, the process is a fault
// server started by [Command]: it serves until its client goes away (or is
// killed) and exits. Otherwise Main hands over to [testserver.Main], which
// runs testserver's stdio kinds or the tests:
//
//	func TestMain(m *testing.M) { faultserver.Main(m) }
func Main(m *testing.M) {
	if kind := os.Getenv(EnvKind); kind != "" {
		os.Unsetenv(EnvKind)
		os.Exit(runProcess(kind))
	}
	testserver.Main(m)
}

// runProcess runs the process of kind and returns its exit status.
func runProcess(kind string) int {
	name, rest, _ := strings.Cut(kind, ":")
	switch name {
	case KindSDK:
		s := New(Options{})
		s.stdio = true
		if err := s.Server.Server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "faultserver: stdio server:", err)
		}
		return 0
	case KindRaw:
		opts, err := parsePeerOptions(rest)
		if err != nil {
			fmt.Fprintln(os.Stderr, "faultserver:", err)
			return 2
		}
		NewPeer(opts).serve(context.Background(), os.Stdin, os.Stdout, func() { os.Exit(3) })
		return 0
	case KindSleep:
		select {} // until killed
	case KindTask:
		(&TaskPeer{Modern: rest == "modern", Support: "required"}).serve(os.Stdin, os.Stdout)
		return 0
	}
	fmt.Fprintf(os.Stderr, "faultserver: unknown kind %q\n", kind)
	return 2
}

// Command returns how to start the current test binary as a fault server
// process of kind (see [KindSDK], [KindRaw], [KindSleep], [KindTask]): the executable,
// arguments that run no test, and the environment the process needs
// (Server.Env: [EnvKind] and [testserver.ProcessEnv]). The test binary's
// TestMain must call [Main].
func Command(t testing.TB, kind string) (command string, args []string, env map[string]string) {
	t.Helper()
	name, rest, _ := strings.Cut(kind, ":")
	switch name {
	case KindSDK, KindSleep:
	case KindTask:
		if rest != "" && rest != "modern" {
			t.Fatalf("faultserver.Command: unknown kind %q", kind)
		}
	case KindRaw:
		if _, err := parsePeerOptions(rest); err != nil {
			t.Fatalf("faultserver.Command: %v", err)
		}
	default:
		t.Fatalf("faultserver.Command: unknown kind %q", kind)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("faultserver.Command: %v", err)
	}
	env = testserver.ProcessEnv()
	env[EnvKind] = kind
	return exe, []string{"-test.run=^$", "-test.bench=^$", "-test.fuzz=^$"}, env
}

// Options configures a [Server].
type Options struct {
	testserver.Options

	// ConsentURL is the page the "consent" tool asks the user to visit.
	// Empty means "https://example.com/consent".
	ConsentURL string
}

// Server is a go-sdk server with every testserver tool set and the fault
// tools (see [New]). It is safe for concurrent use.
type Server struct {
	*testserver.Server

	opts  Options
	stdio bool // running as a process (see Main): "die" exits

	unhang     chan struct{}
	unhangOnce sync.Once
	hanging    chan struct{}
}

// New returns a server built with [testserver.Full] and these fault tools:
//
//   - "die": ends the server mid-call, without answering: a stdio server
//     process exits with status 3; otherwise every session is closed.
//   - "hang": never answers and ignores cancellation, until [Server.Unhang]
//     is called (then it answers "unhung"). It signals [Server.Hanging].
//   - "sleep" {ms integer}: answers "slept <ms>ms" after ms milliseconds,
//     or fails when its context ends first.
//   - "shed_forever": asks for input with no requests on every round (load
//     shedding), so a client retries forever.
//   - "consent": asks a URL-mode elicitation of [Options.ConsentURL] under
//     "consent"; a retry with any answer gives "consent <action>".
//   - "env": answers the process's environment, one NAME=value a line.
//   - "grandchild" {stdout boolean}: starts a child process of its own
//     (the test binary as [KindSleep], in the server's process group) and
//     answers its pid; with stdout, the child holds the server's stdout
//     open. It works only in a stdio server process.
//
// testserver's "ask_forever" asks for input on every round, and "big"
// answers up to 64 MiB.
func New(opts Options) *Server {
	if opts.ConsentURL == "" {
		opts.ConsentURL = "https://example.com/consent"
	}
	s := &Server{
		Server:  testserver.Full(opts.Options),
		opts:    opts,
		unhang:  make(chan struct{}),
		hanging: make(chan struct{}, 64),
	}
	s.addFaults()
	return s
}

// Unhang releases every "hang" call, and makes later ones answer at once. It
// is idempotent; register it with t.Cleanup when a test calls "hang".
func (s *Server) Unhang() { s.unhangOnce.Do(func() { close(s.unhang) }) }

// Hanging returns a channel that receives a value each time a "hang" call
// starts. It is buffered.
func (s *Server) Hanging() <-chan struct{} { return s.hanging }

func emptyObject() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{}}
}

func text(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

func (s *Server) addFaults() {
	srv := s.Server.Server // the *mcp.Server
	srv.AddTool(&mcp.Tool{Name: "die", Description: "Ends the server mid-call.", InputSchema: emptyObject()},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if s.stdio {
				os.Exit(3)
			}
			// KillSessions cancels this call and waits for nothing.
			go s.KillSessions()
			<-ctx.Done()
			return nil, ctx.Err()
		})

	srv.AddTool(&mcp.Tool{Name: "hang", Description: "Never answers.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case s.hanging <- struct{}{}:
			default:
			}
			<-s.unhang
			return text("unhung"), nil
		})

	srv.AddTool(&mcp.Tool{
		Name:        "sleep",
		Description: "Answers after ms milliseconds.",
		InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"ms": map[string]any{"type": "integer", "minimum": 0}},
			"required":   []any{"ms"},
		},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ms := intArg(req.Params.Arguments, "ms")
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return text(fmt.Sprintf("slept %dms", ms)), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})

	srv.AddTool(&mcp.Tool{Name: "shed_forever", Description: "Asks for nothing, again and again.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}, RequestState: "shed"}, nil
		})

	srv.AddTool(&mcp.Tool{Name: "consent", Description: "Asks for consent on a web page.", InputSchema: emptyObject()},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["consent"].(*mcp.ElicitResult); ok && r != nil {
				return text("consent " + r.Action), nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"consent": &mcp.ElicitParams{
				Mode:          "url",
				Message:       "Please give consent on the web page.",
				URL:           s.opts.ConsentURL,
				ElicitationID: "consent-1",
			}}, RequestState: "consent"}, nil
		})

	srv.AddTool(&mcp.Tool{Name: "env", Description: "Answers the process's environment.", InputSchema: emptyObject()},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strings.Join(os.Environ(), "\n")), nil
		})

	srv.AddTool(&mcp.Tool{
		Name:        "grandchild",
		Description: "Starts a child process and answers its pid.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"stdout": map[string]any{"type": "boolean"}}},
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !s.stdio {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "grandchild works only in a stdio server process"}}}, nil
		}
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), EnvKind+"="+KindSleep)
		if stdout, _ := decodeArgs(req.Params.Arguments)["stdout"].(bool); stdout {
			cmd.Stdout = os.Stdout
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		// Not waited for: the child must outlive this call, as a
		// leaked grandchild would.
		return text(strconv.Itoa(cmd.Process.Pid)), nil
	})
}

// intArg reads the integer argument name of raw JSON arguments, or 0.
func intArg(raw []byte, name string) int {
	args := decodeArgs(raw)
	f, _ := args[name].(float64)
	return int(f)
}
