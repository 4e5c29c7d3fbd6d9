//go:build unix

package stdio

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// watchdog bounds what must not block: it turns a hang into a failure and
// orders nothing.
const watchdog = 30 * time.Second

// connectShell starts script under /bin/sh -c with terminate as the
// terminate delay, and returns its transport (for its process), its
// connection and stop, which runs when the test ends.
func connectShell(t *testing.T, script string, terminate time.Duration, unwatched bool) (*transport, mcp.Connection, func()) {
	t.Helper()
	tr, stop := NewTransport(Options{
		Command:   "/bin/sh",
		Args:      []string{"-c", script},
		Screen:    wire.New(wire.Options{MaxMessageBytes: 1 << 20}),
		Terminate: terminate,
		Unwatched: unwatched,
	})
	t.Cleanup(stop)
	c, err := tr.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tr.(*transport), c, stop
}

// watchedOrNot runs test with the server started through the process-wide
// watcher where there is one, and with goroutines of its own.
func watchedOrNot(t *testing.T, test func(t *testing.T, unwatched bool)) {
	t.Run("watched", func(t *testing.T) { test(t, false) })
	t.Run("unwatched", func(t *testing.T) { test(t, true) })
}

// returns runs f and fails t unless it returns within the watchdog.
func returns(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	receive(t, done, what)
}

// alive reports whether the process pid exists and is not a zombie: it
// is not reaped before it exits, so Kill(pid, 0) tells only until then.
func alive(p *process) bool {
	select {
	case <-p.exited:
		return false
	default:
		return syscall.Kill(p.cmd.Process.Pid, 0) == nil
	}
}

// TestCloseReturnsAtOnce: Close of the connection of a server that ignores
// the end of its stdin returns at once, long before the terminate delay
// (a minute) would have it signalled, and so does a Read in progress, with
// io.EOF; stop waits until the server is gone (here killed by hand, as if
// it exited), and a later Connect fails.
func TestCloseReturnsAtOnce(t *testing.T) { watchedOrNot(t, testCloseReturnsAtOnce) }

func testCloseReturnsAtOnce(t *testing.T, unwatched bool) {
	tr, c, stop := connectShell(t, "exec sleep 60", time.Minute, unwatched)
	p := tr.proc
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		read <- err
	}()
	returns(t, "Close", func() { c.Close() })
	if err := receive(t, read, "the Read in progress"); err != io.EOF {
		t.Errorf("Read in progress at Close: error = %v, want io.EOF", err)
	}
	if !alive(p) {
		t.Fatal("the server ended before its terminate delay: the test proves nothing")
	}
	reaped := make(chan bool, 1) // whether it was when stop returned
	go func() {
		stop()
		select {
		case <-p.exited:
			reaped <- true
		default:
			reaped <- false
		}
	}()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if !receive(t, reaped, "stop") {
		t.Error("stop returned before the server was reaped")
	}
	if _, err := tr.Connect(t.Context()); !errors.Is(err, errStopped) {
		t.Errorf("Connect after stop: error = %v, want %v", err, errStopped)
	}
}

// TestShutdownEscalates: a server that ignores both the end of its stdin
// and SIGTERM is killed, a terminate delay after each; stop returns once
// it is reaped, and the connection's error names the signal.
func TestShutdownEscalates(t *testing.T) { watchedOrNot(t, testShutdownEscalates) }

func testShutdownEscalates(t *testing.T, unwatched bool) {
	tr, c, stop := connectShell(t, "trap '' TERM; exec sleep 60", 50*time.Millisecond, unwatched)
	c.Close()
	returns(t, "stop", stop)
	if err := tr.proc.err; err == nil || !strings.Contains(err.Error(), "signal: killed") {
		t.Errorf("the server ended with %v, want it killed", err)
	}
}

// TestTornWriteClosesAtOnce: a write to a server that stopped reading,
// cut short by its context after part of the message went out, returns
// the context's error; the connection is then closed (it ends the server)
// and refuses further writes at once, although the server has not exited.
func TestTornWriteClosesAtOnce(t *testing.T) {
	// The server reads a little, says so, and reads no more.
	script := `head -c 1 >/dev/null; echo '{"jsonrpc":"2.0","method":"began"}'; exec sleep 60`
	tr, c, _ := connectShell(t, script, time.Minute, false)
	msg := &jsonrpc.Request{Method: "x", Params: []byte(`"` + strings.Repeat("x", 1<<20) + `"`)}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	written := make(chan error, 1)
	go func() { written <- c.Write(ctx, msg) }()
	if m, err := c.Read(t.Context()); err != nil || m.(*jsonrpc.Request).Method != "began" {
		t.Fatalf("Read() = %v, %v; want the server's word that it read", m, err)
	}
	cancel()
	if err := receive(t, written, "the torn write"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write() = %v, want the context's error", err)
	}
	var err error
	returns(t, "the write after it", func() { err = c.Write(t.Context(), &jsonrpc.Request{Method: "y"}) })
	if !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("Write() after a torn write = %v, want %v", err, mcp.ErrConnectionClosed)
	}
	if !alive(tr.proc) {
		t.Fatal("the server ended before its terminate delay: the test proves nothing")
	}
	tr.proc.cmd.Process.Kill() // stop, at the test's end, waits for it
}

// receive waits for a value on ch within the watchdog.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(watchdog):
		t.Fatalf("%s did not return", what)
		var zero T
		return zero
	}
}

// TestWriteToExitingServerKeepsDeadline: a write to a server that closed
// its stdin but has not exited yet waits for its exit status only while the
// write's context lasts, not for the whole terminate delay (a minute here).
func TestWriteToExitingServerKeepsDeadline(t *testing.T) {
	script := `exec 0<&-; echo '{"jsonrpc":"2.0","method":"closed"}'; exec sleep 60`
	tr, c, _ := connectShell(t, script, time.Minute, false)
	if m, err := c.Read(t.Context()); err != nil || m.(*jsonrpc.Request).Method != "closed" {
		t.Fatalf("Read() = %v, %v; want the server's word that it closed stdin", m, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	var err error
	returns(t, "the write to a closed stdin", func() { err = c.Write(ctx, &jsonrpc.Request{Method: "x"}) })
	if err == nil {
		t.Fatal("Write() to a closed stdin succeeded")
	}
	if !alive(tr.proc) {
		t.Fatal("the server ended before its terminate delay: the test proves nothing")
	}
	tr.proc.cmd.Process.Kill() // stop, at the test's end, waits for it
}
