package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// endedLog is a slog handler that reports the live interrupts that ended
// unresumed, by the reason logged.
type endedLog chan string

func (endedLog) Enabled(context.Context, slog.Level) bool { return true }
func (h endedLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "mcpadapter: live interrupt ended unresumed" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "reason" {
				h <- a.Value.String()
			}
			return true
		})
	}
	return nil
}
func (h endedLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h endedLog) WithGroup(string) slog.Handler      { return h }

// throughJSON returns a copy of v through JSON, as a store keeps it.
func throughJSON[T any](t *testing.T, v *T) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// liveInterrupt calls the tool named tool of a and returns the live
// interrupt it returns.
func liveInterrupt(t *testing.T, ctx context.Context, a *mcpadapter.Adapter, tool string) *mcpadapter.Interrupt {
	t.Helper()
	res, err := integTool(t, integTools(t, ctx, a), tool).Invoke(ctx, nil)
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &intr) || !intr.Live() || len(intr.Requests) != 1 {
		t.Fatalf("%s = %v, %v; want a live interrupt with one request", tool, res, err)
	}
	return intr
}

// TestIntegrationLiveInterruptNPM: server-everything (legacy era) asks with
// a live elicitation/create request; without an ElicitationHandler the call
// returns a live interrupt, over stdio and Streamable HTTP alike. Resumed
// on its Adapter with an accept answer, the result shows the answer; on
// another Adapter, or after its bound, the resume fails with
// ErrInvalidState and sends nothing; with the decline setting the request
// is declined, as before.
func TestIntegrationLiveInterruptNPM(t *testing.T) {
	const tool = "everything__trigger-elicitation-request"
	for _, transport := range []string{"stdio", "streamableHttp"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
			defer cancel()
			srv := npmEverything(t, transport)

			a := integAdapter(t, srv, nil)
			intr := liveInterrupt(t, ctx, a, tool)
			if r := intr.Requests[0]; r.Mode != "form" || r.Message != "Please provide inputs for the following fields:" {
				t.Errorf("request %+v, want the server's form", r)
			}
			answer := mcpadapter.Answered(map[string]mcpadapter.Answer{intr.Requests[0].Key: {Action: mcpadapter.Accept, Content: map[string]any{"name": "Ada Lovelace", "check": true}}})
			stored := throughJSON(t, intr)
			other := integAdapter(t, srv, nil)
			if _, err := other.Resume(ctx, stored, answer); !errors.Is(err, mcpadapter.ErrInvalidState) || !strings.Contains(err.Error(), "nothing was sent") {
				t.Errorf("Resume on another Adapter = %v, want ErrInvalidState", err)
			}
			res, err := a.Resume(ctx, stored, answer)
			if err != nil {
				t.Fatalf("Resume: %v", err)
			}
			for _, want := range []string{"User provided the requested information", "- Name: Ada Lovelace", "- Agreed to terms: true", "- Favorite Integer: 42"} {
				if !strings.Contains(res.Text(), want) {
					t.Errorf("resumed trigger-elicitation-request = %q, lacks %q", res.Text(), want)
				}
			}

			ended := make(endedLog, 1)
			bounded := integAdapter(t, srv, func(cfg *mcpadapter.Config) {
				cfg.State.LiveMaxAge = time.Second
				cfg.Logger = slog.New(ended)
			})
			intr = liveInterrupt(t, ctx, bounded, tool)
			select {
			case why := <-ended:
				if !strings.Contains(why, "its bound passed") {
					t.Errorf("the interrupt ended: %s, want its bound", why)
				}
			case <-ctx.Done():
				t.Fatal("the live interrupt did not end at its bound")
			}
			if _, err := bounded.Resume(ctx, intr, answer); !errors.Is(err, mcpadapter.ErrInvalidState) || !strings.Contains(err.Error(), "StateOptions.LiveMaxAge") {
				t.Errorf("Resume after the bound = %v, want ErrInvalidState naming StateOptions.LiveMaxAge", err)
			}

			declining := integAdapter(t, srv, func(cfg *mcpadapter.Config) { cfg.State.LiveMaxAge = -1 })
			res = integInvoke(t, ctx, integTool(t, integTools(t, ctx, declining), tool), nil)
			if !strings.Contains(res.Text(), "User declined to provide the requested information") {
				t.Errorf("trigger-elicitation-request with the decline setting = %q, want a decline", res.Text())
			}
		})
	}
}
