//go:build !linux

package mcpadapter

// sharedWatcher reports false: each stdio server has goroutines of its
// own on this platform (stdioProcess.run).
func sharedWatcher() bool { return false }
