package mcpadapter

import "github.com/mcpadapter/mcpadapter/internal/stdio"

// sharedWatcher reports whether stdio servers are started and watched by
// the process-wide watcher (internal/stdio), which it starts.
func sharedWatcher() bool { return stdio.Watched() }
