//go:build !linux

package mcpadapter

// startWatched reports false: there is no process-wide watcher of stdio
// servers on this platform, and each gets a goroutine of its own
// (stdioProcess.run).
func startWatched(*stdioProcess) (bool, error) { return false, nil }
