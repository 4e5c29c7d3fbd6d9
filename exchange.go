package mcpadapter

// One exchange on a connection: a tools/call request and its answer, the
// way net/http's persistConn.roundTrip owns one. The conn decides whether
// the request may go (current, checkPrincipal, usable), gives it its
// context and deadline (callContext, the tool timeout), registers it as
// open while it runs, so that the server's own requests meanwhile are
// attributed to it (serverreq.go), sends it and reads the answer. call.go
// asks it once per round (exchange); tasks.go uses callContext, usable and
// the open-call registry for its requests of the adapter's own.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/deliver"
	"github.com/mcpadapter/mcpadapter/internal/httptransport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// current returns the conn that serves the calls of c's tools: c, or the
// last of the new sessions that replaced it (next).
func (c *conn) current() *conn {
	for n := c.next.Load(); n != nil; n = c.next.Load() {
		c = n
	}
	return c
}

// checkPrincipal fails a call of tool mcpName when c is a per-principal
// connection and ctx acts for another principal. (The error's Op is built
// only on failure: a Sprintf per call shows in the benchmarks.)
func (c *conn) checkPrincipal(ctx context.Context, mcpName string) error {
	if c.key.principal != "" && principalFrom(ctx) != c.key.principal {
		return serverError(c.server, callToolOp(mcpName), fmt.Errorf("%w: the tool was discovered for another principal", ErrWrongPrincipal))
	}
	return nil
}

// alive reports whether the session is still up.
func (c *conn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// cause returns why a dead session ended.
func (c *conn) cause() error {
	<-c.done
	if c.err == nil {
		return io.EOF
	}
	return c.err
}

// usable returns why c can no longer serve calls, or nil.
func (c *conn) usable(op string) error {
	if c.closing.Load() || c.life.Err() != nil {
		return serverError(c.server, op, c.closedErr())
	}
	if !c.alive() {
		return serverError(c.server, op, fmt.Errorf("connection lost: %w", c.cause()))
	}
	return nil
}

// callContext derives the context of the requests of one operation on c:
// carrying the server's log level on modern sessions, c itself on a
// shared session (its principal's credentials, share.go), and, on Streamable
// HTTP sessions, cancelled by Adapter.Close. The returned func releases it.
//
// Close ends the requests of the other sessions by closing their
// connection (see conn.close), so that a call pays for a context of its
// own only when it runs over Streamable HTTP. Work of the adapter's own
// between requests (an elicitation handler, a backoff) is not a request:
// it waits under untilClose.
func (c *conn) callContext(ctx context.Context) (context.Context, func()) {
	release := func() {}
	if c.key.principal != "" {
		if !c.use.acquire() { // evicted: the request fails at once
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return ctx, cancel
		}
		release = c.use.release
	}
	if c.carrier != nil {
		ctx = context.WithValue(ctx, requesterKey{}, c) // the principal's credentials (share.go)
	}
	if c.cfg.LogLevel != "" && c.modern() {
		ctx = context.WithValue(ctx, logLevelKey{}, c.cfg.LogLevel)
	}
	if c.wire != nil {
		return ctx, release
	}
	ctx, cancel := context.WithCancel(ctx)
	key := &cancel
	if !c.inflight.Track(c.life, key) {
		cancel() // the generation has ended: the request fails at once
		release()
		return ctx, cancel
	}
	return ctx, func() {
		c.inflight.Untrack(key)
		cancel()
		release()
	}
}

// An unexecuted error is the failure of a request that the server never
// executed: it answered 404 for the request's session, or nothing was sent
// because the session was known to be missing (see httptransport.SendRecord)
// or had ended. Such a request may be sent again, once, on a new session
// (Tool.callRounds, Tool.resend). It reads as the error it wraps.
type unexecuted struct{ error }

// Unwrap returns the failure.
func (u *unexecuted) Unwrap() error { return u.error }

// An openCall is a tools/call in flight on a conn.
type openCall struct {
	ctx  context.Context // the round's context: the caller's values, its deadline
	tool string          // the adapter's tool name

	live    *liveExchange // the call takes its server's live questions itself (live.go), or nil
	refused string        // method of a request refused during the call; guarded by conn.openMu
}

// register registers oc, a call about to be sent, and returns it.
// closeCall forgets it.
func (c *conn) register(oc *openCall) *openCall {
	c.openMu.Lock()
	if c.open == nil {
		c.open = make(map[*openCall]struct{})
	}
	c.open[oc] = struct{}{}
	c.openMu.Unlock()
	return oc
}

// closeCall forgets oc and returns the method of a server request refused
// on its behalf, or "".
func (c *conn) closeCall(oc *openCall) (refused string) {
	c.openMu.Lock()
	defer c.openMu.Unlock()
	delete(c.open, oc)
	return oc.refused
}

// exchange sends one round of the call that info describes on c, with
// args, the answers responses and the server's state, within ctx (the
// call's callContext), and returns its answer: the raw result, or a Result
// for a JSON-RPC invalid-params error (the model can fix its arguments).
// The round is bounded by the call's timeout when positive: since its
// start, or, with Config.MaxToolTimeout, since its last progress
// notification. It is traced, and asks for progress when someone listens.
func (c *conn) exchange(ctx context.Context, info *callInfo, args map[string]any, responses mcp.InputResponseMap, state string) (*mcp.CallToolResult, *Result, error) {
	caller := ctx
	k := info.clock // a live question was declined: the round goes on under its deadline
	info.clock = nil
	if k == nil && info.timeout > 0 {
		k = &roundClock{}
		if c.a.cfg.MaxToolTimeout > 0 {
			k.ctx, k.touch, k.release = deliver.IdleContext(ctx, info.timeout, c.a.cfg.MaxToolTimeout)
		} else {
			k.ctx, k.release = context.WithTimeout(ctx, info.timeout)
		}
	}
	var touch func()
	if k != nil {
		ctx, touch = k.ctx, k.touch
	}
	raw, res, err := c.round(caller, ctx, info, args, responses, state, touch)
	if _, asked := err.(*liveAsked); asked && k != nil {
		info.clock = k // kept for the round's next exchange, or released by callRounds
	} else if k != nil {
		k.release()
	}
	return raw, res, err
}

// round sends the round of exchange under ctx, its bounded context derived
// from caller's, touch resetting its idle timeout (nil: none); or, when
// info holds a live exchange resumed or whose question was declined, waits
// for it again.
func (c *conn) round(caller, ctx context.Context, info *callInfo, args map[string]any, responses mcp.InputResponseMap, state string, touch func()) (*mcp.CallToolResult, *Result, error) {
	a, t := c.a, info.t
	if x := info.resumed; x != nil { // a live interrupt answered, or a question declined: its request goes on (live.go)
		info.resumed = nil
		if info.progress && x.token != "" { // its progress, from now on, is the resume's
			forget := a.notify.registerAs(x.c, x.token, info.sink(ctx, x.c, touch))
			defer forget()
		}
		if answer := info.answer; answer != nil { // the answer leaves once its progress is listened to
			info.answer = nil
			answer()
		}
		o := x.next(ctx)
		return o.raw, o.res, c.deadlineError(caller, ctx, info, o.err)
	}
	ctx, meta, traced := info.request(ctx, c)
	if info.progress && c.cfg.Client == nil { // a prebuilt client has no handler of ours
		token, forget := a.notify.register(c, info.sink(ctx, c, touch))
		defer forget()
		if meta == nil {
			meta = mcp.Meta{}
		}
		meta["progressToken"] = token
	}
	raw, res, err := c.callTool(ctx, t.name, t.desc.Name, args, responses, state, meta)
	err = c.deadlineError(caller, ctx, info, err)
	traced(res != nil && res.IsError || res == nil && raw != nil && raw.IsError, err)
	return raw, res, err
}

// A roundClock is the bounded context of a round of a call (the tool
// timeout), kept across the live questions declined during the round
// (callInfo.clock): only a resume restarts the timeout.
type roundClock struct {
	ctx     context.Context
	touch   func() // resets its idle timeout; nil: none
	release func()
}

// stopClock releases the round's bounded context info still keeps, if any.
func (info *callInfo) stopClock() {
	if k := info.clock; k != nil {
		info.clock = nil
		k.release()
	}
}

// deadlineError returns err, the failure of a round of the call info describes
// under ctx, derived from caller's, as the timeout it is, if it is one.
func (c *conn) deadlineError(caller, ctx context.Context, info *callInfo, err error) error {
	if err != nil && ctx.Err() != nil {
		if te := roundTimeout(caller, ctx, info, &c.a.cfg); te != nil {
			return serverError(c.server, callToolOp(info.t.desc.Name), te)
		}
	}
	return err
}

// sink returns the progress sink of a request under ctx on c of the call
// info describes; touch resets its idle timeout (nil: none).
func (info *callInfo) sink(ctx context.Context, c *conn, touch func()) *progressSink {
	t := info.t
	return &progressSink{ctx: ctx, p: Progress{Server: c.server, Tool: t.name, MCPName: t.desc.Name, CallID: info.id}, f: info.onProgress, touch: touch}
}

// A timeoutError is a round that ran past a bound: the error names the
// setting (or the caller's own deadline), and is a
// [context.DeadlineExceeded] for [errors.Is].
type timeoutError struct {
	d       time.Duration // the bound; 0 for the caller's own deadline
	setting string        // what set it, as the user writes it
	idle    bool          // no progress within d (the timeout resets on progress under Config.MaxToolTimeout)
}

func (e *timeoutError) Error() string {
	switch {
	case e.idle:
		return fmt.Sprintf("the tool reported no progress within %v (%s, reset by progress under Config.MaxToolTimeout): %v", e.d, e.setting, context.DeadlineExceeded)
	case e.d == 0:
		return fmt.Sprintf("the tool did not answer before %s: %v", e.setting, context.DeadlineExceeded)
	}
	return fmt.Sprintf("the tool did not answer within %v (%s): %v", e.d, e.setting, context.DeadlineExceeded)
}

// Unwrap returns [context.DeadlineExceeded].
func (e *timeoutError) Unwrap() error { return context.DeadlineExceeded }

// roundTimeout returns the bound that a round of the call info describes
// ran past, ctx being the round's context derived from caller's, or nil
// when ctx ended otherwise (cancelled, or the connection closed).
func roundTimeout(caller, ctx context.Context, info *callInfo, cfg *Config) *timeoutError {
	if errors.Is(caller.Err(), context.DeadlineExceeded) {
		return &timeoutError{setting: "the caller's context deadline"}
	}
	setting := info.t.timeoutSetting()
	if idle, ok := context.Cause(ctx).(*deliver.NoProgress); ok { // ends ctx as cancelled
		return &timeoutError{d: idle.Idle, setting: setting, idle: true}
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil
	}
	if cfg.MaxToolTimeout > 0 && info.timeout > 0 { // not idle: the whole call ran past its bound
		return &timeoutError{d: cfg.MaxToolTimeout, setting: "Config.MaxToolTimeout"}
	}
	return &timeoutError{d: info.timeout, setting: setting}
}

// request starts a request of the call info describes to the tool on c:
// it returns ctx carrying the request's span, the request's _meta (the
// middleware's, with the trace context), and the func that ends the span
// with whether the result is an error and err.
func (info *callInfo) request(ctx context.Context, c *conn) (context.Context, mcp.Meta, func(bool, error)) {
	info.requests++
	return info.watch.Request(ctx, info.t.desc.Name, c.peer, maps.Clone(info.meta))
}

// callTool sends one tools/call of tool on c, with meta as its _meta (nil:
// none), and reads its answer. Params are built fresh for every call: the
// SDK writes into them. Exactly one of the results is set on success: the
// raw result, or a Result for a JSON-RPC invalid-params error.
func (c *conn) callTool(ctx context.Context, tool, mcpName string, args map[string]any, responses mcp.InputResponseMap, state string, meta mcp.Meta) (*mcp.CallToolResult, *Result, error) {
	if c.closing.Load() || c.life.Err() != nil || !c.alive() { // checked first: usable builds the error's Op
		if err := c.usable(callToolOp(mcpName)); err != nil {
			if (c.sessionMissing() || !c.alive()) && !c.closing.Load() {
				err = &unexecuted{err} // nothing was sent
			}
			return nil, nil, err
		}
	}
	if args == nil {
		args = map[string]any{} // servers reject "arguments": null (the TypeScript SDK does)
	}
	c.a.catalogs.recordTools(ctx, c) // Mcp-Param headers on modern HTTP (sdkcache.go)
	var sent *httptransport.SendRecord
	if c.http != nil { // whether the server executed the request (internal/httptransport)
		sent = new(httptransport.SendRecord)
		ctx = httptransport.WithSendRecord(ctx, sent)
	}
	params := &mcp.CallToolParams{Meta: meta, Name: mcpName, Arguments: args, InputResponses: responses, RequestState: state}
	if c.asksLive() {
		return c.callLive(ctx, tool, params, sent) // live.go
	}
	oc := c.register(&openCall{ctx: ctx, tool: tool}) // the server's requests meanwhile are attributed to it (serverreq.go)
	res, err := c.session.CallTool(ctx, params)
	return c.callOutcome(mcpName, sent, res, err, c.closeCall(oc))
}

// callOutcome returns the answer to a tools/call of the tool mcpName on c
// (callTool), from what the session returned and the method of a server
// request refused on its behalf ("": none).
func (c *conn) callOutcome(mcpName string, sent *httptransport.SendRecord, res *mcp.CallToolResult, err error, refused string) (*mcp.CallToolResult, *Result, error) {
	switch {
	case err == nil:
		return res, nil, nil
	case sent.Unexecuted() && c.sessionMissing(),
		errors.Is(err, mcp.ErrConnectionClosed): // the SDK found the connection closing: nothing was sent
		return nil, nil, &unexecuted{c.callError(callToolOp(mcpName), err)}
	case refused != "":
		// A legacy server asked for sampling or roots while serving the call.
		err = fmt.Errorf("%w: the server asked for %s: %w", ErrUnsupportedInputRequest, refused, err)
		return nil, nil, c.callError(callToolOp(mcpName), err)
	}
	if res := c.asResult(err, false); res != nil { // modelerror.go
		return nil, res, nil
	}
	return nil, nil, c.callError(callToolOp(mcpName), err)
}
