//go:build linux

package stdio

import (
	"os/exec"
	"testing"
)

// TestAwaitExit: awaitExit sees a child's exit and leaves it to reap: the
// exit status is still there for Wait.
func TestAwaitExit(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !awaitExit(cmd.Process.Pid) {
		t.Fatal("awaitExit() = false, want true")
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("Wait() after awaitExit = %v, want exit status 3", err)
	}
}
