package mcpadapter

// One call, top-down: Tool.Call, Tool.InvokeJSON and Tool.Invoke → the
// callbacks (observe) → run: the principal check, the target (follow.go),
// the call prepared once (newCall), Middleware (hooks.go) → the approval
// gate (send) → a task (tasks.go) or the input rounds (callRounds) → one
// exchange per round on the connection (exchange.go) → a Result
// (result.go) or an *Interrupt (elicitation.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/callinput"
	"github.com/mcpadapter/mcpadapter/internal/modeltext"
	"github.com/mcpadapter/mcpadapter/internal/observe"
	"github.com/mcpadapter/mcpadapter/internal/schemapass"
	"github.com/mcpadapter/mcpadapter/internal/stored"
	"github.com/mcpadapter/mcpadapter/internal/tasks"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Invoke calls the tool with args, sent as given but for the nulls that
// mean absent (a null for an optional property whose schema does not
// accept null is dropped: strict-mode models send one for every property
// they leave out); the server validates them. Nil args are sent as {}. A
// tool-level failure (the server's isError, or a JSON-RPC invalid-params
// error) is a [Result] with IsError set, the server's message in its
// content, and a nil error. Otherwise the error is an
// [*ApprovalRequired] when [Config.Approval] asks for approval (the
// server was not contacted), an [*Interrupt] when the server needs user
// input, and a [*ServerError] for transport, session and other JSON-RPC
// failures ([errors.As] reaches a *jsonrpc.Error through it), for
// timeouts and cancellation, and for [ErrClosed]. More in
// docs/reference.md, "Tool.Invoke".
func (t *Tool) Invoke(ctx context.Context, args map[string]any) (*Result, error) {
	return t.observe(ctx, argsInput(args), func() (*Result, error) { return t.run(ctx, args, "", false) })
}

// InvokeJSON is [Tool.Invoke] with the arguments as a JSON object, as a
// model writes them in a native tool call. Arguments that are not a JSON
// object are answered like invalid params: a Result with IsError set that
// tells the model what the tool expects, and a nil error. An empty string
// means no arguments.
func (t *Tool) InvokeJSON(ctx context.Context, argsJSON string) (*Result, error) {
	return t.observe(ctx, textInput(argsJSON), func() (*Result, error) { return t.invokeJSON(ctx, argsJSON, "") })
}

// invokeJSON is InvokeJSON without callbacks, for the model's tool call
// id ("": none).
func (t *Tool) invokeJSON(ctx context.Context, argsJSON, id string) (*Result, error) {
	args := map[string]any{}
	if strings.TrimSpace(argsJSON) != "" {
		var err error
		if args, err = callinput.Object(argsJSON); err != nil {
			return t.invalidInput(err), nil
		}
	}
	return t.run(ctx, args, id, false)
}

// Call implements [tools.Tool], langchaingo's text API. input may be a
// JSON object, langchaingo's {"__arg1": ...} wrapper (holding a string
// or an object), JSON in a Markdown fence or backticks, or a bare string
// when the schema has exactly one string property (or, failing that,
// exactly one required property, of type string). A tool without
// properties accepts any input that is not a JSON object as no
// arguments. More in docs/reference.md, "Tool.Call".
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	res, err := t.observe(ctx, textInput(input), func() (*Result, error) {
		args, err := callinput.Decode(input, t.params)
		if err != nil {
			return t.invalidInput(err), nil
		}
		res, err := t.run(ctx, args, "", false)
		if err != nil {
			return t.answered(ctx, res, err) // what the model can act on stays a result
		}
		return res, nil
	})
	if err != nil {
		return "", err
	}
	text := res.Text()
	if limit := t.a.limit; limit >= 0 && len(text) > limit { // most results fit: nothing to cut
		text = modeltext.Cut(text, limit)
	}
	return text, nil
}

// A toolInput is the callbacks' view of a call's input. It is only computed
// when there is a [Config.CallbacksHandler] to show it to: marshalling the
// arguments of every call for nobody cost five allocations per Invoke.
type toolInput struct {
	args   map[string]any // Invoke's arguments, marshalled on demand
	text   string         // Call's or InvokeJSON's input, when isText
	isText bool
}

// argsInput is the input of a call made with the arguments args.
func argsInput(args map[string]any) toolInput { return toolInput{args: args} }

// textInput is the input of a call made with the text s.
func textInput(s string) toolInput { return toolInput{text: s, isText: true} }

// String returns the text, or the arguments as JSON.
func (in toolInput) String() string {
	if in.isText {
		return in.text
	}
	if in.args == nil {
		return "{}"
	}
	b, err := json.Marshal(in.args)
	if err != nil {
		return fmt.Sprintf("%v", in.args)
	}
	return string(b)
}

// observe runs f between the callbacks of [Config.CallbacksHandler]:
// HandleToolStart with the input, then HandleToolEnd with the result's
// text, or HandleToolError with the error.
func (t *Tool) observe(ctx context.Context, input toolInput, f func() (*Result, error)) (*Result, error) {
	if t.a == nil {
		return nil, errNoAdapter
	}
	cb := t.a.cfg.CallbacksHandler
	if cb == nil {
		return f()
	}
	cb.HandleToolStart(ctx, input.String())
	res, err := f()
	if err != nil {
		cb.HandleToolError(ctx, err)
	} else {
		cb.HandleToolEnd(ctx, res.Text())
	}
	return res, err
}

// invoke runs an approved call, with callbacks: [Adapter.Resume].
func (t *Tool) invoke(ctx context.Context, args map[string]any) (*Result, error) {
	return t.observe(ctx, argsInput(args), func() (*Result, error) { return t.run(ctx, args, "", true) })
}

// run is where a fresh call and an approved one join, without callbacks:
// the call's one principal check, before any I/O, its target resolved
// once (target: t, or the same tool on its server's current connection),
// the call prepared (newCall), the nulls that mean absent dropped (see
// schemapass.DropAbsentNulls), then [Config.Middleware] (hooks.go) and
// the approval gate (send), with the call watched by a tracer and the debug
// log when any of them is there. approved says that a human approved args
// ([Adapter.Resume]). id is the model's tool-call id, or "".
func (t *Tool) run(ctx context.Context, args map[string]any, id string, approved bool) (*Result, error) {
	if err := t.conn.checkPrincipal(ctx, t.desc.Name); err != nil {
		return nil, err // before a reviewer is asked
	}
	t, err := t.target(ctx) // the tool on its server's current connection (follow.go)
	if err != nil {
		return nil, err
	}
	info := t.newCall(ctx)
	if info.tasks == tasks.Required && !t.conn.tasksOn() {
		return nil, serverError(t.server, callToolOp(t.desc.Name), ErrTaskRequired)
	}
	a := t.a
	info.watch = observe.Watch(ctx, a.tracer, a.metrics, a.logger, t.server, t.name)
	args = schemapass.DropAbsentNulls(t.params, args)
	var g *grant
	if approved && a.cfg.Approval != nil {
		g = grantOf(args)
	}
	if len(a.cfg.Middleware) == 0 && info.watch == nil && !info.progress {
		return t.send(ctx, &info, args, g) // nothing to tell: no call id, no span, no record
	}
	// A copy, made only here, for the middleware's closures to keep: it
	// goes to the heap, and info, the fast path's, stays on the stack.
	told := info
	told.id = id
	if told.id == "" {
		told.id = "call-" + strconv.FormatUint(a.callIDs.Add(1), 10)
	}
	ctx = told.watch.Start(ctx, told.id)
	res, err := t.hooked(ctx, &told, args, g)
	told.watch.End(ctx, res != nil && res.IsError, err, told.id, told.requests)
	return res, err
}

// A callInfo is one call of a Tool, prepared once (newCall) and handed
// down as a parameter from Tool.run to the exchange (exchange.go): what
// the call needs to know, asked of the Tool, its Adapter and ctx once,
// and what it has done. The rounds of a call are sent one at a time.
type callInfo struct {
	t          *Tool
	tasks      string         // the tool's execution.taskSupport ("": none)
	timeout    time.Duration  // the bound of one round (0: none)
	progress   bool           // someone listens to the call's progress
	onProgress func(Progress) // WithProgress's, or nil
	watch      *observe.Call  // nil: no span, no debug record (set by run)

	resumed  *liveExchange  // a live request going on (resumed, or its question declined), which the next round waits for (live.go)
	clock    *roundClock    // the bounded context of a round whose live question was declined (exchange.go), or nil
	answer   func()         // sends a resumed live interrupt's answer, once its progress is listened to; or nil
	id       string         // the call's id; "" when nothing listens (run)
	meta     map[string]any // the _meta that middleware asked for
	requests int            // the tools/call requests sent
}

// newCall prepares a call of t under ctx: the facts of t and ctx that its
// steps need. A fresh call adds its observer (run); a resumed round
// (elicitation.go) has none.
func (t *Tool) newCall(ctx context.Context) callInfo {
	a := t.a
	info := callInfo{t: t, timeout: t.timeout()}
	if e := t.desc.Execution; e != nil {
		info.tasks = e.TaskSupport
	}
	info.onProgress, _ = ctx.Value(progressKey{}).(func(Progress))
	info.progress = info.onProgress != nil || a.cfg.MaxToolTimeout > 0
	return info
}

// send passes the approval gate with args, the arguments as they are
// sent, unless g approved them, then calls the tool with them: as a task
// (tasks.go) or in rounds, its output checked.
func (t *Tool) send(ctx context.Context, info *callInfo, args map[string]any, g *grant) (*Result, error) {
	if !g.covers(args) {
		if p := t.approval(ctx, args, nil); p != nil {
			return nil, p
		}
	}
	var (
		res *Result
		err error
	)
	if info.tasks != "" && t.asTask(info.tasks) { // a tool without task support never enters tasks.go
		res, err = t.task(ctx, info, args)
	} else {
		res, err = t.callRounds(ctx, info, args, nil, "", 0)
	}
	res, err = t.checkOutput(ctx, res, err)
	return res, t.interrupted(err, false)
}

// callRounds calls t for the call info describes, with args, and drives
// its input rounds until a result: each round is one exchange on the
// tool's current connection (exchange.go), whose questions are answered
// inline by [Config.ElicitationHandler] or returned as an *Interrupt.
// responses and state are those of the round to send; round counts the
// rounds before it.
//
// The tool timeout bounds each round (one tools/call), not the time a
// handler takes to ask a human, nor the waits between rounds: ctx bounds
// those.
func (t *Tool) callRounds(ctx context.Context, info *callInfo, args map[string]any, responses mcp.InputResponseMap, state string, round int) (*Result, error) {
	a, c, tool, mcpName := t.a, t.conn.current(), t.name, t.desc.Name
	caller := ctx
	ctx, done := c.callContext(caller)
	defer func() { done() }()
	defer info.stopClock() // the round's deadline kept past a declined live question (exchange.go)
	// The error Op (callToolOp) is built only on failure: a Sprintf per
	// call showed up in the benchmarks (bench_test.go).
	delay := emptyRoundDelay
	renewed := false
	for {
		raw, res, err := c.exchange(ctx, info, args, responses, state)
		var asked mcp.InputRequestMap
		kind := stored.KindInputRequired
		switch {
		case err != nil:
			var unsent *unexecuted
			if !renewed && errors.As(err, &unsent) {
				// The server forgot the session, or the session ended,
				// before the request was executed: send it again, once,
				// on a new session (follow.go).
				renewed = true
				if c, err = t.resend(caller, c, info, err); err != nil {
					return nil, err
				}
				done()
				ctx, done = c.callContext(caller)
				continue
			}
			if q, ok := err.(*liveAsked); ok { // a legacy server's live question (live.go)
				if err := info.t.liveInterrupt(ctx, c, args, q, round); err != nil { // info.t: the tool a followed resend reached
					return nil, err
				}
				round++
				info.resumed = q.x // declined: the call goes on, within the round's deadline (info.clock)
				continue
			}
			if asked = urlElicitations(err); asked == nil {
				return nil, err
			}
			kind = stored.KindURLRequired // send the same request again once the user is done
		case res != nil:
			return res, nil
		case !raw.NeedsInput() && len(raw.InputRequests) == 0:
			return newResult(raw), nil
		default:
			// The legacy server shim leaks a second round with
			// NeedsInput false: InputRequests decides too.
			asked = raw.InputRequests
			responses, state = nil, raw.RequestState
		}
		if round++; round > maxRounds {
			return nil, serverError(c.server, callToolOp(mcpName), fmt.Errorf("the server asked for input more than %d times", maxRounds))
		}
		if len(asked) == 0 {
			// Load shedding: the server asks for nothing yet. Call again
			// with its state, later.
			wait, release := c.untilClose(ctx)
			err := sleep(wait, delay)
			release()
			if err != nil {
				return nil, c.callError(callToolOp(mcpName), err)
			}
			delay = min(2*delay, maxEmptyRoundDelay)
			continue
		}
		reqs, err := elicitationRequests(asked)
		if err != nil {
			return nil, serverError(c.server, callToolOp(mcpName), err)
		}
		if a.elicit.handler == nil || c.cfg.Client != nil { // a prebuilt client has handlers of its own
			return nil, newInterrupt(ctx, a, c, tool, mcpName, args, asked, reqs, round, state, kind, responses)
		}
		asking, release := c.untilClose(ctx)
		answered, err := a.elicit.inline(asking, c.server, tool, reqs)
		release()
		if err != nil {
			if c.life.Err() != nil {
				return nil, serverError(c.server, callToolOp(mcpName), ErrClosed)
			}
			return nil, err
		}
		if kind != stored.KindURLRequired {
			responses = answered
		} else if res := refused(reqs, answered); res != nil {
			return res, nil
		}
	}
}

// invalidInput is the result that answers arguments the tool cannot take:
// the problem and the schema, for the model to try again.
func (t *Tool) invalidInput(err error) *Result {
	schema, _ := json.Marshal(t.params)
	return errorResult(fmt.Sprintf("Error: invalid input for tool %s: %v. Expected a JSON object matching this schema: %s", t.name, err, schema))
}

// timeout returns the bound of one call of t:
// Config.DefaultToolTimeout when set, else its server's.
func (t *Tool) timeout() time.Duration {
	if t.a.cfg.DefaultToolTimeout > 0 {
		return t.a.cfg.DefaultToolTimeout
	}
	return t.conn.cfg.DefaultToolTimeout
}

// timeoutSetting names the setting [Tool.timeout] reads, for errors.
func (t *Tool) timeoutSetting() string {
	if t.a.cfg.DefaultToolTimeout > 0 {
		return "Config.DefaultToolTimeout"
	}
	return fmt.Sprintf("Server.DefaultToolTimeout of %q", t.server)
}

// callToolOp is the [ServerError] Op of a failed call of the tool mcpName.
// It is built when a call fails, not for every call.
func callToolOp(mcpName string) string { return fmt.Sprintf("call tool %q", mcpName) }

// A grant is what a human approved: a call's arguments, as JSON. The call
// goes past the approval gate without asking again only with exactly
// these arguments (after [Config.Middleware]), so that what was approved
// is what is sent.
type grant struct{ args []byte }

// grantOf returns the grant of args. (Arguments that do not marshal match
// nothing: the call asks again, and then fails to marshal.)
func grantOf(args map[string]any) *grant {
	b, _ := json.Marshal(argsOrEmpty(args))
	return &grant{args: b}
}

// covers reports whether g approved args. A nil grant approves nothing.
func (g *grant) covers(args map[string]any) bool {
	if g == nil {
		return false
	}
	b, err := json.Marshal(argsOrEmpty(args))
	return err == nil && bytes.Equal(b, g.args)
}

// argsOrEmpty returns args, or {} for nil: they are sent so.
func argsOrEmpty(args map[string]any) map[string]any {
	if args == nil {
		return map[string]any{}
	}
	return args
}

// approval is the one approval gate ([Config.Approval]), for fresh calls
// (send) and resumed ones ([Adapter.Resume]): the request that holds the
// call of t with args, the arguments it sends, for a human, or nil when
// the call needs no approval. resume is the resume it would send (nil for
// a fresh call).
func (t *Tool) approval(ctx context.Context, args map[string]any, resume *resumeCall) *ApprovalRequired {
	approve := t.a.cfg.Approval
	if approve == nil {
		return nil
	}
	call := t.call(args)
	if !approve(call) {
		return nil
	}
	return newApproval(ctx, t, call, resume)
}

// newInterrupt returns the interrupt of a round of c's server that asked
// for reqs (asked verbatim), in a call under ctx.
func newInterrupt(ctx context.Context, a *Adapter, c *conn, tool, mcpName string, args map[string]any, asked mcp.InputRequestMap, reqs []ElicitationRequest, round int, state, kind string, responses mcp.InputResponseMap) *Interrupt {
	i := &Interrupt{
		Server: c.server, Tool: tool, MCPName: mcpName, Requests: reqs,
		a: a, gen: c.gen,
		args: callinput.Snapshot(args), state: state, round: round, requests: asked,
		kind: kind, principal: principalFrom(ctx), stamp: newStamp(),
	}
	if kind == stored.KindURLRequired {
		i.responses = responses
	}
	return i
}

// interrupted binds the interrupt in err, if any, to t, the tool that
// made it, and marks it as coming from an approved call when approved is
// true. The interrupt is fresh: no one else holds it yet.
func (t *Tool) interrupted(err error, approved bool) error {
	var in *Interrupt
	if errors.As(err, &in) {
		in.tool = t
		in.approved = in.approved || approved
	}
	return err
}
