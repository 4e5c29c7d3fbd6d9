//go:build unix

package stdio

import (
	"os/exec"
	"syscall"
)

// A processGroup is the process group of a stdio server, which the server
// leads, so that its children never outlive its session. The group's id is
// the leader's pid: once the leader is reaped the system may give that pid,
// and with it the id, to an unrelated process. On Linux the group is
// therefore signalled before the reap (see wait); elsewhere right after,
// and a pid reused in between would be hit.
type processGroup struct{ cmd *exec.Cmd }

// startInGroup makes cmd start in a process group of its own, and, where
// the system can (setDeathSignal), die with the adapter's process. A
// grandchild that calls setsid (or setpgid) leaves the group: neither the
// group's end nor the death signal, which only the server gets, reaches it.
func startInGroup(cmd *exec.Cmd) *processGroup {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	return &processGroup{cmd: cmd}
}

// kill ends whatever is left of the group.
func (g *processGroup) kill() { _ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL) }

// wait waits for the started leader to exit, ends the rest of its group and
// reaps the leader, like exec.Cmd.Wait. Where the leader's exit can be seen
// without reaping it (awaitExit), the group is ended first, while the
// exited leader still holds the group's id; elsewhere right after. It is
// the only one to signal the group: no signal can follow the reap.
func (g *processGroup) wait() error {
	exited := awaitExit(g.cmd.Process.Pid)
	if exited {
		g.kill()
	}
	err := g.cmd.Wait()
	if !exited {
		g.kill()
	}
	return err
}
