//go:build linux

package stdio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// awaitExit waits until the process pid, a child, has exited, without
// reaping it (waitid with WNOWAIT, as package os does to wait for a
// process it signals). It reports whether it saw the exit.
func awaitExit(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

// setDeathSignal makes the process started with attr get SIGKILL when the
// thread that started it ends: the adapter's process dying, since that
// thread is locked to the watcher's goroutine, which lives as long as the
// process (procWatcher.run), or to the goroutine that waits for the process
// (process.run). SIGKILL, not SIGTERM: a server must not outlive a
// host that died without Close, whatever signals it handles.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
