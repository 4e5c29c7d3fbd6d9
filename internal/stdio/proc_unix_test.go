//go:build unix

package stdio

import (
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestProcessGroupWait: wait reaps a server that has exited and ends the
// rest of its process group, here a grandchild that would sleep for five
// minutes. The grandchild shares the write end of a pipe, so the read end
// sees EOF exactly when the whole group is gone.
func TestProcessGroupWait(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", "sleep 300 & echo started")
	cmd.Stdout = w
	g := startInGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := g.wait(); err != nil {
		t.Fatalf("wait() = %v", err)
	}
	if err := r.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("the grandchild outlived wait: %v (read %q)", err, out)
	}
	if string(out) != "started\n" {
		t.Fatalf("output %q", out)
	}
}
