package mcpadapter

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
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
