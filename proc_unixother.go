//go:build unix && !linux

package mcpadapter

// awaitExit cannot wait for an exit without reaping on this platform: the
// group is ended right after the leader is reaped (processGroup.wait).
func awaitExit(pid int) bool { return false }
