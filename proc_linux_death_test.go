//go:build linux

package mcpadapter

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
)

// hostEnv makes the test binary run TestStdioServerDiesWithHost's host.
const hostEnv = "MCPADAPTER_TEST_DEATH_HOST"

// TestStdioServerDiesWithHost: a stdio server dies with the process that
// started it, even when that process is killed without a chance to Close
// and the server would not notice its stdin closing (it stopped reading).
// The host is this test binary re-executed: it starts an adapter with such
// a server, reports the server's pid and waits to be killed.
func TestStdioServerDiesWithHost(t *testing.T) {
	if os.Getenv(hostEnv) == "1" {
		runDeathHost(t)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	host := exec.Command(exe, "-test.run=^TestStdioServerDiesWithHost$", "-test.count=1")
	host.Env = append(os.Environ(), hostEnv+"=1")
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	host.Stderr = os.Stderr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Process.Kill(); host.Wait() })
	pid := 0
	for sc := bufio.NewScanner(out); pid == 0 && sc.Scan(); {
		if v, ok := strings.CutPrefix(sc.Text(), "server pid "); ok {
			if pid, err = strconv.Atoi(v); err != nil {
				t.Fatalf("host said %q", sc.Text())
			}
		}
	}
	if pid == 0 {
		t.Fatal("the host reported no server pid")
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // if it survived
	if processEnded(pid) {
		t.Fatal("the server ended before its host")
	}
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	host.Wait()
	waitEnded(t, pid, "the stdio server of a killed host")
}

// runDeathHost is the host of TestStdioServerDiesWithHost.
func runDeathHost(t *testing.T) {
	cmd, args, env := faultserver.Command(t, faultserver.KindRaw+":basic")
	a, err := New(Config{Servers: map[string]Server{"f": {Command: cmd, Args: args, Env: env}}})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	pid := serverPID(t, ts, "f__"+faultserver.ToolPID)
	if _, err := lookup(t, ts, "f__"+faultserver.ToolStopReading).Invoke(faultCtx(t), nil); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("server pid %d\n", pid)
	select {} // until killed
}
