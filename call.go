package mcpadapter

// One call, top-down: Tool.Call, Tool.InvokeJSON and Tool.Invoke → the
// callbacks (observe) → the principal check (gated) → Middleware
// (hooks.go) → the approval gate (send) → the input rounds
// (callRounds) → one tools/call (callOnce) → a Result (result.go) or an
// *Interrupt (elicitation.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/callinput"
	"github.com/mcpadapter/mcpadapter/internal/deliver"
	"github.com/mcpadapter/mcpadapter/internal/httptransport"
	"github.com/mcpadapter/mcpadapter/internal/modeltext"
	"github.com/mcpadapter/mcpadapter/internal/observe"
	"github.com/mcpadapter/mcpadapter/internal/schemapass"
	"github.com/mcpadapter/mcpadapter/internal/tasks"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Invoke calls the tool with args, sent as given but for the nulls that
// mean absent (a null for an optional property whose schema does not
// accept null is dropped: strict-mode models send one for every property
// they leave out); the server validates them. Nil args are sent as {}. A tool-level failure (the server's isError,
// or a JSON-RPC invalid-params error) is a [Result] with IsError set, the
// server's message in its content, and a nil error. Otherwise the error is
// an [*ApprovalRequired] when [Config.Approval] asks for approval (the server
// was not contacted), an [*Interrupt] when the server needs user input, and
// a [*ServerError] for transport, session and other JSON-RPC failures
// ([errors.As] reaches a *jsonrpc.Error through it), for timeouts and
// cancellation, and for [ErrClosed].
//
// The call is bounded by [Config.DefaultToolTimeout] when set, else by the
// server's [Server.DefaultToolTimeout]; a deadline of ctx shortens either.
// When ctx is done the server is told (notifications/cancelled).
func (t *Tool) Invoke(ctx context.Context, args map[string]any) (*Result, error) {
	return t.observe(ctx, argsInput(args), func() (*Result, error) { return t.gated(ctx, args, "", false) })
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
	return t.gated(ctx, args, id, false)
}

// Call implements [tools.Tool], langchaingo's text API. input may be a JSON
// object, langchaingo's {"__arg1": ...} wrapper (holding a string or an
// object), JSON in a Markdown fence or backticks, or a bare string when the
// schema has exactly one string property (or, failing that, exactly one
// required property, of type string). A tool without properties accepts any
// input that is not a JSON object as no arguments.
//
// The output is [Result.Text]: the text blocks, media as short placeholders,
// structured content as bounded compact JSON without base64 when there is
// neither text nor media, nothing meant for the user alone, all of it cut
// to [Config.ResultBudget] characters (see [ResultBudget]). Input that
// cannot be decoded, the server's isError results and the JSON-RPC errors a
// server answers the call with while its connection is fine (server-postgres
// reports every SQL error so) come back as text with a nil error, so the
// model can correct itself (an error ends a langchaingo agent run);
// interrupts, approvals, timeouts, transport and session failures are
// errors, as in [Tool.Invoke], which returns the JSON-RPC errors too.
func (t *Tool) Call(ctx context.Context, input string) (string, error) {
	res, err := t.observe(ctx, textInput(input), func() (*Result, error) {
		args, err := callinput.Decode(input, t.params)
		if err != nil {
			return t.invalidInput(err), nil
		}
		return t.answered(t.gated(ctx, args, "", false))
	})
	if err != nil {
		return "", err
	}
	return modeltext.Cut(res.Text(), budgetLimit(t.resultBudget())), nil
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

// gated is where a fresh call and an approved one join: the nulls that
// mean absent dropped (see schemapass.DropAbsentNulls) and the call's one
// principal check, before any I/O; the approval gate ([Config.Approval])
// comes after [Config.Middleware], on the arguments that would be sent
// (send). approved says that a human approved args ([Adapter.Decide]).
// id is the model's tool-call id, or "".
func (t *Tool) gated(ctx context.Context, args map[string]any, id string, approved bool) (*Result, error) {
	args = schemapass.DropAbsentNulls(t.params, args)
	if err := t.conn.checkPrincipal(ctx, t.desc.Name); err != nil {
		return nil, err // before a reviewer is asked
	}
	var g *grant
	if approved && t.a.cfg.Approval != nil {
		g = grantOf(args)
	}
	return t.run(ctx, args, id, g)
}

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

// invoke runs an approved call, with callbacks: [Adapter.Decide].
func (t *Tool) invoke(ctx context.Context, args map[string]any) (*Result, error) {
	return t.observe(ctx, argsInput(args), func() (*Result, error) { return t.gated(ctx, args, "", true) })
}

// run calls the tool on its connection, without callbacks: through
// [Config.Middleware], watched by a tracer and the debug log, when any of
// them is there, then the approval gate (send). g is what a human
// approved, or nil.
func (t *Tool) run(ctx context.Context, args map[string]any, id string, g *grant) (*Result, error) {
	if t.taskSupport() == tasks.Required && !t.conn.tasksOn() {
		return nil, serverError(t.server, callToolOp(t.desc.Name), ErrTaskRequired)
	}
	a := t.a
	w := t.watch(ctx)
	if len(a.cfg.Middleware) == 0 && w == nil && !a.notify.wantsProgress(ctx) {
		return t.send(ctx, args, nil, g) // nothing to tell: no call id, no span, no record
	}
	info := &callInfo{id: id, watch: w}
	if info.id == "" {
		info.id = "call-" + strconv.FormatUint(a.callIDs.Add(1), 10)
	}
	ctx = w.Start(ctx, info.id)
	res, err := t.hooked(ctx, args, info, g)
	w.End(ctx, res != nil && res.IsError, err, info.id, info.requests)
	return res, err
}

// send passes the approval gate with args, the arguments as they are
// sent, unless g approved them, then calls the tool with them.
func (t *Tool) send(ctx context.Context, args map[string]any, info *callInfo, g *grant) (*Result, error) {
	if !g.covers(args) {
		if p := t.approval(ctx, args, nil); p != nil {
			return nil, p
		}
	}
	return t.rounds(ctx, args, info)
}

// rounds calls the tool with args, for the call described by info (nil on
// the fast path: nothing to tell).
func (t *Tool) rounds(ctx context.Context, args map[string]any, info *callInfo) (*Result, error) {
	var (
		res *Result
		err error
	)
	if t.taskSupport() != "" && t.asTask(ctx) { // a tool without task support never enters tasks.go
		res, err = t.task(ctx, args, info)
	} else {
		res, err = t.callRounds(ctx, args, nil, "", 0, info)
	}
	res, err = t.checkOutput(ctx, res, err)
	return res, t.interrupted(err, false)
}

// A callInfo describes one call of a Tool to the requests it sends: the
// call's id, the _meta that middleware asked for, how many tools/call
// requests it sent, and what watches it. It is handed down as a parameter
// from Tool.run to callRound, and made only when a middleware, a tracer,
// progress or a debug log needs it.
type callInfo struct {
	id       string
	meta     map[string]any
	requests int           // written by the call's rounds, one at a time
	watch    *observe.Call // nil: no span, no debug record
}

// request starts a request of the call info describes (nil: none) to the
// tool mcpName on c: it returns ctx carrying the request's span, the
// request's _meta (the middleware's, with the trace context), and the func
// that ends the span with whether the result is an error and err.
func (info *callInfo) request(ctx context.Context, c *conn, mcpName string) (context.Context, mcp.Meta, func(bool, error)) {
	var meta mcp.Meta
	var w *observe.Call
	if info != nil {
		meta, w = maps.Clone(info.meta), info.watch
		info.requests++
	}
	return w.Request(ctx, mcpName, c.peer, meta)
}

// callID returns the id of the call that info describes, or "".
func (info *callInfo) callID() string {
	if info == nil {
		return ""
	}
	return info.id
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

// callToolOp is the [ServerError] Op of a failed call of the tool mcpName.
// It is built when a call fails, not for every call.
func callToolOp(mcpName string) string { return fmt.Sprintf("call tool %q", mcpName) }

// callRounds calls t and drives its input rounds until a result: each
// round is answered inline by [Config.ElicitationHandler] or returned as an
// *Interrupt. responses and state are those of the round to send; round
// counts the rounds before it.
//
// The tool timeout bounds each round (one tools/call), not the time a
// handler takes to ask a human, nor the waits between rounds: ctx bounds
// those.
func (t *Tool) callRounds(ctx context.Context, args map[string]any, responses mcp.InputResponseMap, state string, round int, info *callInfo) (*Result, error) {
	a, c, tool, mcpName := t.a, t.conn.current(), t.name, t.desc.Name
	caller := ctx
	ctx, done := c.callContext(caller)
	defer func() { done() }()
	timeout := t.timeout()
	// The error Op (callToolOp) is built only on failure: a Sprintf per
	// call showed up in the benchmarks (bench_test.go).
	delay := emptyRoundDelay
	renewed := false
	for {
		raw, res, err := callRound(ctx, c, timeout, tool, mcpName, args, responses, state, info)
		var asked mcp.InputRequestMap
		retry := false
		switch {
		case err != nil:
			var unsent *unexecuted
			if !renewed && errors.As(err, &unsent) {
				// The server forgot the session without executing the
				// request: send it again, once, on a new session.
				renewed = true
				if c, err = a.pool.renew(caller, c); err != nil {
					return nil, err
				}
				done()
				ctx, done = c.callContext(caller)
				continue
			}
			if asked = urlElicitations(err); asked == nil {
				return nil, err
			}
			retry = true // send the same request again once the user is done
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
			return nil, newInterrupt(ctx, a, c, tool, mcpName, args, asked, reqs, round, state, retry, responses)
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
		if !retry {
			responses = answered
		} else if res := refused(reqs, answered); res != nil {
			return res, nil
		}
	}
}

// callRound sends one round, bounded by timeout when positive: since its
// start, or, with Config.ResetTimeoutOnProgress, since its last progress
// notification. It traces the request and asks for progress when someone
// listens.
func callRound(ctx context.Context, c *conn, timeout time.Duration, tool, mcpName string, args map[string]any, responses mcp.InputResponseMap, state string, info *callInfo) (*mcp.CallToolResult, *Result, error) {
	a := c.a
	var touch func()
	if timeout > 0 {
		var release func()
		if a.cfg.ResetTimeoutOnProgress {
			ctx, touch, release = deliver.IdleContext(ctx, timeout, a.cfg.MaxToolTimeout)
		} else {
			ctx, release = context.WithTimeout(ctx, timeout)
		}
		defer release()
	}
	ctx, meta, traced := info.request(ctx, c, mcpName)
	if a.notify.wantsProgress(ctx) && c.cfg.Client == nil { // a prebuilt client has no handler of ours
		f, _ := ctx.Value(progressKey{}).(func(Progress))
		sink := &progressSink{ctx: ctx, p: Progress{Server: c.server, Tool: tool, MCPName: mcpName, CallID: info.callID()}, f: f, touch: touch}
		token, forget := a.notify.register(c, sink)
		defer forget()
		if meta == nil {
			meta = mcp.Meta{}
		}
		meta["progressToken"] = token
	}
	raw, res, err := c.callOnce(ctx, tool, mcpName, args, responses, state, meta)
	if err != nil {
		if idle, ok := context.Cause(ctx).(*deliver.NoProgress); ok {
			err = serverError(c.server, callToolOp(mcpName), idle)
		}
	}
	traced(res != nil && res.IsError || res == nil && raw != nil && raw.IsError, err)
	return raw, res, err
}

// callOnce sends one tools/call of tool on c, with meta as its _meta (nil: none).
// Params are built fresh for every call:
// the SDK writes into them. Exactly one of the results is set on success: the
// raw result, or a Result for a JSON-RPC invalid-params error (the model can
// fix its arguments).
func (c *conn) callOnce(ctx context.Context, tool, mcpName string, args any, responses mcp.InputResponseMap, state string, meta mcp.Meta) (*mcp.CallToolResult, *Result, error) {
	if c.closing.Load() || c.life.Err() != nil || !c.alive() { // checked first: usable builds the error's Op
		if err := c.usable(callToolOp(mcpName)); err != nil {
			if c.sessionMissing() && !c.closing.Load() {
				err = &unexecuted{err} // nothing was sent
			}
			return nil, nil, err
		}
	}
	// A nil map inside args is not a nil interface: send {} for both, since
	// servers reject "arguments": null (the TypeScript SDK does).
	if m, ok := args.(map[string]any); args == nil || ok && m == nil {
		args = map[string]any{}
	}
	c.a.catalogs.recordTools(ctx, c) // Mcp-Param headers on modern HTTP (sdkcache.go)
	var sent *httptransport.SendRecord
	if c.http != nil { // whether the server executed the request (internal/httptransport)
		sent = new(httptransport.SendRecord)
		ctx = httptransport.WithSendRecord(ctx, sent)
	}
	oc := c.openCall(ctx, tool) // the server's requests meanwhile are attributed to it (serverreq.go)
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: mcpName, Arguments: args, InputResponses: responses, RequestState: state})
	refused := c.closeCall(oc)
	if err != nil && sent.Unexecuted() && c.sessionMissing() {
		return nil, nil, &unexecuted{c.callError(callToolOp(mcpName), err)}
	}
	if err != nil {
		if refused != "" {
			// A legacy server asked for sampling or roots while serving the call.
			err = fmt.Errorf("%w: the server asked for %s: %w", ErrUnsupportedInputRequest, refused, err)
			return nil, nil, c.callError(callToolOp(mcpName), err)
		}
		if res := c.asResult(err, false); res != nil { // modelerror.go
			return nil, res, nil
		}
		return nil, nil, c.callError(callToolOp(mcpName), err)
	}
	return res, nil, nil
}

// newInterrupt returns the interrupt of a round of c's server that asked
// for reqs (asked verbatim), in a call under ctx.
func newInterrupt(ctx context.Context, a *Adapter, c *conn, tool, mcpName string, args map[string]any, asked mcp.InputRequestMap, reqs []ElicitationRequest, round int, state string, retry bool, responses mcp.InputResponseMap) *Interrupt {
	i := &Interrupt{
		Server: c.server, Tool: tool, MCPName: mcpName, Requests: reqs,
		a: a, gen: c.gen,
		args: callinput.Snapshot(args), state: state, round: round, requests: asked,
		retry: retry, principal: PrincipalFrom(ctx), stamp: newStamp(),
	}
	if retry {
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
