//go:build unix

package extserver

import (
	"os/exec"
	"syscall"
)

// inGroup makes cmd start in a process group of its own and returns a func
// that kills the whole group (the process and every child it started).
func inGroup(cmd *exec.Cmd) func() {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	return func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
}

// runAs makes cmd run as the user uid, group gid (the test runs as root).
func runAs(cmd *exec.Cmd, uid, gid uint32) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uid, Gid: gid}
	return nil
}
