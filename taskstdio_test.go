package mcpadapter

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
)

// stdioTaskHint is what a stdio server's error about a task started on
// another process says besides.
const stdioTaskHint = "a stdio server's tasks end with its process, which the Adapter that started the task runs"

// TestStdioTaskElsewhere: a stdio server's pending task, collected or
// cancelled on another Adapter (which runs a process of its own), fails
// with the server's "Task not found" and why: its tasks end with the
// process of the Adapter that started it. On that Adapter the task is
// followed and cancelled as usual, with no such word. Both eras, a
// TaskPeer process whose tasks live in memory.
func TestStdioTaskElsewhere(t *testing.T) {
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			kind := faultserver.KindTask
			if era.modern {
				kind += ":modern"
			}
			cmd, args, env := faultserver.Command(t, kind)
			cfg := Config{TaskWait: 200 * time.Millisecond, Servers: map[string]Server{"p": {Command: cmd, Args: args, Env: env}}}
			a := newAdapter(t, cfg)
			ctx := faultCtx(t)
			_, err := lookup(t, taskTools(t, a), "p__job").Invoke(WithPendingTask(ctx), map[string]any{"mode": "never"})
			var pt *PendingTask
			if !errors.As(err, &pt) {
				t.Fatalf("Invoke(WithPendingTask) = %v, want a *PendingTask", err)
			}
			b, err := json.Marshal(pt)
			if err != nil {
				t.Fatal(err)
			}
			decoded := func() *PendingTask {
				var p PendingTask
				if err := json.Unmarshal(b, &p); err != nil {
					t.Fatal(err)
				}
				return &p
			}

			other := newAdapter(t, cfg)
			_, err = other.Resume(ctx, decoded(), Collected())
			checkElsewhere(t, "collected on another Adapter", err)
			checkElsewhere(t, "cancelled on another Adapter", other.CancelTask(ctx, decoded()))

			_, err = a.Resume(ctx, decoded(), Collected())
			if !errors.As(err, &pt) || strings.Contains(err.Error(), stdioTaskHint) {
				t.Errorf("collected on its Adapter = %v, want the task still pending", err)
			}
			if err := a.CancelTask(ctx, pt); err != nil {
				t.Errorf("cancelled on its Adapter = %v", err)
			}
		})
	}
}

// checkElsewhere wants err, what became of a stdio server's task handled
// on another Adapter, to be the server's error, saying why.
func checkElsewhere(t *testing.T, what string, err error) {
	t.Helper()
	checkServerErr(t, err, "p")
	if !strings.Contains(err.Error(), "Task not found") || !strings.Contains(err.Error(), stdioTaskHint) {
		t.Errorf("a stdio server's task %s: %v, want the server's \"Task not found\" and %q", what, err, stdioTaskHint)
	}
}
