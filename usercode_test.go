package mcpadapter

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// A callingBack is user code that calls its Adapter back: a slog handler
// that calls back on each record, and the exemplar filter of an
// OpenTelemetry MeterProvider, which the SDK runs on each measurement (of
// a provider with a reader) and which calls Status. The adapter must call neither with a lock of its
// own held.
type callingBack struct {
	a       atomic.Pointer[Adapter] // nil: not armed yet
	back    func(ctx context.Context, a *Adapter)
	evicted chan string // the reasons of the evictions logged
}

// backKey marks the context of a call back, whose own records are not
// called back on.
type backKey struct{}

func (h *callingBack) Enabled(context.Context, slog.Level) bool { return true }
func (h *callingBack) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *callingBack) WithGroup(string) slog.Handler            { return h }

func (h *callingBack) Handle(ctx context.Context, r slog.Record) error {
	if a := h.a.Load(); a != nil && ctx.Value(backKey{}) == nil {
		h.back(context.WithValue(context.Background(), backKey{}, true), a)
	}
	if r.Message == "mcpadapter: per-principal connection evicted" {
		r.Attrs(func(at slog.Attr) bool {
			if at.Key == "reason" {
				h.evicted <- at.Value.String()
			}
			return true
		})
	}
	return nil
}

// filter is the MeterProvider's exemplar filter: it asks for Status.
func (h *callingBack) filter(context.Context) bool {
	if a := h.a.Load(); a != nil {
		a.Status()
	}
	return false
}

// TestPoolCallsUserCodeUnlocked: a Logger whose handler calls Status, or
// ListTools, on every record, and a meter that calls Status on every
// measurement, while the pool dials per-principal connections, evicts one
// past MaxPrincipalConns and reaps one idle past PrincipalIdleTimeout: no
// deadlock, since the pool tells user code what it did only once pool.mu
// is released.
func TestPoolCallsUserCodeUnlocked(t *testing.T) {
	backs := []struct {
		name string
		back func(ctx context.Context, a *Adapter)
	}{
		{"Status", func(_ context.Context, a *Adapter) { a.Status() }},
		{"ListTools", func(ctx context.Context, a *Adapter) { a.ListTools(ctx) }}, // the shared server's, no principal
	}
	evictions := []struct {
		name string
		cfg  Config
		why  string
	}{
		{"cap", Config{MaxPrincipalConns: 1}, "over Config.MaxPrincipalConns"},
		{"idle", Config{PrincipalIdleTimeout: time.Millisecond}, "idle past Config.PrincipalIdleTimeout"},
	}
	for _, b := range backs {
		for _, ev := range evictions {
			t.Run(b.name+"/"+ev.name, func(t *testing.T) {
				h := &callingBack{back: b.back, evicted: make(chan string, 16)}
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()), sdkmetric.WithExemplarFilter(h.filter))
				defer mp.Shutdown(context.Background())
				cfg := ev.cfg
				cfg.Logger, cfg.MeterProvider = slog.New(h), mp
				cfg.Servers = map[string]Server{
					"users":  inProcessServer(newTokenServers()),
					"shared": memServer(testserver.New(testserver.Options{}).AddWeather(), ModeModern),
				}
				a, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				// The shared server is dialed before the handler calls
				// back: a ListTools called back inside that dial would wait
				// for the dial it is part of.
				if _, err := a.ListTools(ctx); err != nil {
					t.Fatal(err)
				}
				h.a.Store(a)

				done := make(chan error, 1)
				go func() {
					for _, user := range []string{"alice", "bob"} {
						// An idle timeout of a millisecond may evict a
						// connection before its listing, or close it
						// during it (the listing's *ServerError): what
						// this test looks for is a deadlock.
						var se *ServerError
						if _, err := a.ListTools(WithPrincipal(ctx, user)); err != nil && !errors.Is(err, errEvicted) &&
							!(ev.name == "idle" && errors.As(err, &se)) {
							done <- err
							return
						}
					}
					select {
					case why := <-h.evicted:
						if why != ev.why {
							t.Errorf("eviction logged for %q, want %q", why, ev.why)
						}
						done <- nil
					case <-ctx.Done():
						done <- ctx.Err()
					}
				}()
				select {
				case err := <-done:
					if err != nil {
						t.Fatal(err)
					}
				case <-ctx.Done():
					// Close would wait for the lock too: leave the
					// Adapter as it is.
					t.Fatal("deadlock: the dials and the eviction did not end (user code called under a lock of the pool's?)")
				}
				h.a.Store(nil)
				a.Close()
			})
		}
	}
}
