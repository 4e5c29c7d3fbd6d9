package mcpadapter

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWatcherUnwatchableServer: a server that the watcher started but
// cannot watch (no pidfd: out of file descriptors) fails its start, and is
// killed and reaped through its process group, so that the group, whose id
// the system may now give to another process, takes no more signals (the
// dial's cleanup, conn.stop, ends the group).
func TestWatcherUnwatchableServer(t *testing.T) {
	if !sharedWatcher() {
		t.Fatal("no process-wide watcher on this Linux")
	}
	pidfdOpen = func(int, int) (int, error) { return -1, unix.EMFILE }
	defer func() { pidfdOpen = unix.PidfdOpen }()
	cmd := exec.Command("/bin/sleep", "60")
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	cmd.Stdin, cmd.Stdout = stdin, nil
	p := &stdioProcess{cmd: cmd, group: startInGroup(cmd), stderr: &stderrLogger{logger: slog.New(slog.DiscardHandler)}, exited: make(chan struct{})}
	watched, err := startWatched(p)
	if !watched || !errors.Is(err, unix.EMFILE) {
		t.Fatalf("startWatched = %t, %v; want true, EMFILE", watched, err)
	}
	<-p.exited
	if p.cmd.ProcessState == nil {
		t.Fatal("the unwatchable server was not reaped")
	}
	p.group.mu.Lock()
	reaped := p.group.reaped
	p.group.mu.Unlock()
	if !reaped {
		t.Error("the unwatchable server's group still takes signals after its leader was reaped")
	}
}
