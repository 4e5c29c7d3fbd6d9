//go:build !unix

package stdio

import "os/exec"

// A processGroup is a stdio server's process: this platform has no process
// groups to manage, and shutdown ends the server itself.
type processGroup struct{ cmd *exec.Cmd }

// startInGroup returns the processGroup of cmd.
func startInGroup(cmd *exec.Cmd) *processGroup { return &processGroup{cmd: cmd} }

// wait waits for the started process to exit and reaps it.
func (g *processGroup) wait() error { return g.cmd.Wait() }
