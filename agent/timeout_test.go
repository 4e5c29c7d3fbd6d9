package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tmc/langchaingo/chains"
)

// blockingToolset returns the tools of a go-sdk server "s", in memory,
// whose tool "block" answers only when its request is cancelled, under
// DefaultToolTimeout timeout.
func blockingToolset(t *testing.T, timeout time.Duration) mcpadapter.Toolset {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "block", Description: "Blocks until cancelled.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	a := newAdapter(t, mcpadapter.Config{DefaultToolTimeout: timeout, Servers: map[string]mcpadapter.Server{"s": {
		Transport: func(ctx context.Context) (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			_, err := s.Connect(context.WithoutCancel(ctx), st, nil)
			return ct, err
		},
	}}})
	return listTools(t, a)
}

// TestAgentToolTimeout: a tool that does not answer within
// DefaultToolTimeout does not end an Executor's run, whatever the agent:
// the model reads that the tool did not answer within it, and the run
// finishes (the final answer quotes what the model read). The run's own
// deadline still ends the run, and so does a timeout for a tool-calling
// agent with TimeoutErrors.
func TestAgentToolTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	ts := blockingToolset(t, timeout)
	calls := [][2]string{{"s__block", "{}"}}
	const want = "Error: tool s__block did not answer within 100ms and may still be running on the server"
	for kind, newAgent := range agentKinds {
		t.Run(kind, func(t *testing.T) {
			ag, err := newAgent(calls, ts)
			if err != nil {
				t.Fatal(err)
			}
			out, err := chains.Call(t.Context(), NewExecutor(ag), map[string]any{"input": "Run the slow tool"})
			if err != nil {
				t.Fatalf("run error = %v, want the run to finish", err)
			}
			if got, _ := out["output"].(string); !strings.Contains(got, "The result: "+want) {
				t.Errorf("final answer %q, want it to quote %q", got, want)
			}

			ag, err = newAgent(calls, ts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), timeout/4)
			defer cancel()
			if _, err := chains.Call(ctx, NewExecutor(ag), map[string]any{"input": "Run the slow tool"}); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("run under a deadline shorter than the tool's timeout: error = %v, want context.DeadlineExceeded", err)
			}
		})
	}
	t.Run("TimeoutErrors", func(t *testing.T) {
		model := finalModel{Model: mcpadaptertest.NewModel(callTurns(calls)...)}
		ag, err := New(model, ts, WithPartOptions(mcpadapter.TimeoutErrors()))
		if err != nil {
			t.Fatal(err)
		}
		_, err = chains.Call(t.Context(), NewExecutor(ag), map[string]any{"input": "Run the slow tool"})
		var se *mcpadapter.ServerError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &se) {
			t.Errorf("run error = %v, want the timeout's *ServerError", err)
		}
		if n := len(model.Requests()); n != 1 {
			t.Errorf("the model was asked %d times, want once (the run ends at the timeout)", n)
		}
	})
}
