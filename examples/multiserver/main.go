// Command multiserver puts servers of every kind in one Adapter:
//
//		go run ./examples/multiserver
//
//	  - "notes" is a stdio server: this program, started again as a child
//	    process with MCPADAPTER_EXAMPLE_SERVE=notes in its environment;
//	  - "clock" is a Streamable HTTP server on a loopback port, started by this
//	    program;
//	  - "broken" is a stdio server whose command does not exist.
//
// Config.OnConnectionError decides what a server that cannot be reached does
// to discovery. Without it, discovery fails and names the server; here it
// prints the error and skips the server (mcpadapter.IgnoreConnectionErrors),
// so the tools of the two healthy servers are still returned.
// ListToolsets returns them per server; FromServers(...) selects some of them.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveEnv, when set in the environment, makes this program an MCP server
// on stdin/stdout instead of the example.
const serveEnv = "MCPADAPTER_EXAMPLE_SERVE"

func main() {
	if os.Getenv(serveEnv) == "notes" {
		// The child process: serve until the adapter closes stdin.
		if err := newNotesServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "notes server:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "multiserver:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	clockURL, stopClock, err := serveClock()
	if err != nil {
		return err
	}
	defer stopClock()

	a, err := mcpadapter.New(mcpadapter.Config{
		Servers: map[string]mcpadapter.Server{
			"notes":  {Command: self, Env: map[string]string{serveEnv: "notes"}},
			"clock":  {URL: clockURL},
			"broken": {Command: "mcpadapter-example-no-such-server"},
		},
		OnConnectionError: func(server string, err error) error {
			fmt.Fprintf(w, "skipping server %q: %v\n", server, err)
			return mcpadapter.IgnoreConnectionErrors(server, err)
		},
	})
	if err != nil {
		return err
	}
	defer a.Close() // also ends the notes server process

	fmt.Fprintln(w, "Discovering the tools of notes (stdio), clock (HTTP) and broken (a missing command).")
	sets, err := a.ListToolsets(ctx)
	if err != nil {
		return err
	}
	for _, server := range slices.Sorted(maps.Keys(sets)) {
		info, err := a.ServerInfo(ctx, server)
		if err != nil {
			return err
		}
		var names []string
		for _, t := range sets[server] {
			names = append(names, t.Name())
		}
		fmt.Fprintf(w, "toolset %-5s (%s, %s era): %s\n", server, info.Name, info.Era, strings.Join(names, ", "))
	}
	if _, ok := sets["broken"]; ok {
		return errors.New("the broken server was not skipped")
	}

	// One list across servers, or only some servers' tools. The broken
	// server stays skipped (OnConnectionError is not called again) until
	// a.Close.
	all, err := a.ListTools(ctx)
	if err != nil {
		return err
	}
	notes, err := a.ListTools(ctx, mcpadapter.FromServers("notes"))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "ListTools: %d tools in all, %d from notes alone\n", len(all), len(notes))

	// Calls go to the right server, whatever its transport.
	add := all.Lookup("notes__add_note")
	if add == nil {
		return errors.New("notes__add_note not found")
	}
	res, err := add.Invoke(ctx, map[string]any{"text": "buy milk"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "notes__add_note -> %s\n", res.Text())

	now := all.Lookup("clock__now")
	if now == nil {
		return errors.New("clock__now not found")
	}
	out, err := now.Call(ctx, `{"zone":"UTC"}`) // langchaingo's text API
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "clock__now -> %s\n", out)
	return nil
}

// newNotesServer returns the stdio server: a note list kept in memory for
// the life of the process.
func newNotesServer() *mcp.Server {
	var (
		mu    sync.Mutex
		notes []string
	)
	s := mcp.NewServer(&mcp.Implementation{Name: "notes-server", Version: "1.0.0"}, nil)
	type addIn struct {
		Text string `json:"text" jsonschema:"the note"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add_note", Description: "Add a note."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			defer mu.Unlock()
			notes = append(notes, in.Text)
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: fmt.Sprintf("note %d saved (server pid %d)", len(notes), os.Getpid())},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "list_notes", Description: "List the notes.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			defer mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(notes, "\n")}}}, nil, nil
		})
	return s
}

// serveClock starts the HTTP server on a free loopback port and returns its
// URL and a function that stops it.
func serveClock() (string, func(), error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "clock-server", Version: "1.0.0"}, nil)
	type nowIn struct {
		Zone string `json:"zone" jsonschema:"an IANA time zone, e.g. UTC or Europe/Paris"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "now", Description: "The current date in a time zone.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in nowIn) (*mcp.CallToolResult, any, error) {
			loc, err := time.LoadLocation(in.Zone)
			if err != nil {
				return nil, nil, err // an isError result the model can read
			}
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "today is " + time.Now().In(loc).Format("Monday") + " in " + in.Zone},
			}}, nil, nil
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	// Stateless Streamable HTTP serves the modern era.
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	stop := func() {
		_ = srv.Close()
		<-done
	}
	return "http://" + ln.Addr().String() + "/mcp", stop, nil
}
