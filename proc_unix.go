//go:build unix

package mcpadapter

import (
	"os/exec"
	"syscall"
)

// startInGroup makes cmd start in a process group of its own and returns a
// func that kills whatever is left of that group, so that a stdio server's
// children never outlive its session.
func startInGroup(cmd *exec.Cmd) func() {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}
