package mcpadapter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// commandTransport builds a fresh stdio transport for the server of c, its
// output screened by sc. Command is run directly, never through a shell.
func (a *Adapter) commandTransport(c *conn, sc *wire.Screen) mcp.Transport {
	s := c.cfg
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = serverEnv(s)
	stderr := &stderrLogger{logger: a.logger, server: c.server}
	cmd.Stderr = stderr
	// Do not wait forever for a grandchild that keeps stderr open.
	cmd.WaitDelay = terminateDuration
	p := &stdioProcess{cmd: cmd, group: startInGroup(cmd), stderr: stderr, exited: make(chan struct{})}
	c.stop = p.group.kill // what a session that never closed left running
	return &stdioTransport{proc: p, screen: sc}
}

// A stdioTransport runs a command and speaks newline-delimited JSON with it
// over stdin and stdout, like mcp.CommandTransport, but reads stdout through
// the adapter's screen (internal/wire): the SDK's command transport caps a
// line at 16 MiB and fails the whole connection past it, where the screen
// applies Config.MaxMessageBytes and fails only the call concerned.
type stdioTransport struct {
	proc   *stdioProcess
	screen *wire.Screen
}

// Connect implements [mcp.Transport]: it starts the command.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	// Pipes of our own, not cmd.StdinPipe and StdoutPipe: their writer
	// hides the *os.File, whose write deadline bounds a write to a server
	// that stopped reading, and Wait closes their reader, which must
	// outlive the process until its last line is read (stdioProcess.exit).
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
	p.cmd.Stdin, p.cmd.Stdout, p.stdout = stdinR, stdoutW, stdout
	err = p.start()
	stdinR.Close() // the server's ends
	stdoutW.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		return nil, err
	}
	return &stdioConn{
		// The connection is closed by closing stdin (stdioInput.Close),
		// never stdout: the server must be able to finish writing.
		lines:  t.screen.Lines(stdout),
		in:     &stdioInput{proc: p, stdin: stdin},
		writer: make(chan struct{}, 1),
		closed: make(chan struct{}),
	}, nil
}

// A stdioProcess is a started stdio server. Its exit ends its session at
// once, whatever else holds its stdout: its reaper (run, or the watcher's
// watchedProc.exited) ends the rest of its process group, and a grandchild that escaped the group (by setsid) holds the
// session open for terminateDuration at most.
type stdioProcess struct {
	cmd    *exec.Cmd
	group  *processGroup // of cmd
	stderr *stderrLogger
	stdout *os.File // the adapter's end

	exited chan struct{} // closed once the leader is reaped
	err    error         // cmd.Wait's, written before exited is closed
}

// start starts the process. Where the system allows (procwatch_linux.go)
// one goroutine of the adapter's process starts every server and one
// watches them all; elsewhere each server gets a goroutine of its own
// (run), and os/exec's copier of its stderr.
func (p *stdioProcess) start() error {
	if !unwatched.Load() {
		if watched, err := startWatched(p); watched {
			return err
		}
	}
	started := make(chan error, 1)
	go p.run(started)
	return <-started
}

// unwatched, set by tests, makes the servers started meanwhile go without
// the watcher, as on a system that has none.
var unwatched atomic.Bool

// run starts the process, reporting how on started, then waits for the
// leader to exit (by itself or by Close), ends its group, reaps it and
// records how it ended, so that no exited server is left a zombie. It
// returns once the leader is reaped: Close kills a leader that does not
// exit on request.
//
// It starts and waits on an OS thread of its own, locked and never
// unlocked, so that the thread ends with the goroutine, after the reap. On
// Linux the server gets a death signal when the thread that started it
// ends (startInGroup), meant for the end of the adapter's process; any
// other thread could be ended by the Go runtime while the server runs
// (when a goroutine locked to it returns). Waiting holds a thread anyway.
func (p *stdioProcess) run(started chan<- error) {
	runtime.LockOSThread()
	if err := p.cmd.Start(); err != nil {
		p.err = err
		close(p.exited)
		started <- err
		return
	}
	started <- nil
	p.err = p.group.wait()
	p.exit()
}

// exit records that the reaped server's stderr is read to its end (or
// given up on), and lets the last lines buffered on its stdout be read,
// not more. p.err is written.
func (p *stdioProcess) exit() {
	p.stderr.flush()
	close(p.exited)
	p.stdout.SetReadDeadline(time.Now().Add(terminateDuration))
}

// exitError returns err, the failure of a read from stdout or a write to
// stdin, naming how the server exited and the last lines of its stderr,
// once it has exited (within terminateDuration: a server that closed its
// end of the pipe is exiting).
func (p *stdioProcess) exitError(err error) error {
	t := time.NewTimer(terminateDuration)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		return err
	}
	status := "exit status 0"
	if p.err != nil {
		status = p.err.Error() // "exit status 3", "signal: killed"
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = io.EOF // stdout was held open past the exit
	}
	if tail := p.stderr.tail(); tail != "" {
		return fmt.Errorf("server process: %s (%w); the last lines of its stderr:\n%s", status, err, tail)
	}
	return fmt.Errorf("server process: %s (%w)", status, err)
}

// A stdioConn is the [mcp.Connection] of a stdio server: one JSON-RPC
// message per line each way. It does what the SDK's IOTransport does for a
// stdio server, at less cost per message: the SDK's reader goroutine reads
// and decodes each screened line itself, where IOTransport reads it in a
// goroutine of its own, copies it through a json.Decoder, hands it over a
// channel, and decodes it twice (first as a batch, which fails for any
// other message after allocating a 32 KiB decoder). A batch line from an
// older server comes out of the screen one message a line, and a request
// in it gets a response of its own rather than a batch.
type stdioConn struct {
	lines *wire.LineReader // Read's alone

	writer chan struct{} // a token held by the one Write in progress
	broken bool          // held with the token: a write stopped mid-message
	in     *stdioInput

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// SessionID implements [mcp.Connection]: stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }

// Read implements [mcp.Connection]. It returns io.EOF once the connection
// is closed.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	return readLine(ctx, c.lines, c.closed, c.in.proc.exitError)
}

// Write implements [mcp.Connection].
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	line, err := encodeLine(ctx, msg)
	if err != nil {
		return err
	}
	select {
	case c.writer <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err() // still queued behind a write to a full pipe
	}
	defer func() { <-c.writer }()
	if c.broken {
		return fmt.Errorf("%w: an earlier write stopped mid-message", mcp.ErrConnectionClosed)
	}
	n, err := c.in.write(ctx, line)
	if err != nil && ctx.Err() == nil {
		err = c.in.proc.exitError(err) // the server closed stdin: it is exiting
	}
	if err != nil && n > 0 {
		// The server reads a torn message, and whatever follows it, as
		// garbage: give up the connection. (The SDK returns a timed-out
		// call's bare context error, so no caller could tell it.) Close
		// ends the server, and its stdout with the session; waits for
		// it, by Close's once, are bounded by stdioInput.Close.
		c.broken = true
		go c.Close()
	}
	return err
}

// Close implements [mcp.Connection]: it ends the server (stdioInput.Close)
// and closes its stdout; a Read in progress returns io.EOF.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = c.in.Close()
		c.in.proc.stdout.Close()
	})
	return c.closeErr
}

// A stdioInput is the stdin of a stdio server. Closing it ends the server
// the way the MCP spec asks: "closing the input stream to the child process,
// waiting for the server to exit, or sending SIGTERM if the server does not
// exit within a reasonable time", then SIGKILL.
type stdioInput struct {
	proc  *stdioProcess
	stdin *os.File
}

// write writes p to the server's stdin within ctx: a server that stopped
// reading cannot hold a write past the caller's deadline or cancellation
// (where pipes have deadlines: not on Windows). It returns how many bytes
// were written.
func (w *stdioInput) write(ctx context.Context, p []byte) (int, error) {
	if ctx.Done() == nil {
		return w.stdin.Write(p)
	}
	expired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		w.stdin.SetWriteDeadline(time.Unix(1, 0)) // wakes the write up
		close(expired)
	})
	n, err := w.stdin.Write(p)
	if !stop() {
		<-expired
		w.stdin.SetWriteDeadline(time.Time{})
		if err != nil {
			err = fmt.Errorf("writing to the server's stdin: %w", ctx.Err())
		}
	}
	return n, err
}

// Close implements [io.Closer]: it closes stdin and waits for the process
// to be reaped (stdioProcess.exit), signalling it when it does not exit
// within terminateDuration.
func (w *stdioInput) Close() error {
	err := w.stdin.Close()
	p := w.proc
	wait := func() bool {
		t := time.NewTimer(terminateDuration)
		defer t.Stop()
		select {
		case <-p.exited:
			return true
		case <-t.C:
			return false
		}
	}
	if !wait() && (p.cmd.Process.Signal(syscall.SIGTERM) != nil || !wait()) {
		if kerr := p.cmd.Process.Kill(); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) {
			return errors.Join(err, kerr)
		}
		// Killed (or just exited): reaped at once, and at the latest
		// WaitDelay later when a grandchild holds stderr.
		<-p.exited
	}
	return errors.Join(err, p.err)
}

// Bounds on the stderr lines a stdio server's exit error quotes.
const (
	stderrTailLines = 20
	stderrTailBytes = 4 << 10
)

// A stderrLogger turns a stdio server's stderr into log records, one per
// line, and keeps its last lines (stderrTailLines, stderrTailBytes) for
// the error that reports the server's exit.
type stderrLogger struct {
	logger *slog.Logger
	server string

	mu        sync.Mutex
	buf       []byte   // an incomplete last line
	last      []string // the last lines, oldest first
	lastBytes int      // their total length
}

func (w *stderrLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.lineLocked(strings.TrimRight(string(w.buf[:i]), "\r"))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // a very long line without newline: log it as is
		w.flushLocked()
	}
	return len(p), nil
}

// ReadFrom implements io.ReaderFrom, which os/exec's copy of the server's
// stderr uses, reading through a buffer of stderrReadBytes rather than the
// 32 KiB of io.Copy, kept for the connection's life.
func (w *stderrLogger) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, stderrReadBytes)
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// stderrReadBytes is the size of a stderrLogger's read buffer.
const stderrReadBytes = 2 << 10

// flush logs an incomplete last line, once the process is gone.
func (w *stderrLogger) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
}

// flushLocked logs the buffered text; w.mu must be held.
func (w *stderrLogger) flushLocked() {
	if len(w.buf) > 0 {
		w.lineLocked(string(w.buf))
		w.buf = w.buf[:0]
	}
}

// lineLocked logs one line and keeps it among the last; w.mu must be held.
func (w *stderrLogger) lineLocked(line string) {
	w.logger.Info("mcpadapter: server stderr", "server", w.server, "line", line)
	if len(line) > stderrTailBytes {
		line = strings.ToValidUTF8(line[:stderrTailBytes-len("…")], "") + "…"
	}
	w.last = append(w.last, line)
	w.lastBytes += len(line)
	for len(w.last) > stderrTailLines || w.lastBytes > stderrTailBytes {
		w.lastBytes -= len(w.last[0])
		w.last = w.last[1:]
	}
}

// tail returns the last lines, newline separated.
func (w *stderrLogger) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.last, "\n")
}
