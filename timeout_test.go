package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
)

// TestTimeoutNamesItsSetting: a call that runs past a bound fails with an
// error that names the setting that bound it (the README promises every
// message does), and errors.Is still finds context.DeadlineExceeded. Both
// eras, on a go-sdk server whose tool blocks until its request is
// cancelled.
func TestTimeoutNamesItsSetting(t *testing.T) {
	const bound = 100 * time.Millisecond
	tests := []struct {
		name     string
		cfg      Config
		server   time.Duration // Server.DefaultToolTimeout
		deadline time.Duration // the caller's ctx deadline; 0: none
		want     string
	}{
		{name: "adapter", cfg: Config{DefaultToolTimeout: bound},
			want: "the tool did not answer within 100ms (Config.DefaultToolTimeout)"},
		{name: "server", server: bound,
			want: `the tool did not answer within 100ms (Server.DefaultToolTimeout of "srv")`},
		{name: "idle", cfg: Config{DefaultToolTimeout: bound, MaxToolTimeout: time.Hour},
			want: "the tool reported no progress within 100ms (Config.DefaultToolTimeout, reset by progress under Config.MaxToolTimeout)"},
		{name: "max", cfg: Config{DefaultToolTimeout: time.Hour, MaxToolTimeout: bound},
			want: "the tool did not answer within 100ms (Config.MaxToolTimeout)"},
		{name: "caller", cfg: Config{DefaultToolTimeout: time.Hour}, deadline: bound,
			want: "the tool did not answer before the caller's context deadline"},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				cfg := tt.cfg
				srv := sdkServer(blockingServer(), m.mode)
				srv.DefaultToolTimeout = tt.server
				cfg.Servers = map[string]Server{"srv": srv}
				a := newAdapter(t, cfg)
				ts, err := a.ListTools(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				ctx := t.Context()
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				_, err = lookup(t, ts, "srv__block").Invoke(ctx, nil)
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Invoke() error = %v, want context.DeadlineExceeded", err)
				}
				var se *ServerError
				if !errors.As(err, &se) {
					t.Errorf("Invoke() error = %T, want a *ServerError", err)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Invoke() error = %q, want it to say %q", err, tt.want)
				}
			})
		}
	}
}

// TestTaskTimeoutsNameTheirSetting: the bounds of a call that runs as a
// task name their setting too. The tool timeout bounds each request of
// the task: a tasks/get the server never answers fails with an error
// that names it and is a context.DeadlineExceeded. A call whose wait
// ends before the task does returns a *PendingTask (a pause, not a
// failure: it is no context.DeadlineExceeded, so that native loops and
// agents pause on it instead of telling the model the tool timed out)
// that names the deadline: Config.TaskWait or the caller's own; one
// asked for at once (WithPendingTask) names none. Both eras.
func TestTaskTimeoutsNameTheirSetting(t *testing.T) {
	const bound = 200 * time.Millisecond
	tests := []struct {
		name, mode string // the case's, the job's
		timeout    bool   // a timeout error, not a *PendingTask
		pending    bool   // asked with WithPendingTask
		cfg        Config
		server     time.Duration // Server.DefaultToolTimeout
		deadline   time.Duration // the caller's ctx deadline; 0: none
		want       string
	}{
		{name: "request/adapter", cfg: Config{DefaultToolTimeout: bound}, mode: "hang", timeout: true,
			want: "the tool did not answer within 200ms (Config.DefaultToolTimeout)"},
		{name: "request/server", server: bound, mode: "hang", timeout: true,
			want: `the tool did not answer within 200ms (Server.DefaultToolTimeout of "p")`},
		{name: "wait", cfg: Config{TaskWait: bound}, mode: "never",
			want: "still working (Config.TaskWait of 200ms passed): collect it later"},
		{name: "caller", deadline: bound, mode: "never",
			want: "still working (the caller's context deadline passed): collect it later"},
		{name: "asked", cfg: Config{TaskWait: bound}, mode: "never", pending: true,
			want: "still working: collect it later"},
	}
	for _, era := range taskEras {
		for _, tt := range tests {
			t.Run(era.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				peer := &faultserver.TaskPeer{Modern: era.modern, Support: "required"}
				a := taskAdapter(t, peer, func(cfg *Config, srv *Server) {
					*cfg = tt.cfg
					srv.DefaultToolTimeout = tt.server
				})
				ctx := faultCtx(t)
				if tt.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				}
				if tt.pending {
					ctx = WithPendingTask(ctx)
				}
				_, err := lookup(t, taskTools(t, a), "p__job").Invoke(ctx, map[string]any{"mode": tt.mode})
				var pt *PendingTask
				if got := errors.As(err, &pt); got == tt.timeout {
					t.Fatalf("Invoke() error = %v; want a *PendingTask: %v", err, !tt.timeout)
				}
				if got := errors.Is(err, context.DeadlineExceeded); got != tt.timeout {
					t.Errorf("errors.Is(%v, context.DeadlineExceeded) = %v, want %v", err, got, tt.timeout)
				}
				if tt.timeout {
					checkServerErr(t, err, "p")
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Invoke() error = %q, want it to say %q", err, tt.want)
				}
			})
		}
	}
}

// TestTaskWaitCancelledNamesNoDeadline: a task call whose caller's context
// is cancelled, not past its deadline, never says that the caller's
// deadline passed: cancelled with a deadline as its cause (which leaves
// the task pending, as a deadline does), the *PendingTask says the context
// was cancelled, and why; plainly cancelled, the call fails (the task is
// cancelled) and names no deadline. Both eras.
func TestTaskWaitCancelledNamesNoDeadline(t *testing.T) {
	const after = 300 * time.Millisecond
	cause := fmt.Errorf("the request's budget ran out: %w", context.DeadlineExceeded)
	tests := []struct {
		name  string
		cause error // nil: a plain cancel
		want  string
	}{
		{name: "cause", cause: cause,
			want: "still working (the caller's context was cancelled: the request's budget ran out: context deadline exceeded): collect it later"},
		{name: "plain"},
	}
	for _, era := range taskEras {
		for _, tt := range tests {
			t.Run(era.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				peer := &faultserver.TaskPeer{Modern: era.modern, Support: "required"}
				a := taskAdapter(t, peer, func(*Config, *Server) {})
				ctx, cancel := context.WithCancelCause(faultCtx(t))
				defer cancel(nil)
				stop := time.AfterFunc(after, func() { cancel(tt.cause) })
				defer stop.Stop()
				_, err := lookup(t, taskTools(t, a), "p__job").Invoke(ctx, map[string]any{"mode": "never"})
				if err == nil {
					t.Fatal("Invoke() succeeded, want it cancelled")
				}
				if strings.Contains(err.Error(), "deadline passed") {
					t.Errorf("Invoke() error = %q, want no deadline named", err)
				}
				var pt *PendingTask
				if got := errors.As(err, &pt); got != (tt.cause != nil) {
					t.Fatalf("Invoke() error = %v; want a *PendingTask: %v", err, tt.cause != nil)
				}
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Invoke() error = %q, want it to say %q", err, tt.want)
				}
			})
		}
	}
}
