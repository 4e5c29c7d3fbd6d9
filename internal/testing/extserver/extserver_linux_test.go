package extserver

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRunKillsTheGroup runs a child that starts a grandchild and hangs:
// when the context ends, Run returns although the grandchild holds the
// output open, and the grandchild is gone too.
func TestRunKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	out, err := Run(ctx, child("hang"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run() error = %v, want context.DeadlineExceeded; output %q", err, out)
	}
	_, pid, ok := strings.Cut(strings.TrimSpace(string(out)), "grandchild ")
	if !ok {
		t.Fatalf("output %q does not name the grandchild", out)
	}
	// SIGKILL is delivered asynchronously: give the kernel a bounded
	// moment to end the process.
	for deadline := time.Now().Add(5 * time.Second); alive(t, pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %s outlived Run", pid)
		}
	}
}

// alive reports whether process pid runs (a zombie, killed but not yet
// reaped, does not).
func alive(t *testing.T, pid string) bool {
	t.Helper()
	if _, err := strconv.Atoi(pid); err != nil {
		t.Fatalf("bad pid %q", pid)
	}
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
