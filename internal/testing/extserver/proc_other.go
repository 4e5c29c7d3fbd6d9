//go:build !unix

package extserver

import (
	"errors"
	"os/exec"
)

// inGroup has no process groups on this platform: it kills the process
// alone.
func inGroup(cmd *exec.Cmd) func() {
	return func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	}
}

// runAs cannot change a process's user on this platform.
func runAs(*exec.Cmd, uint32, uint32) error {
	return errors.New("running a process as another user is not supported on this platform")
}
