package deliver

import (
	"context"
	"time"
)

// NoProgress is the cause of a request that timed out while idle.
type NoProgress struct{ Idle time.Duration }

// Error names the idle time.
func (e *NoProgress) Error() string {
	return "no progress for " + e.Idle.String() + ": " + context.DeadlineExceeded.Error()
}

// Unwrap returns [context.DeadlineExceeded]: an idle request timed out.
func (e *NoProgress) Unwrap() error { return context.DeadlineExceeded }

// IdleContext returns ctx cancelled, with a [*NoProgress] cause, when idle
// passes without a call of touch, and at max after the start when max is
// positive. release frees it.
func IdleContext(ctx context.Context, idle, max time.Duration) (_ context.Context, touch func(), release func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stopMax := func() {}
	if max > 0 {
		ctx, stopMax = context.WithTimeout(ctx, max)
	}
	timer := time.AfterFunc(idle, func() { cancel(&NoProgress{Idle: idle}) })
	return ctx, func() { timer.Reset(idle) }, func() {
		timer.Stop()
		stopMax()
		cancel(nil)
	}
}
