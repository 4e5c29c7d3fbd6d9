package mcpadapter

// Live interrupts: a legacy server's question asked on its open connection.
//
// A legacy server asks for input with an elicitation/create request while
// it serves a tools/call, and waits on the connection for the answer. With
// no Config.ElicitationHandler to answer it there and then, the call
// returns a live *Interrupt, as a modern server's input-required result
// makes a durable one: the tools/call and the server's request stay open
// in the background, held by the Adapter under the interrupt's ID, and
// Adapter.Resume answers the request and waits for the call's next event
// (its result, or the next question: the next live interrupt).
//
//   - A call that may take questions so (conn.asksLive) runs its
//     tools/call on a goroutine of the generation (liveExchange.run), so
//     that its caller can stop waiting at a question while the request
//     goes on. Close ends it as any request: over Streamable HTTP through
//     its context (callContext), over the other transports by closing the
//     connection.
//   - A legacy task's tasks/result sent on the connection is such an
//     exchange too (taskCall.resultLive, tasks.go): the call that waits for
//     the task takes its server's questions, and a resume waits for the
//     same tasks/result again (taskCall.resumeLive).
//   - A question reaches the call only when it can be attributed to it:
//     the call is the only one open on the connection, not counting those
//     whose question waits for their user (serverreq.go). Otherwise it is
//     declined, as before live interrupts.
//   - The tool timeout bounds the call's time with the server, before the
//     question and again from each resume; the time the question waits for
//     the user is bounded by StateOptions.LiveMaxAge instead. A question
//     the call declines (too many held: maxLiveHeld, maxLiveHeldPerUser; a
//     request the adapter does not take) counts a round (maxRounds) and
//     leaves the timeout running; it is logged at Warn once per call.
//   - A question that comes as the call's wait ends (its timeout, its
//     caller) is answered cancel, and the request stopped (next).
//   - A held interrupt ends when it is resumed, when its bound passes (the
//     server is answered cancel, and the call gets liveGrace to end on its
//     own before it is cancelled), when the server withdraws its question
//     (notifications/cancelled: the call is cancelled), when the call ends
//     otherwise, and at Close (the server is answered cancel, and Close
//     waits a little for the call to end). A resume after that fails at
//     once, saying which (the registry keeps the reasons of the last ones
//     that ended), and sends nothing.
//
// The registry's lock (liveInterrupts.mu) is taken alone; what it guards
// is changed under it only, and no user code runs under it.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/httptransport"
	"github.com/mcpadapter/mcpadapter/internal/stored"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// liveKey is the key of the one request of a live interrupt: the
	// server's elicitation/create request has none.
	liveKey = "elicitation"
	// defaultLiveMaxAge is StateOptions.LiveMaxAge's default.
	defaultLiveMaxAge = 10 * time.Minute
	// maxLiveHeld caps the live interrupts an Adapter holds at once, and
	// the reasons it keeps of those that ended.
	maxLiveHeld = 1000
	// maxLiveHeldPerUser caps those of one server and one principal, so
	// that one user, or one server asking without end, cannot take them
	// all: a human answers a handful of questions at a time, and a tenth
	// of the Adapter's bound leaves room for ten such to fill theirs.
	maxLiveHeldPerUser = maxLiveHeld / 10
	// liveGrace is how long a call whose question was answered cancel when
	// its bound passed may take to end on its own before it is cancelled.
	liveGrace = 10 * time.Second
)

// asksLive reports whether a call on c takes its server's live questions
// itself, as live interrupts: a legacy session of the adapter's own
// client, with no Config.ElicitationHandler and StateOptions.LiveMaxAge
// not negative.
func (c *conn) asksLive() bool {
	return !c.modern() && c.cfg.Client == nil && c.a.elicit.handler == nil && c.a.cfg.State.LiveMaxAge >= 0
}

// liveMaxAge returns the bound of a live interrupt (StateOptions.LiveMaxAge).
func (a *Adapter) liveMaxAge() time.Duration {
	if d := a.cfg.State.LiveMaxAge; d > 0 {
		return d
	}
	return defaultLiveMaxAge
}

// A liveExchange is a tools/call, or a legacy task's tasks/result, whose
// server may ask live questions that the call takes itself (see the file
// comment). Its request runs on a
// goroutine of the generation (run); its caller waits for the next event
// (next): the answer, or a question.
type liveExchange struct {
	c     *conn
	token string    // the request's progress token, or ""
	task  *taskCall // the task call whose tasks/result the request is (tasks.go), or nil: a tools/call
	oc    *openCall

	ctx     context.Context // the request's: the caller's values, not its end
	stop    context.CancelFunc
	release func() // of the request's callContext

	asks  chan *question   // the server's questions, taken by the caller's wait
	done  chan liveOutcome // the answer, once
	quit  chan struct{}    // closed once the answer is in done
	grace atomic.Pointer[time.Timer]

	held     atomic.Pointer[heldLive] // the interrupt held for its question; set under liveInterrupts.mu
	declined bool                     // a question was declined (logged at Warn once); the caller's
	offering atomic.Bool              // a question waits to be taken (ask)
}

// A liveOutcome is the answer of a live exchange: a tools/call's, as
// callTool returns it, or a task's tasks/result's (body).
type liveOutcome struct {
	raw  *mcp.CallToolResult
	res  *Result
	body json.RawMessage
	err  error
}

// A question is a server's live elicitation/create request, taken by a
// live exchange.
type question struct {
	ctx    context.Context // the server's request's: ended when the server withdraws it
	params *mcp.ElicitParams
	answer chan *mcp.ElicitResult // buffered: the first answer wins
}

// reply answers q with r, unless it was answered.
func (q *question) reply(r *mcp.ElicitResult) {
	select {
	case q.answer <- r:
	default:
	}
}

// A liveAsked is a question of the server of a live exchange, as the error
// that ends its caller's wait; callRounds, or a task's wait
// (taskCall.wait), makes it a live interrupt (Tool.liveInterrupt). It never
// leaves the package.
type liveAsked struct {
	x *liveExchange
	q *question
}

func (l *liveAsked) Error() string { return "mcpadapter: the server asked a live question" }

// callLive sends params, a tools/call of the adapter's tool named tool, as
// a live exchange, and waits within ctx for its answer or its server's
// first question (a *liveAsked error).
func (c *conn) callLive(ctx context.Context, tool string, params *mcp.CallToolParams, sent *httptransport.SendRecord) (*mcp.CallToolResult, *Result, error) {
	token, _ := params.Meta["progressToken"].(string)
	x := c.goLive(ctx, tool, token, func(x *liveExchange) liveOutcome {
		res, err := c.session.CallTool(x.ctx, params)
		raw, r, err := c.callOutcome(params.Name, sent, res, err, c.closeCall(x.oc))
		return liveOutcome{raw: raw, res: r, err: err}
	})
	if x == nil {
		return nil, nil, serverError(c.server, callToolOp(params.Name), c.closedErr())
	}
	o := x.next(ctx)
	return o.raw, o.res, o.err
}

// goLive starts a live exchange on c for the adapter's tool named tool,
// under ctx (its values, not its end), whose request, with the progress
// token token (or ""), send sends on a goroutine of the generation and
// answers; send forgets x.oc as soon as the answer came. It returns nil
// when the generation has ended.
func (c *conn) goLive(ctx context.Context, tool, token string, send func(x *liveExchange) liveOutcome) *liveExchange {
	if !c.gen.enter() {
		return nil
	}
	x := &liveExchange{c: c, token: token, asks: make(chan *question), done: make(chan liveOutcome, 1), quit: make(chan struct{})}
	x.ctx, x.release = c.callContext(context.WithoutCancel(ctx))
	x.ctx, x.stop = context.WithCancel(x.ctx)
	x.oc = c.register(&openCall{ctx: ctx, tool: tool, live: x}) // the server's questions meanwhile come to x
	go func() {
		defer c.gen.wg.Done()
		x.run(send)
	}()
	return x
}

// run sends the request and records its answer; a question still held
// then ends with it.
func (x *liveExchange) run(send func(x *liveExchange) liveOutcome) {
	o := send(x)
	x.stop()
	x.release()
	if t := x.grace.Load(); t != nil {
		t.Stop()
	}
	x.done <- o
	close(x.quit)
	if h := x.held.Load(); h != nil {
		x.c.a.live.end(h, x.why(errLiveCallEnded), 0)
	}
}

// next waits within ctx for the next event of x: its answer, or its
// server's question (a *liveAsked error). When ctx ends first, or with the
// question, the request is cancelled (the question answered cancel) and its
// answer (the cancellation) returned.
func (x *liveExchange) next(ctx context.Context) liveOutcome {
	select {
	case o := <-x.done:
		return o
	case q := <-x.asks:
		if ctx.Err() == nil {
			return liveOutcome{err: &liveAsked{x: x, q: q}}
		}
		q.reply(&mcp.ElicitResult{Action: string(Cancel)}) // the deadline came with it: no one takes it
	case <-ctx.Done():
	}
	x.stop()
	return <-x.done
}

// ask hands req, the server's live elicitation/create request under ctx
// (with params: conn.liveElicitation screened it), to the call of x, and
// waits for its answer: a resume's, or cancel when its interrupt ended
// unanswered. A question the call cannot take any more (it ended) is
// declined.
func (x *liveExchange) ask(ctx context.Context, req *mcp.ElicitRequest) (mcp.Result, error) {
	if !x.offering.CompareAndSwap(false, true) { // one at a time, as with a handler (maxLiveElicitations)
		x.c.a.logger.Warn("mcpadapter: declined live elicitation", "server", x.c.server, "reason", "the call's server asks another question at once")
		return &mcp.ElicitResult{Action: string(Decline)}, nil
	}
	q := &question{ctx: ctx, params: req.Params, answer: make(chan *mcp.ElicitResult, 1)}
	select {
	case x.asks <- q:
		x.offering.Store(false)
	case <-x.quit:
		x.offering.Store(false)
		return &mcp.ElicitResult{Action: string(Decline)}, nil
	case <-ctx.Done():
		x.offering.Store(false)
		return nil, ctx.Err()
	}
	select {
	case r := <-q.answer:
		return r, nil
	case <-x.quit:
		select {
		case r := <-q.answer:
			return r, nil
		default:
			return &mcp.ElicitResult{Action: string(Cancel)}, nil
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// liveInterrupt returns the live interrupt of the question asked, the
// server's in round round+1 of a call of t with args on c, held by the
// adapter; or nil when the question was declined (too many held, or a
// request the adapter does not take): the call then goes on, waiting for
// the same request, and its caller counts the round. A call past maxRounds
// fails.
func (t *Tool) liveInterrupt(ctx context.Context, c *conn, args map[string]any, asked *liveAsked, round int) error {
	a, x, q := t.a, asked.x, asked.q
	if round++; round > maxRounds {
		q.reply(&mcp.ElicitResult{Action: string(Cancel)})
		x.stop()
		return serverError(c.server, callToolOp(t.desc.Name), fmt.Errorf("the server asked for input more than %d times", maxRounds))
	}
	requests := mcp.InputRequestMap{liveKey: q.params}
	reqs, err := elicitationRequests(requests)
	if err == nil {
		in := newInterrupt(ctx, a, c, t.name, t.desc.Name, args, requests, reqs, round, "", stored.KindLive, nil)
		if err = a.live.hold(in, t, x, q, a.liveMaxAge()); err == nil {
			return in
		}
	}
	log := a.logger.Warn
	if x.declined { // once per call: a server may ask again and again
		log = a.logger.Debug
	}
	x.declined = true
	log("mcpadapter: declined live elicitation", "server", c.server, "reason", err.Error())
	q.reply(&mcp.ElicitResult{Action: string(Decline)})
	return nil
}

// resumeLive resumes in, a live interrupt, taken for its resume as h (see
// [Adapter.Resume]): it answers the held question with answer, then waits
// within ctx for the call's next event.
func (a *Adapter) resumeLive(ctx context.Context, in *Interrupt, h *heldLive, answer *mcp.ElicitResult) (*Result, error) {
	var (
		res *Result
		err error
	)
	t := h.tool
	if tc := h.x.task; tc != nil {
		res, err = tc.resumeLive(ctx, h, answer) // tasks.go
	} else {
		info := t.newCall(ctx)
		info.resumed, info.answer = h.x, func() { h.q.reply(answer) }
		res, err = t.callRounds(ctx, &info, h.in.args, nil, "", h.in.round)
		if info.answer != nil { // no round reached it (the connection ended first): the server still gets it
			info.answer()
		}
	}
	res, err = t.checkOutput(ctx, res, err)
	return res, t.interrupted(err, in.approved && a.states.trusted(in.seal))
}

// liveInterrupts are the live interrupts an Adapter holds, by ID, and why
// the last ones that ended did.
type liveInterrupts struct {
	mu    sync.Mutex
	held  map[string]*heldLive
	users map[liveUser]int // how many of held each server and principal has
	ended map[string]error // why the interrupt of an ID is held no more
	order []string         // the IDs in ended, oldest first
}

// A liveUser is a server and a principal ("": none), whose held live
// interrupts are counted together.
type liveUser struct{ server, principal string }

// A heldLive is a live interrupt held for its resume.
type heldLive struct {
	in       Interrupt // a copy, as it was made: what its resumes must match
	tool     *Tool
	x        *liveExchange
	q        *question
	timer    *time.Timer // its bound
	stopGone func() bool // of the watch on the server's withdrawal
}

// The reasons a live interrupt ended, which its resume then says.
var (
	errLiveWithdrawn = fmt.Errorf("%w: the server withdrew its question (it stopped waiting for the answer), and the call was cancelled", ErrInvalidState)
	errLiveCallEnded = fmt.Errorf("%w: the call ended while its question waited (its connection was lost, or the server ended it)", ErrInvalidState)
	errLiveResumed   = fmt.Errorf("%w: the live interrupt was resumed already", ErrClaimedState)
	errLiveClosed    = fmt.Errorf("the Adapter that held the live interrupt was closed: %w", ErrClosed)
	errLiveElsewhere = fmt.Errorf("%w: this Adapter holds no live interrupt of this ID: a live interrupt waits on the connection of the Adapter that made it, in its process, which alone can resume it", ErrInvalidState)
	errLiveFull      = fmt.Errorf("%d live interrupts are held already", maxLiveHeld)
	errLiveUserFull  = fmt.Errorf("%d live interrupts of this server and principal are held already", maxLiveHeldPerUser)
)

// errLiveExpired is why a live interrupt of bound ended when it passed.
func errLiveExpired(bound time.Duration) error {
	return fmt.Errorf("%w: its bound passed (StateOptions.LiveMaxAge, %v), and the server's question was answered cancel", ErrInvalidState, bound)
}

// hold holds in, the live interrupt of the question q of x, asked during a
// call of t, for bound: unless l holds too many already.
func (l *liveInterrupts) hold(in *Interrupt, t *Tool, x *liveExchange, q *question, bound time.Duration) error {
	h := &heldLive{in: *in, tool: t, x: x, q: q}
	l.mu.Lock()
	defer l.mu.Unlock()
	user := liveUser{in.Server, in.principal}
	switch {
	case len(l.held) >= maxLiveHeld:
		return errLiveFull
	case l.users[user] >= maxLiveHeldPerUser:
		return errLiveUserFull
	}
	if l.held == nil {
		l.held, l.users = make(map[string]*heldLive), make(map[liveUser]int)
	}
	l.held[in.id] = h
	l.users[user]++
	x.held.Store(h)
	h.timer = time.AfterFunc(bound, func() { l.end(h, errLiveExpired(bound), liveGrace) })
	h.stopGone = context.AfterFunc(q.ctx, func() { l.end(h, x.why(errLiveWithdrawn), 0) })
	return nil
}

// end ends h, if it is still held, for why: its question is answered
// cancel (a withdrawn one is answered by no one) and its call cancelled
// after grace (0: at once).
func (l *liveInterrupts) end(h *heldLive, why error, grace time.Duration) {
	if !l.drop(h, why) {
		return
	}
	h.tool.a.logger.Info("mcpadapter: live interrupt ended unresumed", "server", h.in.Server, "tool", h.in.Tool, "id", h.in.id, "reason", why.Error())
	h.q.reply(&mcp.ElicitResult{Action: string(Cancel)})
	if grace == 0 {
		h.x.stop()
		return
	}
	h.x.grace.Store(time.AfterFunc(grace, h.x.stop))
}

// close ends every interrupt l holds, at Close, before the connections
// close: their questions are answered cancel, and close waits, up to
// cancelNoticeTimeout in all, for their calls to end on their own, so that
// no server is left waiting for an answer that cannot come any more (a
// go-sdk SSE server waits so even for a client that went away). Close
// cancels the calls still open.
func (l *liveInterrupts) close() {
	l.mu.Lock()
	held := slices.Collect(maps.Values(l.held))
	l.mu.Unlock()
	if len(held) == 0 {
		return
	}
	for _, h := range held {
		l.end(h, errLiveClosed, cancelNoticeTimeout)
	}
	timer := time.NewTimer(cancelNoticeTimeout)
	defer timer.Stop()
	for _, h := range held {
		select {
		case <-h.x.quit:
		case <-timer.C:
			return
		}
	}
}

// why returns why a question of x ends: that the adapter closed, or the
// connection was lost, when it did, or else err.
func (x *liveExchange) why(err error) error {
	switch c := x.c; {
	case c.closing.Load() || c.life.Err() != nil:
		return errLiveClosed
	case !c.alive():
		return errLiveCallEnded
	}
	return err
}

// find returns the held interrupt that in, being resumed on a, is a copy
// of, or the error that says why there is none.
func (l *liveInterrupts) find(a *Adapter, in *Interrupt, bound time.Duration) (*heldLive, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.held[in.id]; h != nil {
		if o := &h.in; o.Server != in.Server || o.Tool != in.Tool || o.MCPName != in.MCPName || o.round != in.round || o.principal != in.principal {
			return nil, fmt.Errorf("%w: it does not match the live interrupt of its ID", ErrInvalidState)
		}
		return h, nil
	}
	if why := l.ended[in.id]; why != nil {
		return nil, why
	}
	switch {
	case in.a != nil && in.a != a:
		return nil, fmt.Errorf("%w: it was made by another Adapter: a live interrupt waits on the connection of the Adapter that made it, which alone can resume it", ErrInvalidState)
	case !in.issued.IsZero() && time.Since(in.issued) > bound:
		return nil, errLiveExpired(bound)
	}
	return nil, errLiveElsewhere
}

// take ends h for its resume, or returns why it ended before.
func (l *liveInterrupts) take(h *heldLive) error {
	if l.drop(h, errLiveResumed) {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if why := l.ended[h.in.id]; why != nil {
		return why
	}
	return errLiveElsewhere
}

// drop stops holding h, if l holds it, recording why, and reports whether
// it did.
func (l *liveInterrupts) drop(h *heldLive, why error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := h.in.id
	if l.held[id] != h {
		return false
	}
	delete(l.held, id)
	if user := (liveUser{h.in.Server, h.in.principal}); l.users[user] > 1 {
		l.users[user]--
	} else {
		delete(l.users, user)
	}
	h.x.held.Store(nil)
	h.timer.Stop()
	h.stopGone()
	if l.ended == nil {
		l.ended = make(map[string]error)
	}
	if len(l.order) >= maxLiveHeld {
		delete(l.ended, l.order[0])
		l.order = l.order[1:]
	}
	l.ended[id] = why
	l.order = append(l.order, id)
	return true
}
