//go:build !unix

package mcpadapter

import "os/exec"

// startInGroup has no process groups to manage on this platform: the
// session's Close ends the server process itself.
func startInGroup(cmd *exec.Cmd) func() { return func() {} }
