package mcpadapter

// A call's progress reaches WithProgress before the call returns (issue
// 33): every transport and era, every way to call, tasks; a slow callback
// holds up neither another principal's progress nor its own call past
// its bounds.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/mcpadapter/mcpadapter/mcpadaptertest"
	"github.com/tmc/langchaingo/llms"
)

// progressSteps is how many progress notifications the servers of these
// tests send before they answer.
const progressSteps = 8

// A progressProbe is the WithProgress of one call: it records the
// progress that came before the call returned, in order, and counts what
// came after.
type progressProbe struct {
	returned atomic.Bool
	late     atomic.Int32
	mu       sync.Mutex
	got      []float64
	messages []string
}

// ctx returns ctx with the probe as its WithProgress.
func (p *progressProbe) ctx(ctx context.Context) context.Context {
	return WithProgress(ctx, func(ev Progress) {
		if p.returned.Load() {
			p.late.Add(1)
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.got = append(p.got, ev.Progress)
		p.messages = append(p.messages, ev.Message)
	})
}

// check fails t unless the probe got progress 1 to n, in order, before
// the call returned (which its caller records), and none after.
func (p *progressProbe) check(t *testing.T, run, n int) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	want := make([]float64, n)
	for i := range want {
		want[i] = float64(i + 1)
	}
	if !slices.Equal(p.got, want) {
		t.Fatalf("run %d: progress before the call returned %v, want %v", run, p.got, want)
	}
	if n := p.late.Load(); n > 0 {
		t.Fatalf("run %d: %d progress notifications after the call returned", run, n)
	}
}

// progressTransports are the transports of TestProgressBeforeReturn, each
// in both eras, with how many calls each makes: go-sdk's in-memory
// transport (the screen reads decoded messages), InMemory's pipe (lines),
// stdio (the test binary) and Streamable HTTP (stateless in the modern
// era, stateful in the legacy one).
var progressTransports = []struct {
	name   string
	runs   int
	server func(t *testing.T, mode Mode) Server
}{
	{"memory", 200, func(t *testing.T, mode Mode) Server {
		return memServer(testserver.Full(testserver.Options{ProgressSteps: progressSteps}), mode)
	}},
	{"pipe", 200, func(t *testing.T, mode Mode) Server {
		s := InMemory(testserver.Full(testserver.Options{ProgressSteps: progressSteps}).Server)
		s.Mode = mode
		return s
	}},
	{"stdio", 50, func(t *testing.T, mode Mode) Server {
		s := stdioServer(t, fmt.Sprintf("%s:progress=%d", mode, progressSteps))
		s.Mode = mode
		return s
	}},
	{"http", 50, func(t *testing.T, mode Mode) Server {
		srv := testserver.Full(testserver.Options{ProgressSteps: progressSteps}).StreamableHTTP(t, mode == ModeModern)
		return Server{URL: srv.URL, Mode: mode}
	}},
}

// TestProgressBeforeReturn: a server sends progressSteps notifications,
// then answers at once; every one reaches WithProgress before Invoke
// returns, in order, and none after, call after call (the order of a
// notification and the answer was lost in go-sdk, which hands them on
// apart). Every transport, both eras.
func TestProgressBeforeReturn(t *testing.T) {
	for _, tr := range progressTransports {
		for _, era := range pipelineEras {
			t.Run(tr.name+"/"+era.name, func(t *testing.T) {
				a := newAdapter(t, Config{Servers: map[string]Server{"s": tr.server(t, era.mode)}})
				tool := lookupTool(t, a, "s__progress")
				for run := range tr.runs {
					var p progressProbe
					res, err := tool.Invoke(p.ctx(t.Context()), nil)
					p.returned.Store(true)
					if err != nil || res.Text() != "done" {
						t.Fatalf("run %d: Invoke = %v, %v", run, res, err)
					}
					p.check(t, run, progressSteps)
				}
			})
		}
	}
}

// TestProgressBeforeReturnEveryAPI: Call and HandleToolCalls, and a
// middleware's WithProgress, get the progress of their call before they
// return, as Invoke does.
func TestProgressBeforeReturnEveryAPI(t *testing.T) {
	var outer atomic.Pointer[progressProbe] // the current call's
	a := newAdapter(t, Config{
		Servers: map[string]Server{"s": memServer(testserver.Full(testserver.Options{ProgressSteps: progressSteps}), ModeAuto)},
		Middleware: []Middleware{func(next CallHandler) CallHandler {
			return func(ctx context.Context, req *CallRequest) (*Result, error) {
				return next(outer.Load().ctx(ctx), req)
			}
		}},
	})
	tool := lookupTool(t, a, "s__progress")
	calls := map[string]func(context.Context) error{
		"Call": func(ctx context.Context) error {
			out, err := tool.Call(ctx, "{}")
			if err == nil && out != "done" {
				err = fmt.Errorf("observation %q", out)
			}
			return err
		},
		"HandleToolCalls": func(ctx context.Context) error {
			msgs, err := Toolset{tool}.HandleToolCalls(ctx, &llms.ContentChoice{ToolCalls: []llms.ToolCall{
				mcpadaptertest.ToolCall("c1", "s__progress", "{}"),
			}})
			if err == nil && len(msgs) != 2 { // the call and its answer
				err = fmt.Errorf("%d messages, want 2", len(msgs))
			}
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			for run := range 50 {
				var p, mw progressProbe
				outer.Store(&mw)
				err := call(p.ctx(t.Context()))
				p.returned.Store(true)
				mw.returned.Store(true)
				if err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
				p.check(t, run, progressSteps)
				mw.check(t, run, progressSteps)
			}
		})
	}
}

// TestTaskProgressBeforeReturn: a task's progress, the server's
// notifications before each answer to tasks/get and the task's status,
// reaches WithProgress before Invoke returns, in order, none after; the
// status of a pending task collected (Resume with Collected) reaches it
// before Resume returns. Both eras of tasks.
func TestTaskProgressBeforeReturn(t *testing.T) {
	const notes, steps = 3, 2
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			peer := &faultserver.TaskPeer{Modern: era.modern, Support: "required", Steps: steps, Progress: notes}
			a := taskAdapter(t, peer, nil)
			tool := lookupTool(t, a, "p__job")
			for run := range 10 {
				var p progressProbe
				res, err := tool.Invoke(p.ctx(t.Context()), map[string]any{"topic": "tides"})
				p.returned.Store(true)
				if err != nil || res.Text() != "done: tides" {
					t.Fatalf("run %d: Invoke = %v, %v", run, res, err)
				}
				p.mu.Lock()
				var got []string
				for _, m := range p.messages {
					if strings.HasPrefix(m, "note ") {
						got = append(got, m)
					}
				}
				p.mu.Unlock()
				var want []string
				for i := range notes * steps {
					want = append(want, fmt.Sprintf("note %d", i+1))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("run %d: the server's progress before Invoke returned %q (all: %q), want %q", run, got, p.messages, want)
				}
				if n := p.late.Load(); n > 0 {
					t.Fatalf("run %d: %d progress notifications after Invoke returned", run, n)
				}
			}
			for run := range 10 {
				_, err := tool.Invoke(WithPendingTask(t.Context()), map[string]any{"topic": "tides"})
				var pt *PendingTask
				if !errors.As(err, &pt) {
					t.Fatalf("run %d: Invoke(WithPendingTask) = %v, want a *PendingTask", run, err)
				}
				var p progressProbe
				res, err := a.Resume(p.ctx(t.Context()), pt, Collected())
				p.returned.Store(true)
				if err != nil || res.Text() != "done: tides" {
					t.Fatalf("run %d: collect = %v, %v", run, res, err)
				}
				p.mu.Lock()
				got := slices.Clone(p.messages)
				p.mu.Unlock()
				if want := fmt.Sprintf("step %d", steps); len(got) == 0 || got[len(got)-1] != want {
					t.Fatalf("run %d: progress before the collect returned %q, want it to end with %q", run, got, want)
				}
				if n := p.late.Load(); n > 0 {
					t.Fatalf("run %d: %d progress notifications after the collect returned", run, n)
				}
			}
		})
	}
}

// TestProgressSlowCallbackApart: alice's WithProgress blocks at her
// call's first notification. bob's call on the same server meanwhile gets
// all its progress before it returns; once her callback has kept her call
// waiting progressStall, the notifications behind it are dropped and
// counted, and the call waits for the callback running (it has no
// deadline) and returns once it did, none delivered after. Both eras.
func TestProgressSlowCallbackApart(t *testing.T) {
	for _, era := range pipelineEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, tool := progressTool(t, era.mode)
				held, release := make(chan struct{}), make(chan struct{})
				defer close(release) // before the adapter's Close, which waits for the callback
				var aliceReturned atomic.Bool
				var aliceLate, aliceCalls atomic.Int32
				alice := WithProgress(WithPrincipal(t.Context(), "alice"), func(p Progress) {
					if aliceReturned.Load() {
						aliceLate.Add(1)
					}
					if aliceCalls.Add(1) == 1 {
						close(held)
						<-release
					}
				})
				aliceDone := make(chan time.Duration, 1)
				go func() {
					start := time.Now()
					res, err := tool.Invoke(alice, nil)
					aliceReturned.Store(true)
					if err != nil || res.Text() != "done" {
						t.Errorf("alice's Invoke = %v, %v", res, err)
					}
					aliceDone <- time.Since(start)
				}()
				<-held
				var bob progressProbe
				res, err := tool.Invoke(bob.ctx(WithPrincipal(t.Context(), "bob")), nil)
				bob.returned.Store(true)
				if err != nil || res.Text() != "done" {
					t.Fatalf("bob's Invoke = %v, %v", res, err)
				}
				bob.check(t, 0, progressSteps)
				time.Sleep(progressStall) // fake time: alice's callback has stalled her queue
				synctest.Wait()
				select {
				case took := <-aliceDone:
					t.Fatalf("alice's call returned after %v, while her callback ran", took)
				default:
				}
				release <- struct{}{}
				if took := <-aliceDone; took < progressStall {
					t.Errorf("alice's call returned after %v, want it to wait for her callback %v", took, progressStall)
				}
				synctest.Wait()
				if n := aliceLate.Load(); n > 0 {
					t.Errorf("%d of alice's callbacks after her call returned", n)
				}
				if n := aliceCalls.Load(); n != 1 {
					t.Errorf("alice's callback called %d times, want once (the rest dropped)", n)
				}
				st := a.Status().Servers["s"]
				if got := st.PrincipalDeliveries["alice"]; got != (Deliveries{Delivered: 1, DroppedProgress: progressSteps - 1}) {
					t.Errorf("alice's deliveries %+v, want 1 delivered and the rest dropped", got)
				}
				if got := st.PrincipalDeliveries["bob"]; got != (Deliveries{Delivered: progressSteps}) {
					t.Errorf("bob's deliveries %+v, want all %d delivered", got, progressSteps)
				}
			})
		})
	}
}

// TestProgressCallbackPastDeadline: a WithProgress that blocks for good
// holds its call no longer than the call's deadline, here a tool timeout
// shorter than progressStall: the call returns its answer then, and the
// callback is called no more. Both eras.
func TestProgressCallbackPastDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, era := range pipelineEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv := testserver.Full(testserver.Options{ProgressSteps: progressSteps})
				a := newAdapter(t, Config{DefaultToolTimeout: timeout, Servers: map[string]Server{"s": memServer(srv, era.mode)}})
				tool := lookupTool(t, a, "s__progress")
				release := make(chan struct{})
				defer close(release) // before the adapter's Close, which waits for the callback
				var calls atomic.Int32
				ctx := WithProgress(t.Context(), func(Progress) {
					calls.Add(1)
					<-release
				})
				start := time.Now()
				res, err := tool.Invoke(ctx, nil)
				took := time.Since(start)
				if err != nil || res.Text() != "done" {
					t.Fatalf("Invoke = %v, %v; want the answer", res, err)
				}
				if took < timeout || took >= progressStall {
					t.Errorf("Invoke returned after %v, want the tool timeout %v", took, timeout)
				}
				release <- struct{}{}
				synctest.Wait()
				if n := calls.Load(); n != 1 {
					t.Errorf("the callback was called %d times, want once", n)
				}
			})
		})
	}
}

// progressTool returns an adapter of a test server in memory, in mode,
// and its tool "progress", which reports progressSteps notifications.
func progressTool(t *testing.T, mode Mode) (*Adapter, *Tool) {
	srv := testserver.Full(testserver.Options{ProgressSteps: progressSteps})
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(srv, mode)}})
	return a, lookupTool(t, a, "s__progress")
}

// TestProgressCallbackRunningHoldsCall: a WithProgress that runs past
// progressStall, in a call without a deadline, is waited for: the call
// returns only once it finished (the HTTP response, closed when
// the call returns, is not written to after), and the notifications
// queued behind it are dropped, not delivered. Both eras.
func TestProgressCallbackRunningHoldsCall(t *testing.T) {
	const slow = 3 * progressStall
	for _, era := range pipelineEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a, tool := progressTool(t, era.mode)
				var finished atomic.Bool
				var calls atomic.Int32
				ctx := WithProgress(t.Context(), func(Progress) {
					if calls.Add(1) == 1 {
						time.Sleep(slow) // fake time: a slow write
						finished.Store(true)
					}
				})
				start := time.Now()
				res, err := tool.Invoke(ctx, nil)
				took := time.Since(start)
				if !finished.Load() {
					t.Errorf("Invoke returned after %v, while its callback ran", took)
				}
				if err != nil || res.Text() != "done" {
					t.Fatalf("Invoke = %v, %v; want the answer", res, err)
				}
				if took < slow {
					t.Errorf("Invoke returned after %v, want it to wait for its callback (%v)", took, slow)
				}
				synctest.Wait()
				if n := calls.Load(); n != 1 {
					t.Errorf("callback called %d times, want once (those queued behind it dropped)", n)
				}
				if got := a.Status().Servers["s"].Deliveries; got != (Deliveries{Delivered: 1, DroppedProgress: progressSteps - 1}) {
					t.Errorf("deliveries %+v, want 1 delivered and the rest dropped", got)
				}
			})
		})
	}
}

// BenchmarkInvokeProgress is BenchmarkInvoke in memory with a listener
// (WithProgress) on a call that reports progress twice: the cost of a
// token, two notifications handed to the callback and the wait for them.
func BenchmarkInvokeProgress(b *testing.B) {
	for _, era := range pipelineEras {
		b.Run("transport=memory/era="+era.name, func(b *testing.B) {
			a := newAdapter(b, Config{Servers: map[string]Server{"s": memServer(testserver.Full(testserver.Options{}), era.mode)}})
			tool := lookupTool(b, a, "s__progress")
			var seen, calls atomic.Int64
			ctx := WithProgress(b.Context(), func(Progress) { seen.Add(1) })
			benchLoop(b, func() {
				calls.Add(1)
				if res, err := tool.Invoke(ctx, nil); err != nil || res.Text() != "done" {
					b.Fatalf("Invoke = %v, %v", res, err)
				}
			})
			if seen.Load() != 2*calls.Load() {
				b.Fatalf("%d progress callbacks for %d calls, want 2 each", seen.Load(), calls.Load())
			}
		})
	}
}
