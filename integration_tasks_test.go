package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// researchTool is server-everything's task-required tool: four stages of
// a second each, with status messages; with ambiguous it asks for a
// clarification through tasks/result.
const researchTool = "everything__simulate-research-query"

// TestIntegrationTasksNPM runs server-everything's task-required tool over
// stdio and Streamable HTTP: offered, called as a task to its result with
// status progress, its clarification answered, cancelled (the server
// sees tasks/cancel), left pending and collected.
func TestIntegrationTasksNPM(t *testing.T) {
	for _, transport := range []string{"stdio", "streamableHttp"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
			defer cancel()
			srv := npmEverything(t, transport)
			var (
				mu    sync.Mutex
				asked []mcpadapter.ElicitationRequest
			)
			a := integAdapter(t, srv, func(cfg *mcpadapter.Config) {
				cfg.ElicitationHandler = func(_ context.Context, req mcpadapter.ElicitationRequest) (mcpadapter.Answer, error) {
					mu.Lock()
					defer mu.Unlock()
					asked = append(asked, req)
					return mcpadapter.Answer{Action: mcpadapter.Accept, Content: map[string]any{"interpretation": "historical"}}, nil
				}
			})
			ts := integTools(t, ctx, a)
			tool := integTool(t, ts, researchTool)

			// Plain: the result after the four stages, each reported.
			var (
				pmu      sync.Mutex
				messages []string
			)
			pctx := mcpadapter.WithProgress(ctx, func(p mcpadapter.Progress) {
				pmu.Lock()
				defer pmu.Unlock()
				messages = append(messages, p.Message)
			})
			res := integInvoke(t, pctx, tool, map[string]any{"topic": "tides"})
			if !strings.Contains(res.Text(), "# Research Report: tides") {
				t.Fatalf("result = %q, want the research report", res.Text())
			}
			pmu.Lock()
			got := strings.Join(messages, "|")
			pmu.Unlock()
			for _, stage := range []string{"Gathering sources...", "Generating report..."} {
				if !strings.Contains(got, stage) {
					t.Errorf("progress messages %q lack %q", got, stage)
				}
			}

			// Ambiguous: the server asks on the tasks/result stream; the
			// handler answers, and the report says so.
			res = integInvoke(t, ctx, tool, map[string]any{"topic": "tides", "ambiguous": true})
			if !strings.Contains(res.Text(), "tides (historical)") {
				t.Errorf("ambiguous result = %q, want the clarification", res.Text())
			}
			mu.Lock()
			if len(asked) != 1 || asked[0].Tool != researchTool || !strings.Contains(asked[0].Message, "multiple interpretations") {
				t.Errorf("asked %+v, want the clarification of the research call", asked)
			}
			mu.Unlock()

			// Pending at once, stored, collected on the same server.
			_, err := tool.Invoke(mcpadapter.WithPendingTask(ctx), map[string]any{"topic": "reefs"})
			var pt *mcpadapter.PendingTask
			if !errors.As(err, &pt) || pt.TaskID == "" || pt.Status != "working" {
				t.Fatalf("Invoke(WithPendingTask) = %v, want a working *PendingTask", err)
			}
			if n := a.Status().Servers["everything"].TasksInFlight; n != 0 {
				t.Errorf("TasksInFlight = %d while nobody waits, want 0", n)
			}
			b, err := json.Marshal(pt)
			if err != nil {
				t.Fatal(err)
			}
			var stored mcpadapter.PendingTask
			if err := json.Unmarshal(b, &stored); err != nil {
				t.Fatal(err)
			}
			res, err = a.Resume(ctx, &stored, mcpadapter.Collected())
			if err != nil || !strings.Contains(res.Text(), "# Research Report: reefs") {
				t.Fatalf("CollectTask = %v, %v, want the report", res, err)
			}

			// A deadline returns the task still pending; cancelling the
			// context cancels it on the server.
			dctx, dcancel := context.WithTimeout(ctx, 1500*time.Millisecond)
			_, err = tool.Invoke(dctx, map[string]any{"topic": "dunes"})
			dcancel()
			if !errors.As(err, &pt) {
				t.Fatalf("Invoke past its deadline = %v, want a *PendingTask", err)
			}
			cctx, ccancel := context.WithCancel(ctx)
			defer ccancel()
			_, err = a.Resume(mcpadapter.WithProgress(cctx, func(mcpadapter.Progress) { ccancel() }), pt, mcpadapter.Collected())
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("CollectTask cancelled = %v, want context.Canceled", err)
			}
			_, err = a.Resume(ctx, pt, mcpadapter.Collected())
			if !errors.Is(err, mcpadapter.ErrTaskFailed) || !strings.Contains(err.Error(), "cancelled") {
				t.Fatalf("CollectTask of a cancelled task = %v, want ErrTaskFailed (cancelled)", err)
			}
		})
	}
}

// TestIntegrationTasksAcrossAdaptersNPM: over Streamable HTTP, a task
// outlives the Adapter that started it. server-everything binds a task
// to its session; the first Adapter keeps the session when it closes,
// and a new Adapter joins it. The ambiguous query's question becomes an
// *Interrupt, stored as JSON and answered on a new Adapter, which
// collects the result; a pending task stored as JSON is collected on a
// new Adapter.
func TestIntegrationTasksAcrossAdaptersNPM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
	defer cancel()
	srv := npmEverything(t, "streamableHttp")
	first := func() (*mcpadapter.Adapter, *mcpadapter.Tool) {
		a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{"everything": srv}})
		if err != nil {
			t.Fatal(err)
		}
		return a, integTool(t, integTools(t, ctx, a), researchTool)
	}
	closeIt := func(a *mcpadapter.Adapter) {
		if err := a.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}

	// Ambiguous: the question is an interrupt; a new Adapter answers it.
	a, tool := first()
	_, err := tool.Invoke(ctx, map[string]any{"topic": "tides", "ambiguous": true})
	var intr *mcpadapter.Interrupt
	if !errors.As(err, &intr) || len(intr.Requests) != 1 || !strings.Contains(intr.Requests[0].Message, "multiple interpretations") {
		t.Fatalf("Invoke(ambiguous) = %v, want an *Interrupt with the clarification", err)
	}
	b, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	closeIt(a)
	var back mcpadapter.Interrupt
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	a2 := integAdapter(t, srv, nil)
	res, err := a2.Resume(ctx, &back, mcpadapter.Answered(map[string]mcpadapter.Answer{
		back.Requests[0].Key: {Action: mcpadapter.Accept, Content: map[string]any{"interpretation": "historical"}},
	}))
	if err != nil || !strings.Contains(res.Text(), "# Research Report: tides (historical)") {
		t.Fatalf("Resume on a new Adapter = %v, %v; want the report with the clarification", res, err)
	}

	// Durable: a pending task, stored, its Adapter closed, collected on a
	// new one.
	a, tool = first()
	_, err = tool.Invoke(mcpadapter.WithPendingTask(ctx), map[string]any{"topic": "reefs"})
	var pt *mcpadapter.PendingTask
	if !errors.As(err, &pt) {
		t.Fatalf("Invoke(WithPendingTask) = %v, want a *PendingTask", err)
	}
	if b, err = json.Marshal(pt); err != nil {
		t.Fatal(err)
	}
	closeIt(a)
	var stored mcpadapter.PendingTask
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	res, err = integAdapter(t, srv, nil).Resume(ctx, &stored, mcpadapter.Collected())
	if err != nil || !strings.Contains(res.Text(), "# Research Report: reefs") {
		t.Fatalf("CollectTask on a new Adapter = %v, %v; want the report", res, err)
	}
}
