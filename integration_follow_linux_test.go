package mcpadapter_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testing/extserver"
)

// TestIntegrationHeldToolAfterKill: a tool of server-everything over
// stdio, with a restart policy, held across a SIGKILL of the server's
// process, and called once the adapter logged the process's end (its
// connection may or may not be marked ended yet: the call either follows
// at once or finds the session closing, before anything was sent). By
// default its
// next call fails, saying to list again or to set
// Config.ToolsFollowServer; under Service the next call on the same
// value runs on a new process, dialed at the first attempt of the
// restart policy.
func TestIntegrationHeldToolAfterKill(t *testing.T) {
	node, script := extserver.Everything(t)
	for _, service := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "Service"}[service], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
			defer cancel()
			ended := make(chan struct{}, 1)
			cfg := mcpadapter.Config{
				Servers: map[string]mcpadapter.Server{"everything": {Command: node, Args: []string{script, "stdio"},
					Retry: &mcpadapter.RetryPolicy{MaxAttempts: 3, Delay: time.Second}}}, // LangChain's restart
				Logger: slog.New(&recordSignal{msg: "mcpadapter: server process ended", ch: ended}),
			}
			if service {
				cfg = mcpadapter.Service(cfg)
				cfg.State.Key = bytes.Repeat([]byte{7}, 32)
			}
			before := serverChildren(t, script)
			a := integAdapter(t, cfg.Servers["everything"], func(c *mcpadapter.Config) { *c = cfg })
			sum := integTool(t, integTools(t, ctx, a), "everything__get-sum")
			if res := integInvoke(t, ctx, sum, map[string]any{"a": 2, "b": 3}); res.Text() != "The sum of 2 and 3 is 5." {
				t.Fatalf("get-sum = %q", res.Text())
			}
			var pid int
			for _, p := range serverChildren(t, script) {
				if !slices.Contains(before, p) {
					pid = p
				}
			}
			if pid == 0 {
				t.Fatal("no server-everything process of this test's adapter found")
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			select {
			case <-ended: // the adapter saw the process end
			case <-ctx.Done():
				t.Fatal("the adapter did not see the server's process end")
			}

			start := time.Now()
			res, err := sum.Invoke(ctx, map[string]any{"a": 4, "b": 5})
			if !service {
				if err == nil || !strings.Contains(err.Error(), "Adapter.ListTools") || !strings.Contains(err.Error(), "Config.ToolsFollowServer") {
					t.Fatalf("held tool after SIGKILL = %v, want an error saying to list again or to set Config.ToolsFollowServer", err)
				}
				sum = integTool(t, integTools(t, ctx, a), "everything__get-sum")
				if res := integInvoke(t, ctx, sum, map[string]any{"a": 4, "b": 5}); res.Text() != "The sum of 4 and 5 is 9." {
					t.Errorf("get-sum listed again = %q", res.Text())
				}
				return
			}
			if err != nil || res.Text() != "The sum of 4 and 5 is 9." {
				t.Fatalf("held tool after SIGKILL under Service = %v, %v", res, err)
			}
			t.Logf("the held tool's call after SIGKILL took %v (a new node process included)", time.Since(start))
			if n := a.Status().Servers["everything"].DialAttempts; n != 2 {
				t.Errorf("%d dial attempts, want 2: the discovery's and the follow's first", n)
			}
		})
	}
}

// serverChildren returns the processes this test binary started that run
// script.
func serverChildren(t *testing.T, script string) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, stat := range stats {
		b, err := os.ReadFile(stat)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid ...
		i := bytes.LastIndexByte(b, ')')
		fields := strings.Fields(string(b[i+1:]))
		if i < 0 || len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		dir := filepath.Dir(stat)
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(script)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		pids = append(pids, pid)
	}
	return pids
}

// A recordSignal is a slog handler that signals ch at each record whose
// message is msg.
type recordSignal struct {
	msg string
	ch  chan struct{}
}

func (h *recordSignal) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordSignal) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return nil
}
func (h *recordSignal) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordSignal) WithGroup(string) slog.Handler      { return h }
