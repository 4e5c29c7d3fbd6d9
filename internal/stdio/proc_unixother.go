//go:build unix && !linux

package stdio

import "syscall"

// awaitExit cannot wait for an exit without reaping on this platform: the
// group is ended right after the leader is reaped (processGroup.wait).
func awaitExit(pid int) bool { return false }

// setDeathSignal does nothing: this platform has no death signal, and a
// stdio server outlives an adapter process that dies without Close.
func setDeathSignal(*syscall.SysProcAttr) {}
