package mcpadapter_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter"
)

// TestIntegrationProgressNPM: server-everything's
// trigger-long-running-operation reports each step as progress, then
// answers; over each of its transports, call after call, every step
// reaches WithProgress before Invoke returns, in order, and none after
// (issue 33).
func TestIntegrationProgressNPM(t *testing.T) {
	const runs, steps = 20, 4
	for _, transport := range []string{"stdio", "streamableHttp", "sse"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
			defer cancel()
			a := integAdapter(t, npmEverything(t, transport), nil)
			tool := integTool(t, integTools(t, ctx, a), "everything__trigger-long-running-operation")
			want := make([]float64, steps)
			for i := range want {
				want[i] = float64(i + 1)
			}
			for run := range runs {
				var (
					returned atomic.Bool
					late     atomic.Int32
					mu       sync.Mutex
					got      []float64
				)
				pctx := mcpadapter.WithProgress(ctx, func(p mcpadapter.Progress) {
					if returned.Load() {
						late.Add(1)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					got = append(got, p.Progress)
				})
				res, err := tool.Invoke(pctx, map[string]any{"duration": 0.1, "steps": steps})
				returned.Store(true)
				if err != nil || res.IsError {
					t.Fatalf("run %d: Invoke = %v, %v", run, res, err)
				}
				mu.Lock()
				if !slices.Equal(got, want) {
					t.Errorf("run %d: progress before Invoke returned %v, want %v", run, got, want)
				}
				mu.Unlock()
				if n := late.Load(); n > 0 {
					t.Errorf("run %d: %d progress callbacks after Invoke returned", run, n)
				}
			}
		})
	}
}
