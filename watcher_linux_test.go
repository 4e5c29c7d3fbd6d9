package mcpadapter

// sharedWatcher reports whether stdio servers are started and watched by
// the process-wide watcher (procwatch_linux.go), which it starts.
func sharedWatcher() bool { return theWatcher() != nil }
