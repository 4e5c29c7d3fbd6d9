package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/elicit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Host is what a [Call] needs of the adapter: the connection's
// requests, and the call's listeners and questions. Errors a Host returns
// are returned as they are; a Call's own are [*Error] values.
type Host interface {
	// Request sends method with params, a request of the adapter's own
	// on the task's connection, within ctx, and returns its result. ctx
	// bounds every request but MethodResult by Session.Timeout;
	// MethodResult waits for the task's end, and ask, not nil only then,
	// takes the questions a legacy server asks on its stream (those that
	// came together at once), when the host reads them itself (a task
	// line); an error of ask ends the request with it.
	Request(ctx context.Context, method string, params json.RawMessage, ask func([]*jsonrpc.Request) error) (json.RawMessage, error)
	// Respond answers the server's request id, a legacy task's question,
	// with result, on the task's connection.
	Respond(ctx context.Context, id jsonrpc.ID, result json.RawMessage) error
	// Changed tells the call that the task's status or message changed,
	// the n-th time: status and message as the server sent them, cut to
	// a bound.
	Changed(n int, status, message string)
	// Ask takes the questions of a task that is input_required, but those
	// answered before (the server has not caught up yet): a modern task's
	// input requests, or a legacy server's question keyed by its request
	// id ([Call.Answer]). It returns the responses to send, or the error
	// that ends the follow (an interrupt, which resumes through
	// [Call.Answer]).
	Ask(ctx context.Context, asked mcp.InputRequestMap) (mcp.InputResponseMap, error)
}

// A Session is what a [Call] knows of the session its requests go on.
type Session struct {
	Modern  bool   // the modern era (2026-07-28): the tasks extension
	Version string // the negotiated protocol version
	Client  string // the client's name in a modern request's _meta

	Timeout time.Duration // the bound of one request (0: none), the tool's

	// Life is the connection's life: when it ends, the call's waits end
	// and the call fails with an *Error that is Closed. Nil: it never
	// ends.
	Life context.Context
	// Screen, when set, screens a modern task's result before it is
	// decoded, as the connection's screen screens a tools/call result
	// (internal/wire, Screen.Result): that result comes inside the answer
	// to tasks/get, where the connection's screen does not look, and
	// go-sdk's decoder panics on some of what a result may hold (an input
	// request that is null). It returns the result to decode, or the
	// error that fails the call.
	Screen func(result json.RawMessage) (json.RawMessage, error)
}

// An Error is a failure of a [Call] of its own, not of its [Host]: a
// failure of the task or of its protocol (wrapping [ErrBad] or
// [ErrFailed]), the end of the connection's life (Closed), or the end of
// a follow whose caller's context was cancelled, once the task was
// cancelled (Cancelled). It reads as the error it wraps.
type Error struct {
	Err error // the failure; the context's cause when Cancelled

	Closed    bool  // the connection's life (Session.Life) ended
	Cancelled bool  // the caller's context was cancelled: Err is its cause
	CancelErr error // when Cancelled, the failure of the tasks/cancel sent, or nil
}

// Error implements error.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the failure.
func (e *Error) Unwrap() error { return e.Err }

// fail returns err as a failure of the call's own.
func fail(err error) error { return &Error{Err: err} }

// A Call is one call of a tool that runs as a task, while the adapter
// follows it: the task's id and what the server last told of it. A Call
// is used by one goroutine at a time.
type Call struct {
	h       Host
	modern  bool
	meta    map[string]any                                 // the _meta of each request (Meta)
	timeout time.Duration                                  // Session.Timeout
	life    context.Context                                // Session.Life, or a context never done
	screen  func(json.RawMessage) (json.RawMessage, error) // Session.Screen, or nil

	id       string
	last     *taskWire       // the task as the server made it, until a follow takes it
	changes  int             // status changes reported
	status   string          // as last reported
	message  string          // as last reported
	answered map[string]bool // input request keys answered
}

// NewCall returns the call of the task id ("" until [Call.Start] makes
// one) on session s, through h.
func NewCall(h Host, s Session, id string) *Call {
	c := &Call{h: h, modern: s.Modern, meta: Meta(s), timeout: s.Timeout, life: s.Life, screen: s.Screen, id: id}
	if c.life == nil {
		c.life = context.Background()
	}
	return c
}

// ID returns the id of the call's task.
func (c *Call) ID() string { return c.id }

// Last returns the status and message of the task as the server made it
// (after Start), cut to a bound.
func (c *Call) Last() (status, message string) {
	if c.last == nil {
		return "", ""
	}
	return c.last.seen()
}

// Start sends the task-augmented tools/call of the tool name with args,
// with the call's progress token (or "") and meta in its _meta (beneath
// the keys of the task's own), and returns the tool's result
// when the server answered at once (the modern server chose to, or the
// legacy one ignored the task), or nil when it made a task: its id is
// c.ID, and Follow follows it.
func (c *Call) Start(ctx context.Context, name string, args map[string]any, token string, meta map[string]any) (*mcp.CallToolResult, error) {
	if args == nil {
		args = map[string]any{}
	}
	params := map[string]any{"name": name, "arguments": args}
	meta = maps.Collect(maps.All(meta)) // a copy, never nil
	maps.Copy(meta, c.meta)
	if token != "" {
		meta["progressToken"] = token
	}
	if !c.modern {
		params["task"] = map[string]any{"ttl": taskTTL.Milliseconds()}
	}
	params["_meta"] = meta
	raw, err := c.send(ctx, "tools/call", params, nil)
	if err != nil {
		return nil, err
	}
	var w taskWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fail(fmt.Errorf("%w: %w", ErrBad, err))
	}
	switch {
	case w.Task != nil:
		w = *w.Task
	case !c.modern || w.ResultType != "task":
		return toolResult(raw)
	}
	if w.TaskID == "" {
		return nil, fail(fmt.Errorf("%w: no task id", ErrBad))
	}
	c.id, c.last = w.TaskID, &w
	return nil, nil
}

// send sends method with params through the host, within ctx and, but
// for MethodResult, the bound of one request, with ask for the server's
// questions (Host.Request).
func (c *Call) send(ctx context.Context, method string, params map[string]any, ask func([]*jsonrpc.Request) error) (json.RawMessage, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, fail(err)
	}
	if c.timeout > 0 && method != MethodResult {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.timeout, ErrRequestTimeout)
		defer cancel()
	}
	return c.h.Request(ctx, method, p, ask)
}

// request sends a tasks request of method for the task and decodes the
// task it answers (for tasks/get; tasks/update and tasks/cancel are
// acknowledged, and return nil).
func (c *Call) request(ctx context.Context, method string, extra map[string]any) (*taskWire, error) {
	params := map[string]any{"taskId": c.id, "_meta": c.meta}
	maps.Copy(params, extra)
	raw, err := c.send(ctx, method, params, nil)
	if err != nil || method != "tasks/get" {
		return nil, err
	}
	var w taskWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fail(fmt.Errorf("%w: %s: %w", ErrBad, method, err))
	}
	if w.Task != nil {
		w = *w.Task
	}
	if w.TaskID != c.id {
		return nil, fail(fmt.Errorf("%w: %s answered for another task", ErrBad, method))
	}
	return &w, nil
}

// Cancel asks the server to cancel the task (tasks/cancel).
func (c *Call) Cancel(ctx context.Context) error {
	_, err := c.request(ctx, "tasks/cancel", nil)
	return err
}

// Answer sends responses to the questions of the task: a modern task's
// with tasks/update, remembered answered for the rest of the call; a
// legacy server's, each as the response to its request, by id (the key
// [Call.Follow] gave it).
func (c *Call) Answer(ctx context.Context, responses mcp.InputResponseMap) error {
	if !c.modern {
		if c.timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, c.timeout, ErrRequestTimeout)
			defer cancel()
		}
		for key, r := range responses {
			id, err := RequestID(key)
			if err != nil {
				return fail(fmt.Errorf("%w: answer to %q: %w", ErrBad, Truncate(key), err))
			}
			b, err := json.Marshal(r)
			if err != nil {
				return fail(err)
			}
			if err := c.h.Respond(ctx, id, b); err != nil {
				return err
			}
		}
		return nil
	}
	if _, err := c.request(ctx, "tasks/update", map[string]any{"inputResponses": responses}); err != nil {
		return err
	}
	if c.answered == nil {
		c.answered = make(map[string]bool)
	}
	for k := range responses {
		c.answered[k] = true
	}
	return nil
}

// Follow polls the task, from what Start saw of it if anything, until it
// ends, within ctx and wait (0: ten minutes): its result; its failure
// (an [*Error] wrapping [ErrFailed]); an error of Host.Ask (an interrupt);
// [ErrPending] when a deadline of ctx or wait passed first. A cancelled
// ctx cancels the task.
func (c *Call) Follow(ctx context.Context, wait time.Duration) (*mcp.CallToolResult, error) {
	waitCtx, cancel := waitContext(ctx, wait)
	defer cancel()
	w := c.last
	c.last = nil
	if w == nil {
		var err error
		if w, err = c.request(waitCtx, "tasks/get", nil); err != nil {
			return c.stopped(ctx, waitCtx, err)
		}
	}
	c.report(w)
	interval := w.interval()
	for {
		switch w.Status {
		case statusCompleted:
			return c.outcome(waitCtx, ctx, w)
		case statusFailed, statusCancelled:
			return nil, fail(w.failure())
		case statusInputRequired:
			if c.modern {
				res, err := c.asked(waitCtx, w)
				if res != nil || err != nil {
					return res, err
				}
				break
			}
			// The legacy server asks on the tasks/result stream, which
			// ends with the task.
			return c.outcome(waitCtx, ctx, w)
		case statusWorking:
		default:
			return nil, fail(fmt.Errorf("%w: unknown status %q", ErrBad, Truncate(w.Status)))
		}
		if err := c.wait(waitCtx, interval); err != nil {
			return c.stopped(ctx, waitCtx, err)
		}
		next, err := c.request(waitCtx, "tasks/get", nil)
		if err != nil {
			return c.stopped(ctx, waitCtx, err)
		}
		if next.Status == w.Status && next.StatusMessage == w.StatusMessage {
			interval = min(interval*3/2, maxPollInterval) // nothing new: back off
		} else {
			interval = next.interval()
		}
		w = next
		c.report(w)
	}
}

// Collect waits, within ctx and wait (0: ten minutes), for the result of
// a legacy task whose tasks/result is open already: a question the server
// asked on its stream was answered, and the host's request of MethodResult
// goes on (Host.Request), with no poll first. Its outcomes are Follow's.
func (c *Call) Collect(ctx context.Context, wait time.Duration) (*mcp.CallToolResult, error) {
	if c.modern {
		return nil, fail(errors.New("a modern task has no tasks/result to collect"))
	}
	waitCtx, cancel := waitContext(ctx, wait)
	defer cancel()
	return c.outcome(waitCtx, ctx, nil)
}

// waitContext returns the context of a follow within ctx and wait (0:
// DefaultWait).
func waitContext(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	if wait <= 0 {
		wait = DefaultWait
	}
	return context.WithTimeout(ctx, wait)
}

// wait waits d, within ctx and the connection's life (a life that ended
// is context.Canceled, as a cancelled ctx).
func (c *Call) wait(ctx context.Context, d time.Duration) error {
	waiting, cancel := context.WithTimeoutCause(ctx, d, errWaited)
	defer cancel()
	defer context.AfterFunc(c.life, cancel)()
	<-waiting.Done()
	if context.Cause(waiting) == errWaited {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}

// errWaited is the cause of a wait that waited its time (Call.wait).
var errWaited = errors.New("waited")

// stopped ends a follow (whose wait, within ctx, is waitCtx) that err
// stopped: a deadline of the caller's or of the wait returns ErrPending;
// a cancelled caller cancels the task (tasks/cancel); any other err is
// returned.
func (c *Call) stopped(ctx, waitCtx context.Context, err error) (*mcp.CallToolResult, error) {
	if c.life.Err() != nil {
		return nil, &Error{Err: context.Cause(c.life), Closed: true}
	}
	switch {
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
		defer cancel()
		return nil, &Error{Err: context.Cause(ctx), Cancelled: true, CancelErr: c.Cancel(cctx)}
	case waitCtx.Err() != nil:
		return nil, ErrPending // the caller's deadline, or the wait's
	}
	return nil, err
}

// outcome collects the result of the completed task (modern: w's; legacy:
// tasks/result, which also waits for the end of an input_required one
// while the server asks on its stream; w is not read).
func (c *Call) outcome(waitCtx, ctx context.Context, w *taskWire) (*mcp.CallToolResult, error) {
	if c.modern {
		if len(w.Result) == 0 {
			return nil, fail(fmt.Errorf("%w: completed without a result", ErrBad))
		}
		raw := w.Result
		if c.screen != nil {
			var err error
			if raw, err = c.screen(raw); err != nil {
				return nil, fail(fmt.Errorf("%w: result: %w", ErrBad, err))
			}
		}
		return toolResult(raw)
	}
	raw, err := c.send(waitCtx, MethodResult, map[string]any{"taskId": c.id}, func(qs []*jsonrpc.Request) error {
		return c.questions(waitCtx, qs)
	})
	if err != nil {
		return c.stopped(ctx, waitCtx, err) // an interrupt comes back as it is
	}
	return toolResult(raw)
}

// questions takes qs, a legacy server's questions asked on the stream of
// tasks/result, keyed by their request ids, to the host (Host.Ask), and
// sends the host's answers at once; the host's error ends the follow, as
// does a question that cannot be decoded ([ErrBad]).
func (c *Call) questions(ctx context.Context, qs []*jsonrpc.Request) error {
	asked := make(mcp.InputRequestMap, len(qs))
	for _, q := range qs {
		key, err := json.Marshal(q.ID.Raw())
		var p mcp.ElicitParams
		if err == nil {
			err = json.Unmarshal(q.Params, &p)
		}
		if err != nil {
			return fail(fmt.Errorf("%w: %s: %w", ErrBad, MethodElicit, err))
		}
		asked[string(key)] = &p
	}
	answered, err := c.h.Ask(ctx, asked)
	if err != nil {
		return err
	}
	return c.Answer(ctx, answered)
}

// RequestID returns the request id of key, the JSON of a legacy
// question's id ([Call.questions]).
func RequestID(key string) (jsonrpc.ID, error) {
	var v any
	d := json.NewDecoder(strings.NewReader(key))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return jsonrpc.ID{}, err
	}
	if n, ok := v.(json.Number); ok {
		i, err := n.Int64()
		if err != nil {
			return jsonrpc.ID{}, err
		}
		return jsonrpc.MakeID(float64(i)) // as go-sdk decodes a number id
	}
	return jsonrpc.MakeID(v)
}

// report tells the host of a change of the task's status or message.
func (c *Call) report(w *taskWire) {
	status, message := w.seen()
	if status == c.status && message == c.message {
		return
	}
	c.status, c.message = status, message
	c.changes++
	c.h.Changed(c.changes, status, message)
}

// asked handles the questions of a modern task (w input_required): those
// the host answers inline are sent with tasks/update (nil, nil: go on
// polling); an error of the host, an interrupt, ends the follow.
func (c *Call) asked(ctx context.Context, w *taskWire) (*mcp.CallToolResult, error) {
	asked, err := elicit.DecodeRequests(w.InputRequests)
	if err != nil || len(asked) == 0 {
		return nil, fail(fmt.Errorf("%w: input_required without input requests", ErrBad))
	}
	for k := range c.answered {
		delete(asked, k) // answered: the server has not caught up yet
	}
	if len(asked) == 0 {
		return nil, nil
	}
	answered, err := c.h.Ask(ctx, asked)
	if err != nil {
		return nil, err
	}
	return nil, c.Answer(ctx, answered)
}
