package mcpadapter

// Fault tests of stdio servers and of connections the adapter gives up on:
// a response the SDK cannot use, a server that stops reading its stdin, a
// server whose process exits while a child holds its stdout, a handshake
// that never ends, start-up failures, and the environment a server gets.

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
)

// closeWithin closes a and fails the test if Close does not return within
// faultWait.
func closeWithin(t *testing.T, a *Adapter) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- a.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close() = %v", err)
		}
	case <-faultCtx(t).Done():
		t.Fatal("Close() did not return")
	}
}

// TestFaultNullErrorClosesSession: a response with "error": null fails the
// call and costs the connection; the adapter closes that connection (the
// stdio server exits) when it gives it up, so that after the next
// discovery dials again (Restart, Reconnect) Close returns and nothing of
// the old session is left, over a pipe and over stdio.
func TestFaultNullErrorClosesSession(t *testing.T) {
	for _, target := range peerTargets[:2] { // pipe, stdio
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			p := faultserver.NewPeer(faultserver.PeerOptions{Tools: faultserver.BasicCatalog()})
			a, err := New(Config{Servers: map[string]Server{"f": target.server(t, p, faultserver.KindRaw+":basic")}})
			if err != nil {
				t.Fatal(err)
			}
			ts, err := a.ListTools(faultCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			pid := serverPID(t, ts, "f__"+faultserver.ToolPID)
			_, err = lookup(t, ts, "f__"+faultserver.ToolNullError).Invoke(faultCtx(t), nil)
			checkServerErr(t, err, "f")
			// The call cost the connection: the next discovery dials again.
			if ts, err = a.ListTools(faultCtx(t)); err != nil {
				t.Fatal(err)
			}
			if res, err := lookup(t, ts, "f__ok").Invoke(faultCtx(t), nil); err != nil || res.Text() != "ok" {
				t.Fatalf("ok after the fault = %q, %v", res.Text(), err)
			}
			closeWithin(t, a)
			if target.name == "stdio" {
				waitEnded(t, pid, "the first stdio server")
				return
			}
			ended := make(chan struct{})
			go func() { p.Wait(); close(ended) }()
			select {
			case <-ended:
			case <-faultCtx(t).Done():
				t.Fatal("a pipe connection outlived Close")
			}
		})
	}
}

// setTerminateDelay makes the stdio servers that a starts get d, not
// internal/stdio's default, to exit after their stdin is closed (and
// again after SIGTERM), and as long to let go of pipes held past their
// exit. a must not have dialed yet.
func setTerminateDelay(a *Adapter, d time.Duration) {
	a.pool.dialer.stdio.terminate = d
}

// returnsWithin runs f and fails the test if it has not returned within
// faultWait: a watchdog for calls whose own deadline is under test.
func returnsWithin(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(faultWait):
		t.Fatalf("%s did not return", what)
	}
}

// TestFaultStdinFull: a stdio server that stopped reading its stdin cannot
// hold a call past its deadline, neither the call whose request fills the
// pipe nor one queued behind it; the torn request costs the connection,
// and Restart brings the server back.
func TestFaultStdinFull(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"f": peerTargets[1].server(t, nil, faultserver.KindRaw+":basic")}})
	setTerminateDelay(a, 100*time.Millisecond) // the server ignores its stdin's end
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := lookup(t, ts, "f__"+faultserver.ToolStopReading).Invoke(faultCtx(t), nil); err != nil || res.Text() != "ok" {
		t.Fatalf("stop_reading = %q, %v", res.Text(), err)
	}
	big := map[string]any{"pad": strings.Repeat("x", 4<<20)} // far more than a pipe holds
	errs := make([]error, 2)
	returnsWithin(t, "a call to a server that reads nothing", func() {
		var wg sync.WaitGroup
		// The big request gets time enough to be written in part: a
		// request written in part costs the connection, one never
		// begun does not.
		for i, tt := range []struct {
			args    map[string]any
			timeout time.Duration
		}{{big, 2 * time.Second}, {nil, 300 * time.Millisecond}} {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
				defer cancel()
				_, errs[i] = lookup(t, ts, "f__ok").Invoke(ctx, tt.args)
			})
		}
		wg.Wait()
	})
	for _, err := range errs {
		checkServerErr(t, err, "f")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("call error = %v, want a deadline error", err)
		}
	}
	checkUsable(t, a, ts, "f", "f__ok", nil, "ok", true)
}

// TestFaultStdioCallAfterTornWrite: a stdio server that stopped reading
// tears a big request whose call times out, which costs the connection;
// the next call returns before its own deadline, with a *ServerError, while
// the server is still being ended (its terminate delay, a minute, is far
// past the bound here, so a regression hangs distinctly): the
// connection's Close, which go-sdk calls under the lock that the next
// call waits for, does not wait for the server to exit. Once the server
// exits, Close of the adapter leaves neither it nor a goroutine behind.
func TestFaultStdioCallAfterTornWrite(t *testing.T) {
	sharedWatcher() // started beforehand: it outlives every adapter
	before := goroutines()
	a := newAdapter(t, Config{Servers: map[string]Server{"f": peerTargets[1].server(t, nil, faultserver.KindRaw+":basic")}})
	setTerminateDelay(a, time.Minute)
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	pid := serverPID(t, ts, "f__"+faultserver.ToolPID)
	t.Cleanup(func() { killProcess(pid) }) // a failed test's, before Close
	if res, err := lookup(t, ts, "f__"+faultserver.ToolStopReading).Invoke(faultCtx(t), nil); err != nil || res.Text() != "ok" {
		t.Fatalf("stop_reading = %q, %v", res.Text(), err)
	}
	ok := lookup(t, ts, "f__ok")
	big := map[string]any{"pad": strings.Repeat("x", 1<<20)} // far more than a pipe holds
	// Time enough for the request to be written in part (TestFaultStdinFull).
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if _, err := ok.Invoke(ctx, big); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the call whose request the server does not read: error = %v, want a deadline error", err)
	}

	// The next call: it must return once its context is done at the
	// latest, give or take the time a loaded machine takes to notice.
	const margin = 5 * time.Second
	ctx, cancel = context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := ok.Invoke(ctx, nil)
		done <- err
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		select {
		case err = <-done:
		case <-time.After(margin):
			t.Fatalf("the call after the torn write was still blocked %v past its deadline", margin)
		}
	}
	checkServerErr(t, err, "f")
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the call after the torn write: error = %v, want the connection's loss, before its deadline", err)
	}
	if processEnded(pid) {
		t.Fatal("the server ended before its terminate delay: the test proves nothing")
	}

	if err := killProcess(pid); err != nil { // it would exit after SIGTERM, a minute on
		t.Fatal(err)
	}
	closeWithin(t, a)
	if !processGone(pid) {
		t.Errorf("the server (pid %d) is not reaped after Close", pid)
	}
	checkNoLeaks(t, before)
}

// TestFaultStdioExitWithHeldStdout: a stdio server exits mid-call while a
// child of its own holds its stdout open. The exit ends the session at
// once: the call in flight fails with a *ServerError naming the exit
// status (the watchdog deadline is not what ends it), the child is killed
// with the server's process group, the server is reaped rather than left a
// zombie, and Restart brings it back at the next discovery.
func TestFaultStdioExitWithHeldStdout(t *testing.T) {
	cmd, args, env := faultserver.Command(t, faultserver.KindSDK)
	a := newAdapter(t, Config{Servers: map[string]Server{"f": {Command: cmd, Args: args, Env: env, Retry: &RetryPolicy{MaxAttempts: 2}}}})
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	server := serverPID(t, ts, "f__pid")
	res, err := lookup(t, ts, "f__grandchild").Invoke(faultCtx(t), map[string]any{"stdout": true})
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(res.Text())
	if err != nil {
		t.Fatalf("grandchild answered %q", res.Text())
	}
	_, err = lookup(t, ts, "f__die").Invoke(faultCtx(t), nil)
	checkServerErr(t, err, "f")
	if errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("call in flight when the server exited: error = %v, want the exit status", err)
	}
	waitEnded(t, child, "the stdio server's child")
	if !processGone(server) {
		t.Errorf("the exited server (pid %d) is not reaped", server)
	}
	checkUsable(t, a, ts, "f", "f__echo", map[string]any{"text": "x"}, "x", true)
}

// TestFaultStdioStartupFailure: a stdio server that exits before its
// handshake ends fails the dial with a *ServerError naming its exit status
// and quoting the last lines of its stderr, which still go to the Logger:
// a shell script exiting with status 3, and node asked to run a script
// that does not exist.
func TestFaultStdioStartupFailure(t *testing.T) {
	tests := []struct {
		name    string
		command string
		args    []string
		status  string   // in the error
		stderr  []string // in the error and the log
	}{
		{"exit3", "/bin/sh", []string{"-c", "echo first line >&2; echo 'cannot find package mcp-srever' >&2; exit 3"},
			"exit status 3", []string{"first line", "cannot find package mcp-srever"}},
		{"node", "node", []string{"/nonexistent.js"}, "exit status 1", []string{"Cannot find module '/nonexistent.js'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			command := tt.command
			if command == "node" {
				command = extserver.Node(t)
			}
			var logs syncBuffer
			a := newAdapter(t, Config{Logger: logsTo(&logs), Servers: map[string]Server{"s": {Command: command, Args: tt.args}}})
			_, err := a.ListTools(faultCtx(t))
			checkServerErr(t, err, "s")
			if !strings.Contains(err.Error(), tt.status) {
				t.Errorf("dial error = %v\nwant it to say %q", err, tt.status)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("dial error = %v\nwant it to say %q", err, want)
				}
				if !strings.Contains(logs.String(), want) {
					t.Errorf("log = %s\nwant it to say %q", logs.String(), want)
				}
			}
		})
	}
}

// TestFaultDialTimeoutConfigured: Config.DialTimeout bounds a handshake
// that never ends, over a pipe (fake clock: the dial fails exactly then)
// and over stdio, with an error saying so and wrapping
// context.DeadlineExceeded while the caller's context is still live.
func TestFaultDialTimeoutConfigured(t *testing.T) {
	check := func(t *testing.T, ctx context.Context, a *Adapter, limit time.Duration) {
		t.Helper()
		_, err := a.ListTools(ctx)
		checkServerErr(t, err, "hang")
		want := "no handshake within " + limit.String() + " (Config.DialTimeout)"
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), want) || ctx.Err() != nil {
			t.Fatalf("ListTools() error = %v, want the dial timeout %q", err, want)
		}
	}
	t.Run("pipe", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := faultserver.NewPeer(faultserver.PeerOptions{HangHandshake: true})
			a, err := New(Config{DialTimeout: 5 * time.Second, Servers: map[string]Server{"hang": {Transport: p.Transport()}}})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			check(t, context.Background(), a, 5*time.Second)
			if got := time.Since(start); got != 5*time.Second {
				t.Errorf("ListTools() failed after %v, want 5s", got)
			}
			a.Close()
			p.Wait()
		})
	})
	t.Run("stdio", func(t *testing.T) {
		cmd, args, env := faultserver.Command(t, faultserver.KindRaw+":hanghandshake")
		a := newAdapter(t, Config{DialTimeout: 200 * time.Millisecond, Servers: map[string]Server{"hang": {Command: cmd, Args: args, Env: env}}})
		check(t, faultCtx(t), a, 200*time.Millisecond)
	})
}

// TestDialTimeoutBeforeShutdown: a stdio server that never answers and
// ignores both its stdin's end and SIGTERM fails the dial when
// Config.DialTimeout says, not once the shutdown's grace (stdin closed,
// SIGTERM, each waited for) is over: the error returns while the server
// still runs, and the server is reaped before Close returns.
func TestDialTimeoutBeforeShutdown(t *testing.T) {
	lines := make(chan string, 16)
	a, err := New(Config{
		DialTimeout: 100 * time.Millisecond,
		Logger:      slog.New(stderrLines(lines)),
		Servers:     map[string]Server{"mute": {Command: "/bin/sh", Args: []string{"-c", `trap '' TERM; echo "pid $$" >&2; exec sleep 3600`}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	setTerminateDelay(a, time.Hour) // the shutdown could not end the server while the test runs
	done := make(chan error, 1)
	go func() {
		_, err := a.ListTools(t.Context())
		done <- err
	}()
	var pid int
	select {
	case line := <-lines:
		if pid, err = strconv.Atoi(strings.TrimPrefix(line, "pid ")); err != nil {
			t.Fatalf("the server's stderr said %q", line)
		}
	case <-faultCtx(t).Done():
		t.Fatal("the server did not tell its pid")
	}
	t.Cleanup(func() { killProcess(pid) }) // should the test fail before it ends the server
	select {
	case err = <-done:
	case <-faultCtx(t).Done():
		t.Fatal("ListTools did not return before the server's shutdown ended")
	}
	checkServerErr(t, err, "mute")
	if !strings.Contains(err.Error(), "Config.DialTimeout") {
		t.Errorf("ListTools() error = %v, want it to name Config.DialTimeout", err)
	}
	if processEnded(pid) {
		t.Fatalf("the server (pid %d) was ended before the dial error returned", pid)
	}
	// The server goes away (as at the end of its shutdown); Close waits
	// until it is reaped.
	if err := killProcess(pid); err != nil {
		t.Fatal(err)
	}
	closeWithin(t, a)
	if !processGone(pid) {
		t.Errorf("the server (pid %d) is not reaped when Close returns", pid)
	}
}

// stderrLines is a slog.Handler that sends the stderr lines of stdio
// servers to lines.
type stderrLines chan<- string

func (h stderrLines) Enabled(context.Context, slog.Level) bool { return true }
func (h stderrLines) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h stderrLines) WithGroup(string) slog.Handler            { return h }
func (h stderrLines) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "line" {
			h <- a.Value.String()
		}
		return true
	})
	return nil
}

// TestNegativeDialTimeout: New refuses a negative DialTimeout.
func TestNegativeDialTimeout(t *testing.T) {
	_, err := New(Config{DialTimeout: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "field DialTimeout: negative") {
		t.Fatalf("New() error = %v, want it to refuse the negative DialTimeout", err)
	}
}

// TestStdioEnvironment: a stdio server gets the allowlist of the adapter's
// environment (PATH, HOME, ...) plus Server.Env, and no other variable: a
// secret of the adapter's is absent, and so is an allowlisted variable
// holding a shell function. With the whole environment put in Env it gets
// everything, Env's own entries winning.
func TestStdioEnvironment(t *testing.T) {
	t.Setenv("MCPADAPTER_TEST_SECRET", "s3cret")
	t.Setenv("HOME", "/home/adapter")
	t.Setenv("TERM", "() { :; }")
	t.Setenv("USER", "adapter")
	serverEnv := func(t *testing.T, inherit bool) map[string]string {
		cmd, args, env := faultserver.Command(t, faultserver.KindSDK)
		if inherit { // the whole environment, as Server.Env's doc says
			for _, kv := range os.Environ() {
				k, v, _ := strings.Cut(kv, "=")
				if _, ok := env[k]; !ok {
					env[k] = v
				}
			}
		}
		env["EXTRA"] = "from Env"
		env["USER"] = "server"
		a := newAdapter(t, Config{Servers: map[string]Server{"f": {Command: cmd, Args: args, Env: env}}})
		ts, err := a.ListTools(faultCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		res, err := lookup(t, ts, "f__env").Invoke(faultCtx(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for line := range strings.Lines(res.Text()) {
			k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
			got[k] = v
		}
		return got
	}
	t.Run("allowlist", func(t *testing.T) {
		got := serverEnv(t, false)
		for k, want := range map[string]string{"PATH": os.Getenv("PATH"), "HOME": "/home/adapter", "EXTRA": "from Env", "USER": "server"} {
			if got[k] != want {
				t.Errorf("server's %s = %q, want %q", k, got[k], want)
			}
		}
		for _, k := range []string{"MCPADAPTER_TEST_SECRET", "TERM"} {
			if v, ok := got[k]; ok {
				t.Errorf("server got %s=%q", k, v)
			}
		}
	})
	t.Run("inherit", func(t *testing.T) {
		got := serverEnv(t, true)
		for k, want := range map[string]string{"MCPADAPTER_TEST_SECRET": "s3cret", "TERM": "() { :; }", "EXTRA": "from Env", "USER": "server"} {
			if got[k] != want {
				t.Errorf("server's %s = %q, want %q", k, got[k], want)
			}
		}
	})
}

// TestStdioDiedIdleSaysHow: a stdio server that died between calls (killed
// here) fails the next call with how it exited and the last lines of its
// stderr, as a call in flight does; it said only "connection closed".
// (Found killing a real server-filesystem under the adapter.)
func TestStdioDiedIdleSaysHow(t *testing.T) {
	a := newAdapter(t, Config{Servers: map[string]Server{"f": peerTargets[1].server(t, nil, faultserver.KindRaw+":basic")}})
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	pid := serverPID(t, ts, "f__"+faultserver.ToolPID)
	if err := killProcess(pid); err != nil {
		t.Fatal(err)
	}
	// The adapter notices the end by itself (its read of stdout fails).
	st := a.Status().Servers["f"]
	for deadline := time.Now().Add(10 * time.Second); st.State != ServerFailed && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		st = a.Status().Servers["f"]
	}
	if st.State != ServerFailed || st.Err == nil || !strings.Contains(st.Err.Error(), "signal: killed") {
		t.Errorf("Status = %s, %v; want failed, saying how the server exited", st.State, st.Err)
	}
	_, err = lookup(t, ts, "f__ok").Invoke(faultCtx(t), nil)
	checkServerErr(t, err, "f")
	if !strings.Contains(err.Error(), "signal: killed") {
		t.Errorf("call after the server died: error = %v, want it to say how the server exited", err)
	}
}
