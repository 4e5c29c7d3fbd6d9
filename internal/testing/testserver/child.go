package testserver

import (
	"flag"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"testing"
)

// envChild names the test that a test binary re-executed by [InChild] runs.
const envChild = "MCPADAPTER_TEST_CHILD"

// childMaxStack is a child's stack limit: small, so that a regression that
// recurses without end fails in milliseconds rather than after growing a
// 1 GB stack.
const childMaxStack = 64 << 20

// InChild runs the calling top-level test in a child process: the test
// binary re-executed with -test.run for that test alone. In the parent it
// waits for the child, fails the test with the child's output if the child
// failed or died (a fatal error such as a stack overflow, which no recover
// stops and which would end the whole run), and returns false; in the
// child it returns true, and the test goes on there. Under fuzzing
// (-test.fuzz), whose workers are child processes already, it returns
// true at once.
func InChild(t testing.TB) bool {
	t.Helper()
	if os.Getenv(envChild) == t.Name() {
		debug.SetMaxStack(childMaxStack)
		return true
	}
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		return true
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("testserver.InChild: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envChild+"="+t.Name())
	for k, v := range ProcessEnv() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s in a child process: %v\n%s", t.Name(), err, out)
	}
	return false
}
