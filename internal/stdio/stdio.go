// Package stdio runs MCP servers as child processes and speaks
// newline-delimited JSON-RPC with them over stdin and stdout: process
// start, the environment a server gets, its stderr, its process group and
// death signal, and on Linux one process-wide watcher of every server
// (pidfd and epoll). Its one seam is [NewTransport].
package stdio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultTerminate is the Options.Terminate of a zero Options.
const DefaultTerminate = 2 * time.Second

// Options configures the transport of one stdio server.
type Options struct {
	// Command is the program to run, with Args, in Dir; it is run
	// directly, never through a shell.
	Command string
	Args    []string
	Dir     string
	// Env is added to the server's environment, overriding what it
	// inherits: the variables of an allowlist (PATH, HOME, ...).
	Env map[string]string
	// Screen reads the server's stdout (internal/wire). It must not be nil.
	Screen *wire.Screen
	// Logger gets the server's stderr, one record per line, naming
	// Server; nil discards it.
	Logger *slog.Logger
	Server string
	// Terminate is how long a server gets to exit after its stdin is
	// closed, and then after SIGTERM, before it is killed; also how long
	// a pipe held open by a grandchild past the server's exit is waited
	// for. Zero means DefaultTerminate.
	Terminate time.Duration
	// Unwatched starts the server with goroutines of its own rather than
	// through the process-wide watcher, as on a system without one.
	Unwatched bool
}

// NewTransport returns the transport of one stdio server, which starts the
// command when the SDK connects, and stop, which ends what it started.
//
// The transport does what go-sdk's CommandTransport does, but reads stdout
// through o.Screen: the SDK's command transport caps a line at 16 MiB and
// fails the whole connection past it, where the screen applies its own
// bound and fails only the call concerned.
//
// Closing the connection starts ending the server and returns at once, so
// that no lock of the SDK's is held while a server takes its time to exit.
// stop ends the server if its connection was never closed, and returns
// once it is reaped, its process group ended and its pipes closed (a
// grandchild that left the group by setsid escapes). stop is idempotent,
// safe for concurrent use, and makes a later Connect fail.
func NewTransport(o Options) (mcp.Transport, func()) {
	cmd := exec.Command(o.Command, o.Args...)
	cmd.Dir = o.Dir
	cmd.Env = environ(o.Env)
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	stderr := &stderrLogger{logger: logger, server: o.Server}
	cmd.Stderr = stderr
	terminate := o.Terminate
	if terminate == 0 {
		terminate = DefaultTerminate
	}
	// Do not wait forever for a grandchild that keeps stderr open.
	cmd.WaitDelay = terminate
	t := &transport{
		screen:    o.Screen,
		unwatched: o.Unwatched,
		proc: &process{
			cmd: cmd, group: startInGroup(cmd), stderr: stderr, terminate: terminate,
			exited: make(chan struct{}), ended: make(chan struct{}),
		},
	}
	return t, t.stop
}

// errStopped is the error of a Connect after stop.
var errStopped = errors.New("stdio transport stopped")

// A transport runs a command and speaks newline-delimited JSON with it
// over stdin and stdout. It is single-use.
type transport struct {
	proc      *process
	screen    *wire.Screen
	unwatched bool

	mu        sync.Mutex // guards connected, started and stopped
	connected bool       // Connect was called: a transport is single-use
	started   bool       // and it started proc
	stopped   bool       // stop was called
}

// Connect implements [mcp.Transport]: it starts the command.
func (t *transport) Connect(ctx context.Context) (mcp.Connection, error) {
	t.mu.Lock()
	defer t.mu.Unlock() // a start is quick: a stop waits for it
	switch {
	case t.stopped:
		return nil, errStopped
	case t.connected:
		return nil, errors.New("stdio transport already connected")
	}
	t.connected = true
	// Pipes of our own, not cmd.StdinPipe and StdoutPipe: their writer
	// hides the *os.File, whose write deadline bounds a write to a server
	// that stopped reading, and Wait closes their reader, which must
	// outlive the process until its last line is read (process.exit).
	stdinR, stdin, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdin.Close()
		return nil, err
	}
	p := t.proc
	p.cmd.Stdin, p.cmd.Stdout, p.stdin, p.stdout = stdinR, stdoutW, stdin, stdout
	err = p.start(t.unwatched)
	stdinR.Close() // the server's ends
	stdoutW.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		return nil, err
	}
	t.started = true
	return &conn{
		// The connection is closed by closing stdin (process.shutdown),
		// never stdout: the server must be able to finish writing.
		lines:  t.screen.Lines(stdout),
		proc:   p,
		writer: make(chan struct{}, 1),
		closed: make(chan struct{}),
	}, nil
}

// stop ends the server Connect started, if any, and waits until it is
// gone (process.shutdown).
func (t *transport) stop() {
	t.mu.Lock()
	t.stopped = true
	started := t.started
	t.mu.Unlock()
	if started {
		t.proc.end()
		<-t.proc.ended
	}
}

// A conn is the [mcp.Connection] of a stdio server: one JSON-RPC message
// per line each way. It does what the SDK's IOTransport does for a stdio
// server, at less cost per message: the SDK's reader goroutine reads and
// decodes each screened line itself, where IOTransport reads it in a
// goroutine of its own, copies it through a json.Decoder, hands it over a
// channel, and decodes it twice (first as a batch, which fails for any
// other message after allocating a 32 KiB decoder). A batch line from an
// older server comes out of the screen one message a line, and a request
// in it gets a response of its own rather than a batch.
type conn struct {
	lines *wire.LineReader // Read's alone
	proc  *process

	writer chan struct{} // a token held by the one Write in progress
	broken bool          // held with the token: a write stopped mid-message

	closeOnce sync.Once
	closed    chan struct{}
}

// SessionID implements [mcp.Connection]: stdio has no session id.
func (c *conn) SessionID() string { return "" }

// Read implements [mcp.Connection]. It returns io.EOF once the connection
// is closed.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	return ReadLine(ctx, c.lines, c.closed, func(err error) error { return c.proc.exitError(ctx, err) })
}

// Write implements [mcp.Connection].
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	line, err := EncodeLine(ctx, msg)
	if err != nil {
		return err
	}
	select {
	case c.writer <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err() // still queued behind a write to a full pipe
	}
	if c.broken {
		<-c.writer
		return fmt.Errorf("%w: an earlier write stopped mid-message", mcp.ErrConnectionClosed)
	}
	n, err := c.proc.write(ctx, line)
	if err != nil && n > 0 {
		// The server reads a torn message, and whatever follows it, as
		// garbage: give up the connection. (The SDK returns a timed-out
		// call's bare context error, so no caller could tell it.) Close
		// ends the server, and its stdout with the session.
		c.broken = true
		c.Close()
	}
	<-c.writer
	if err != nil && ctx.Err() == nil {
		err = c.proc.exitError(ctx, err) // the server closed stdin: it is exiting (waited for within ctx)
	}
	return err
}

// Close implements [mcp.Connection]: it starts ending the server
// (process.shutdown) and returns at once; a Read in progress returns
// io.EOF. The SDK calls it under its connection's lock, which the next
// call's Connection.Call waits for.
func (c *conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.proc.stopReading()
		c.proc.end()
	})
	return nil
}
