//go:build unix

package mcpadapter

import (
	"os/exec"
	"sync"
	"syscall"
)

// A processGroup is the process group of a stdio server, which the server
// leads, so that its children never outlive its session. The group's id is
// the leader's pid: once the leader is reaped the system may give that pid,
// and with it the id, to an unrelated process. On Linux the group is
// therefore signalled only before the reap (see wait); elsewhere the last
// signal follows the reap closely, and a pid reused in between would be hit.
type processGroup struct {
	cmd *exec.Cmd

	mu     sync.Mutex
	reaped bool // the leader is reaped (or about to be): no more signals
}

// startInGroup makes cmd start in a process group of its own, and, where
// the system can (setDeathSignal), die with the adapter's process. A
// grandchild that calls setsid (or setpgid) leaves the group: neither the
// group's end nor the death signal, which only the server gets, reaches it.
func startInGroup(cmd *exec.Cmd) *processGroup {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	return &processGroup{cmd: cmd}
}

// kill ends whatever is left of the group, unless the leader was reaped.
func (g *processGroup) kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.killLocked()
}

// killLocked is kill with g.mu held.
func (g *processGroup) killLocked() {
	if !g.reaped && g.cmd.Process != nil {
		_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// wait waits for the started leader to exit, ends the rest of its group and
// reaps the leader, like exec.Cmd.Wait. Where the leader's exit can be seen
// without reaping it (awaitExit), the group is ended first, while the
// exited leader still holds the group's id; elsewhere right after.
func (g *processGroup) wait() error {
	exited := awaitExit(g.cmd.Process.Pid)
	if exited {
		g.mu.Lock()
		g.killLocked()
		g.reaped = true
		g.mu.Unlock()
	}
	err := g.cmd.Wait()
	if !exited {
		g.mu.Lock()
		g.killLocked()
		g.reaped = true
		g.mu.Unlock()
	}
	return err
}
