package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// commandTransport builds a fresh stdio transport for the server of c, its
// output screened by sc. Command is run directly, never through a shell.
func (a *Adapter) commandTransport(c *conn, sc *screen) mcp.Transport {
	s := c.cfg
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Dir = s.Dir
	if len(s.Env) > 0 {
		cmd.Env = os.Environ()
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			cmd.Env = append(cmd.Env, k+"="+s.Env[k])
		}
	}
	stderr := &stderrLogger{logger: a.logger, server: c.server}
	cmd.Stderr = stderr
	// Do not wait forever for a grandchild that keeps stderr open.
	cmd.WaitDelay = terminateDuration
	group := startInGroup(cmd)
	c.stop = func() {
		group.kill() // what a session that never closed left running
		stderr.flush()
	}
	return &stdioTransport{cmd: cmd, group: group, screen: sc}
}

// A stdioTransport runs a command and speaks newline-delimited JSON with it
// over stdin and stdout, like mcp.CommandTransport, but reads stdout through
// the adapter's screen (see wire.go): the SDK's command transport caps a
// line at 16 MiB and fails the whole connection past it, where the screen
// applies Config.MaxMessageBytes and fails only the call concerned.
type stdioTransport struct {
	cmd    *exec.Cmd
	group  *processGroup // of cmd
	screen *screen
}

// Connect implements [mcp.Transport]: it starts the command.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// Not cmd.StdinPipe: its writer hides the *os.File, whose write
	// deadline bounds a write to a server that stopped reading.
	stdinR, stdin, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	t.cmd.Stdin = stdinR
	err = t.cmd.Start()
	stdinR.Close() // the server's end
	if err != nil {
		stdin.Close()
		return nil, err
	}
	return &stdioConn{
		// The connection is closed by closing stdin (stdioInput.Close),
		// never stdout: the server must be able to finish writing.
		lines:  t.screen.newLineReader(stdout, nil),
		in:     &stdioInput{cmd: t.cmd, group: t.group, stdin: stdin},
		writer: make(chan struct{}, 1),
		closed: make(chan struct{}),
	}, nil
}

// A stdioConn is the [mcp.Connection] of a stdio server: one JSON-RPC
// message per line each way. It does what the SDK's IOTransport does for a
// stdio server, at less cost per message: the SDK's reader goroutine reads
// and decodes each screened line itself, where IOTransport reads it in a
// goroutine of its own, copies it through a json.Decoder, hands it over a
// channel, and decodes it twice (first as a batch, which fails for any
// other message after allocating a 32 KiB decoder).
//
// MCP has had no JSON-RPC batches since 2025-06-18, and both eras the
// adapter speaks are later; a batch line from an older server is still
// read, one message at a time, and a request in it gets a response of its
// own rather than a batch.
type stdioConn struct {
	lines *lineReader // Read's alone
	queue []jsonrpc.Message

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
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for len(c.queue) == 0 {
		line, err := c.lines.nextLine()
		if err != nil {
			select {
			case <-c.closed:
				return nil, io.EOF
			default:
				return nil, err
			}
		}
		if line[0] != '[' {
			// The decoder copies what it keeps: line may be reused.
			return jsonrpc.DecodeMessage(line)
		}
		if c.queue, err = decodeBatch(line); err != nil {
			return nil, err
		}
	}
	msg := c.queue[0]
	c.queue = c.queue[1:]
	return msg, nil
}

// decodeBatch decodes a JSON-RPC batch: an array of at least one message.
func decodeBatch(line []byte) ([]jsonrpc.Message, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, fmt.Errorf("unmarshaling jsonrpc batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("empty jsonrpc batch")
	}
	msgs := make([]jsonrpc.Message, len(raws))
	for i, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, err
		}
		msgs[i] = msg
	}
	return msgs, nil
}

// Write implements [mcp.Connection].
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
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
	n, err := c.in.write(ctx, append(data, '\n'))
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

// Close implements [mcp.Connection]: it ends the server (stdioInput.Close);
// a Read in progress returns io.EOF once the server's stdout is closed.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = c.in.Close()
	})
	return c.closeErr
}

// A stdioInput is the stdin of a stdio server. Closing it ends the server
// the way the MCP spec asks: "closing the input stream to the child process,
// waiting for the server to exit, or sending SIGTERM if the server does not
// exit within a reasonable time", then SIGKILL.
type stdioInput struct {
	cmd   *exec.Cmd
	group *processGroup // of cmd: ended with it
	stdin *os.File
}

// write writes p to the server's stdin within ctx: a server that stopped
// reading cannot hold a write past the caller's deadline or cancellation.
// It returns how many bytes were written.
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

// Close implements [io.Closer]: it closes stdin and reaps the process,
// signalling it when it does not exit within terminateDuration, and ends
// what is left of its process group (processGroup.wait).
func (w *stdioInput) Close() error {
	err := w.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- w.group.wait() }()
	wait := func() (error, bool) {
		t := time.NewTimer(terminateDuration)
		defer t.Stop()
		select {
		case err := <-exited:
			return err, true
		case <-t.C:
			return nil, false
		}
	}
	if werr, ok := wait(); ok {
		return errors.Join(err, werr)
	}
	if w.cmd.Process.Signal(syscall.SIGTERM) == nil {
		if werr, ok := wait(); ok {
			return errors.Join(err, werr)
		}
	}
	if kerr := w.cmd.Process.Kill(); kerr != nil {
		return errors.Join(err, kerr)
	}
	// Killed: Wait returns once the process is reaped, and at the latest
	// WaitDelay later when a grandchild holds the pipes.
	return errors.Join(err, <-exited)
}

// A stderrLogger turns a stdio server's stderr into log records, one per line.
type stderrLogger struct {
	logger *slog.Logger
	server string

	mu  sync.Mutex
	buf []byte // an incomplete last line
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
		line := strings.TrimRight(string(w.buf[:i]), "\r")
		w.buf = w.buf[i+1:]
		w.logger.Info("mcpadapter: server stderr", "server", w.server, "line", line)
	}
	if len(w.buf) > 64<<10 { // a very long line without newline: log it as is
		w.flushLocked()
	}
	return len(p), nil
}

// flush logs an incomplete last line, once the process is gone.
func (w *stderrLogger) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushLocked()
}

// flushLocked logs the buffered text; w.mu must be held.
func (w *stderrLogger) flushLocked() {
	if len(w.buf) > 0 {
		w.logger.Info("mcpadapter: server stderr", "server", w.server, "line", string(w.buf))
		w.buf = w.buf[:0]
	}
}
