//go:build !unix

package mcpadapter

import "os"

// processGone reports whether no process with pid exists any more.
func processGone(pid int) bool {
	_, err := os.FindProcess(pid)
	return err != nil
}

// processEnded reports whether the process pid is gone.
func processEnded(pid int) bool { return processGone(pid) }

// killProcess kills the process pid.
func killProcess(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
