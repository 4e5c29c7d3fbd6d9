//go:build !unix

package extserver

import "os/exec"

// inGroup has no process groups on this platform: it kills the process
// alone.
func inGroup(cmd *exec.Cmd) func() {
	return func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	}
}
