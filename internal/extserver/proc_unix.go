//go:build unix

package extserver

import (
	"os/exec"
	"syscall"
)

// inGroup makes cmd start in a process group of its own and returns a func
// that kills the whole group (the process and every child it started).
func inGroup(cmd *exec.Cmd) func() {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}
