package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
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
// new Adapter. The Adapters share a StateKey: only sealed state stores
// the session a task lives on.
func TestIntegrationTasksAcrossAdaptersNPM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
	defer cancel()
	srv := npmEverything(t, "streamableHttp")
	key := []byte("0123456789abcdef0123456789abcdef")
	keyed := func(cfg *mcpadapter.Config) { cfg.State.Key = key }
	first := func() (*mcpadapter.Adapter, *mcpadapter.Tool) {
		a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{"everything": srv}, State: mcpadapter.StateOptions{Key: key}})
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
	a2 := integAdapter(t, srv, keyed)
	if err := a2.Unseal(&back); err != nil {
		t.Fatal(err)
	}
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
	res, err = integAdapter(t, srv, keyed).Resume(ctx, &stored, mcpadapter.Collected())
	if err != nil || !strings.Contains(res.Text(), "# Research Report: reefs") {
		t.Fatalf("CollectTask on a new Adapter = %v, %v; want the report", res, err)
	}
}

// sessionProxy is a reverse proxy in front of an MCP server that records
// every Mcp-Session-Id it sees, in requests and in responses, and counts
// the requests that pass.
type sessionProxy struct {
	mu       sync.Mutex
	sessions map[string]bool
	requests int
}

// newSessionProxy starts a sessionProxy in front of the server at target
// and returns it with the URL that reaches target through it.
func newSessionProxy(t *testing.T, target string) (*sessionProxy, string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &sessionProxy{sessions: map[string]bool{}}
	origin := &url.URL{Scheme: u.Scheme, Host: u.Host}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(origin)
			p.record(pr.In.Header.Get("Mcp-Session-Id"), true)
		},
		ModifyResponse: func(resp *http.Response) error {
			p.record(resp.Header.Get("Mcp-Session-Id"), false)
			return nil
		},
	}
	hs := httptest.NewServer(rp)
	t.Cleanup(hs.Close)
	return p, hs.URL + u.Path
}

// record notes a session id (if any) and, for a request, counts it.
func (p *sessionProxy) record(id string, request bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if request {
		p.requests++
	}
	if id != "" {
		p.sessions[id] = true
	}
}

// seen returns the session ids recorded and the count of requests.
func (p *sessionProxy) seen() ([]string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(maps.Keys(p.sessions)), p.requests
}

// editBox returns stored state b with one character inside its sealed box
// changed.
func editBox(t *testing.T, b []byte) []byte {
	t.Helper()
	const field = `"box":"`
	start := bytes.Index(b, []byte(field))
	if start < 0 {
		t.Fatalf("no box in %s", b)
	}
	start += len(field)
	end := bytes.IndexByte(b[start:], '"')
	if end < 8 {
		t.Fatalf("box too short in %s", b)
	}
	out := bytes.Clone(b)
	i := start + end/2
	if out[i] == 'A' {
		out[i] = 'B'
	} else {
		out[i] = 'A'
	}
	return out
}

// TestIntegrationSealedStateNPM: against server-everything over Streamable
// HTTP behind a proxy that records every Mcp-Session-Id, the JSON of a
// sealed PendingTask and of a task Interrupt holds no session id (in
// clear, base64 or hex); an Adapter with another key, or an edited byte,
// refuses them before any I/O; a second Adapter with the same key resumes
// and collects them.
func TestIntegrationSealedStateNPM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), integrationTimeout)
	defer cancel()
	proxy, addr := newSessionProxy(t, npmEverything(t, "streamableHttp").URL)
	srv := mcpadapter.Server{URL: addr}
	key := []byte("0123456789abcdef0123456789abcdef")
	withKey := func(k []byte) func(*mcpadapter.Config) {
		return func(cfg *mcpadapter.Config) { cfg.State.Key = k }
	}

	a, err := mcpadapter.New(mcpadapter.Config{Servers: map[string]mcpadapter.Server{"everything": srv}, State: mcpadapter.StateOptions{Key: key}})
	if err != nil {
		t.Fatal(err)
	}
	tool := integTool(t, integTools(t, ctx, a), researchTool)
	var intr *mcpadapter.Interrupt
	if _, err := tool.Invoke(ctx, map[string]any{"topic": "tides", "ambiguous": true}); !errors.As(err, &intr) || len(intr.Requests) != 1 {
		t.Fatalf("Invoke(ambiguous) = %v, want a task's *Interrupt with the clarification", err)
	}
	var pt *mcpadapter.PendingTask
	if _, err := tool.Invoke(mcpadapter.WithPendingTask(ctx), map[string]any{"topic": "reefs"}); !errors.As(err, &pt) {
		t.Fatalf("Invoke(WithPendingTask) = %v, want a *PendingTask", err)
	}
	question, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	task, err := json.Marshal(pt)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	sessions, before := proxy.seen()
	if len(sessions) == 0 {
		t.Fatal("the proxy saw no Mcp-Session-Id, so this test shows nothing")
	}
	for name, b := range map[string][]byte{"task interrupt": question, "pending task": task} {
		for _, s := range sessions {
			for enc, v := range map[string]string{
				"clear": s, "hex": hex.EncodeToString([]byte(s)), "HEX": strings.ToUpper(hex.EncodeToString([]byte(s))),
				"base64": base64.StdEncoding.EncodeToString([]byte(s)), "raw base64": base64.RawStdEncoding.EncodeToString([]byte(s)),
				"base64url": base64.URLEncoding.EncodeToString([]byte(s)), "raw base64url": base64.RawURLEncoding.EncodeToString([]byte(s)),
			} {
				if bytes.Contains(b, []byte(v)) {
					t.Errorf("%s: the session id %q is in its JSON (%s): %s", name, s, enc, b)
				}
			}
		}
	}

	// Another key, or an edited byte: refused, and nothing reaches the
	// server.
	c := integAdapter(t, srv, withKey([]byte("another key, another deployment!")))
	b := integAdapter(t, srv, withKey(key))
	for name, use := range map[string]func(*mcpadapter.Adapter, []byte) error{
		"resume": func(a *mcpadapter.Adapter, s []byte) error {
			var in mcpadapter.Interrupt
			if err := json.Unmarshal(s, &in); err != nil {
				return err
			}
			_, err := a.Resume(ctx, &in, mcpadapter.Answered(nil))
			return err
		},
		"collect": func(a *mcpadapter.Adapter, s []byte) error {
			var p mcpadapter.PendingTask
			if err := json.Unmarshal(s, &p); err != nil {
				return err
			}
			_, err := a.Resume(ctx, &p, mcpadapter.Collected())
			return err
		},
		"cancel": func(a *mcpadapter.Adapter, s []byte) error {
			var p mcpadapter.PendingTask
			if err := json.Unmarshal(s, &p); err != nil {
				return err
			}
			return a.CancelTask(ctx, &p)
		},
	} {
		state := task
		if name == "resume" {
			state = question
		}
		if err := use(c, state); !errors.Is(err, mcpadapter.ErrTamperedState) {
			t.Errorf("%s with another key: %v, want ErrTamperedState", name, err)
		}
		if err := use(b, editBox(t, state)); !errors.Is(err, mcpadapter.ErrTamperedState) {
			t.Errorf("%s of an edited byte: %v, want ErrTamperedState", name, err)
		}
	}
	if _, after := proxy.seen(); after != before {
		t.Errorf("%d requests for the refused state, want none", after-before)
	}

	// The same key on a new Adapter: the question answered, the task
	// collected.
	var in mcpadapter.Interrupt
	if err := json.Unmarshal(question, &in); err != nil {
		t.Fatal(err)
	}
	if err := b.Unseal(&in); err != nil || len(in.Requests) != 1 {
		t.Fatalf("Unseal = %v, requests %+v; want the clarification", err, in.Requests)
	}
	res, err := b.Resume(ctx, &in, mcpadapter.Answered(map[string]mcpadapter.Answer{
		in.Requests[0].Key: {Action: mcpadapter.Accept, Content: map[string]any{"interpretation": "historical"}},
	}))
	if err != nil || !strings.Contains(res.Text(), "# Research Report: tides (historical)") {
		t.Fatalf("Resume on another Adapter = %v, %v; want the report with the clarification", res, err)
	}
	var stored mcpadapter.PendingTask
	if err := json.Unmarshal(task, &stored); err != nil {
		t.Fatal(err)
	}
	if res, err = b.Resume(ctx, &stored, mcpadapter.Collected()); err != nil || !strings.Contains(res.Text(), "# Research Report: reefs") {
		t.Fatalf("CollectTask on another Adapter = %v, %v; want the report", res, err)
	}
}
