//go:build linux

package mcpadapter

import "golang.org/x/sys/unix"

// awaitExit waits until the process pid, a child, has exited, without
// reaping it (waitid with WNOWAIT). It reports whether it saw the exit.
func awaitExit(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}
