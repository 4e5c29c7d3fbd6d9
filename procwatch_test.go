//go:build unix

package mcpadapter

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
)

// withAndWithoutWatcher runs test with the stdio servers of the Adapters
// that its newAdapter makes started through the process-wide watcher where
// the system has one (internal/stdio), and with a goroutine of their own
// each (stdio.Options.Unwatched), as elsewhere.
func withAndWithoutWatcher(t *testing.T, test func(t *testing.T, newAdapter func(testing.TB, Config) *Adapter)) {
	t.Run("watcher", func(t *testing.T) { test(t, newAdapter) })
	t.Run("unwatched", func(t *testing.T) {
		test(t, func(t testing.TB, cfg Config) *Adapter {
			a := newAdapter(t, cfg)
			a.pool.dialer.stdio.unwatched = true
			return a
		})
	})
}

// TestStdioStderrFlood: a stdio server that writes far more to its stderr
// than a pipe holds before it answers is not held up: its stderr is read
// as it comes, every line of it reaches the Logger, and when the server
// exits, the error of the call in flight names its exit status and quotes
// its last lines.
func TestStdioStderrFlood(t *testing.T) {
	withAndWithoutWatcher(t, func(t *testing.T, newAdapter func(testing.TB, Config) *Adapter) {
		const lines = 20000 // 260 KB: four times what a Linux pipe holds
		cmd, args, env := faultserver.Command(t, faultserver.KindSDK)
		script := fmt.Sprintf(`yes "stderr flood" | head -n %d >&2; echo "last words" >&2; exec "$0" "$@"`, lines)
		var logs syncBuffer
		a := newAdapter(t, Config{Logger: logsTo(&logs), Servers: map[string]Server{
			"f": {Command: "/bin/sh", Args: append([]string{"-c", script, cmd}, args...), Env: env},
		}})
		ts, err := a.ListTools(faultCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		_, err = lookup(t, ts, "f__"+faultserver.ToolDie).Invoke(faultCtx(t), nil)
		checkServerErr(t, err, "f")
		if !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "last words") {
			t.Errorf("call in flight when the server exited: error = %v\nwant its exit status and last stderr line", err)
		}
		if got := strings.Count(logs.String(), `line="stderr flood"`); got != lines {
			t.Errorf("the Logger got %d lines of the server's stderr, want %d", got, lines)
		}
	})
}

// TestStdioStderrHeldPastExit: a grandchild that left the server's process
// group (setsid) and holds its stdout and stderr does not hold the session
// past the server's exit for long: its stderr is given up on the terminate
// delay after the exit (os/exec's WaitDelay), its stdout as long after
// that, and the call in flight fails with the exit status and the server's
// last stderr line.
func TestStdioStderrHeldPastExit(t *testing.T) {
	withAndWithoutWatcher(t, func(t *testing.T, newAdapter func(testing.TB, Config) *Adapter) {
		cmd, args, env := faultserver.Command(t, faultserver.KindSDK)
		pidFile := filepath.Join(t.TempDir(), "pid")
		env["PIDFILE"] = pidFile
		script := `setsid sleep 60 & echo $! > "$PIDFILE"; echo "before the exit" >&2; exec "$0" "$@"`
		a := newAdapter(t, Config{Servers: map[string]Server{
			"f": {Command: "/bin/sh", Args: append([]string{"-c", script, cmd}, args...), Env: env},
		}})
		setTerminateDelay(a, 100*time.Millisecond)
		ts, err := a.ListTools(faultCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("pid file holds %q", b)
		}
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		_, err = lookup(t, ts, "f__"+faultserver.ToolDie).Invoke(faultCtx(t), nil)
		checkServerErr(t, err, "f")
		if !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "before the exit") {
			t.Errorf("call in flight when the server exited: error = %v\nwant its exit status and last stderr line", err)
		}
	})
}
