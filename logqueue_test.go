package mcpadapter

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stuckHandler is a slog.Handler whose server log records wait for
// release, as a slow Logger does; it keeps the others' messages.
type stuckHandler struct {
	release <-chan struct{}
	first   chan<- struct{} // signalled by the first waiting record
	other   *syncBuffer
}

func (h *stuckHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *stuckHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *stuckHandler) WithGroup(string) slog.Handler            { return h }
func (h *stuckHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "mcpadapter: server log" {
		h.other.Write([]byte(r.Message + "\n"))
		return nil
	}
	select {
	case h.first <- struct{}{}:
	default:
	}
	<-h.release
	return nil
}

// TestServerLogFlood: a server flooding log messages at a Logger that
// does not keep up holds at most a bounded queue; the rest is dropped,
// counted in Status and reported. Both eras (legacy after
// logging/setLevel, modern through Server.LogLevel).
func TestServerLogFlood(t *testing.T) {
	const n = 5000
	for _, legacy := range []bool{false, true} {
		t.Run(eraName(legacy), func(t *testing.T) {
			s := testserver.New(testserver.Options{Legacy: legacy})
			addRawTool(s, "flood", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				for i := range n {
					if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "flood", Data: i}); err != nil {
						return nil, err
					}
				}
				return textResult1("flooded"), nil
			})
			release, first := make(chan struct{}), make(chan struct{}, 1)
			var other syncBuffer
			srv := memServer(s, ModeAuto)
			if !legacy {
				srv.LogLevel = "debug"
			}
			a := newAdapter(t, Config{
				Servers: map[string]Server{"srv": srv},
				Logger:  slog.New(&stuckHandler{release: release, first: first, other: &other}),
			})
			defer close(release) // before the adapter's Close, which waits for the Logger
			tool := lookupTool(t, a, "srv__flood")
			if legacy {
				if err := a.SetLoggingLevel(t.Context(), "srv", "debug"); err != nil {
					t.Fatal(err)
				}
			}
			done := asyncInvoke(t.Context(), tool, nil)
			receive(t, first, "the Logger to get a server log")
			must(t).result(receive(t, done, "the call to end").unpack())
			// At most the queue and the record the Logger holds are kept;
			// the SDK may not have handed over the last few messages yet.
			if dropped := a.Status().Servers["srv"].DroppedLogs; dropped < n/2 {
				t.Errorf("DroppedLogs = %d of %d, want most (the queue holds %d)", dropped, n, notifyQueueSize)
			}
			if !strings.Contains(other.String(), "dropped server log messages") {
				t.Errorf("log = %q, want the drops reported", other.String())
			}
		})
	}
}
