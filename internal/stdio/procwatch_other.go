//go:build !linux

package stdio

// startWatched reports false: there is no process-wide watcher of stdio
// servers on this platform, and each gets a goroutine of its own
// (process.run).
func startWatched(*process) (bool, error) { return false, nil }

// Watched reports false: there is no process-wide watcher on this
// platform.
func Watched() bool { return false }
