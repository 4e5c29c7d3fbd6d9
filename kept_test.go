package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/tasks"
	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
)

// A deleteRecorder passes requests to a server and records the sessions
// it opened (with the X-User of the request that opened each) and the
// DELETEs of each (with their X-User), signalling each DELETE.
type deleteRecorder struct {
	next    http.Handler
	mu      sync.Mutex
	opened  map[string]string   // session → X-User of its initialize
	deletes map[string][]string // session → X-User of each DELETE
	order   []string            // sessions DELETEd, in order
	deleted chan string
}

func newDeleteRecorder(next http.Handler) *deleteRecorder {
	return &deleteRecorder{next: next, opened: map[string]string{}, deletes: map[string][]string{}, deleted: make(chan string, 64)}
}

func (r *deleteRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	id, user := req.Header.Get("Mcp-Session-Id"), req.Header.Get("X-User")
	if req.Method == http.MethodDelete {
		r.mu.Lock()
		r.deletes[id] = append(r.deletes[id], user)
		r.order = append(r.order, id)
		r.mu.Unlock()
		r.deleted <- id
	}
	r.next.ServeHTTP(w, req)
	if opened := w.Header().Get("Mcp-Session-Id"); opened != "" && id == "" {
		r.mu.Lock()
		r.opened[opened] = user
		r.mu.Unlock()
	}
}

// keptLog is a slog.Handler that signals each session kept, and each
// kept session ended with its reason.
type keptLog struct {
	kept  chan struct{}
	ended chan string
}

func newKeptLog() *keptLog {
	return &keptLog{kept: make(chan struct{}, 64), ended: make(chan string, 64)}
}

func (h *keptLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *keptLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *keptLog) WithGroup(string) slog.Handler            { return h }
func (h *keptLog) Handle(_ context.Context, r slog.Record) error {
	switch r.Message {
	case "mcpadapter: session kept for the tasks handed out on it":
		h.kept <- struct{}{}
	case "mcpadapter: kept session ended":
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "reason" {
				h.ended <- r.Level.String() + " " + a.Value.String()
			}
			return true
		})
	}
	return nil
}

// keptSetup is a per-principal task server behind a deleteRecorder, and
// an Adapter with MaxPrincipalConns 2 logging to a keptLog.
func keptSetup(t *testing.T, cfg Config) (*Adapter, *deleteRecorder, *keptLog) {
	peer := &faultserver.TaskPeer{Support: "required"}
	rec := newDeleteRecorder(peer.HTTP())
	hs := httptest.NewServer(rec)
	t.Cleanup(hs.Close)
	log := newKeptLog()
	cfg.Servers = map[string]Server{"p": {URL: hs.URL, HeadersFor: func(_ context.Context, principal string) (map[string]string, error) {
		return map[string]string{"X-User": principal}, nil
	}}}
	cfg.MaxPrincipalConns, cfg.Logger = 2, slog.New(log)
	return newAdapter(t, cfg), rec, log
}

// pendingFor calls the job of user's connection with WithPendingTask and
// returns its *PendingTask.
func pendingFor(t *testing.T, ctx context.Context, a *Adapter, user string) *PendingTask {
	t.Helper()
	ctx = WithPrincipal(ctx, user)
	ts, err := a.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pt *PendingTask
	if _, err := lookup(t, ts, "p__job").Invoke(WithPendingTask(ctx), map[string]any{"topic": user}); !errors.As(err, &pt) {
		t.Fatalf("%s: Invoke(WithPendingTask) = %v, want a *PendingTask", user, err)
	}
	return pt
}

// TestKeptSessionsEnd (issue 34, A2): 12 principals, MaxPrincipalConns 2,
// each with a pending task: each connection evicted keeps its session
// (Status counts them), and once every task was collected through the
// same Adapter, on the principals' new connections, and the Adapter
// closed, every session it opened was DELETEd once, with its principal's
// headers. Past the bound of kept sessions, the oldest is ended first,
// with a log line at Info.
func TestKeptSessionsEnd(t *testing.T) {
	ctx := faultCtx(t)
	const users = 12
	a, rec, log := keptSetup(t, Config{})
	pending := make([]*PendingTask, users)
	for i := range users {
		pending[i] = pendingFor(t, ctx, a, fmt.Sprintf("user%02d", i))
		if i >= 2 {
			receive(t, log.kept, "the evicted connection's session kept")
		}
	}
	if n := a.Status().Servers["p"].KeptSessions; n != users-2 {
		t.Errorf("Status KeptSessions = %d, want %d", n, users-2)
	}
	for i, p := range pending {
		res, err := a.Resume(WithPrincipal(ctx, fmt.Sprintf("user%02d", i)), p, Collected())
		if err != nil || res.Text() != fmt.Sprintf("done: user%02d", i) {
			t.Fatalf("CollectTask of user%02d = %v, %v", i, res, err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	if len(rec.opened) != 2*users {
		t.Errorf("%d sessions opened, want %d", len(rec.opened), 2*users)
	}
	for session, user := range rec.opened {
		if got := rec.deletes[session]; len(got) != 1 || got[0] != user {
			t.Errorf("session of %s: DELETEs with X-User %q, want one with %s", user, got, user)
		}
	}
	rec.mu.Unlock()
	if n := a.Status().Servers["p"].KeptSessions; n != 0 {
		t.Errorf("Status KeptSessions after Close = %d, want 0", n)
	}

	// The bound: 3 kept sessions at most.
	a, rec, log = keptSetup(t, Config{})
	a.pool.generation().kept.Max = 3
	for i := range users {
		pendingFor(t, ctx, a, fmt.Sprintf("user%02d", i))
		if i < 2 {
			continue
		}
		receive(t, log.kept, "the evicted connection's session kept")
		if i-2 >= 3 { // the 4th kept session and on: the oldest ends
			receive(t, rec.deleted, "the oldest kept session's DELETE")
			if why := receive(t, log.ended, "the log of its end"); why != "INFO "+tasks.WhyBound {
				t.Errorf("logged %q, want INFO %s", why, tasks.WhyBound)
			}
		}
	}
	if n := a.Status().Servers["p"].KeptSessions; n != 3 {
		t.Errorf("Status KeptSessions = %d, want 3", n)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, session := range rec.order {
		if want := fmt.Sprintf("user%02d", i); rec.opened[session] != want || rec.deletes[session][0] != want {
			t.Errorf("DELETE %d: the session of %s, want the oldest, %s's", i, rec.opened[session], want)
		}
	}
	if len(rec.order) != users-2-3 {
		t.Errorf("%d sessions ended, want %d", len(rec.order), users-2-3)
	}
}

// TestTaskSessionNotStored (issue 34, A1): without a StateKey, the JSON
// of a pending task and of a task's interrupt holds no session, only that
// the task lives on one; the Adapter that made them collects and resumes
// them from that JSON, another one refuses them with errNeedsStateKey
// before any request of the task.
func TestTaskSessionNotStored(t *testing.T) {
	ctx := faultCtx(t)
	peer := &faultserver.TaskPeer{Support: "required"}
	rec := &sessionRecorder{next: peer.HTTP(), sessions: map[string]bool{}}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	cfg := Config{Servers: map[string]Server{"p": {URL: hs.URL}}}
	a := newAdapter(t, cfg)
	job := lookupTool(t, a, "p__job")
	pt, intr := handOutTasks(t, ctx, job)
	task, _ := json.Marshal(pt)
	question, _ := json.Marshal(intr)
	sessions, _ := rec.seen()
	for name, b := range map[string][]byte{"pending task": task, "task interrupt": question} {
		if !bytes.Contains(b, []byte(`"sessionNotStored":true`)) || bytes.Contains(b, []byte(`"session"`)) {
			t.Errorf("%s: %s; want sessionNotStored and no session", name, b)
		}
		for _, s := range sessions {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s: the session id %q is in its JSON: %s", name, s, b)
			}
		}
	}
	decode := func() (*PendingTask, *Interrupt) {
		var p PendingTask
		var in Interrupt
		if err := json.Unmarshal(task, &p); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(question, &in); err != nil {
			t.Fatal(err)
		}
		return &p, &in
	}
	answer := func(in *Interrupt) Resolution {
		return Answered(map[string]Answer{in.Requests[0].Key: {Action: Accept, Content: map[string]any{"pick": "a"}}})
	}

	b := newAdapter(t, cfg)
	taskRequests := func() int {
		return peer.Methods("tasks/get") + peer.Methods("tasks/result") + peer.Methods("tasks/cancel")
	}
	before := taskRequests()
	p, in := decode()
	if _, err := b.Resume(ctx, p, Collected()); !errors.Is(err, errNeedsStateKey) {
		t.Errorf("CollectTask on another Adapter = %v, want errNeedsStateKey", err)
	}
	if err := b.CancelTask(ctx, p); !errors.Is(err, errNeedsStateKey) {
		t.Errorf("CancelTask on another Adapter = %v, want errNeedsStateKey", err)
	}
	if _, err := b.Resume(ctx, in, answer(in)); !errors.Is(err, errNeedsStateKey) {
		t.Errorf("Resume on another Adapter = %v, want errNeedsStateKey", err)
	}
	if after := taskRequests(); after != before {
		t.Errorf("%d requests for tasks another Adapter cannot follow, want none", after-before)
	}

	p, in = decode()
	if res, err := a.Resume(ctx, in, answer(in)); err != nil || res.Text() != "done: tides" {
		t.Errorf("Resume on the same Adapter = %v, %v; want done: tides", res, err)
	}
	if res, err := a.Resume(ctx, p, Collected()); err != nil || res.Text() != "done: reefs" {
		t.Errorf("CollectTask on the same Adapter = %v, %v; want done: reefs", res, err)
	}
}

// TestKeptSessionMaxAge: a kept session past Config.KeptSessionMaxAge is
// ended (its DELETE, with its principal's headers), its task still out,
// with a log line at Info.
func TestKeptSessionMaxAge(t *testing.T) {
	ctx := faultCtx(t)
	a, rec, log := keptSetup(t, Config{State: StateOptions{KeptSessionMaxAge: time.Millisecond}})
	for i := range 3 {
		pendingFor(t, ctx, a, fmt.Sprintf("user%02d", i))
	}
	receive(t, log.kept, "user00's session kept")
	session := receive(t, rec.deleted, "the aged session's DELETE")
	if why := receive(t, log.ended, "the log of its end"); why != "INFO "+tasks.WhyAged {
		t.Errorf("logged %q, want INFO %s", why, tasks.WhyAged)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.opened[session] != "user00" || rec.deletes[session][0] != "user00" {
		t.Errorf("DELETEd the session of %q with X-User %q, want user00's", rec.opened[session], rec.deletes[session])
	}
}

// handOutTasks returns a pending task of the TaskPeer's job (topic reefs)
// and an interrupt of its question (mode ask, topic tides).
func handOutTasks(t *testing.T, ctx context.Context, job *Tool) (*PendingTask, *Interrupt) {
	t.Helper()
	var pt *PendingTask
	if _, err := job.Invoke(WithPendingTask(ctx), map[string]any{"topic": "reefs"}); !errors.As(err, &pt) {
		t.Fatalf("Invoke(WithPendingTask) = %v, want a *PendingTask", err)
	}
	var intr *Interrupt
	if _, err := job.Invoke(ctx, map[string]any{"mode": "ask", "topic": "tides"}); !errors.As(err, &intr) || intr.task == nil {
		t.Fatalf("Invoke(ask) = %v, want a task's *Interrupt", err)
	}
	return pt, intr
}

// TestTaskSessionNotStoredFollowedAgain: without a key, a pending task
// whose connection was evicted is followed on a task line to its kept
// session; when it is pending again, the new state joins that session in
// the record, so that the same Adapter collects it again (before, it said
// the session was not stored).
func TestTaskSessionNotStoredFollowedAgain(t *testing.T) {
	ctx := faultCtx(t)
	peer := &faultserver.TaskPeer{Support: "required", Steps: 1000}
	hs := httptest.NewServer(peer.HTTP())
	defer hs.Close()
	a := newAdapter(t, Config{MaxPrincipalConns: 1, TaskWait: 50 * time.Millisecond,
		Servers: map[string]Server{"p": {URL: hs.URL, HeadersFor: func(_ context.Context, principal string) (map[string]string, error) {
			return map[string]string{"X-User": principal}, nil
		}}}})
	first := pendingFor(t, ctx, a, "u0")
	pendingFor(t, ctx, a, "u1") // evicts u0's connection, which keeps its session
	u0 := WithPrincipal(ctx, "u0")
	roundTrip := func(p *PendingTask) *PendingTask {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back PendingTask
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		return &back
	}
	p := roundTrip(first)
	for i := range 2 {
		var again *PendingTask
		if _, err := a.Resume(u0, p, Collected()); !errors.As(err, &again) {
			t.Fatalf("collect %d on the same Adapter = %v, want the task pending again", i+1, err)
		}
		p = roundTrip(again)
	}
}
