package mcpadapter

// Elicitation: a server that needs the user's input in the middle of a tool
// call. Notes on the design:
//
//   - The modern era (SEP-2322, multi round-trip requests) answers a
//     tools/call with an input_required result: input requests keyed by the
//     server, and an opaque requestState. The client calls the tool again,
//     from the beginning, as a new JSON-RPC request carrying the answers
//     under the same keys and the state echoed verbatim. The SDK can drive
//     these rounds itself; the adapter turns that off (dial.go, newClient)
//     and drives them here, so that a round can be handed to the caller as
//     an *Interrupt and resumed later, in another process if need be.
//   - A round needs nothing but the Interrupt's JSON: server name, MCP tool
//     name, arguments, requestState, round number and the server's requests
//     verbatim. The server keeps no session state for it (the state is
//     opaque and, on a well-behaved server, integrity-protected).
//   - A server may also refuse a request with the JSON-RPC error -32042
//     (URL elicitation required, both eras): the user must complete a step
//     in a browser, after which the very same request is sent again. The
//     adapter turns it into an Interrupt too, whose accepted resume repeats
//     the failed request; nothing can be sent for a decline, so a declined
//     or cancelled resume is answered locally.
//   - Legacy servers ask with live elicitation/create requests while the
//     call is open; those are answered by Config.ElicitationHandler
//     (elicitor.live), or, without one, become live interrupts that wait on
//     the open connection for a resume on the same Adapter (live.go), or
//     are declined (a negative StateOptions.LiveMaxAge).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/elicit"
	"github.com/mcpadapter/mcpadapter/internal/jsonvalue"
	"github.com/mcpadapter/mcpadapter/internal/stored"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// maxRounds caps the input rounds of one call, resumes included
	// (LangChain JS's cap); empty (load-shedding) rounds count.
	maxRounds = 32
	// emptyRoundDelay is the first wait before retrying a round in which
	// the server asked for nothing (load shedding); it doubles each time up
	// to maxEmptyRoundDelay.
	emptyRoundDelay    = 100 * time.Millisecond
	maxEmptyRoundDelay = 5 * time.Second
)

// An Interrupt is returned (as an error) by a tool call when the server
// needs input from the user. Requests lists what the server asks, by the
// server's own keys. Find it with [errors.As]:
//
//	var intr *mcpadapter.Interrupt  if errors.As(err, &intr) {
//
// // show intr.Requests to the user, collect one Answer per Key
// res, err = a.Resume(ctx, intr, mcpadapter.Answered(answers))    } More
// in docs/reference.md, "Interrupt".
type Interrupt struct {
	Server   string               // the server's name in [Config.Servers]
	Tool     string               // the adapter's tool name ([Tool.Name])
	MCPName  string               // the server's tool name ([Tool.MCPName])
	Requests []ElicitationRequest // sorted by Key; for display: Resume reads the server's requests

	a   *Adapter    // the adapter that made it; nil after JSON decoding
	gen *generation // the adapter generation it was made in: Close ends it

	args     map[string]any      // the call's arguments (a snapshot)
	state    string              // the server's requestState, echoed verbatim
	round    int                 // rounds so far, 1 for the first interrupt
	requests mcp.InputRequestMap // the server's requests, verbatim

	// kind is what asked, as stored (stored.Kind*): an input_required
	// result; a URL elicitation required error (-32042, KindURLRequired),
	// whose accepted resume sends the failed request again, with state and
	// the input responses it carried (responses: never stored, see
	// MarshalJSON); or a legacy server's question held on its open
	// connection (KindLive, live.go), which a resume answers there.
	kind      string
	responses mcp.InputResponseMap

	// task is the task whose questions these are (tasks.go): a resume
	// answers them through tasks/update.
	task *PendingTask

	approved  bool      // the call was approved: the Approval gate passes it
	principal string    // whom the call acted for ([WithPrincipal]); stored
	tool      *Tool     // the tool that made it; nil after JSON decoding
	seal      stateSeal // decoded from JSON, and how it was sealed
	stamp               // ID and Issued; claimed by the resume
}

// ElicitationRequest is one request for user input. Form requests (Mode
// "form") carry a Message and the RequestedSchema (a JSON Schema object)
// that an accepted answer's content must match; URL requests (Mode "url")
// ask the user to complete a step at URL, which the adapter never opens,
// and carry an ElicitationID.
type ElicitationRequest struct {
	// Server and Tool name the server that asks (as in [Config.Servers])
	// and the adapter's name of the tool ([Tool.Name]) whose call the
	// request serves, in the requests given to [Config.ElicitationHandler]
	// (an [Interrupt] names them itself). Tool is empty for a live request
	// that cannot be attributed: a legacy server may ask while several of
	// its calls are open, and MCP does not say for which.
	Server, Tool string
	// Key is the server's key for this request: answer it under the same
	// key. A legacy server's live request has none: it is empty in the
	// requests [Config.ElicitationHandler] answers, and "elicitation" in a
	// live [Interrupt].
	Key             string
	Mode            string // "form" or "url"
	Message         string
	RequestedSchema map[string]any // form mode; nil when the server sent none
	URL             string         // url mode
	ElicitationID   string         // url mode
}

// Action is the user's response to an [ElicitationRequest].
type Action string

// The three actions of an [Answer].
const (
	Accept  Action = "accept"  // the user answered; Content holds the answer (form mode)
	Decline Action = "decline" // the user said no
	Cancel  Action = "cancel"  // the user dismissed the request without choosing
)

// Answer is the user's answer to one [ElicitationRequest]. Content is the
// form's content when accepting a form request: it must match the request's
// RequestedSchema, whose defaults fill in missing properties. Content must
// be empty for Decline, Cancel and URL requests.
type Answer struct {
	Action  Action
	Content map[string]any
}

// Live reports whether the interrupt is live: a legacy server's question
// asked on its open connection during the call (an elicitation/create
// request), with no [Config.ElicitationHandler] to answer it. The request
// and the call wait there for the answer, so that only the Adapter that
// made the interrupt can resume it, in this process (a copy through JSON,
// which records that it is live, too), within [StateOptions.LiveMaxAge],
// and before its Close; a resume elsewhere or later fails at once, saying
// why, and sends nothing. Its one request has the key "elicitation". An
// interrupt that is not live (a modern server's input-required result, a
// URL elicitation required error) resumes on any Adapter that has the
// server, in any process. A sealed interrupt decoded from JSON says
// whether it is live once opened ([Adapter.Unseal]).
func (i *Interrupt) Live() bool { return i != nil && i.kind == stored.KindLive }

// Error implements error. It names the server and the tool and lists the
// requests' keys and messages; it never shows the arguments or the request
// state.
func (i *Interrupt) Error() string {
	if i == nil {
		return "mcpadapter: <nil interrupt>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mcpadapter: server %q: tool %q needs user input", i.Server, i.Tool)
	sep := ": "
	for _, r := range i.Requests {
		fmt.Fprintf(&b, "%s%s (%s)", sep, r.Key, r.Mode)
		sep = "; "
		if r.Message != "" {
			fmt.Fprintf(&b, " %q", r.Message)
		}
	}
	return b.String()
}

// Resume settles paused, an [*Interrupt], [*ApprovalRequired] or
// [*PendingTask] (or an error wrapping one, as a call returned it), with r
// (see [Resolution]). [Answered] calls the interrupted tool again, from the
// beginning, with the user's answers and the server's request state; for
// a live interrupt ([Interrupt.Live]) it answers the server's open request
// instead, and waits for the call's result (or next question), bounded by
// the tool timeout again.
// [Approved] runs the held call with its Call.Args; [Rejected] runs nothing
// and returns an error result for the model, with the reason. [Collected]
// waits for the task again, within ctx and [Config.TaskWait]; cancelling
// ctx cancels the task. A [*PausedCalls] is refused: resume it with the
// Toolset that ran it. paused may come from this Adapter, another one, or
// another process through JSON (a live interrupt from this Adapter only);
// one this Adapter made fails with [ErrClosed] after [Adapter.Close].
//
// Answers are validated before anything is sent: every request answered
// and no other key, a known action, form content that matches the
// requested schema (its defaults applied), no content for URL requests or
// with Decline and Cancel. [Config.Approval] is consulted again for a
// resumed interrupt that calls the tool again (not for a live one, whose
// call runs on): when it asks for approval, the resume goes ahead only
// if the call was approved and the interrupt can be believed (made in this
// process, or sealed and claimed through [StateOptions.Claims]); otherwise
// the error is an [*ApprovalRequired] holding the answers, to settle in
// this process.
//
// The result is what [Tool.Invoke] would return: the error may be the
// server's next *Interrupt (a call has at most 32 rounds), a *PendingTask
// again when a deadline passed first, [ErrTaskFailed] or a [*ServerError].
// [Config.CallbacksHandler] is not called: it saw the call when it started.
func (a *Adapter) Resume(ctx context.Context, paused error, r Resolution) (*Result, error) {
	switch v := paused.(type) { // a typed nil reaches its kind's own check
	case *Interrupt:
		return a.resumeInterrupt(ctx, v, r)
	case *ApprovalRequired:
		return a.decide(ctx, v, r)
	case *PendingTask:
		if r.verdict == verdictCollect {
			return a.collectTask(ctx, v)
		}
		if v == nil {
			return nil, errors.New("mcpadapter: resume: a pending task resolves with Collected")
		}
		return nil, fmt.Errorf("mcpadapter: %s: resolve it with Collected", v.Error())
	}
	var b *PausedCalls
	if errors.As(paused, &b) {
		return nil, errors.New("mcpadapter: resume: a *PausedCalls resumes with the Toolset or ToolSearch that ran it (ResumeToolCalls)")
	}
	p, ok := pauseOf(paused)
	if !ok {
		return nil, errors.New("mcpadapter: resume: not an *Interrupt, *ApprovalRequired or *PendingTask")
	}
	return a.Resume(ctx, p.err(), r) // the one thing p holds, unwrapped
}

// resumeInterrupt calls the tool of in again with the answers of r (see
// [Adapter.Resume]), on the current connection of the server named
// in.Server (dialing it if needed). Stored state is checked before
// anything is sent (see [Resolution]). Declines and cancels reach the
// server, which answers them with a result. The answers given here are the
// only ones sent: stored state carries none. When [Config.Approval] asks
// for approval and the interrupt cannot be believed, the error is an
// [*ApprovalRequired] whose approval sends these answers with the stored
// arguments (its Call.Args are shown, not sent: the server's request state
// belongs to the stored ones); it has the interrupt's ID, so deciding it
// claims the interrupt.
func (a *Adapter) resumeInterrupt(ctx context.Context, in *Interrupt, r Resolution) (*Result, error) {
	if in != nil {
		var err error
		if in, err = openState(&a.states, stateInterrupt, in); err != nil {
			return nil, errorf("mcpadapter: resume: %w", err)
		}
	}
	if in == nil || in.MCPName == "" || len(in.requests) == 0 {
		return nil, errors.New("mcpadapter: resume: not an interrupt returned by a tool call")
	}
	op := "resume"
	fail := func(err error) error {
		return errorf("mcpadapter: server %q: tool %q: %s: %w", in.Server, in.Tool, op, err)
	}
	if r.verdict != "" {
		return nil, fail(errors.New("the call waits for user input: resolve it with Answered"))
	}
	if in.a == a && in.gen != nil && in.gen.ctx.Err() != nil {
		return nil, serverError(in.Server, fmt.Sprintf("resume tool %q", in.MCPName), ErrClosed)
	}
	if err := a.states.open(ctx, stateInterrupt, in.seal, in.stamp, in.Server, in.principal); err != nil {
		return nil, fail(err)
	}
	// Validate against the server's requests, not the exported copy: a
	// live interrupt's as they were held.
	requests := in.requests
	var h *heldLive
	if in.kind == stored.KindLive {
		op = "resume live interrupt"
		var err error
		if h, err = a.live.find(a, in, a.liveMaxAge()); err != nil {
			return nil, fail(fmt.Errorf("%w; nothing was sent", err))
		}
		requests = h.in.requests
	}
	reqs, err := elicitationRequests(requests)
	if err != nil {
		return nil, fail(err)
	}
	responses, err := validateAnswers(reqs, r.answers)
	if err != nil {
		return nil, fail(err)
	}
	if h != nil {
		if err := a.states.claim(ctx, in.stamp); err != nil {
			return nil, fail(err)
		}
		if err := a.live.take(h); err != nil {
			return nil, fail(fmt.Errorf("%w; nothing was sent", err))
		}
		return a.resumeLive(ctx, in, h, responses[liveKey].(*mcp.ElicitResult))
	}
	if !a.policy.allows(in.MCPName) {
		return nil, fail(errFiltered)
	}
	t, err := a.catalogs.resumeTool(ctx, in)
	if err != nil {
		return nil, fail(err)
	}
	if in.task != nil {
		if _, err := in.task.sessionOf(t, in.id); err != nil {
			return nil, err // before the claim: the state stays whole
		}
	}
	approved := in.approved && a.states.trusted(in.seal)
	if !approved {
		// in.args are the arguments the call sent, after Middleware.
		if p := t.approval(ctx, in.args, &resumeCall{in: in, reqs: reqs, responses: responses}); p != nil {
			return nil, p
		}
	}
	if err := a.states.claim(ctx, in.stamp); err != nil {
		return nil, fail(err)
	}
	return t.resume(ctx, in, reqs, responses, approved)
}

// resume sends the round of in with the validated responses, on t's
// connection; approved says whether the call was approved, for the next
// round's interrupt.
func (t *Tool) resume(ctx context.Context, in *Interrupt, reqs []ElicitationRequest, responses mcp.InputResponseMap, approved bool) (*Result, error) {
	if in.kind == stored.KindURLRequired {
		if res := refused(reqs, responses); res != nil {
			return res, nil
		}
		responses = in.responses // nil for a decoded interrupt
	}
	if in.task != nil {
		res, err := t.resumeTask(ctx, in, responses) // tasks.go
		res, err = t.checkOutput(ctx, res, err)
		return res, t.interrupted(err, approved)
	}
	info := t.newCall(ctx)
	res, err := t.callRounds(ctx, &info, in.args, responses, in.state, in.round)
	res, err = t.checkOutput(ctx, res, err)
	return res, t.interrupted(err, approved)
}

// resumeTool returns the tool to resume in on: the one that made it, when
// in was made in this process by the adapter of cs and the tool is on the
// server's current connection; otherwise the checked tool of the server's
// catalog (storedTool).
func (cs *catalogs) resumeTool(ctx context.Context, in *Interrupt) (*Tool, error) {
	if t := in.tool; t != nil && t.a == cs.a && !in.seal.decoded && t.name == in.Tool && t.server == in.Server && t.MCPName() == in.MCPName {
		if err := t.conn.checkPrincipal(ctx, in.MCPName); err != nil {
			return nil, err
		}
		c, err := cs.a.connect(ctx, in.Server)
		if err != nil {
			return nil, err
		}
		if c == t.conn.current() {
			return t, nil
		}
	}
	return cs.storedTool(ctx, in.Server, in.Tool, in.MCPName)
}

// elicitationRequests converts a server's input requests, sorted by key.
// Requests other than form and URL elicitation are refused with
// [ErrUnsupportedInputRequest], naming their method (elicit.Unsupported).
// Their requested schemas are screened here (elicit.CheckSchema), for input
// rounds and stored interrupts alike; go-sdk checks the schemas of live
// elicitation/create requests itself.
func elicitationRequests(m mcp.InputRequestMap) ([]ElicitationRequest, error) {
	reqs := make([]ElicitationRequest, 0, len(m))
	var refused []string
	for _, key := range slices.Sorted(maps.Keys(m)) {
		if why := elicit.Unsupported(key, m[key]); why != "" {
			refused = append(refused, why)
		} else {
			reqs = append(reqs, elicitationRequest(key, m[key].(*mcp.ElicitParams)))
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedInputRequest, strings.Join(refused, ", "))
	}
	return reqs, nil
}

// elicitationRequest converts one elicitation; key is empty for a live one.
func elicitationRequest(key string, p *mcp.ElicitParams) ElicitationRequest {
	r := ElicitationRequest{Key: key, Mode: elicit.Mode(p), Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}
	if p.RequestedSchema != nil {
		r.RequestedSchema = jsonvalue.Object(p.RequestedSchema)
	}
	return r
}

// validateAnswers checks answers against the requests: one per key, each
// with its action, and its content against its request's schema, whose
// defaults it applies (elicit.CheckKeys, elicit.Check). It returns them as
// the server's input responses.
func validateAnswers(reqs []ElicitationRequest, answers map[string]Answer) (mcp.InputResponseMap, error) {
	keys := make([]string, len(reqs))
	for i, r := range reqs {
		keys[i] = r.Key
	}
	if err := elicit.CheckKeys(keys, slices.Collect(maps.Keys(answers))); err != nil {
		return nil, err
	}
	responses := make(mcp.InputResponseMap, len(reqs))
	for _, r := range reqs {
		ans := answers[r.Key]
		res, err := elicit.Check(r.Mode, r.RequestedSchema, string(ans.Action), ans.Content)
		if err != nil {
			return nil, fmt.Errorf("answer %q: %w", r.Key, err)
		}
		responses[r.Key] = res
	}
	return responses, nil
}

// refused returns the model-visible result of a URL elicitation required
// error whose requests the user did not all accept: there is nothing to
// send to the server for a decline. It returns nil when all were accepted.
func refused(reqs []ElicitationRequest, responses mcp.InputResponseMap) *Result {
	for _, r := range reqs {
		er, _ := responses[r.Key].(*mcp.ElicitResult)
		if er == nil || er.Action == string(Accept) {
			continue
		}
		verb := "declined"
		if er.Action == string(Cancel) {
			verb = "cancelled"
		}
		if r.Message != "" {
			return errorResult(fmt.Sprintf("The user %s a step the server requires (%s: %s), so the tool was not run.", verb, r.Key, r.Message))
		}
		return errorResult(fmt.Sprintf("The user %s a step the server requires (%s), so the tool was not run.", verb, r.Key))
	}
	return nil
}

// urlElicitations returns the requests of a URL elicitation required error
// (-32042), keyed by elicitation id, or nil when err is not one (or is
// malformed: it then stays an error).
func urlElicitations(err error) mcp.InputRequestMap {
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcp.CodeURLElicitationRequired || len(we.Data) == 0 {
		return nil
	}
	var data struct {
		Elicitations []*mcp.ElicitParams `json:"elicitations"`
	}
	if json.Unmarshal(we.Data, &data) != nil || len(data.Elicitations) == 0 {
		return nil
	}
	m := make(mcp.InputRequestMap, len(data.Elicitations))
	for n, p := range data.Elicitations {
		if p == nil || p.Mode != "url" || p.URL == "" {
			return nil
		}
		key := p.ElicitationID
		for i := n + 1; key == "" || m[key] != nil; i++ {
			key = fmt.Sprintf("url-%d", i)
		}
		m[key] = p
	}
	return m
}

// An elicitor answers a server's elicitation requests while a call waits
// for them, with [Config.ElicitationHandler]: the input rounds of a call
// (inline) and a legacy server's elicitation/create requests (live).
type elicitor struct {
	handler func(ctx context.Context, req ElicitationRequest) (Answer, error) // nil: none
	logger  *slog.Logger
}

// inline answers a round's requests of tool of server, in key order, and
// validates the answers as [Adapter.Resume] does. The handler is set: a
// call without one stops at an interrupt instead.
func (e *elicitor) inline(ctx context.Context, server, tool string, reqs []ElicitationRequest) (mcp.InputResponseMap, error) {
	answers := make(map[string]Answer, len(reqs))
	var err error
	for _, r := range reqs {
		r.Server, r.Tool = server, tool
		if answers[r.Key], err = e.handler(ctx, r); err != nil {
			break
		}
	}
	var responses mcp.InputResponseMap
	if err == nil {
		responses, err = validateAnswers(reqs, answers)
	}
	if err != nil {
		return nil, errorf("mcpadapter: server %q: tool %q: elicitation handler: %w", server, tool, err)
	}
	return responses, nil
}

// live answers a legacy server's live elicitation/create request with the
// handler, for the call that waits for it (the request has no key), or
// declines it when there is none: the call took it as a live interrupt
// otherwise (live.go). conn.liveElicitation screened the request and gave
// ctx the name of the tool whose call it serves.
//
// Its errors go on the wire, as the JSON-RPC error answering the server's
// request: standard codes, and messages without the adapter's prefixes.
// (Missing params never reach it: checkRequests answers them.) A
// failed handler is -32603 with the handler's own message; an answer that
// breaks the request (its schema, its mode) is -32603 with a fixed
// message, since the reason may quote the user's answer, and is logged.
func (e *elicitor) live(ctx context.Context, server string, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if e.handler == nil {
		e.logger.InfoContext(ctx, "mcpadapter: declined live elicitation (no ElicitationHandler)", "server", server)
		return &mcp.ElicitResult{Action: string(Decline)}, nil
	}
	r := elicitationRequest("", req.Params) // go-sdk checked its schema: flat, primitive properties (client.go)
	r.Server, r.Tool = server, liveToolOf(ctx)
	res, werr := e.answer(ctx, r)
	if werr != nil {
		return nil, werr
	}
	return res, nil
}

// answer asks the handler (set) for r, a legacy server's live question
// (an elicitation/create request, during a call or on the stream of a
// task's tasks/result), and checks the answer against r. Its error is
// the JSON-RPC error that answers the server's request (see live).
func (e *elicitor) answer(ctx context.Context, r ElicitationRequest) (*mcp.ElicitResult, *jsonrpc.Error) {
	ans, err := e.handler(ctx, r)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	res, err := elicit.Check(r.Mode, r.RequestedSchema, string(ans.Action), ans.Content)
	if err != nil {
		e.logger.Warn("mcpadapter: refused an ElicitationHandler answer that does not fit the server's question", "server", r.Server)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client's answer does not fit the elicitation request"}
	}
	return res, nil
}
