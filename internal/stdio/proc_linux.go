//go:build linux

package stdio

import (
	"syscall"
	"unsafe"
)

// pPID is waitid's P_PID: wait for the process whose id is given.
const pPID = 1

// awaitExit waits until the process pid, a child, has exited, without
// reaping it (waitid with WNOWAIT, as package os does to wait for a
// process it signals). It reports whether it saw the exit.
func awaitExit(pid int) bool {
	var info [16]uint64 // a siginfo_t, which waitid fills in
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(pid), uintptr(unsafe.Pointer(&info)), syscall.WEXITED|syscall.WNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			return errno == 0
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
