package mcpadapter

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/faultserver"
)

// A sessionRecorder passes requests to a server and records every
// Mcp-Session-Id it sees, and how many requests passed.
type sessionRecorder struct {
	next     http.Handler
	mu       sync.Mutex
	sessions map[string]bool
	requests int
}

func (r *sessionRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests++
	if id := req.Header.Get("Mcp-Session-Id"); id != "" {
		r.sessions[id] = true
	}
	r.mu.Unlock()
	r.next.ServeHTTP(w, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	if id := w.Header().Get("Mcp-Session-Id"); id != "" {
		r.sessions[id] = true
	}
}

// seen returns the session ids recorded and the count of requests.
func (r *sessionRecorder) seen() ([]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.sessions)), r.requests
}

// TestSealedStateIsSecret: over Streamable HTTP, a sealed PendingTask and a
// sealed task Interrupt, whose payloads hold the session their task lives
// on, show no session id in their JSON (in clear, base64 or hex), and
// nothing but the envelope's format, key id, ID and issue time outside
// the box; a second Adapter with the same key reads (Unseal), collects
// and resumes them; one with another key, or an edited byte, refuses them
// before any I/O.
func TestSealedStateIsSecret(t *testing.T) {
	ctx := faultCtx(t)
	peer := &faultserver.TaskPeer{Support: "required"}
	rec := &sessionRecorder{next: peer.HTTP(), sessions: map[string]bool{}}
	hs := httptest.NewServer(rec)
	defer hs.Close()
	key := []byte("0123456789abcdef0123456789abcdef")
	cfg := Config{Servers: map[string]Server{"p": {URL: hs.URL}}, State: StateOptions{Key: key}}
	a := newAdapter(t, cfg)
	job := lookupTool(t, a, "p__job")
	pt, intr := handOutTasks(t, ctx, job)
	task, err := json.Marshal(pt)
	if err != nil {
		t.Fatal(err)
	}
	question, err := json.Marshal(intr)
	if err != nil {
		t.Fatal(err)
	}
	sessions, _ := rec.seen()
	if len(sessions) == 0 || pt.session == "" || !slices.Contains(sessions, pt.session) {
		t.Fatalf("sessions %q, the task's %q: want the task on a session the proxy saw", sessions, pt.session)
	}
	for name, b := range map[string][]byte{"pending task": task, "task interrupt": question} {
		kind := map[string]string{"pending task": stateTask, "task interrupt": stateInterrupt}[name]
		if payload := payloadOf(t, a, kind, b); !bytes.Contains(payload, []byte(`"session":"`+pt.session+`"`)) {
			t.Errorf("%s: the payload does not hold the session, so this test shows nothing: %s", name, payload)
		}
		for _, s := range sessions {
			for enc, v := range map[string]string{
				"clear": s, "hex": hex.EncodeToString([]byte(s)),
				"base64": base64.StdEncoding.EncodeToString([]byte(s)), "raw base64": base64.RawStdEncoding.EncodeToString([]byte(s)),
				"base64url": base64.URLEncoding.EncodeToString([]byte(s)), "raw base64url": base64.RawURLEncoding.EncodeToString([]byte(s)),
			} {
				if bytes.Contains(b, []byte(v)) {
					t.Errorf("%s: the session id %q is in its JSON (%s): %s", name, s, enc, b)
				}
			}
		}
		var env map[string]json.RawMessage
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatal(err)
		}
		if keys := slices.Sorted(maps.Keys(env)); !slices.Equal(keys, []string{"box", "id", "issued", "key", "sealed"}) {
			t.Errorf("%s: fields %q outside the box, want the envelope's only", name, keys)
		}
	}
	a.Close()

	decode := func(b []byte, v json.Unmarshaler) {
		t.Helper()
		if err := v.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
	}
	answer := func(in *Interrupt) Resolution {
		return Answered(map[string]Answer{in.Requests[0].Key: {Action: Accept, Content: map[string]any{"pick": "a"}}})
	}
	_, before := rec.seen()
	other := cfg
	other.State.Key = []byte("another key, another deployment!")
	a3 := newAdapter(t, other)
	b2 := newAdapter(t, cfg)
	for name, use := range map[string]func(*Adapter, []byte) error{
		"collect": func(a *Adapter, b []byte) error {
			var p PendingTask
			decode(b, &p)
			_, err := a.Resume(ctx, &p, Collected())
			return err
		},
		"cancel": func(a *Adapter, b []byte) error {
			var p PendingTask
			decode(b, &p)
			return a.CancelTask(ctx, &p)
		},
		"resume": func(a *Adapter, b []byte) error {
			var in Interrupt
			decode(b, &in)
			_, err := a.Resume(ctx, &in, Answered(nil))
			return err
		},
		"unseal": func(a *Adapter, b []byte) error {
			var in Interrupt
			decode(b, &in)
			return a.Unseal(&in)
		},
	} {
		state := map[bool][]byte{true: task, false: question}[name == "collect" || name == "cancel"]
		if err := use(a3, state); !errors.Is(err, ErrTamperedState) {
			t.Errorf("%s with another key: %v, want ErrTamperedState", name, err)
		}
		if err := use(b2, flipBox(t, state)); !errors.Is(err, ErrTamperedState) {
			t.Errorf("%s of an edited byte: %v, want ErrTamperedState", name, err)
		}
	}
	if _, after := rec.seen(); after != before {
		t.Errorf("%d requests for the refused state, want none", after-before)
	}

	var in Interrupt
	decode(question, &in)
	if len(in.Requests) != 0 || in.ID() != intr.ID() || !in.Issued().Equal(intr.Issued()) {
		t.Errorf("decoded sealed interrupt: %d requests, ID %q, issued %v; want none until opened, and its stamp", len(in.Requests), in.ID(), in.Issued())
	}
	if err := b2.Unseal(&in); err != nil || len(in.Requests) != 1 || in.Requests[0].Message != "Which one?" {
		t.Fatalf("Unseal = %v, requests %+v; want the question", err, in.Requests)
	}
	if res, err := b2.Resume(ctx, &in, answer(&in)); err != nil || res.Text() != "done: tides" {
		t.Fatalf("Resume on another Adapter = %v, %v; want done: tides", res, err)
	}
	var p PendingTask
	decode(task, &p)
	if res, err := b2.Resume(ctx, &p, Collected()); err != nil || res.Text() != "done: reefs" {
		t.Fatalf("CollectTask on another Adapter = %v, %v; want done: reefs", res, err)
	}
	if err := b2.Unseal(new(int)); err == nil {
		t.Error("Unseal of an *int succeeded")
	}
}

// TestOldStateFormat: state sealed in format 1 (signed, in clear) is
// refused when decoded, of every kind, with errOldStateFormat (and
// ErrInvalidState).
func TestOldStateFormat(t *testing.T) {
	old := []byte(`{"sealed":"{\"version\":1,\"kind\":\"approvalRequired\",\"server\":\"s\",\"tool\":\"s__t\",\"mcpName\":\"t\"}","mac":"c2lnbmF0dXJl"}`)
	for _, v := range []json.Unmarshaler{new(Interrupt), new(ApprovalRequired), new(PendingTask), new(PausedCalls)} {
		if err := json.Unmarshal(old, v); !errors.Is(err, errOldStateFormat) || !errors.Is(err, ErrInvalidState) {
			t.Errorf("%T: Unmarshal of format 1 = %v, want errOldStateFormat and ErrInvalidState", v, err)
		}
	}
}
