package mcpadapter

// Long-running tools: MCP tasks. A server may run a tool call in the
// background: the client calls it task-augmented, the server answers at
// once with a task (its id, status and a poll interval), and the client
// polls tasks/get until the task ends, then collects the outcome. Notes on
// the design:
//
//   - Two eras. In the legacy era (2025-11-25, SEP-1686) a tool's
//     descriptor says execution.taskSupport ("required", "optional",
//     "forbidden"; absent is forbidden); the client asks for a task with
//     params.task, polls tasks/get, fetches the result with tasks/result
//     (which also carries the server's questions, as live elicitation
//     requests, while the task is input_required) and may tasks/cancel it.
//     In the modern era (2026-07-28) tasks are the io.modelcontextprotocol
//     /tasks extension (SEP-2663): the client declares the extension in a
//     request's own capabilities and the server decides; tasks/get carries
//     the result, the error or the questions (inputRequests), which
//     tasks/update answers.
//   - go-sdk v1.8.0 has no tasks API. Every tasks request, the
//     task-augmented tools/call included, is a request of the adapter's
//     own on the session's connection (rawrpc.go; sdkcompat.go, entry 8).
//     The extension is declared only on those requests: go-sdk's own
//     requests never say the client takes a task, so no server may answer
//     them with one.
//   - A call waits for its task within its context and Config.TaskWait.
//     When either deadline passes (or at once, under WithPendingTask) it
//     returns a *PendingTask: stored state like an Interrupt, sealed and
//     bound to the call's principal, that any Adapter collects or cancels
//     later. Cancelling the context sends tasks/cancel.
//   - Modern questions become an *Interrupt that resumes through
//     tasks/update, in any process. Legacy questions arrive as live
//     requests on the tasks/result stream, which cannot outlive the
//     session: Config.ElicitationHandler answers them, or they are
//     declined.
//   - A hostile server cannot make a call poll faster than minPollInterval,
//     hold it past its deadlines, or grow its memory: statuses are read
//     one poll at a time, status messages are cut to maxStatusMessage,
//     results are bounded by Config.MaxMessageBytes like any message, and
//     an unknown status, a task id that is not the one asked for, or a
//     task without an id fails the call with ErrBadTask.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TaskMode says which tools of a server the adapter calls as tasks
// ([Server.Tasks], [WithTasks]).
type TaskMode int

const (
	// TasksRequired, the default, calls as tasks the tools that require
	// it (execution.taskSupport "required") and every other tool as usual.
	TasksRequired TaskMode = iota
	// TasksOptional also calls as tasks the tools that allow it
	// (taskSupport "optional").
	TasksOptional
	// TasksOff calls nothing as a task: tools that require tasks are not
	// offered, and fail with [ErrTaskRequired].
	TasksOff
)

// The values of execution.taskSupport, and the task statuses.
const (
	taskRequired = "required"
	taskOptional = "optional"

	statusWorking       = "working"
	statusInputRequired = "input_required"
	statusCompleted     = "completed"
	statusFailed        = "failed"
	statusCancelled     = "cancelled"
)

// tasksExtension is the modern era's name of the tasks extension.
const tasksExtension = "io.modelcontextprotocol/tasks"

// Bounds of the polling of a task and of what a server tells of it.
const (
	minPollInterval     = 100 * time.Millisecond
	maxPollInterval     = 30 * time.Second
	defaultPollInterval = time.Second
	defaultTaskWait     = 10 * time.Minute
	taskTTL             = time.Hour // asked of legacy servers
	maxStatusMessage    = 1 << 10
	cancelTaskTimeout   = 5 * time.Second
)

var (
	// ErrTaskFailed is returned, wrapped in a [*ServerError], when a task
	// ends failed or cancelled on the server's side.
	ErrTaskFailed = errors.New("mcpadapter: task failed")

	// ErrBadTask is returned, wrapped in a [*ServerError], when a server
	// breaks the tasks protocol: a task without an id, an unknown status,
	// a task id other than the one asked for, an answer that cannot be
	// decoded.
	ErrBadTask = errors.New("mcpadapter: invalid task answer from server")
)

// taskModeKey is the context key of [WithTasks]; pendingKey of
// [WithPendingTask].
type (
	taskModeKey struct{}
	pendingKey  struct{}
)

// WithTasks returns a copy of ctx whose tool calls run as tasks as mode
// says, in place of their server's [Server.Tasks].
func WithTasks(ctx context.Context, mode TaskMode) context.Context {
	return context.WithValue(ctx, taskModeKey{}, mode)
}

// WithPendingTask returns a copy of ctx whose tool calls that run as tasks
// return a [*PendingTask] as soon as the server has made the task, without
// waiting for it.
func WithPendingTask(ctx context.Context) context.Context {
	return context.WithValue(ctx, pendingKey{}, true)
}

// tasksOn reports whether c may run tasks at all: tasks are not off for
// its server, and a modern server declares the extension.
func (c *conn) tasksOn() bool {
	if c.cfg.Tasks == TasksOff {
		return false
	}
	if !c.modern() {
		return true
	}
	ir := c.session.InitializeResult()
	if ir == nil || ir.Capabilities == nil {
		return false
	}
	_, ok := ir.Capabilities.Extensions[tasksExtension]
	return ok
}

// asTask reports whether a call of t under ctx runs as a task.
func (t *Tool) asTask(ctx context.Context) bool {
	if t.taskSupport() != taskRequired && t.taskSupport() != taskOptional {
		return false // forbidden, absent or unknown: never task-augmented
	}
	mode := t.conn.cfg.Tasks
	if m, ok := ctx.Value(taskModeKey{}).(TaskMode); ok {
		mode = m
	}
	switch {
	case mode == TasksOff || !t.conn.tasksOn():
		return false
	case t.taskSupport() == taskOptional:
		return mode == TasksOptional
	}
	return true
}

// taskWire is a task as both eras send it (tasks/get, tasks/cancel, the
// modern CreateTaskResult; the legacy one nests it under "task").
type taskWire struct {
	ResultType     string          `json:"resultType,omitempty"`
	Task           *taskWire       `json:"task,omitempty"` // legacy CreateTaskResult
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	PollInterval   *float64        `json:"pollInterval,omitempty"`   // legacy, ms
	PollIntervalMs *float64        `json:"pollIntervalMs,omitempty"` // modern
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`  // modern, input_required
	Result         json.RawMessage `json:"result,omitempty"`         // modern, completed
	Error          *jsonrpc.Error  `json:"error,omitempty"`          // modern, failed
}

// interval returns the poll interval the server asks for, bounded.
func (w *taskWire) interval() time.Duration {
	ms := w.PollIntervalMs
	if ms == nil {
		ms = w.PollInterval
	}
	if ms == nil {
		return defaultPollInterval
	}
	d := time.Duration(*ms * float64(time.Millisecond))
	return min(max(d, minPollInterval), maxPollInterval)
}

// A taskCall is one call of a tool that runs as a task, while the adapter
// follows it.
type taskCall struct {
	t        *Tool
	op       string
	token    string          // the progress token of the call, or ""
	progress int             // status changes reported
	answered map[string]bool // input request keys answered inline
}

// newTaskCall returns the task call of t under ctx, with the progress
// token of call id when someone listens, and the func that ends it.
func (t *Tool) newTaskCall(ctx context.Context, id string) (*taskCall, func()) {
	c := t.conn
	tc := &taskCall{t: t, op: callToolOp(t.desc.Name)}
	if !c.a.notify.wantsProgress(ctx) {
		return tc, func() {}
	}
	f, _ := ctx.Value(progressKey{}).(func(Progress))
	sink := &progressSink{ctx: ctx, p: Progress{Server: c.server, Tool: t.name, MCPName: t.desc.Name, CallID: id}, f: f}
	token, forget := c.a.notify.register(c, sink)
	tc.token = token
	return tc, forget
}

// task runs a call of t as a task: the task-augmented tools/call, then the
// task followed to its end (or to a *PendingTask).
func (t *Tool) task(ctx context.Context, args map[string]any, info *callInfo) (*Result, error) {
	c := t.conn
	tc, forget := t.newTaskCall(ctx, info.callID())
	defer forget()
	if args == nil {
		args = map[string]any{}
	}
	params := map[string]any{"name": t.desc.Name, "arguments": args}
	meta := c.taskMeta()
	if tc.token != "" {
		meta["progressToken"] = tc.token
	}
	if !c.modern() {
		params["task"] = map[string]any{"ttl": taskTTL.Milliseconds()}
	}
	params["_meta"] = meta
	rctx, release := tc.bounded(ctx)
	raw, err := c.rawCall(rctx, tc.op, "tools/call", params)
	release()
	if err != nil {
		if res := c.asResult(err, false); res != nil { // modelerror.go
			return res, nil
		}
		return nil, err
	}
	var w taskWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, serverError(c.server, tc.op, fmt.Errorf("%w: %w", ErrBadTask, err))
	}
	switch {
	case w.Task != nil:
		w = *w.Task
	case !c.modern() || w.ResultType != "task":
		// The server chose to answer at once (modern), or ignored the
		// task (legacy): the result is the tool's.
		return tc.toolResult(raw)
	}
	if w.TaskID == "" {
		return nil, serverError(c.server, tc.op, fmt.Errorf("%w: no task id", ErrBadTask))
	}
	p := &PendingTask{
		Server: c.server, Tool: t.name, MCPName: t.desc.Name, TaskID: w.TaskID, stamp: newStamp(),
		a: c.a, gen: c.gen, tool: t, principal: PrincipalFrom(ctx),
	}
	if pending, _ := ctx.Value(pendingKey{}).(bool); pending {
		p.observe(&w)
		return nil, p
	}
	return tc.follow(ctx, p, &w)
}

// taskMeta returns the _meta of a request of the adapter's own on c: on a
// modern session, the per-request protocol version, client and
// capabilities, with the tasks extension declared.
func (c *conn) taskMeta() map[string]any {
	meta := map[string]any{}
	if c.modern() {
		meta[mcp.MetaKeyProtocolVersion] = c.session.InitializeResult().ProtocolVersion
		meta[mcp.MetaKeyClientInfo] = map[string]any{"name": clientName, "version": "1"}
		meta[mcp.MetaKeyClientCapabilities] = map[string]any{
			"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
			"extensions":  map[string]any{tasksExtension: map[string]any{}},
		}
	}
	return meta
}

// request sends a tasks request of method for p's task and decodes the
// task it answers (for tasks/get and tasks/cancel).
func (tc *taskCall) request(ctx context.Context, method string, p *PendingTask, extra map[string]any) (*taskWire, error) {
	c := tc.t.conn
	params := map[string]any{"taskId": p.TaskID, "_meta": c.taskMeta()}
	for k, v := range extra {
		params[k] = v
	}
	rctx, release := tc.bounded(ctx)
	raw, err := c.rawCall(rctx, tc.op, method, params)
	release()
	if err != nil || method != "tasks/get" {
		return nil, err // tasks/update and tasks/cancel: an acknowledgement
	}
	var w taskWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, serverError(c.server, tc.op, fmt.Errorf("%w: %s: %w", ErrBadTask, method, err))
	}
	if w.Task != nil {
		w = *w.Task
	}
	if w.TaskID != p.TaskID {
		return nil, serverError(c.server, tc.op, fmt.Errorf("%w: %s answered for another task", ErrBadTask, method))
	}
	return &w, nil
}

// bounded returns ctx bounded by the tool timeout for one request of the
// task, and its release.
func (tc *taskCall) bounded(ctx context.Context) (context.Context, func()) {
	if d := tc.t.timeout(); d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return ctx, func() {}
}

// follow polls p's task, last seen as w (nil: not yet), until it ends,
// within ctx and Config.TaskWait: its result, its failure, an *Interrupt
// (modern questions), or p itself when a deadline passed first. A
// cancelled ctx cancels the task.
func (tc *taskCall) follow(ctx context.Context, p *PendingTask, w *taskWire) (*Result, error) {
	c := tc.t.conn
	c.tasks.Add(1)
	defer c.tasks.Add(-1)
	wait := c.a.cfg.TaskWait
	if wait <= 0 {
		wait = defaultTaskWait
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if w == nil {
		var err error
		if w, err = tc.request(waitCtx, "tasks/get", p, nil); err != nil {
			return tc.stopped(ctx, waitCtx, p, err)
		}
	}
	tc.report(p, w)
	interval := w.interval()
	for {
		switch w.Status {
		case statusCompleted:
			return tc.outcome(waitCtx, ctx, p, w)
		case statusFailed, statusCancelled:
			return nil, serverError(c.server, tc.op, tc.failure(w))
		case statusInputRequired:
			if c.modern() {
				res, err := tc.asked(waitCtx, p, w)
				if res != nil || err != nil {
					return res, err
				}
				break
			}
			// The legacy server asks on the tasks/result stream, which
			// ends with the task.
			return tc.outcome(waitCtx, ctx, p, w)
		case statusWorking:
		default:
			return nil, serverError(c.server, tc.op, fmt.Errorf("%w: unknown status %q", ErrBadTask, truncate(w.Status)))
		}
		if err := tc.pause(waitCtx, interval); err != nil {
			return tc.stopped(ctx, waitCtx, p, err)
		}
		next, err := tc.request(waitCtx, "tasks/get", p, nil)
		if err != nil {
			return tc.stopped(ctx, waitCtx, p, err)
		}
		if next.Status == w.Status && next.StatusMessage == w.StatusMessage {
			interval = min(interval*3/2, maxPollInterval) // nothing new: back off
		} else {
			interval = next.interval()
		}
		w = next
		tc.report(p, w)
	}
}

// pause waits d within ctx and the connection's life.
func (tc *taskCall) pause(ctx context.Context, d time.Duration) error {
	wait, release := tc.t.conn.untilClose(ctx)
	defer release()
	if err := sleep(wait, d); err != nil {
		if tc.t.conn.life.Err() != nil {
			return serverError(tc.t.server, tc.op, ErrClosed)
		}
		return err
	}
	return nil
}

// stopped ends a follow (whose wait, within ctx, is waitCtx) that err
// stopped: a deadline of the caller's or Config.TaskWait returns p, still
// pending; a cancelled caller cancels the task (tasks/cancel); any other
// err is returned.
func (tc *taskCall) stopped(ctx, waitCtx context.Context, p *PendingTask, err error) (*Result, error) {
	c := tc.t.conn
	switch {
	case c.life.Err() != nil:
		return nil, serverError(c.server, tc.op, ErrClosed)
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTaskTimeout)
		defer cancel()
		if _, cerr := tc.request(cctx, "tasks/cancel", p, nil); cerr != nil {
			c.a.logger.Warn("mcpadapter: tasks/cancel failed", "server", c.server, "err", cerr)
		}
		return nil, c.callError(tc.op, context.Cause(ctx))
	case waitCtx.Err() != nil:
		return nil, p // the caller's deadline, or TaskWait's
	}
	return nil, err
}

// outcome collects the result of p's completed task (modern: w's; legacy:
// tasks/result, which also waits for the end of an input_required one
// while the server asks on its stream). The legacy server's questions
// meanwhile are attributed to the call (serverreq.go).
func (tc *taskCall) outcome(waitCtx, ctx context.Context, p *PendingTask, w *taskWire) (*Result, error) {
	c := tc.t.conn
	if c.modern() {
		if len(w.Result) == 0 {
			return nil, serverError(c.server, tc.op, fmt.Errorf("%w: completed without a result", ErrBadTask))
		}
		return tc.toolResult(w.Result)
	}
	oc := c.openCall(waitCtx, tc.t.name)
	raw, err := c.rawCall(waitCtx, tc.op, "tasks/result", map[string]any{"taskId": p.TaskID})
	c.closeCall(oc)
	if err != nil {
		return tc.stopped(ctx, waitCtx, p, err)
	}
	return tc.toolResult(raw)
}

// toolResult decodes a tool's result from raw.
func (tc *taskCall) toolResult(raw json.RawMessage) (*Result, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, serverError(tc.t.server, tc.op, fmt.Errorf("%w: result: %w", ErrBadTask, err))
	}
	return newResult(&res), nil
}

// failure is the error of a task that ended failed or cancelled.
func (tc *taskCall) failure(w *taskWire) error {
	msg := truncate(w.StatusMessage)
	if w.Error != nil {
		msg = truncate(w.Error.Message)
	}
	if msg == "" {
		return fmt.Errorf("%w: %s", ErrTaskFailed, w.Status)
	}
	return fmt.Errorf("%w: %s: %s", ErrTaskFailed, w.Status, msg)
}

// report records w in p and tells the call's progress listeners a status
// change, as a progress notification of the call with the status message.
func (tc *taskCall) report(p *PendingTask, w *taskWire) {
	changed := p.observe(w)
	if !changed || tc.token == "" {
		return
	}
	c := tc.t.conn
	tc.progress++
	msg := p.StatusMessage
	if msg == "" {
		msg = p.Status
	}
	c.a.notify.progressed(c.gen, c.server, c.session, &mcp.ProgressNotificationParams{ProgressToken: tc.token, Progress: float64(tc.progress), Message: msg})
}

// asked handles the questions of a modern task (w input_required): they
// are answered inline by Config.ElicitationHandler (nil, nil: go on
// polling), or returned as an *Interrupt that resumes through
// tasks/update.
func (tc *taskCall) asked(ctx context.Context, p *PendingTask, w *taskWire) (*Result, error) {
	c, a := tc.t.conn, tc.t.a
	asked, err := decodeInputRequests(w.InputRequests)
	if err != nil || len(asked) == 0 {
		return nil, serverError(c.server, tc.op, fmt.Errorf("%w: input_required without input requests", ErrBadTask))
	}
	for k := range tc.answered {
		delete(asked, k) // answered: the server has not caught up yet
	}
	if len(asked) == 0 {
		return nil, nil
	}
	reqs, err := elicitationRequests(asked)
	if err != nil {
		return nil, serverError(c.server, tc.op, err)
	}
	if a.elicit.handler == nil {
		intr := newInterrupt(ctx, a, c, tc.t.name, tc.t.desc.Name, nil, asked, reqs, 1, "", false, nil)
		intr.task = p
		return nil, intr
	}
	asking, release := c.untilClose(ctx)
	answered, err := a.elicit.inline(asking, c.server, tc.t.name, reqs)
	release()
	if err != nil {
		return nil, err
	}
	if _, err = tc.request(ctx, "tasks/update", p, map[string]any{"inputResponses": answered}); err != nil {
		return nil, err
	}
	if tc.answered == nil {
		tc.answered = make(map[string]bool)
	}
	for k := range answered {
		tc.answered[k] = true
	}
	return nil, nil
}

// resumeTask answers the questions of in, an interrupt of a modern task,
// with responses (tasks/update), and follows the task on.
func (t *Tool) resumeTask(ctx context.Context, in *Interrupt, responses mcp.InputResponseMap) (*Result, error) {
	p := in.task.rebind(t, PrincipalFrom(ctx))
	tc, forget := t.newTaskCall(ctx, "")
	defer forget()
	tc.answered = make(map[string]bool)
	for k := range responses {
		tc.answered[k] = true
	}
	if _, err := tc.request(ctx, "tasks/update", p, map[string]any{"inputResponses": responses}); err != nil {
		return nil, err
	}
	return tc.follow(ctx, p, nil)
}

// truncate cuts a server's text about a task to maxStatusMessage bytes.
func truncate(s string) string {
	if len(s) <= maxStatusMessage {
		return s
	}
	s = s[:maxStatusMessage]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
