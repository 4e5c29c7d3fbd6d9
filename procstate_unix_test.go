//go:build unix

package mcpadapter

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// processGone reports whether no process with pid exists any more.
func processGone(pid int) bool {
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

// processEnded reports whether the process pid is gone or a zombie (dead,
// waiting for a parent that may not reap it in a container).
func processEnded(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name, which is in parentheses.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] == 'Z' || stat[i+2] == 'X'
	}
	return false
}

// killProcess kills the process pid.
func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
