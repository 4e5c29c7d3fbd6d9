package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// A process is a stdio server. Its exit ends its session at once, whatever
// else holds its stdout: its reaper (run, or the watcher's
// watchedProc.exited) ends the rest of its process group, and a grandchild
// that escaped the group (by setsid) holds the session open for terminate
// at most. Its end (shutdown) runs in a goroutine of its own, which stop
// waits for.
type process struct {
	cmd       *exec.Cmd
	group     *processGroup // of cmd
	stderr    *stderrLogger
	terminate time.Duration // Options.Terminate
	stdin     *os.File      // the adapter's end
	stdout    *os.File      // the adapter's end

	exited chan struct{} // closed once the leader is reaped
	err    error         // cmd.Wait's, written before exited is closed

	mu      sync.Mutex // guards closing, and stdout's read deadline
	closing bool       // stopReading was called

	endOnce sync.Once
	ended   chan struct{} // closed once shutdown is done
}

// start starts the process. Where the system allows (procwatch_linux.go)
// one goroutine of the adapter's process starts every server and one
// watches them all; elsewhere, or when unwatched, each server gets a
// goroutine of its own (run), and os/exec's copier of its stderr.
func (p *process) start(unwatched bool) error {
	if !unwatched {
		if watched, err := startWatched(p); watched {
			return err
		}
	}
	started := make(chan error, 1)
	go p.run(started)
	return <-started
}

// run starts the process, reporting how on started, then waits for the
// leader to exit (by itself or by shutdown), ends its group, reaps it and
// records how it ended, so that no exited server is left a zombie. It
// returns once the leader is reaped: shutdown kills a leader that does not
// exit on request.
//
// It starts and waits on an OS thread of its own, locked and never
// unlocked, so that the thread ends with the goroutine, after the reap. On
// Linux the server gets a death signal when the thread that started it
// ends (startInGroup), meant for the end of the adapter's process; any
// other thread could be ended by the Go runtime while the server runs
// (when a goroutine locked to it returns). Waiting holds a thread anyway.
func (p *process) run(started chan<- error) {
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
func (p *process) exit() {
	p.stderr.flush()
	close(p.exited)
	p.mu.Lock()
	if !p.closing {
		p.stdout.SetReadDeadline(time.Now().Add(p.terminate))
	}
	p.mu.Unlock()
}

// stopReading makes a read of stdout in progress, and every later one,
// fail at once.
func (p *process) stopReading() {
	p.mu.Lock()
	p.closing = true
	p.stdout.SetReadDeadline(time.Unix(1, 0))
	p.mu.Unlock()
}

// exitError returns err, the failure of a read from stdout or a write to
// stdin, naming how the server exited and the last lines of its stderr,
// once it has exited (within terminate, and while ctx lasts: a server that
// closed its end of the pipe is exiting).
func (p *process) exitError(ctx context.Context, err error) error {
	if !p.awaitExit(ctx) {
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

// awaitExit waits for the leader to be reaped, for terminate at most and
// while ctx lasts, and reports whether it was.
func (p *process) awaitExit(ctx context.Context) bool {
	t := time.NewTimer(p.terminate)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// write writes b to the server's stdin within ctx: a server that stopped
// reading cannot hold a write past the caller's deadline or cancellation
// (where pipes have deadlines: not on Windows). It returns how many bytes
// were written.
func (p *process) write(ctx context.Context, b []byte) (int, error) {
	if ctx.Done() == nil {
		return p.stdin.Write(b)
	}
	expired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		p.stdin.SetWriteDeadline(time.Unix(1, 0)) // wakes the write up
		close(expired)
	})
	n, err := p.stdin.Write(b)
	if !stop() {
		<-expired
		p.stdin.SetWriteDeadline(time.Time{})
		if err != nil {
			err = fmt.Errorf("writing to the server's stdin: %w", ctx.Err())
		}
	}
	return n, err
}

// end starts shutdown, once, in a goroutine of its own.
func (p *process) end() { p.endOnce.Do(func() { go p.shutdown() }) }

// shutdown ends the server the way the MCP spec asks: "closing the input
// stream to the child process, waiting for the server to exit, or sending
// SIGTERM if the server does not exit within a reasonable time" (terminate
// each), then SIGKILL. It closes stdout once the server is reaped, logs
// how it ended when that is a failure, and closes ended.
func (p *process) shutdown() {
	defer close(p.ended)
	err := p.stdin.Close()
	if !p.awaitExit(context.Background()) && (p.cmd.Process.Signal(syscall.SIGTERM) != nil || !p.awaitExit(context.Background())) {
		if kerr := p.cmd.Process.Kill(); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) {
			err = errors.Join(err, kerr)
		} else {
			// Killed (or just exited): reaped at once, and at the latest
			// terminate later when a grandchild holds stderr (WaitDelay).
			<-p.exited
		}
	}
	p.stdout.Close()
	if err = errors.Join(err, p.err); err != nil {
		p.stderr.logger.Debug("mcpadapter: server process ended", "server", p.stderr.server, "error", err)
	}
}
