package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
)

// TestExecutorLivePause: a run whose tool's legacy server asks live (no
// ElicitationHandler) pauses on the live interrupt like on any other; its
// state, stored as sealed JSON, resumes in the same process on the same
// Adapter, and the final answer is the call's real result. Another
// Adapter cannot resume it, and says why.
func TestExecutorLivePause(t *testing.T) {
	for agentName, newAgent := range agentKinds {
		t.Run(agentName, func(t *testing.T) {
			cfg := mcpadapter.Config{
				Servers: map[string]mcpadapter.Server{"s": memServer(bookingServer(true))},
				State:   mcpadapter.StateOptions{Key: []byte(strings.Repeat("k", 32))},
			}
			a := newAdapter(t, cfg)
			ag, err := newAgent([][2]string{{"s__ask_live", `{}`}}, listTools(t, a))
			if err != nil {
				t.Fatal(err)
			}
			ex := NewExecutor(ag, agents.WithMaxIterations(3))
			_, err = chains.Call(t.Context(), ex, map[string]any{"input": "Pick a date"})
			var paused *PausedRun
			var intr *mcpadapter.Interrupt
			if !errors.As(err, &paused) || !errors.As(err, &intr) || !intr.Live() {
				t.Fatalf("run error = %v, want a *PausedRun on a live *Interrupt", err)
			}
			stored, err := json.Marshal(paused)
			if err != nil {
				t.Fatal(err)
			}
			answer := mcpadapter.Answered(map[string]mcpadapter.Answer{intr.Requests[0].Key: {Action: mcpadapter.Accept, Content: map[string]any{"date": "2026-09-18"}}})

			var elsewhere PausedRun
			if err := json.Unmarshal(stored, &elsewhere); err != nil {
				t.Fatal(err)
			}
			other, err := newAgent(nil, listTools(t, newAdapter(t, cfg)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := NewExecutor(other, agents.WithMaxIterations(3)).Resume(t.Context(), &elsewhere, answer); !errors.Is(err, mcpadapter.ErrInvalidState) || !strings.Contains(err.Error(), "holds no live interrupt") {
				t.Errorf("Resume on another Adapter = %v, want ErrInvalidState", err)
			}

			var back PausedRun
			if err := json.Unmarshal(stored, &back); err != nil {
				t.Fatal(err)
			}
			out, err := ex.Resume(t.Context(), &back, answer)
			if err != nil {
				t.Fatalf("Resume: %v", err)
			}
			if got, want := out["output"], "The result: live elicitation accepted: 2026-09-18"; got != want {
				t.Errorf("final answer = %q, want %q", got, want)
			}
		})
	}
}
