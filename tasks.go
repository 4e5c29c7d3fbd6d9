package mcpadapter

// Long-running tools: MCP tasks. The protocol (the wire forms of tasks/*,
// polling and its bounds, requests of the adapter's own) and the notes on
// its design are internal/tasks; this file has the exported names,
// taskConn, the one owner of what a conn keeps for tasks (conn.tasks), and
// taskCall, the adapter's side of a task's call (its tasks.Host): the
// connection's requests, the call's progress and questions, its errors.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/httptransport"
	"github.com/mcpadapter/mcpadapter/internal/redact"
	"github.com/mcpadapter/mcpadapter/internal/stored"
	"github.com/mcpadapter/mcpadapter/internal/tasks"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TaskMode says which tools of a server the adapter calls as tasks
// ([Server.Tasks]).
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

var (
	// errBadTask is returned, wrapped in a [*ServerError], when a server
	// breaks the tasks protocol: a task without an id, an unknown status,
	// a task id other than the one asked for, an answer that cannot be
	// decoded.
	errBadTask = tasks.ErrBad
)

// pendingKey is the context key of [WithPendingTask].
type pendingKey struct{}

// WithPendingTask returns a copy of ctx whose tool calls that run as tasks
// return a [*PendingTask] as soon as the server has made the task, without
// waiting for it.
func WithPendingTask(ctx context.Context) context.Context {
	return context.WithValue(ctx, pendingKey{}, true)
}

// A taskConn is what a conn keeps for the tasks of its session, its one
// field for them (conn.tasks): the dial fills it (dial.go: the screen's
// hooks, the connection; httptransport.go: the session kept), task calls
// use it. The zero value is ready.
type taskConn struct {
	// calls are the requests of the adapter's own on the session's
	// connection (internal/tasks, rawrpc.go); the screen claims their
	// answers.
	calls tasks.Calls

	// declared is what a legacy server's initialize result declares of
	// task-augmented tools/call, which go-sdk does not decode; the screen
	// sees it during the handshake.
	declared tasks.Capability

	// streamable is the Streamable HTTP transport of the session (the
	// caller's settings), through which a task line joins it (taskLine);
	// nil for other transports. The tasks handed out on the session are
	// the generation's record (generation.kept, kept.go): while it holds
	// any, closing the conn leaves the session open.
	streamable *mcp.StreamableClientTransport

	running atomic.Int64 // tasks followed on the connection now (ServerStatus.TasksInFlight)
}

// tasksOn reports whether c may run tasks at all: tasks are not off for
// its server, and the server declares them (a modern one the extension, a
// legacy one task-augmented tools/call).
func (c *conn) tasksOn() bool {
	if c.cfg.Tasks == TasksOff {
		return false
	}
	if c.modern() {
		return tasks.Declared(c.info.Capabilities)
	}
	return c.tasks.declared.Declared()
}

// asTask reports whether a call of t, whose taskSupport is
// support, runs as a task.
func (t *Tool) asTask(support string) bool {
	mode := t.conn.cfg.Tasks
	return mode != TasksOff && tasks.Augmented(support, mode == TasksOptional) && t.conn.tasksOn()
}

// A taskCall is the adapter's side of one call of a tool that runs as a
// task: the tasks.Host of its tasks.Call. On a legacy Streamable HTTP
// session, the requests of its follow go on a task line joined to the
// task's session (internal/tasks, line.go; its route), which the call's
// end closes (Route.Close): the
// server's questions on the stream of tasks/result are then the call's
// own, which an interrupt may leave unanswered, for any Adapter to answer
// by id on the same session.
//
// On the conn itself (stdio, in-memory and custom transports, SSE, a
// Streamable HTTP session without an id), a legacy task's tasks/result is
// a live exchange when the adapter takes live questions (conn.asksLive):
// the server's question on its stream is then attributed to the call as
// any live question is (serverreq.go), and becomes a live interrupt
// (live.go) whose resume answers it and waits for the same tasks/result.
type taskCall struct {
	t     *Tool
	op    string
	token string       // the progress token of the call, or ""
	p     *PendingTask // the task, once made
	f     *tasks.Call
	route tasks.Route

	round   int           // the live questions of the call so far
	resumed *liveExchange // the open tasks/result whose question was answered, which the next one waits for
	asked   *liveAsked    // the question that ended the last tasks/result wait, not yet taken
}

// newTask returns the task call of t for p's task (nil: not yet made).
func (t *Tool) newTask(p *PendingTask) *taskCall {
	c := t.conn
	tc := &taskCall{t: t, op: callToolOp(t.desc.Name), p: p}
	var id string
	if p != nil {
		id, tc.route.Session = p.TaskID, p.session
	}
	if c.tasks.streamable != nil && !c.modern() {
		tc.route.Own, tc.route.Open = c.session.ID(), c.taskLine
	}
	screen := func(result json.RawMessage) (json.RawMessage, error) { return c.screen.Result(result, nil) }
	tc.f = tasks.NewCall(tc, tasks.Session{Modern: c.modern(), Version: c.info.ProtocolVersion, Client: clientName, Timeout: t.timeout(), Life: c.life, Screen: screen}, id)
	return tc
}

// newTaskCall returns the task call under ctx that info describes for p's
// task (nil: not yet made), with the call's progress token when someone
// listens, and the func that ends it.
func (t *Tool) newTaskCall(ctx context.Context, info *callInfo, p *PendingTask) (*taskCall, func()) {
	c, tc := t.conn, t.newTask(p)
	if !info.progress {
		return tc, tc.route.Close
	}
	token, forget := c.a.notify.register(c, info.sink(ctx, c, nil))
	tc.token = token
	return tc, func() {
		forget()
		tc.route.Close()
	}
}

// taskLine opens a task line to session, of c's server (internal/tasks,
// line.go): a Streamable HTTP connection of c's settings (its headers,
// credentials, HTTP client, message bound) that carries session's id and
// c's protocol version, and keeps the session when it closes. The
// progress the server reports on it reaches the call's listeners. gone
// reports whether the server refused the session (400 or 404).
func (c *conn) taskLine(ctx context.Context, session string) (*tasks.Line, func() bool, error) {
	var line *tasks.Line
	d := &c.a.pool.dialer
	opts := c.httpOptions(d.newScreen(c.server, func(msg []byte) { line.Claim(msg) }, nil, func(params []byte) { c.a.notify.progressed(c, params) }), c.tasks.streamable.Endpoint, nil)
	opts.Ended, opts.Failed = func() {}, func() {}
	opts.Tasks = tasks.Joined{Session: session, Version: c.info.ProtocolVersion}
	rt := httptransport.New(opts)
	st := *c.tasks.streamable
	st.HTTPClient = rt.Client(c.tasks.streamable.HTTPClient)
	st.MaxEventSize, st.DisableStandaloneSSE = d.maxEventSize(), true
	conn, err := st.Connect(ctx) // no I/O: the first request is the line's
	if err != nil {
		return nil, nil, err
	}
	line = tasks.NewLine(conn)
	gone := func() bool {
		code := rt.Failure()
		return rt.Missing() || code == http.StatusBadRequest || code == http.StatusNotFound
	}
	return line, gone, nil
}

// task runs a call of t as a task: the task-augmented tools/call, then the
// task followed to its end (or to a *PendingTask).
func (t *Tool) task(ctx context.Context, info *callInfo, args map[string]any) (*Result, error) {
	c := t.conn
	tc, forget := t.newTaskCall(ctx, info, nil)
	defer forget()
	ctx, meta, traced := info.request(ctx, c)
	res, err := tc.f.Start(ctx, t.desc.Name, args, tc.token, meta)
	err = tc.callErr(err)
	traced(res != nil && res.IsError, err)
	switch {
	case err != nil:
		if res := c.asResult(err, false); res != nil { // modelerror.go
			return res, nil
		}
		return nil, err
	case res != nil: // the server answered at once
		return newResult(res), nil
	}
	tc.p = &PendingTask{
		Server: c.server, Tool: t.name, MCPName: t.desc.Name, TaskID: tc.f.ID(), stamp: newStamp(),
		a: c.a, gen: c.gen, tool: t, principal: principalFrom(ctx), session: tc.route.LineSession(),
	}
	if pending, _ := ctx.Value(pendingKey{}).(bool); pending {
		tc.p.Status, tc.p.StatusMessage = tc.f.Last()
		return nil, tc.handOut(tc.p.stamp, tc.p)
	}
	return tc.follow(ctx)
}

// follow follows the task to its end within ctx and [Config.TaskWait],
// counted in [ServerStatus.TasksInFlight]: its result, an error, or the
// call's *PendingTask when a deadline passed first.
func (tc *taskCall) follow(ctx context.Context) (*Result, error) {
	c := tc.t.conn
	c.tasks.running.Add(1)
	defer c.tasks.running.Add(-1)
	res, err := tc.wait(ctx)
	err = tc.callErr(err)
	switch {
	case err == tasks.ErrPending:
		tc.p.waited = pendingWhy(ctx, c.a.cfg.TaskWait)
		return nil, tc.handOut(tc.p.stamp, tc.p)
	case errors.Is(err, tasks.ErrFailed):
		tc.settled()
		return nil, err
	case err != nil:
		return nil, err
	}
	tc.settled()
	return newResult(res), nil
}

// pendingWhy says what ended a follow within ctx and taskWait
// (Config.TaskWait) that left its task pending: ctx's deadline; ctx
// cancelled with a deadline as its cause (a plain cancel cancels the task
// instead: internal/tasks); otherwise taskWait, ctx cancelled, if at all,
// after it passed.
func pendingWhy(ctx context.Context, taskWait time.Duration) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "the caller's context deadline passed"
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return fmt.Sprintf("the caller's context was cancelled: %v", context.Cause(ctx))
	}
	return fmt.Sprintf("Config.TaskWait of %v passed", orDefault(taskWait, tasks.DefaultWait))
}

// wait follows the task within ctx and Config.TaskWait, or, when a live
// question was answered, waits for its tasks/result; a live question of
// the server (tasks/result as a live exchange) becomes the call's live
// interrupt, or, declined, the wait goes on.
func (tc *taskCall) wait(ctx context.Context) (*mcp.CallToolResult, error) {
	c, wait := tc.t.conn, tc.t.a.cfg.TaskWait
	for {
		var res *mcp.CallToolResult
		var err error
		if tc.resumed != nil {
			res, err = tc.f.Collect(ctx, wait)
		} else {
			res, err = tc.f.Follow(ctx, wait)
		}
		asked := tc.asked
		tc.asked = nil
		switch {
		case asked == nil:
			tc.abandon(nil)
			return res, err
		case err != error(asked): // the follow ended otherwise (its ctx, the connection)
			tc.abandon(asked)
			return res, err
		}
		if err := tc.t.liveInterrupt(ctx, c, nil, asked, tc.round); err != nil {
			return nil, err
		}
		tc.round++
		tc.resumed = asked.x // declined: the wait goes on
	}
}

// abandon stops the live exchanges the call leaves behind: the tasks/result
// of asked, whose question no one takes (answered cancel), and the open
// one it did not wait for again.
func (tc *taskCall) abandon(asked *liveAsked) {
	if asked != nil {
		asked.q.reply(&mcp.ElicitResult{Action: string(Cancel)})
		asked.x.stop()
	}
	if x := tc.resumed; x != nil {
		tc.resumed = nil
		x.stop()
	}
}

// resumeLive answers h, a live interrupt of the task's, with answer, and
// waits within ctx for the task on its tasks/result: its result, its next
// question, or a *PendingTask when a deadline passed first. The progress
// the server reports under the call's token from the answer on reaches
// the resume's listeners.
func (tc *taskCall) resumeLive(ctx context.Context, h *heldLive, answer *mcp.ElicitResult) (*Result, error) {
	t := tc.t
	if info := t.newCall(ctx); info.progress && tc.token != "" {
		forget := t.a.notify.registerAs(t.conn, tc.token, info.sink(ctx, t.conn, nil))
		defer forget()
	}
	h.q.reply(answer) // once the resume listens
	tc.resumed, tc.round = h.x, h.in.round
	return tc.follow(ctx)
}

// resumeTask answers the questions of in, an interrupt of a task, with
// responses (a modern task's through tasks/update, a legacy one's by
// request id on its session), and follows the task on.
func (t *Tool) resumeTask(ctx context.Context, in *Interrupt, responses mcp.InputResponseMap) (*Result, error) {
	p, err := in.task.rebind(t, principalFrom(ctx), in.id)
	if err != nil {
		return nil, err
	}
	info := t.newCall(ctx)
	tc, forget := t.newTaskCall(ctx, &info, p)
	defer forget()
	if err := tc.f.Answer(ctx, responses); err != nil {
		return nil, tc.callErr(err)
	}
	return tc.follow(ctx)
}

// Request sends a request of the adapter's own on the call's connection
// (tasks.Calls) or task line. The questions a legacy server asks on the
// stream of tasks/result go to ask on a line; on the conn, go-sdk takes
// them, and they are attributed to the call (serverreq.go): as live
// questions (resultLive), or answered by the handler or declined. A request
// that a stored task's session refuses (the server forgot the session:
// 400 or 404) is sent again once on the conn's own session, where a
// server whose tasks outlive sessions still knows the task.
func (tc *taskCall) Request(ctx context.Context, method string, params json.RawMessage, ask func([]*jsonrpc.Request) error) (json.RawMessage, error) {
	c := tc.t.conn
	if err := c.usable(tc.op); err != nil {
		return nil, err
	}
	ctx, done := c.callContext(ctx)
	defer done()
	res, err := tc.send(ctx, method, params, ask)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, tc.timedOut(ctx)
	}
	if err != nil && tc.route.FallBack() {
		again, err2 := tc.send(ctx, method, params, ask)
		if err2 != nil {
			return nil, errors.Join(err, err2)
		}
		tc.p.session = tc.route.Session
		return again, nil
	}
	return res, err
}

// timedOut is the error of a request of tc whose ctx ran past its
// deadline: the tool timeout, which bounds each request of a task
// (tasks.ErrRequestTimeout), or the caller's. (A follow whose own wait,
// Config.TaskWait, ends leaves the task pending instead.)
func (tc *taskCall) timedOut(ctx context.Context) error {
	te := &timeoutError{setting: "the caller's context deadline"}
	if context.Cause(ctx) == tasks.ErrRequestTimeout {
		te = &timeoutError{d: tc.t.timeout(), setting: tc.t.timeoutSetting()}
	}
	return serverError(tc.t.server, tc.op, te)
}

// send sends a request of the adapter's own (Request) on the call's
// connection or task line.
func (tc *taskCall) send(ctx context.Context, method string, params json.RawMessage, ask func([]*jsonrpc.Request) error) (json.RawMessage, error) {
	c := tc.t.conn
	line, err := tc.route.Line(ctx, method)
	if err != nil {
		return nil, tc.lineError(err)
	}
	if line != nil {
		res, err := line.CallAsking(ctx, c.life, line.Lost(), method, params, ask)
		if errors.Is(err, tasks.ErrLost) {
			err = fmt.Errorf("task line lost: %w", line.Err())
		}
		return res, tc.lineError(err)
	}
	if method == tasks.MethodResult {
		if c.asksLive() {
			return tc.resultLive(ctx, params)
		}
		defer c.closeCall(c.register(&openCall{ctx: ctx, tool: tc.t.name}))
	}
	res, err := c.tasks.calls.CallAsking(ctx, c.life, c.done, method, params, ask)
	return res, tc.connError(err)
}

// resultLive sends tasks/result with params on the conn as a live exchange
// (live.go), or takes the one whose question was answered (tc.resumed),
// and waits within ctx for its answer or the server's question: a
// *liveAsked error, which tc records (tc.asked) for wait to take.
func (tc *taskCall) resultLive(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	c, x := tc.t.conn, tc.resumed
	tc.resumed = nil
	if x == nil {
		x = c.goLive(ctx, tc.t.name, tc.token, func(x *liveExchange) liveOutcome {
			body, err := c.tasks.calls.CallAsking(x.ctx, c.life, c.done, tasks.MethodResult, params, nil)
			c.closeCall(x.oc)
			return liveOutcome{body: body, err: tc.connError(err)}
		})
		if x == nil {
			return nil, serverError(c.server, tc.op, c.closedErr())
		}
		x.task = tc
	}
	o := x.next(ctx)
	tc.asked, _ = o.err.(*liveAsked)
	return o.body, o.err
}

// connError returns err, the failure of a request of the adapter's own on
// the conn (nil: none), as an error of the call.
func (tc *taskCall) connError(err error) error {
	c := tc.t.conn
	switch {
	case err == nil:
		return nil
	case errors.Is(err, tasks.ErrNoConn):
		return serverError(c.server, tc.op, fmt.Errorf("%w: %w", ErrNotSupported, err))
	case errors.Is(err, tasks.ErrLost):
		return serverError(c.server, tc.op, fmt.Errorf("connection lost: %w", c.cause()))
	}
	return c.callError(tc.op, classifyFault(err))
}

// lineError returns err, a failure on the call's task line (nil: none),
// as an error of the call: the line's failure is its own, not the
// session's connection's, and its text names no credential of the URL,
// nor the id of the line's session or of the conn's.
func (tc *taskCall) lineError(err error) error {
	c := tc.t.conn
	switch {
	case err == nil:
		return nil
	case c.closing.Load() || c.life.Err() != nil:
		return serverError(c.server, tc.op, c.closedErr())
	}
	// The line's session may be another than the conn's (a stored task's).
	return serverError(c.server, tc.op, redact.Values(c.redacted(classifyFault(err), c.tasks.streamable.Endpoint), tc.route.Session))
}

// Respond answers the server's request id (a legacy task's question) with
// result, on the call's connection or task line, never on another
// session than the question's.
func (tc *taskCall) Respond(ctx context.Context, id jsonrpc.ID, result json.RawMessage) error {
	return tc.respond(ctx, id, result, nil)
}

// respond answers the server's request id with result, or with the error
// e when it is not nil, as Respond does.
func (tc *taskCall) respond(ctx context.Context, id jsonrpc.ID, result json.RawMessage, e *jsonrpc.Error) error {
	c := tc.t.conn
	if err := c.usable(tc.op); err != nil {
		return err
	}
	ctx, done := c.callContext(ctx)
	defer done()
	line, err := tc.route.Line(ctx, "")
	switch {
	case err != nil:
		return tc.lineError(err)
	case line != nil:
		return tc.lineError(line.Respond(ctx, id, result, e))
	}
	if err := c.tasks.calls.Respond(ctx, id, result, e); err != nil {
		return c.callError(tc.op, err)
	}
	return nil
}

// Changed records the task's status in p and tells the call's progress
// listeners, as a progress notification of the call with the status
// message.
func (tc *taskCall) Changed(n int, status, message string) {
	tc.p.Status, tc.p.StatusMessage = status, message
	if tc.token == "" {
		return
	}
	c := tc.t.conn
	c.a.notify.progress(c, tc.token, float64(n), 0, cmp.Or(message, status))
}

// Ask takes a task's questions (a modern task's input requests, a legacy
// one's asked on a task line): answered inline by
// Config.ElicitationHandler (a legacy one's as a live request is, see
// answerLive), or returned as an *Interrupt that resumes through
// resumeTask.
func (tc *taskCall) Ask(ctx context.Context, asked mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	c, a := tc.t.conn, tc.t.a
	reqs, err := elicitationRequests(asked)
	if err != nil {
		return nil, serverError(tc.t.server, tc.op, err)
	}
	if a.elicit.handler == nil {
		intr := newInterrupt(ctx, a, c, tc.t.name, tc.t.desc.Name, nil, asked, reqs, 1, "", stored.KindInputRequired, nil)
		intr.task = tc.p
		return nil, tc.handOut(intr.stamp, intr)
	}
	asking, release := c.untilClose(ctx)
	defer release()
	if !c.modern() {
		return tc.answerLive(asking, reqs)
	}
	return a.elicit.inline(asking, c.server, tc.t.name, reqs)
}

// answerLive answers a legacy task's questions, keyed by their request
// ids, as a legacy server's live requests are answered on the session
// (elicitor.live), so that a legacy server behaves the same on every
// transport: each by the handler, its answer checked; one the handler
// failed, or whose answer does not fit, gets its JSON-RPC error at once,
// and the task goes on. It returns the other answers, to send.
func (tc *taskCall) answerLive(ctx context.Context, reqs []ElicitationRequest) (mcp.InputResponseMap, error) {
	responses := make(mcp.InputResponseMap, len(reqs))
	for _, r := range reqs {
		r.Server, r.Tool = tc.t.server, tc.t.name
		res, werr := tc.t.a.elicit.answer(ctx, r)
		if werr == nil {
			responses[r.Key] = res
			continue
		}
		id, err := tasks.RequestID(r.Key)
		if err != nil {
			return nil, serverError(tc.t.server, tc.op, err)
		}
		if err := tc.respond(ctx, id, nil, werr); err != nil {
			return nil, err
		}
	}
	return responses, nil
}

// handOut returns err, the call's pending task or interrupt, of stamp
// st, once it is recorded handed out: when the task lives on the
// connection's own session (keptSessions.handOut), the connection then
// keeps its session when it closes, until the task settles; when it was
// followed on a task line to a session the record keeps, the new state
// joins that session's, so that this Adapter finds it again without a
// key.
func (tc *taskCall) handOut(st stamp, err error) error {
	c := tc.t.conn
	switch session := tc.route.LineSession(); {
	case tc.route.OnOwn():
		c.gen.kept.handOut(c, tc.p.TaskID, st.id)
	case session != "":
		c.gen.kept.Also(session, tc.p.TaskID, st.id)
	}
	return err
}

// settled records that the call's task ended (its outcome collected, or
// cancelled) in the record of the sessions kept, whichever session it
// lives on: a kept session with nothing left is ended.
func (tc *taskCall) settled() {
	if session := tc.route.LineSession(); session != "" {
		tc.t.conn.gen.kept.settle(session, tc.p.TaskID)
	}
}

// callErr returns err, what a method of tc.f returned, as the call's
// error. The task call's own failures (a *tasks.Error) are wrapped in the
// call's *ServerError: ErrClosed once the adapter closed; for a call
// whose context was cancelled, the cause, with a failed tasks/cancel
// logged. The host's errors (tc's, already the call's), ErrPending and nil
// are returned as they are.
func (tc *taskCall) callErr(err error) error {
	var own *tasks.Error
	var done *ServerError
	if !errors.As(err, &own) || errors.As(err, &done) {
		return err
	}
	c := tc.t.conn
	switch {
	case own.Closed:
		return serverError(c.server, tc.op, ErrClosed)
	case own.Cancelled && own.CancelErr != nil:
		c.a.logger.Warn("mcpadapter: tasks/cancel failed", "server", c.server, "err", own.CancelErr)
		return c.callError(tc.op, own.Err)
	case own.Cancelled:
		tc.settled()
		return c.callError(tc.op, own.Err)
	}
	return serverError(c.server, tc.op, own.Err)
}
