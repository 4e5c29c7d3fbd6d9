package stdio

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
// killed and reaped through its process group, which ends the rest of the
// group while the leader still holds its id.
func TestWatcherUnwatchableServer(t *testing.T) {
	if !Watched() {
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
	p := &process{cmd: cmd, group: startInGroup(cmd), stderr: &stderrLogger{logger: slog.New(slog.DiscardHandler)}, exited: make(chan struct{})}
	watched, err := startWatched(p)
	if !watched || !errors.Is(err, unix.EMFILE) {
		t.Fatalf("startWatched = %t, %v; want true, EMFILE", watched, err)
	}
	<-p.exited
	if p.cmd.ProcessState == nil {
		t.Fatal("the unwatchable server was not reaped")
	}
}
