package mcpadapter

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
)

// taskLiveServers are a legacy TaskPeer, whose "ask" job asks its question
// on the stream of tasks/result, in memory and over stdio (the test binary
// as the server); the peer is nil over stdio.
var taskLiveServers = map[string]func(t *testing.T) (Server, *faultserver.TaskPeer){
	"memory": func(*testing.T) (Server, *faultserver.TaskPeer) {
		peer := &faultserver.TaskPeer{Support: "required"}
		return Server{Transport: peer.Transport()}, peer
	},
	"stdio": func(t *testing.T) (Server, *faultserver.TaskPeer) {
		cmd, args, env := faultserver.Command(t, faultserver.KindTask)
		return Server{Command: cmd, Args: args, Env: env}, nil
	},
}

// TestTaskLiveInterrupt: without an ElicitationHandler, a legacy task's
// question, asked on the stream of tasks/result on the connection while
// the call waits for the task, makes the call return a live *Interrupt
// (attributed to the one call open); Resume on the same Adapter answers
// the server's request and waits for the task's result, which reflects
// the answer. Another Adapter's resume is refused and sends nothing; a
// second resume is refused as claimed; a copy through JSON resumes too.
// In memory and over stdio.
func TestTaskLiveInterrupt(t *testing.T) {
	for name, server := range taskLiveServers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, peer := server(t)
			cfg := Config{Servers: map[string]Server{"p": srv}}
			a := newAdapter(t, cfg)
			job := lookup(t, taskTools(t, a), "p__job")
			ctx := faultCtx(t)

			intr := must(t).interrupt(job.Invoke(ctx, map[string]any{"mode": "ask", "topic": "tides"}))
			if !intr.Live() || len(intr.Requests) != 1 || intr.Requests[0].Key != liveKey || intr.Requests[0].Message != "Which one?" || intr.Tool != "p__job" {
				t.Fatalf("interrupt live %t, requests %+v, tool %q; want a live one asking \"Which one?\" under %q", intr.Live(), intr.Requests, intr.Tool, liveKey)
			}
			other := newAdapter(t, cfg)
			if _, err := other.Resume(ctx, intr, liveAnswer(Accept, map[string]any{"pick": "x"})); !errors.Is(err, ErrInvalidState) {
				t.Errorf("Resume on another Adapter = %v, want ErrInvalidState", err)
			}
			res := must(t).result(a.Resume(ctx, intr, liveAnswer(Accept, map[string]any{"pick": "b"})))
			if res.Text() != "done: tides (accept: b)" {
				t.Errorf("Resume(accept) = %s, want the task's result with the answer", resultText(res))
			}
			if _, err := a.Resume(ctx, intr, liveAnswer(Accept, map[string]any{"pick": "b"})); !errors.Is(err, ErrClaimedState) {
				t.Errorf("a second Resume = %v, want ErrClaimedState", err)
			}
			if peer != nil {
				if got := peer.Answers(); len(got) != 1 || !strings.Contains(got[0], `"pick":"b"`) {
					t.Errorf("the server got the answers %q, want one with pick b", got)
				}
			}

			intr = roundTrip(t, must(t).interrupt(job.Invoke(ctx, map[string]any{"mode": "ask", "topic": "isles"})))
			res = must(t).result(a.Resume(ctx, intr, liveAnswer(Decline, nil)))
			if res.Text() != "done: isles (decline)" {
				t.Errorf("Resume(decline) of a JSON copy = %s, want the task's result with the decline", resultText(res))
			}
			if n := a.Status().Servers["p"].TasksInFlight; n != 0 {
				t.Errorf("TasksInFlight after the results = %d, want 0", n)
			}
		})
	}
}

// TestTaskLiveInterruptDeclineSetting: a negative StateOptions.LiveMaxAge
// declines a legacy task's question, as before live interrupts: the task
// goes on to its result. In memory and over stdio.
func TestTaskLiveInterruptDeclineSetting(t *testing.T) {
	for name, server := range taskLiveServers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv, _ := server(t)
			a := newAdapter(t, Config{Servers: map[string]Server{"p": srv}, State: StateOptions{LiveMaxAge: -1}})
			res := must(t).result(lookup(t, taskTools(t, a), "p__job").Invoke(faultCtx(t), map[string]any{"mode": "ask", "topic": "tides"}))
			if res.Text() != "done: tides (decline)" {
				t.Errorf("Invoke() under the decline setting = %s, want the task's result with the decline", resultText(res))
			}
		})
	}
}

// TestTaskLiveInterruptClose: Close answers a held task question cancel
// (the server's task ends with it) and a resume then fails with
// ErrClosed.
func TestTaskLiveInterruptClose(t *testing.T) {
	peer := &faultserver.TaskPeer{Support: "required"}
	a := taskAdapter(t, peer, nil)
	ctx := faultCtx(t)
	intr := must(t).interrupt(lookup(t, taskTools(t, a), "p__job").Invoke(ctx, map[string]any{"mode": "ask", "topic": "tides"}))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := peer.Answers(); len(got) != 1 || !strings.Contains(got[0], `"action":"cancel"`) {
		t.Errorf("the server got the answers %q, want one cancel", got)
	}
	if _, err := a.Resume(ctx, intr, liveAnswer(Accept, map[string]any{"pick": "b"})); !errors.Is(err, ErrClosed) {
		t.Errorf("Resume after Close = %v, want ErrClosed", err)
	}
}

// TestTaskLiveInterruptProgress: the progress a legacy task reports after
// its live question was answered (here, before its result) reaches the
// resume's WithProgress before Resume returns, and none of it the
// interrupted call's.
func TestTaskLiveInterruptProgress(t *testing.T) {
	peer := &faultserver.TaskPeer{Support: "required", Progress: 2}
	a := taskAdapter(t, peer, nil)
	var call, resumed atomic.Int32
	var returned atomic.Bool
	ctx := WithProgress(faultCtx(t), func(p Progress) {
		if strings.HasPrefix(p.Message, "note") {
			call.Add(1)
		}
	})
	intr := must(t).interrupt(lookup(t, taskTools(t, a), "p__job").Invoke(ctx, map[string]any{"mode": "ask", "topic": "tides"}))
	before := call.Load()
	ctx = WithProgress(faultCtx(t), func(p Progress) {
		if returned.Load() {
			t.Errorf("progress %q after Resume returned", p.Message)
		}
		if strings.HasPrefix(p.Message, "note") {
			resumed.Add(1)
		}
	})
	res := must(t).result(a.Resume(ctx, intr, liveAnswer(Accept, map[string]any{"pick": "b"})))
	returned.Store(true)
	if res.Text() != "done: tides (accept: b)" || resumed.Load() != 2 || call.Load() != before {
		t.Errorf("Resume() = %s with %d notes heard by the resume, %d more by the call; want the result, 2 and 0", resultText(res), resumed.Load(), call.Load()-before)
	}
}

// TestTaskLiveInterruptHeldNotCounted: a task whose live interrupt is held
// does not count as an open call on the connection, so another task's
// question meanwhile is that task's own live interrupt (not declined as
// unattributable); both then resume, each with its own answer.
func TestTaskLiveInterruptHeldNotCounted(t *testing.T) {
	var logs syncBuffer
	a := taskAdapter(t, &faultserver.TaskPeer{Support: "required"}, func(cfg *Config, _ *Server) { cfg.Logger = logsTo(&logs) })
	job := lookup(t, taskTools(t, a), "p__job")
	ctx := faultCtx(t)
	first := must(t).interrupt(job.Invoke(ctx, map[string]any{"mode": "ask", "topic": "tides"}))
	second := must(t).interrupt(job.Invoke(ctx, map[string]any{"mode": "ask", "topic": "isles"}))
	if strings.Contains(logs.String(), "declined live elicitation") {
		t.Errorf("logs = %s, want no decline", logs.String())
	}
	res := must(t).result(a.Resume(ctx, second, liveAnswer(Accept, map[string]any{"pick": "a"})))
	if res.Text() != "done: isles (accept: a)" {
		t.Errorf("Resume(second) = %s, want its task's result with its answer", resultText(res))
	}
	res = must(t).result(a.Resume(ctx, first, liveAnswer(Accept, map[string]any{"pick": "b"})))
	if res.Text() != "done: tides (accept: b)" {
		t.Errorf("Resume(first) = %s, want the held task's result with the answer", resultText(res))
	}
}
