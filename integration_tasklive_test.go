package mcpadapter_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
)

// TestIntegrationTaskLiveInterruptNPM: over stdio, server-everything's
// ambiguous research query (a legacy task) asks its clarification on the
// stream of tasks/result, on the connection: without an
// ElicitationHandler the call waiting for the task returns a live
// interrupt; resumed on its Adapter with an accept answer, the task's
// report says the answer; on another Adapter the resume fails with
// ErrInvalidState and sends nothing; with the decline setting the question
// is declined, as before.
func TestIntegrationTaskLiveInterruptNPM(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
	defer cancel()
	srv := npmEverything(t, "stdio")
	args := map[string]any{"topic": "tides", "ambiguous": true}

	a := integAdapter(t, srv, nil)
	_, err := integTool(t, integTools(t, ctx, a), researchTool).Invoke(ctx, args)
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &intr) || !intr.Live() || len(intr.Requests) != 1 || !strings.Contains(intr.Requests[0].Message, "multiple interpretations") {
		t.Fatalf("Invoke(ambiguous) = %v, want a live interrupt with the clarification", err)
	}
	answer := mcpadapter.Answered(map[string]mcpadapter.Answer{intr.Requests[0].Key: {Action: mcpadapter.Accept, Content: map[string]any{"interpretation": "historical"}}})
	other := integAdapter(t, srv, nil)
	if _, err := other.Resume(ctx, throughJSON(t, intr), answer); !errors.Is(err, mcpadapter.ErrInvalidState) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Errorf("Resume on another Adapter = %v, want ErrInvalidState", err)
	}
	res, err := a.Resume(ctx, intr, answer)
	if err != nil || !strings.Contains(res.Text(), "tides (historical)") {
		t.Fatalf("Resume(accept) = %v, %v; want the report with the clarification", res, err)
	}

	declining := integAdapter(t, srv, func(cfg *mcpadapter.Config) { cfg.State.LiveMaxAge = -1 })
	res = integInvoke(t, ctx, integTool(t, integTools(t, ctx, declining), researchTool), args)
	if !strings.Contains(res.Text(), "declined") {
		t.Errorf("ambiguous research with the decline setting = %q, want the decline", res.Text())
	}
}
