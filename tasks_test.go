package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/tasks"
	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskEras are the two eras of tasks, as a TaskPeer speaks them.
var taskEras = []struct {
	name   string
	modern bool
}{{"legacy", false}, {"modern", true}}

// taskAdapter returns an adapter of one server "p", peer, with edit
// applied to its configuration.
func taskAdapter(t *testing.T, peer *faultserver.TaskPeer, edit func(*Config, *Server)) *Adapter {
	t.Helper()
	srv := Server{Transport: peer.Transport()}
	cfg := Config{}
	if edit != nil {
		edit(&cfg, &srv)
	}
	cfg.Servers = map[string]Server{"p": srv}
	return newAdapter(t, cfg)
}

// opaqueTransport hides the type of the transport it wraps, as a custom
// transport does: the screen then reads decoded messages (wire.Conn).
type opaqueTransport struct{ mcp.Transport }

// TestTasksCall: a task-required tool is offered and called as a task in
// both eras, over a newline-delimited stream and a custom transport: one
// task-augmented tools/call, tasks/get polled to the end, the result
// (legacy: tasks/result; modern: inline), each status message reported as
// progress, and nothing in flight afterwards; the _meta a middleware set
// reaches the task-augmented tools/call. A tool without task support is
// called as usual.
func TestTasksCall(t *testing.T) {
	for _, era := range taskEras {
		for _, custom := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/custom=%v", era.name, custom), func(t *testing.T) {
				peer := &faultserver.TaskPeer{Modern: era.modern, Support: "required", Steps: 3}
				a := taskAdapter(t, peer, func(cfg *Config, s *Server) {
					cfg.Middleware = []Middleware{func(next CallHandler) CallHandler {
						return func(ctx context.Context, req *CallRequest) (*Result, error) {
							req.Meta = map[string]any{"x-test/tag": "1"}
							return next(ctx, req)
						}
					}}
					if custom {
						s.Transport = func(ctx context.Context) (mcp.Transport, error) {
							tr, err := peer.Transport()(ctx)
							return opaqueTransport{tr}, err
						}
					}
				})
				ctx := faultCtx(t)
				ts, err := a.ListTools(ctx)
				if err != nil {
					t.Fatal(err)
				}
				msgs := make(chan string, 64)
				pctx := WithProgress(ctx, func(p Progress) { msgs <- p.Message })
				res, err := lookup(t, ts, "p__job").Invoke(pctx, map[string]any{"topic": "tides"})
				if err != nil || res.Text() != "done: tides" {
					t.Fatalf("Invoke(job) = %v, %v; want done: tides", res, err)
				}
				if n := peer.Methods("tools/call+task"); n != 1 {
					t.Errorf("task-augmented tools/call sent %d times, want 1", n)
				}
				if n := peer.Methods("tagged tools/call+task"); n != 1 {
					t.Errorf("task-augmented tools/call with the middleware's _meta sent %d times, want 1", n)
				}
				if n := peer.Methods("tasks/get"); n != 3 {
					t.Errorf("tasks/get sent %d times, want 3", n)
				}
				wantResult := 1
				if era.modern {
					wantResult = 0
				}
				if n := peer.Methods("tasks/result"); n != wantResult {
					t.Errorf("tasks/result sent %d times, want %d", n, wantResult)
				}
				// Delivered in order: the status at creation and after each poll.
				for _, want := range []string{"step 0", "step 1", "step 2"} {
					select {
					case got := <-msgs:
						if got != want {
							t.Errorf("progress message %q, want %q", got, want)
						}
					case <-ctx.Done():
						t.Fatalf("no progress message %q", want)
					}
				}
				if n := a.Status().Servers["p"].TasksInFlight; n != 0 {
					t.Errorf("TasksInFlight = %d after the call, want 0", n)
				}
				res, err = lookup(t, ts, "p__plain").Invoke(ctx, nil)
				if err != nil || res.Text() != "sync: plain" {
					t.Errorf("Invoke(plain) = %v, %v; want a synchronous call", res, err)
				}
			})
		}
	}
}

// TestTasksOptional: a tool that allows tasks is called synchronously by
// default, as a task when its server (Server.Tasks) opts in, synchronously
// when its server asks for tasks for required tools only; TasksOff hides a
// task-required tool.
func TestTasksOptional(t *testing.T) {
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			peer := &faultserver.TaskPeer{Modern: era.modern, Support: "optional"}
			ctx := faultCtx(t)
			job := lookup(t, taskTools(t, taskAdapter(t, peer, nil)), "p__job")
			if res, err := job.Invoke(ctx, nil); err != nil || res.Text() != "sync: job" {
				t.Fatalf("Invoke(job) by default = %v, %v; want synchronous", res, err)
			}
			opted := lookup(t, taskTools(t, taskAdapter(t, peer, func(_ *Config, s *Server) { s.Tasks = TasksOptional })), "p__job")
			if res, err := opted.Invoke(ctx, map[string]any{"topic": "a"}); err != nil || res.Text() != "done: a" {
				t.Fatalf("Invoke on a TasksOptional server = %v, %v; want a task", res, err)
			}
			if res, err := opted.Invoke(ctx, map[string]any{"topic": "b"}); err != nil || res.Text() != "done: b" {
				t.Fatalf("Invoke on a TasksOptional server = %v, %v; want a task", res, err)
			}
			reqOnly := lookup(t, taskTools(t, taskAdapter(t, peer, func(_ *Config, s *Server) { s.Tasks = TasksRequired })), "p__job")
			if res, err := reqOnly.Invoke(ctx, nil); err != nil || res.Text() != "sync: job" {
				t.Fatalf("Invoke on a TasksRequired server = %v, %v; want synchronous", res, err)
			}
			if n := peer.Methods("tools/call+task"); n != 2 {
				t.Errorf("task-augmented calls = %d, want 2", n)
			}

			required := &faultserver.TaskPeer{Modern: era.modern, Support: "required"}
			ts := taskTools(t, taskAdapter(t, required, func(_ *Config, s *Server) { s.Tasks = TasksOff }))
			if ts.Lookup("p__job") != nil {
				t.Errorf("TasksOff offers the task-required tool")
			}
		})
	}
}

// taskTools lists a's tools.
func taskTools(t *testing.T, a *Adapter) Toolset {
	t.Helper()
	ts, err := a.ListTools(faultCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestTasksDurable: a call asked for a pending task returns it at once;
// stored as JSON (sealed), it is collected by another Adapter after the
// first one closed, only under the principal of the call; a tampered one
// is refused; a deadline returns the task still pending.
func TestTasksDurable(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			peer := &faultserver.TaskPeer{Modern: era.modern, Support: "required", Steps: 2}
			sealed := func(c *Config, _ *Server) { c.State.Key = key }
			a := taskAdapter(t, peer, sealed)
			ctx := WithPrincipal(faultCtx(t), "alice")
			_, err := lookup(t, taskTools(t, a), "p__job").Invoke(WithPendingTask(ctx), map[string]any{"topic": "reefs"})
			var pt *PendingTask
			if !errors.As(err, &pt) || pt.Status != "working" || pt.TaskID == "" {
				t.Fatalf("Invoke(WithPendingTask) = %v, want a working *PendingTask", err)
			}
			b, err := json.Marshal(pt)
			if err != nil {
				t.Fatal(err)
			}
			if held, err := json.Marshal(struct{ Task PendingTask }{*pt}); err != nil || string(held) != `{"Task":`+string(b)+`}` {
				t.Errorf("a struct holding the pending task by value marshals to %s, %v; want the task's JSON", held, err)
			}
			a.Close()

			b2 := taskAdapter(t, peer, sealed)
			var stored PendingTask
			if err := json.Unmarshal(b, &stored); err != nil {
				t.Fatal(err)
			}
			if stored.ID() == "" || stored.ID() != pt.ID() || !stored.Issued().Equal(pt.Issued()) {
				t.Errorf("stored ID %q issued %v, want %q issued %v", stored.ID(), stored.Issued(), pt.ID(), pt.Issued())
			}
			if _, err := b2.Resume(WithPrincipal(faultCtx(t), "mallory"), &stored, Collected()); !errors.Is(err, ErrWrongPrincipal) {
				t.Fatalf("CollectTask as another principal = %v, want ErrWrongPrincipal", err)
			}
			var tampered PendingTask
			if err := json.Unmarshal(flipBox(t, b), &tampered); err != nil {
				t.Fatal(err)
			}
			if _, err := b2.Resume(ctx, &tampered, Collected()); !errors.Is(err, ErrTamperedState) {
				t.Fatalf("CollectTask of tampered state = %v, want ErrTamperedState", err)
			}
			res, err := b2.Resume(ctx, &stored, Collected())
			if err != nil || res.Text() != "done: reefs" {
				t.Fatalf("CollectTask on a new Adapter = %v, %v; want done: reefs", res, err)
			}

			never := lookup(t, taskTools(t, b2), "p__job")
			dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			if _, err := never.Invoke(dctx, map[string]any{"mode": "never"}); !errors.As(err, &pt) || pt.Status != "working" {
				t.Fatalf("Invoke past its deadline = %v, want a *PendingTask", err)
			}
			if err := b2.CancelTask(ctx, pt); err != nil {
				t.Fatalf("CancelTask: %v", err)
			}
			if _, err := b2.Resume(ctx, pt, Collected()); !errors.Is(err, ErrTaskFailed) {
				t.Fatalf("CollectTask of a cancelled task = %v, want ErrTaskFailed", err)
			}
		})
	}
}

// TestTasksCancel: cancelling a call's context sends tasks/cancel.
func TestTasksCancel(t *testing.T) {
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			peer := &faultserver.TaskPeer{Modern: era.modern, Support: "required"}
			a := taskAdapter(t, peer, nil)
			ctx, cancel := context.WithCancel(faultCtx(t))
			defer cancel()
			pctx := WithProgress(ctx, func(Progress) { cancel() })
			_, err := lookup(t, taskTools(t, a), "p__job").Invoke(pctx, map[string]any{"mode": "never"})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Invoke cancelled = %v, want context.Canceled", err)
			}
			if n := peer.Methods("tasks/cancel"); n != 1 {
				t.Errorf("tasks/cancel sent %d times, want 1", n)
			}
		})
	}
}

// TestTasksModernInterrupt: a modern task's questions are an *Interrupt
// that survives JSON and resumes on another Adapter through tasks/update;
// with an ElicitationHandler they are answered inline.
func TestTasksModernInterrupt(t *testing.T) {
	peer := &faultserver.TaskPeer{Modern: true, Support: "required"}
	a := taskAdapter(t, peer, nil)
	ctx := faultCtx(t)
	_, err := lookup(t, taskTools(t, a), "p__job").Invoke(ctx, map[string]any{"mode": "ask", "topic": "t"})
	var in *Interrupt
	if !errors.As(err, &in) || len(in.Requests) != 1 || in.Requests[0].Key != "q" || in.Requests[0].Message != "Which one?" {
		t.Fatalf("Invoke(ask) = %v, want an *Interrupt asking q", err)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var stored Interrupt
	if err := json.Unmarshal(b, &stored); err != nil {
		t.Fatal(err)
	}
	b2 := taskAdapter(t, peer, nil)
	res, err := b2.Resume(ctx, &stored, Answered(map[string]Answer{"q": {Action: Accept, Content: map[string]any{"pick": "north"}}}))
	if err != nil || res.Text() != "done: t" {
		t.Fatalf("Resume on a new Adapter = %v, %v; want done: t", res, err)
	}
	if got := peer.Answers(); len(got) != 1 || !strings.Contains(got[0], `"pick":"north"`) {
		t.Errorf("tasks/update delivered %q, want the answer", got)
	}

	inline := taskAdapter(t, peer, func(c *Config, _ *Server) {
		c.ElicitationHandler = func(context.Context, ElicitationRequest) (Answer, error) {
			return Answer{Action: Accept, Content: map[string]any{"pick": "south"}}, nil
		}
	})
	res, err = lookup(t, taskTools(t, inline), "p__job").Invoke(ctx, map[string]any{"mode": "ask", "topic": "u"})
	if err != nil || res.Text() != "done: u" {
		t.Fatalf("Invoke(ask) answered inline = %v, %v", res, err)
	}
}

// TestTasksHostile: a server that breaks the protocol fails the call with
// a typed error, within bounded time and memory: an unknown status, an
// answer for another task, a result over MaxMessageBytes, a failed task;
// a task that never ends, or floods status changes with a zero poll
// interval, is left pending after TaskWait, polled no faster than the
// lower bound. Nothing is left running after Close.
func TestTasksHostile(t *testing.T) {
	for _, era := range taskEras {
		t.Run(era.name, func(t *testing.T) {
			before := goroutines()
			peer := &faultserver.TaskPeer{Modern: era.modern, Support: "required", HugeBytes: 8 << 10}
			a, err := New(Config{TaskWait: 500 * time.Millisecond, MaxMessageBytes: 4 << 10, Middleware: []Middleware{progressEverywhere(func(context.Context, Progress) {})},
				Servers: map[string]Server{"p": {Transport: peer.Transport()}}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := faultCtx(t)
			job := lookup(t, taskTools(t, a), "p__job")
			for mode, want := range map[string]error{"unknown": errBadTask, "otherid": errBadTask, "huge": ErrMessageTooLarge, "fail": ErrTaskFailed} {
				if _, err := job.Invoke(ctx, map[string]any{"mode": mode}); !errors.Is(err, want) {
					t.Errorf("mode %s: %v, want %v", mode, err, want)
				} else {
					checkServerErr(t, err, "p")
				}
			}
			start := time.Now()
			for _, mode := range []string{"never", "flood"} {
				var pt *PendingTask
				if _, err := job.Invoke(ctx, map[string]any{"mode": mode}); !errors.As(err, &pt) {
					t.Errorf("mode %s: %v, want a *PendingTask after TaskWait", mode, err)
				}
			}
			if polls, most := peer.Methods("tasks/get"), int(2*time.Since(start)/tasks.MinPollInterval)+2; polls > most {
				t.Errorf("%d polls in %v, more than %d", polls, time.Since(start), most)
			}
			a.Close()
			peer.Wait()
			checkNoLeaks(t, before)
		})
	}
}

// TestTaskResultScreened: a modern task's result, which comes inside the
// answer to tasks/get where the connection's screen does not look, is
// screened as a tools/call result is before go-sdk decodes it: an input
// request that is null fails the call (go-sdk's decoder panicked on it,
// ending the process), and content of a type go-sdk does not know stands
// as a placeholder instead of failing the call.
func TestTaskResultScreened(t *testing.T) {
	for result, want := range map[string]string{
		`{"content":[],"inputRequests":{"q":null}}`: `error: invalid task answer from server: result: invalid result from server: input request "q" is not an object`,
		`{"content":[{"type":"video"}]}`:            `text: [unsupported content type "video"]`,
	} {
		peer := &faultserver.TaskPeer{Modern: true, Support: "required", Result: result}
		a := newAdapter(t, Config{Servers: map[string]Server{"p": {Transport: peer.Transport()}}})
		res, err := lookup(t, taskTools(t, a), "p__job").Invoke(faultCtx(t), map[string]any{"mode": "result"})
		got := ""
		switch {
		case err != nil && errors.Is(err, errBadTask):
			got = "error: " + strings.TrimPrefix(err.Error(), `mcpadapter: server "p": call tool "job": `)
		case err == nil:
			got = "text: " + res.Text()
		}
		if got != want {
			t.Errorf("result %s: Invoke() = %v, %v; want %s", result, res, err, want)
		}
	}
}

// TestTasksNegotiated: the modern tasks extension is declared on the
// adapter's task requests only, never on go-sdk's own (which a server may
// then not answer with a task); a modern server that does not declare the
// extension gets no task requests, and its task-required tool is not
// offered, nor is a legacy server's that does not declare task-augmented
// tools/call (capabilities.tasks.requests.tools.call), over a stream and a
// custom transport; a tool that forbids tasks is never called as one; a
// legacy server that ignores the task answers with the tool's result.
func TestTasksNegotiated(t *testing.T) {
	peer := &faultserver.TaskPeer{Modern: true, Support: "required"}
	a := taskAdapter(t, peer, func(_ *Config, s *Server) { s.Tasks = TasksOptional })
	ctx := faultCtx(t)
	ts := taskTools(t, a)
	if _, err := lookup(t, ts, "p__job").Invoke(ctx, map[string]any{"topic": "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := lookup(t, ts, "p__plain").Invoke(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n, all := peer.Methods("declared tools/call"), peer.Methods("tools/call"); n != 1 || all != 1 {
		t.Errorf("tools/call declaring the extension: %d of %d, want the task call only", n, all)
	}
	if n := peer.Methods("declared tools/list") + peer.Methods("declared server/discover"); n != 0 {
		t.Errorf("go-sdk's requests declared the extension %d times, want never", n)
	}

	ignoring := &faultserver.TaskPeer{Support: "required", IgnoreTasks: true}
	if res, err := lookup(t, taskTools(t, taskAdapter(t, ignoring, nil)), "p__job").Invoke(ctx, nil); err != nil || res.Text() != "sync: job" {
		t.Errorf("a legacy server that ignores the task: %v, %v; want its result", res, err)
	}

	for _, custom := range []bool{false, true} {
		undeclared := &faultserver.TaskPeer{NoExtension: true, Support: "required"}
		u := taskAdapter(t, undeclared, func(_ *Config, s *Server) {
			if custom {
				s.Transport = func(ctx context.Context) (mcp.Transport, error) {
					tr, err := undeclared.Transport()(ctx)
					return opaqueTransport{tr}, err
				}
			}
		})
		if taskTools(t, u).Lookup("p__job") != nil {
			t.Errorf("custom=%v: a legacy server without capabilities.tasks.requests.tools.call has its task-required tool offered", custom)
		}
	}

	for _, support := range []string{"required", "forbidden"} {
		bare := &faultserver.TaskPeer{Modern: true, NoExtension: support == "required", Support: support}
		b := taskAdapter(t, bare, func(_ *Config, s *Server) { s.Tasks = TasksOptional })
		ts := taskTools(t, b)
		if support == "required" {
			if ts.Lookup("p__job") != nil {
				t.Errorf("a modern server without the extension has its task-required tool offered")
			}
			continue
		}
		if res, err := lookup(t, ts, "p__job").Invoke(ctx, nil); err != nil || res.Text() != "sync: job" {
			t.Errorf("forbidden tool: %v, %v; want a synchronous call", res, err)
		}
		if n := bare.Methods("declared tools/call"); n != 0 {
			t.Errorf("a forbidden tool was called as a task %d times", n)
		}
	}
}

// TestTasksStatus: Status counts the tasks a call waits for.
func TestTasksStatus(t *testing.T) {
	peer := &faultserver.TaskPeer{Modern: false, Support: "required"}
	a := taskAdapter(t, peer, nil)
	ctx, cancel := context.WithCancel(faultCtx(t))
	defer cancel()
	seen := make(chan int, 1)
	pctx := WithProgress(ctx, func(Progress) {
		select {
		case seen <- a.Status().Servers["p"].TasksInFlight:
		default:
		}
		cancel()
	})
	_, err := lookup(t, taskTools(t, a), "p__job").Invoke(pctx, map[string]any{"mode": "never"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Invoke = %v, want it cancelled", err)
	}
	if n := <-seen; n != 1 {
		t.Errorf("TasksInFlight during the call = %d, want 1", n)
	}
	if n := a.Status().Servers["p"].TasksInFlight; n != 0 {
		t.Errorf("TasksInFlight after the call = %d, want 0", n)
	}
}

// TestTasksLine: over Streamable HTTP, a legacy task bound to its session
// outlives the Adapter that started it. Its question, asked on the stream
// of tasks/result, is an *Interrupt (no handler) that a new Adapter
// answers by request id on the task's session, or is answered inline by
// the handler; a pending task is collected on a new Adapter; the first
// Adapter's Close leaves the session (no DELETE) while its task is out,
// and ends it once the task settled; a stored session the server forgot
// (a restart with a durable store) falls back to the new Adapter's own
// session; a broken tasks/result stream fails the call, it does not hang.
func TestTasksLine(t *testing.T) {
	ctx := faultCtx(t)
	peer := &faultserver.TaskPeer{Support: "required"}
	hs := httptest.NewServer(peer.HTTP())
	defer hs.Close()
	srv := Server{URL: hs.URL}
	key := []byte("0123456789abcdef0123456789abcdef") // sealed state alone stores a task's session
	open := func(handler func(context.Context, ElicitationRequest) (Answer, error)) (*Adapter, *Tool) {
		a, err := New(Config{Servers: map[string]Server{"p": srv}, ElicitationHandler: handler, State: StateOptions{Key: key}})
		if err != nil {
			t.Fatal(err)
		}
		ts, err := a.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return a, lookup(t, ts, "p__job")
	}
	closeIt := func(a *Adapter, deletes int) {
		t.Helper()
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if n := peer.Methods("DELETE"); n != deletes {
			t.Errorf("DELETEs after Close: %d, want %d", n, deletes)
		}
	}

	// A question: an interrupt, answered on a new Adapter.
	a, job := open(nil)
	_, err := job.Invoke(ctx, map[string]any{"mode": "ask", "topic": "tides"})
	var intr *Interrupt
	if !errors.As(err, &intr) || len(intr.Requests) != 1 || intr.Requests[0].Message != "Which one?" {
		t.Fatalf("Invoke(ask) = %v, want an *Interrupt with the question", err)
	}
	b, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	closeIt(a, 0)
	var back Interrupt
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	a, _ = open(nil)
	if err := a.Unseal(&back); err != nil {
		t.Fatal(err)
	}
	res, err := a.Resume(ctx, &back, Answered(map[string]Answer{back.Requests[0].Key: {Action: Accept, Content: map[string]any{"pick": "a"}}}))
	if err != nil || res.Text() != "done: tides" {
		t.Fatalf("Resume on a new Adapter = %v, %v; want done: tides", res, err)
	}
	if got := peer.Answers(); len(got) != 1 || !strings.Contains(got[0], `"pick":"a"`) {
		t.Errorf("the server got the answers %q", got)
	}
	closeIt(a, 1) // its own session: nothing of it is out

	// A question answered on the Adapter that made it: its session ends
	// with it once the task settled.
	a, job = open(nil)
	if _, err := job.Invoke(ctx, map[string]any{"mode": "ask", "topic": "isles"}); !errors.As(err, &intr) {
		t.Fatalf("Invoke(ask) = %v, want an *Interrupt", err)
	}
	if res, err := a.Resume(ctx, intr, Answered(map[string]Answer{intr.Requests[0].Key: {Action: Accept, Content: map[string]any{"pick": "c"}}})); err != nil || res.Text() != "done: isles" {
		t.Fatalf("Resume on the same Adapter = %v, %v", res, err)
	}
	closeIt(a, 2)

	// A question answered inline.
	a, job = open(func(context.Context, ElicitationRequest) (Answer, error) {
		return Answer{Action: Accept, Content: map[string]any{"pick": "b"}}, nil
	})
	if res, err := job.Invoke(ctx, map[string]any{"mode": "ask", "topic": "reefs"}); err != nil || res.Text() != "done: reefs" {
		t.Fatalf("Invoke(ask) with a handler = %v, %v", res, err)
	}
	closeIt(a, 3)

	// A pending task, collected on a new Adapter.
	a, job = open(nil)
	_, err = job.Invoke(WithPendingTask(ctx), map[string]any{"topic": "dunes"})
	var pt *PendingTask
	if !errors.As(err, &pt) {
		t.Fatalf("Invoke(WithPendingTask) = %v, want a *PendingTask", err)
	}
	stored, err := json.Marshal(pt)
	if err != nil {
		t.Fatal(err)
	}
	closeIt(a, 3)
	var pending PendingTask
	if err := json.Unmarshal(stored, &pending); err != nil {
		t.Fatal(err)
	}
	a, _ = open(nil)
	if res, err := a.Resume(ctx, &pending, Collected()); err != nil || res.Text() != "done: dunes" {
		t.Fatalf("CollectTask on a new Adapter = %v, %v", res, err)
	}
	closeIt(a, 4)

	// Collected by the Adapter that made it: its session ends with it.
	a, job = open(nil)
	_, err = job.Invoke(WithPendingTask(ctx), map[string]any{"topic": "capes"})
	if !errors.As(err, &pt) {
		t.Fatalf("Invoke(WithPendingTask) = %v", err)
	}
	if res, err := a.Resume(ctx, pt, Collected()); err != nil || res.Text() != "done: capes" {
		t.Fatalf("CollectTask = %v, %v", res, err)
	}
	closeIt(a, 5)

	// A stored session the server forgot (400, as server-everything
	// answers), its tasks kept: cancelled and collected from the new
	// Adapter's session, the caller's PendingTask unchanged.
	unbound := &faultserver.TaskPeer{Support: "required", Unbound: true, MissingStatus: http.StatusBadRequest}
	uhs := httptest.NewServer(unbound.HTTP())
	defer uhs.Close()
	ua := newAdapter(t, Config{Servers: map[string]Server{"p": {URL: uhs.URL}}, State: StateOptions{Key: key}})
	ujob := lookup(t, taskTools(t, ua), "p__job")
	if _, err := ujob.Invoke(WithPendingTask(ctx), map[string]any{"topic": "bays"}); !errors.As(err, &pt) {
		t.Fatalf("Invoke(WithPendingTask) = %v", err)
	}
	stored, _ = json.Marshal(pt)
	var doomed *PendingTask
	if _, err := ujob.Invoke(WithPendingTask(ctx), map[string]any{"topic": "gulfs"}); !errors.As(err, &doomed) {
		t.Fatalf("Invoke(WithPendingTask) = %v", err)
	}
	unbound.ForgetSessions()
	json.Unmarshal(stored, &pending)
	ub := newAdapter(t, Config{Servers: map[string]Server{"p": {URL: uhs.URL}}, State: StateOptions{Key: key}})
	session := doomed.session
	if err := ub.CancelTask(ctx, doomed); err != nil || doomed.session != session {
		t.Fatalf("CancelTask of a forgotten session = %v, its session %q → %q", err, session, doomed.session)
	}
	if n := unbound.Methods("tasks/cancel"); n != 1 {
		t.Errorf("tasks/cancel sent %d times, want 1", n)
	}
	if res, err := ub.Resume(ctx, &pending, Collected()); err != nil || res.Text() != "done: bays" {
		t.Fatalf("CollectTask of a forgotten session = %v, %v; want the task from the new session", res, err)
	}

	// A broken stream.
	a, job = open(nil)
	defer a.Close()
	if _, err := job.Invoke(ctx, map[string]any{"mode": "break"}); err == nil || !strings.Contains(err.Error(), "task line lost") {
		t.Fatalf("Invoke(break) = %v, want the task line lost", err)
	}
}

// TestTasksLineHandlerRefused: a legacy task's question that the
// ElicitationHandler fails, or answers with content that does not fit,
// is answered to the server with JSON-RPC error -32603 and the task goes
// on, on a task line (Streamable HTTP) as on the session (the in-memory
// transport, where go-sdk takes the question): the same legacy server
// behaves the same on every transport (server-everything's
// simulate-research-query failed over Streamable HTTP alone, its
// question left unanswered).
func TestTasksLineHandlerRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func() (Answer, error)
		want   string // in the error the server got
	}{
		{"handler error", func() (Answer, error) { return Answer{}, errors.New("the user closed the dialog") }, "the user closed the dialog"},
		{"answer does not fit", func() (Answer, error) { return Answer{Action: Accept, Content: map[string]any{"other": "x"}}, nil }, "does not fit"},
	} {
		for _, transport := range []string{"http", "memory"} {
			t.Run(tc.name+"/"+transport, func(t *testing.T) {
				ctx := faultCtx(t)
				peer := &faultserver.TaskPeer{Support: "required"}
				srv := Server{Transport: peer.Transport()}
				if transport == "http" {
					hs := httptest.NewServer(peer.HTTP())
					defer hs.Close()
					srv = Server{URL: hs.URL}
				}
				var asked atomic.Int32
				a := newAdapter(t, Config{Servers: map[string]Server{"p": srv}, ElicitationHandler: func(context.Context, ElicitationRequest) (Answer, error) {
					asked.Add(1)
					return tc.answer()
				}})
				ts, err := a.ListTools(ctx)
				if err != nil {
					t.Fatal(err)
				}
				res, err := lookup(t, ts, "p__job").Invoke(ctx, map[string]any{"mode": "ask", "topic": "reefs"})
				if err != nil || !strings.HasPrefix(res.Text(), "done: reefs") {
					t.Fatalf("Invoke = %v, %v; want the task's result", res, err)
				}
				got := peer.Answers()
				if asked.Load() != 1 || len(got) != 1 || !strings.Contains(got[0], "-32603") || !strings.Contains(got[0], tc.want) {
					t.Errorf("handler asked %d times; the server got %q, want one error -32603 saying %q", asked.Load(), got, tc.want)
				}
			})
		}
	}
}

// TestTasksLineSessionIDRedacted: the id of the session a task line joins
// (a stored task's, not the resuming connection's own) is hidden in the
// errors of the line, as the connection's own is: go-sdk's errors name
// it ("mismatching session IDs"), here once the server echoed it and
// then claimed another.
func TestTasksLineSessionIDRedacted(t *testing.T) {
	ctx := faultCtx(t)
	peer := &faultserver.TaskPeer{Support: "required"}
	var mu sync.Mutex
	stored, seen := "", 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if s := r.Header.Get("Mcp-Session-Id"); s != "" && s == stored {
			seen++
			w.Header().Set("Mcp-Session-Id", s) // echoed, as many servers do
			if seen > 1 {
				w.Header().Set("Mcp-Session-Id", "changed-1")
			}
		}
		mu.Unlock()
		peer.HTTP().ServeHTTP(w, r)
	}))
	defer hs.Close()
	key := []byte("0123456789abcdef0123456789abcdef")
	cfg := Config{Servers: map[string]Server{"p": {URL: hs.URL}}, State: StateOptions{Key: key}}
	a := newAdapter(t, cfg)
	_, err := lookup(t, taskTools(t, a), "p__job").Invoke(ctx, map[string]any{"mode": "ask", "topic": "tides"})
	var intr *Interrupt
	if !errors.As(err, &intr) {
		t.Fatalf("Invoke(ask) = %v, want an *Interrupt", err)
	}
	b, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	var back Interrupt
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	other := newAdapter(t, cfg)
	if err := other.Unseal(&back); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	stored = "session-1" // the first Adapter's, where the task lives
	mu.Unlock()
	_, err = other.Resume(ctx, &back, Answered(map[string]Answer{back.Requests[0].Key: {Action: Accept, Content: map[string]any{"pick": "a"}}}))
	t.Logf("Resume error: %v", err)
	if err == nil || strings.Contains(err.Error(), stored) {
		t.Errorf("Resume over a line whose session id changed = %v; want an error that does not show the session id %q", err, stored)
	}
}
