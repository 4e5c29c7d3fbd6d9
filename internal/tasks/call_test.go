package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeHost answers a Call's requests from a script, and records what the
// call did.
type fakeHost struct {
	answers   map[string][]string // method -> answers in turn (the last one repeats)
	sent      []string            // methods, in order
	at        []time.Time         // when each was sent
	params    []map[string]any    // their params
	changes   []string
	asked     []mcp.InputRequestMap
	askErr    error              // Ask's error, when set
	questions []*jsonrpc.Request // asked on the stream of tasks/result
	responded []string           // "id result", in order
}

func (h *fakeHost) Request(ctx context.Context, method string, params json.RawMessage, ask func([]*jsonrpc.Request) error) (json.RawMessage, error) {
	var p map[string]any
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	h.sent, h.at, h.params = append(h.sent, method), append(h.at, time.Now()), append(h.params, p)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ask != nil {
		for _, q := range h.questions {
			if err := ask([]*jsonrpc.Request{q}); err != nil {
				return nil, err
			}
		}
	}
	as := h.answers[method]
	if len(as) == 0 {
		return json.RawMessage(`{}`), nil
	}
	a := as[0]
	if len(as) > 1 {
		h.answers[method] = as[1:]
	}
	if a == "block" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return json.RawMessage(a), nil
}

func (h *fakeHost) Changed(n int, status, message string) {
	h.changes = append(h.changes, fmt.Sprintf("%d %s %s", n, status, message))
}

func (h *fakeHost) Respond(_ context.Context, id jsonrpc.ID, result json.RawMessage) error {
	h.responded = append(h.responded, fmt.Sprintf("%v %s", id.Raw(), result))
	return nil
}

func (h *fakeHost) Ask(_ context.Context, asked mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	h.asked = append(h.asked, asked)
	if h.askErr != nil {
		return nil, h.askErr
	}
	res := mcp.InputResponseMap{}
	for k := range asked {
		res[k] = &mcp.ElicitResult{Action: "accept"}
	}
	return res, nil
}

// waits returns how long the call waited before each tasks/get.
func (h *fakeHost) waits() []time.Duration {
	var waits []time.Duration
	for i, m := range h.sent {
		if m == "tasks/get" && i > 0 {
			waits = append(waits, h.at[i].Sub(h.at[i-1]))
		}
	}
	return waits
}

func get(status, msg string, poll float64) string {
	return fmt.Sprintf(`{"taskId":"t1","status":%q,"statusMessage":%q,"pollInterval":%v}`, status, msg, poll)
}

// TestFollowPolicy: the poll interval is the server's, bounded below and
// above, and backs off by half when nothing changed; each change is
// reported once, in order; the legacy result comes from tasks/result.
func TestFollowPolicy(t *testing.T) {
	synctest.Test(t, testFollowPolicy)
}

func testFollowPolicy(t *testing.T) {
	h := &fakeHost{answers: map[string][]string{
		"tools/call": {`{"task":` + get("working", "a", 0) + `}`},
		"tasks/get": {
			get("working", "a", 0), get("working", "a", 0), get("working", "b", 60000),
			get("working", "b", 60000), get("completed", "", 0),
		},
		MethodResult: {`{"content":[{"type":"text","text":"done"}]}`},
	}}
	c := NewCall(h, Session{Timeout: time.Minute}, "")
	if res, err := c.Start(t.Context(), "job", nil, "tok", nil); res != nil || err != nil || c.ID() != "t1" {
		t.Fatalf("Start = %v, %v, id %q; want a task t1", res, err, c.ID())
	}
	if p := h.params[0]; p["task"] == nil || p["_meta"].(map[string]any)["progressToken"] != "tok" {
		t.Errorf("legacy tools/call params %v, want params.task and the progress token", p)
	}
	if s, m := c.Last(); s != "working" || m != "a" {
		t.Errorf("Last = %q, %q", s, m)
	}
	res, err := c.Follow(t.Context(), 0)
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("Follow = %v, %v", res, err)
	}
	want := []time.Duration{MinPollInterval, MinPollInterval * 3 / 2, MinPollInterval * 9 / 4, maxPollInterval, maxPollInterval}
	if fmt.Sprint(h.waits()) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", h.waits(), want)
	}
	if got := strings.Join(h.changes, ","); got != "1 working a,2 working b,3 completed " {
		t.Errorf("changes %q", got)
	}
	for _, p := range h.params[1:] {
		if meta, _ := p["_meta"].(map[string]any); meta["progressToken"] != nil {
			t.Errorf("a tasks request carries the call's progress token: %v", p)
		}
	}
}

// TestFollowBounds: a server that breaks the protocol fails the call with
// ErrBad, a failed task with ErrFailed and its message cut to the bound,
// each an *Error of the call's own.
func TestFollowBounds(t *testing.T) {
	long := strings.Repeat("é", maxStatusMessage)
	for name, tc := range map[string]struct {
		modern bool
		answer string
		want   error
	}{
		"unknown status":   {false, get("paused", "", 0), ErrBad},
		"another task":     {false, `{"taskId":"t2","status":"working"}`, ErrBad},
		"not json":         {false, `[1]`, ErrBad},
		"failed":           {false, get("failed", long, 0), ErrFailed},
		"no result":        {true, get("completed", "", 0), ErrBad},
		"no questions":     {true, get("input_required", "", 0), ErrBad},
		"modern error":     {true, `{"taskId":"t1","status":"failed","error":{"code":1,"message":"boom"}}`, ErrFailed},
		"cancelled":        {false, get("cancelled", "", 0), ErrFailed},
		"modern completed": {true, `{"taskId":"t1","status":"completed","result":{"content":[]}}`, nil},
	} {
		t.Run(name, func(t *testing.T) {
			h := &fakeHost{answers: map[string][]string{"tasks/get": {tc.answer}}}
			_, err := NewCall(h, Session{Modern: tc.modern}, "t1").Follow(t.Context(), 0)
			var own *Error
			if !errors.Is(err, tc.want) || (tc.want != nil) != errors.As(err, &own) {
				t.Fatalf("Follow = %v, want %v as an *Error", err, tc.want)
			}
			if err != nil && len(err.Error()) > maxStatusMessage+100 {
				t.Errorf("error of %d bytes: the server's text is not cut", len(err.Error()))
			}
		})
	}
}

// TestFollowDeadlines: the follow's wait passing leaves the task pending;
// a cancelled context cancels it, outside the cancelled context; the end
// of the connection's life ends the follow, Closed, the task left alone.
func TestFollowDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &fakeHost{answers: map[string][]string{"tasks/get": {get("working", "", 0), "block"}}}
		if _, err := NewCall(h, Session{}, "t1").Follow(t.Context(), time.Second); err != ErrPending {
			t.Fatalf("Follow past its wait = %v, want ErrPending", err)
		}
		if slices.Contains(h.sent, "tasks/cancel") {
			t.Errorf("a pending task was cancelled")
		}

		h = &fakeHost{answers: map[string][]string{"tasks/get": {get("working", "", 0), "block"}}}
		ctx, cancel := context.WithCancelCause(t.Context())
		stop := errors.New("stop")
		go func() {
			synctest.Wait()
			cancel(stop)
		}()
		_, err := NewCall(h, Session{}, "t1").Follow(ctx, 0)
		var own *Error
		if !errors.As(err, &own) || !own.Cancelled || own.Err != stop || own.CancelErr != nil {
			t.Fatalf("Follow cancelled = %#v, want Cancelled with the cause", err)
		}
		if last := h.sent[len(h.sent)-1]; last != "tasks/cancel" {
			t.Errorf("last request %s, want tasks/cancel", last)
		}

		h = &fakeHost{answers: map[string][]string{"tasks/get": {get("working", "", 0)}}}
		life, end := context.WithCancel(t.Context())
		go func() {
			synctest.Wait()
			end()
		}()
		_, err = NewCall(h, Session{Life: life}, "t1").Follow(t.Context(), 0)
		if !errors.As(err, &own) || !own.Closed {
			t.Fatalf("Follow at the connection's end = %#v, want Closed", err)
		}
		if slices.Contains(h.sent, "tasks/cancel") {
			t.Errorf("a follow ended by the connection's end cancelled the task")
		}
	})
}

// TestFollowQuestions: a modern task's questions go to Ask, their answers
// to tasks/update, and questions answered before are not asked again.
func TestFollowQuestions(t *testing.T) {
	ask := `{"taskId":"t1","status":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}}}`
	h := &fakeHost{answers: map[string][]string{"tasks/get": {ask, ask, `{"taskId":"t1","status":"completed","result":{"content":[]}}`}}}
	if _, err := NewCall(h, Session{Modern: true}, "t1").Follow(t.Context(), 0); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.asked[0]["q"].(*mcp.ElicitParams); len(h.asked) != 1 || !ok {
		t.Errorf("asked %v, want q once", h.asked)
	}
	if got := strings.Join(h.sent, ","); got != "tasks/get,tasks/update,tasks/get,tasks/get" {
		t.Errorf("requests %s", got)
	}
}

// TestFollowLegacyQuestions: a legacy server's questions on the stream of
// tasks/result go to Ask keyed by their request ids, and each answer is
// the response to its request; an error of Ask (an interrupt) ends the
// follow as it is; a question that cannot be decoded is ErrBad; Answer
// answers a stored question by its id.
func TestFollowLegacyQuestions(t *testing.T) {
	question := func(id any, params string) *jsonrpc.Request {
		rid, _ := jsonrpc.MakeID(id)
		return &jsonrpc.Request{ID: rid, Method: MethodElicit, Params: json.RawMessage(params)}
	}
	ok := `{"message":"which?","requestedSchema":{"type":"object"}}`
	input := get("input_required", "asking", 1000)
	h := &fakeHost{
		answers:   map[string][]string{"tasks/get": {input}, MethodResult: {`{"content":[{"type":"text","text":"done"}]}`}},
		questions: []*jsonrpc.Request{question(float64(7), ok), question("s-1", ok)},
	}
	res, err := NewCall(h, Session{}, "t1").Follow(t.Context(), 0)
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("Follow = %v, %v; want the result", res, err)
	}
	if len(h.asked) != 2 || h.asked[0]["7"] == nil || h.asked[1][`"s-1"`] == nil {
		t.Errorf("asked %v, want the questions keyed 7 and \"s-1\"", h.asked)
	}
	if got := strings.Join(h.responded, "|"); got != `7 {"action":"accept"}|s-1 {"action":"accept"}` {
		t.Errorf("responded %s", got)
	}

	stop := errors.New("interrupted")
	h = &fakeHost{answers: map[string][]string{"tasks/get": {input}}, questions: []*jsonrpc.Request{question(float64(7), ok)}, askErr: stop}
	if _, err := NewCall(h, Session{}, "t1").Follow(t.Context(), 0); err != stop || len(h.responded) != 0 {
		t.Errorf("Follow with an interrupt = %v, responded %v; want the interrupt, nothing sent", err, h.responded)
	}
	h = &fakeHost{answers: map[string][]string{"tasks/get": {input}}, questions: []*jsonrpc.Request{question(float64(7), `[1]`)}}
	if _, err := NewCall(h, Session{}, "t1").Follow(t.Context(), 0); !errors.Is(err, ErrBad) {
		t.Errorf("Follow with a malformed question = %v, want ErrBad", err)
	}

	h = &fakeHost{}
	if err := NewCall(h, Session{}, "t1").Answer(t.Context(), mcp.InputResponseMap{"7": &mcp.ElicitResult{Action: "decline"}}); err != nil || len(h.responded) != 1 || h.responded[0] != `7 {"action":"decline"}` {
		t.Errorf("Answer = %v, responded %v", err, h.responded)
	}
	if err := NewCall(h, Session{}, "t1").Answer(t.Context(), mcp.InputResponseMap{"{": &mcp.ElicitResult{}}); !errors.Is(err, ErrBad) {
		t.Errorf("Answer to a key that is no id = %v, want ErrBad", err)
	}
}

// TestCollect: Collect waits for a legacy task's tasks/result with no
// poll first, within its wait (ErrPending past it); a modern task has no
// tasks/result to collect.
func TestCollect(t *testing.T) {
	h := &fakeHost{answers: map[string][]string{MethodResult: {`{"content":[{"type":"text","text":"done"}]}`}}}
	res, err := NewCall(h, Session{}, "t1").Collect(t.Context(), 0)
	if err != nil || len(res.Content) != 1 || strings.Join(h.sent, ",") != MethodResult {
		t.Fatalf("Collect = %v, %v, sent %v; want the result of one tasks/result", res, err, h.sent)
	}
	synctest.Test(t, func(t *testing.T) {
		h := &fakeHost{answers: map[string][]string{MethodResult: {"block"}}}
		if _, err := NewCall(h, Session{}, "t1").Collect(t.Context(), time.Second); err != ErrPending {
			t.Errorf("Collect past its wait = %v, want ErrPending", err)
		}
	})
	h = &fakeHost{}
	if _, err := NewCall(h, Session{Modern: true}, "t1").Collect(t.Context(), 0); err == nil || len(h.sent) != 0 {
		t.Errorf("Collect of a modern task = %v, sent %v; want an error, nothing sent", err, h.sent)
	}
}

// TestStartAtOnce: a modern server may answer a task-augmented call at
// once; the call then has the tool's result, and no task.
func TestStartAtOnce(t *testing.T) {
	h := &fakeHost{answers: map[string][]string{"tools/call": {`{"content":[{"type":"text","text":"now"}]}`}}}
	c := NewCall(h, Session{Modern: true, Version: "2026-07-28", Client: "me"}, "")
	res, err := c.Start(t.Context(), "job", map[string]any{"a": 1}, "", map[string]any{"app/tag": "x", mcp.MetaKeyProtocolVersion: "forged"})
	if err != nil || res == nil || c.ID() != "" {
		t.Fatalf("Start = %v, %v, id %q; want the result", res, err, c.ID())
	}
	meta := h.params[0]["_meta"].(map[string]any)
	if h.params[0]["task"] != nil || meta[mcp.MetaKeyProtocolVersion] != "2026-07-28" || meta["app/tag"] != "x" {
		t.Errorf("modern params %v, want the session's version over the caller's _meta, and the caller's key", h.params[0])
	}
	if caps := meta[mcp.MetaKeyClientCapabilities].(map[string]any); caps["extensions"].(map[string]any)[Extension] == nil {
		t.Errorf("the extension is not declared: %v", caps)
	}
	h = &fakeHost{answers: map[string][]string{"tools/call": {`{"resultType":"task","status":"working"}`}}}
	if _, err := NewCall(h, Session{Modern: true}, "").Start(t.Context(), "job", nil, "", nil); !errors.Is(err, ErrBad) {
		t.Errorf("a task without an id: %v, want ErrBad", err)
	}
}

// TestRules: the interval's bounds, the text bound, what runs as a task,
// what declares tasks.
func TestRules(t *testing.T) {
	ms := func(f float64) *float64 { return &f }
	for _, tc := range []struct {
		w    taskWire
		want time.Duration
	}{
		{taskWire{}, defaultPollInterval},
		{taskWire{PollInterval: ms(1)}, MinPollInterval},
		{taskWire{PollInterval: ms(1e12)}, maxPollInterval},
		{taskWire{PollInterval: ms(1e3), PollIntervalMs: ms(2e3)}, 2 * time.Second},
	} {
		if got := tc.w.interval(); got != tc.want {
			t.Errorf("interval of %+v = %v, want %v", tc.w, got, tc.want)
		}
	}
	if s := Truncate(strings.Repeat("é", maxStatusMessage)); len(s) > maxStatusMessage+len("…") || !strings.HasSuffix(s, "…") || !utf8Valid(s) {
		t.Errorf("truncate: %d bytes, %q...", len(s), s[:8])
	}
	if !Augmented(Required, false) || Augmented(Optional, false) || !Augmented(Optional, true) || Augmented("forbidden", true) || Augmented("", true) {
		t.Errorf("Augmented: wrong rule")
	}
	if Declared(nil) || !Declared(&mcp.ServerCapabilities{Extensions: map[string]any{Extension: map[string]any{}}}) {
		t.Errorf("Declared: wrong rule")
	}
	for result, want := range map[string][2]bool{
		`{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":{}}}}}}`:   {true, true},
		`{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"cancel":{}}}}`:                        {true, false},
		`{"protocolVersion":"2025-11-25","capabilities":{"tasks":{"requests":{"tools":{"call":true}}}}}`: {true, false},
		`{"protocolVersion":"2025-11-25","capabilities":{"tasks":7}}`:                                    {true, false},
		`{"protocolVersion":"2025-11-25"}`:                                                               {true, false},
		`{"tools":[]}`:                                                                                   {false, false},
		`{"supportedVersions":["2026-07-28"],"capabilities":{}}`:                                         {false, false},
	} {
		var c Capability
		if initialize := c.Saw([]byte(result)); initialize != want[0] || c.Declared() != want[1] {
			t.Errorf("Saw(%s) = %v, declared %v; want %v", result, initialize, c.Declared(), want)
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
