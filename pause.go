package mcpadapter

// Pauses: a tool call that stopped at an [*Interrupt], an
// [*ApprovalRequired] or a [*PendingTask], inside a batch of native tool calls (PausedCalls,
// tools.go), and the Resolution that settles it. An agent run (package
// agent) pauses as a PausedCalls that carries the run in its State.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/stored"
	"github.com/tmc/langchaingo/llms"
)

// A Resolution settles stored state. Every kind of stored state has one
// entry point, and takes the Resolution of its kind:
//
//	stored state                        entry point                  Resolution
//	*Interrupt: the server asks         Adapter.Resume               Answered(answers)
//	*ApprovalRequired: Config.Approval  Adapter.Resume               Approved() or Rejected(reason)
//	*PendingTask: a task still runs     Adapter.Resume               Collected()
//	*PausedCalls: a batch of the        Toolset.ResumeToolCalls      that of the state it waits for
//	  model's tool calls                  (ToolSearch's, for its own)  (errors.As finds it)
//	*agent.PausedRun: an agent run      agent's Executor.Resume      that of the state it waits for
//
// [Adapter.CancelTask] ends a pending task instead. Every entry point
// checks the state before anything is sent, on any Adapter (in any
// process) that has the server: the seal ([StateOptions.Key],
// [ErrTamperedState]), its age ([StateOptions.MaxAge], [ErrInvalidState]),
// the principal of ctx against the one the call acted for
// ([ErrWrongPrincipal]), the server, tool and catalog ([ErrInvalidState]),
// and the Resolution (its kind; an interrupt's answers). Right before it
// acts it claims the state's ID: a state is settled once
// ([ErrClaimedState]; a refusal before that settles nothing), across
// replicas with [StateOptions.Claims].
//
// Stored state is JSON (by value too: held in a checkpoint struct, it
// marshals whole), sealed (encrypted) when the Adapter that made it has a
// [StateOptions.Key]: decoded, sealed state shows only its ID and Issued
// until the Adapter that settles it (or [Adapter.Unseal]) opens it. It
// holds the call's arguments: store it where they may be stored, and never
// show it to the model. Malformed or oversized JSON decodes to an error
// wrapping [ErrInvalidState], never a panic.
type Resolution struct {
	answers map[string]Answer
	verdict string // verdictApprove, verdictReject or verdictCollect; "" for answers
	reason  string
}

// The verdicts of a decision, and of a pending task's collection.
const (
	verdictApprove = "approve"
	verdictReject  = "reject"
	verdictCollect = "collect"
)

// Answered resolves an interrupt with the user's answers, one per request
// key.
func Answered(answers map[string]Answer) Resolution { return Resolution{answers: answers} }

// Approved resolves an approval request by running the call.
func Approved() Resolution { return Resolution{verdict: verdictApprove} }

// Rejected resolves an approval request by running nothing, with reason
// for the model.
func Rejected(reason string) Resolution { return Resolution{verdict: verdictReject, reason: reason} }

// Collected resolves a pending task by waiting for it again (the call may
// pause on it again).
func Collected() Resolution { return Resolution{verdict: verdictCollect} }

// A pause is what a paused call waits for: exactly one of an
// interrupt, an approval request and a pending task.
type pause struct {
	Interrupt *Interrupt        `json:"interrupt,omitempty"`
	Approval  *ApprovalRequired `json:"approval,omitempty"`
	Task      *PendingTask      `json:"task,omitempty"`
}

// pauseOf returns the pause in err, if err is an interrupt or an approval
// request.
func pauseOf(err error) (pause, bool) {
	var p pause
	if errors.As(err, &p.Interrupt) {
		return p, true
	}
	if errors.As(err, &p.Approval) {
		return p, true
	}
	if errors.As(err, &p.Task) {
		return p, true
	}
	return pause{}, false
}

// err returns the pause as an error, or nil when it holds neither.
func (p pause) err() error {
	switch {
	case p.Interrupt != nil:
		return p.Interrupt
	case p.Approval != nil:
		return p.Approval
	case p.Task != nil:
		return p.Task
	}
	return nil // an untyped nil: a zero pause is no error
}

// check refuses a decoded pause that is not exactly one thing, or
// that is not a call of tool (as an agent or a model names it: case is
// ignored, as langchaingo's executor and [Toolset.Lookup] ignore it).
func (p pause) check(tool string) error {
	n := 0
	for _, set := range []bool{p.Interrupt != nil, p.Approval != nil, p.Task != nil} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return errors.New("a paused call needs exactly one of an interrupt, an approval request and a pending task")
	case p.Interrupt != nil && !strings.EqualFold(p.Interrupt.Tool, tool), p.Approval != nil && !strings.EqualFold(p.Approval.Call.Tool, tool),
		p.Task != nil && !strings.EqualFold(p.Task.Tool, tool):
		return fmt.Errorf("the paused call is to tool %q, its pause is for another tool", tool)
	}
	return nil
}

// open checks stored state of kind (sealed with seal) that p is the pause
// of, before p is settled under ctx on the adapter whose stored state s
// guards: the seal, then the principal, as [Adapter.Resume] does. The
// stored state is the principal's of its pause.
func (p pause) open(ctx context.Context, s *states, kind string, seal stateSeal) error {
	switch {
	case p.Interrupt != nil:
		return s.open(ctx, kind, seal, p.Interrupt.stamp, p.Interrupt.Server, p.Interrupt.principal)
	case p.Approval != nil:
		return s.open(ctx, kind, seal, p.Approval.stamp, p.Approval.Call.Server, p.Approval.principal)
	case p.Task != nil:
		return s.open(ctx, kind, seal, p.Task.stamp, p.Task.Server, p.Task.principal)
	}
	return s.checkSeal(kind, seal)
}

// pauseJSON is the wire form of a pause in a batch: what it waits for,
// not sealed (the batch is).
type pauseJSON struct {
	Interrupt json.RawMessage `json:"interrupt,omitempty"`
	Approval  json.RawMessage `json:"approval,omitempty"`
	Task      json.RawMessage `json:"task,omitempty"`
}

// encode returns the wire form of p.
func (p pause) encode() (pauseJSON, error) {
	var (
		w   pauseJSON
		err error
	)
	switch {
	case p.Interrupt != nil:
		w.Interrupt, err = p.Interrupt.encode()
	case p.Approval != nil:
		w.Approval, err = p.Approval.encode()
	case p.Task != nil:
		w.Task, err = p.Task.encode()
	}
	return w, err
}

// opened marks what p waits for, decoded from the payload of a batch
// that s opened, opened by s too: the batch's seal covers it. st, when it
// has an ID, is the batch's stamp, whose flag it shares.
func (p pause) opened(s *states, st stamp) {
	switch {
	case p.Interrupt != nil:
		p.Interrupt.seal.opened, p.Interrupt.stamp = s, shared(p.Interrupt.stamp, st)
	case p.Approval != nil:
		p.Approval.seal.opened, p.Approval.stamp = s, shared(p.Approval.stamp, st)
	case p.Task != nil:
		p.Task.seal.opened, p.Task.stamp = s, shared(p.Task.stamp, st)
	}
}

// shared returns st, the stamp of a decoded value, with the flag of
// outer, the stamp of the value that held it, when that has one.
func shared(st, outer stamp) stamp {
	if outer.used != nil && outer.id == st.id {
		st.used = outer.used
	}
	return st
}

// stamp returns the stamp of what the pause waits for.
func (p pause) stamp() stamp {
	switch {
	case p.Interrupt != nil:
		return p.Interrupt.stamp
	case p.Approval != nil:
		return p.Approval.stamp
	case p.Task != nil:
		return p.Task.stamp
	}
	return stamp{}
}

// adapter returns the adapter that made the pause, or nil for a decoded
// one.
func (p pause) adapter() *Adapter {
	switch {
	case p.Interrupt != nil:
		return p.Interrupt.a
	case p.Approval != nil && p.Approval.tool != nil:
		return p.Approval.tool.a
	case p.Task != nil:
		return p.Task.a
	}
	return nil
}

// ResumeToolCalls settles the paused call of a batch with r (the user's
// answers for an interrupt, a decision for an approval request), then
// runs the calls after it, as [Toolset.HandleToolCalls] does. p may come
// from another process through JSON; the paused call runs on the adapter
// of the tool of s it names, after the checks of [Adapter.Resume]: under
// the principal of the paused call only (a refusal returns no messages).
// The calls answered before the pause are not run again. More in
// docs/reference.md, "Toolset.ResumeToolCalls".
func (s Toolset) ResumeToolCalls(ctx context.Context, p *PausedCalls, r Resolution, opts ...PartOption) ([]llms.MessageContent, error) {
	return s.resumeCalls(ctx, p, r, s.runToolCall, opts)
}

// resumeCalls is [Toolset.ResumeToolCalls], running the calls after the
// paused one with run.
func (s Toolset) resumeCalls(ctx context.Context, p *PausedCalls, r Resolution, run callRunner, opts []PartOption) ([]llms.MessageContent, error) {
	p, err := s.openCalls(p)
	if err != nil {
		return nil, errorf("mcpadapter: resume tool calls: %w", err)
	}
	if p == nil || p.Next < 0 || p.Next >= len(p.Calls) {
		return nil, errorf("mcpadapter: resume tool calls: %w: no paused call", ErrInvalidState)
	}
	tc := p.Calls[p.Next]
	t := s.toolOf(tc)
	if t == nil {
		return nil, errorf("mcpadapter: resume tool calls: %w: the paused call's tool is not in the toolset", ErrInvalidState)
	}
	if err := p.pause.open(ctx, &t.a.states, stateCalls, p.seal); err != nil {
		return nil, errorf("mcpadapter: resume tool calls: %w", err)
	}
	if err := p.pause.check(t.name); err != nil {
		return nil, errorf("mcpadapter: %w: %w", ErrInvalidState, err)
	}
	next := &PausedCalls{Calls: p.Calls, Next: p.Next, State: p.State, messages: slices.Clone(p.messages), media: slices.Clone(p.media)}
	res, err := t.a.Resume(ctx, p.pause.err(), r)
	if err != nil {
		if res = t.timedOut(ctx, err, opts); res == nil { // modelerror.go
			return next.stop(err)
		}
	}
	next.add(tc, res, t.partOptions(opts))
	next.Next++
	return s.runCalls(ctx, next, run, opts)
}

// openCalls returns p as an adapter of the tools of s opens it
// (openState): the first whose State.Key or State.OldKeys sealed it.
func (s Toolset) openCalls(p *PausedCalls) (*PausedCalls, error) {
	if p == nil || p.seal.sealed == nil {
		return p, nil
	}
	err := error(ErrTamperedState)
	tried := map[*Adapter]bool{}
	for _, t := range s {
		if tried[t.a] {
			continue
		}
		tried[t.a] = true
		var o *PausedCalls
		if o, err = openState(&t.a.states, stateCalls, p); !errors.Is(err, ErrTamperedState) {
			return o, err
		}
	}
	return nil, err
}

// A PausedCalls is returned (as an error) by [Toolset.HandleToolCalls] and
// [Toolset.ResumeToolCalls] when a call of the batch needs user input or
// approval. [errors.As] finds the [*Interrupt], [*ApprovalRequired] or [*PendingTask]
// through it. It survives json.Marshal and Unmarshal (sealed with
// [StateOptions.Key] when set): the batch's calls, the messages of the calls
// answered so far, and the pause, which records the principal of its call.
// Resume it with [Toolset.ResumeToolCalls], under that principal.
type PausedCalls struct {
	Calls []llms.ToolCall // the batch, as the model made it
	Next  int             // the paused call: Calls[Next]

	// State is the application's own state kept with the batch, such as
	// the agent run the batch belongs to (package agent stores its runs
	// so): any JSON value, or nil. It is sealed with the batch, so that a
	// decoded State can be trusted once the batch is opened
	// ([Toolset.Unseal], or [Toolset.ResumeToolCalls], which checks the
	// seal before anything runs), and a resume's new pause keeps it. Set
	// it before the batch is marshalled: a batch decoded from sealed JSON
	// shows only its ID and Issued until it is opened, and marshals to the
	// JSON it came from.
	State json.RawMessage

	messages, media []llms.MessageContent // of Calls[:Next]
	pause           pause
	seal            stateSeal
	unopened        stamp // of a batch decoded from sealed JSON, not opened: its envelope's
}

// PausedCallOf returns err as the pause of a batch of the one call tc, when
// err is (or wraps) the [*Interrupt], [*ApprovalRequired] or [*PendingTask] that calling
// tc's tool returned ([Tool.Call], [Tool.Invoke]): a batch that
// [Toolset.ResumeToolCalls] settles like one [Toolset.HandleToolCalls]
// paused, and that stores the same way. ok is false when err holds
// neither. An agent that calls tools itself uses it to store its pause.
func PausedCallOf(tc llms.ToolCall, err error) (p *PausedCalls, ok bool) {
	pend, ok := pauseOf(err)
	if !ok {
		return nil, false
	}
	return &PausedCalls{Calls: []llms.ToolCall{tc}, pause: pend}, true
}

// add appends the messages of call tc and its result.
func (p *PausedCalls) add(tc llms.ToolCall, res *Result, opts []PartOption) {
	out := res.Messages(tc, opts...)
	p.messages = append(p.messages, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{tc}}, out[0])
	p.media = append(p.media, out[1:]...)
}

// all returns a copy of the messages so far: the pairs, then the media.
func (p *PausedCalls) all() []llms.MessageContent {
	return append(slices.Clone(p.messages), p.media...)
}

// stop returns the messages so far with err, as a pause of p when err is
// an interrupt or an approval request.
func (p *PausedCalls) stop(err error) ([]llms.MessageContent, error) {
	pend, ok := pauseOf(err)
	if !ok {
		return p.all(), err
	}
	p.Calls = slices.Clone(p.Calls) // the caller's choice may change
	p.pause, p.seal = pend, stateSeal{}
	return p.all(), p
}

// Error implements error: the pause's message.
func (p *PausedCalls) Error() string {
	if p == nil || p.pause.err() == nil {
		return "mcpadapter: <no paused call>"
	}
	return p.pause.err().Error()
}

// ID returns the ID of the [*Interrupt], [*ApprovalRequired] or [*PendingTask] the batch
// waits for, which its resume claims (see [StateOptions.Claims]).
func (p PausedCalls) ID() string { return p.stamp().id }

// Issued returns when the [*Interrupt], [*ApprovalRequired] or [*PendingTask] the batch
// waits for was made; [StateOptions.MaxAge] counts from it.
func (p PausedCalls) Issued() time.Time { return p.stamp().issued }

// stamp returns the stamp of what the batch waits for: its pause's, or,
// not opened yet, its envelope's.
func (p PausedCalls) stamp() stamp {
	if p.pause.err() == nil {
		return p.unopened
	}
	return p.pause.stamp()
}

// sealState returns the batch's seal and stamp (openState).
func (p *PausedCalls) sealState() (stateSeal, stamp) { return p.seal, p.stamp() }

// Unwrap returns the [*Interrupt], [*ApprovalRequired] or [*PendingTask] the batch waits
// for.
func (p *PausedCalls) Unwrap() error {
	if p == nil {
		return nil
	}
	return p.pause.err()
}

// pausedCallsJSON is the wire form of a PausedCalls: the batch
// (internal/stored), then its pause.
type pausedCallsJSON struct {
	stored.Batch
	pause
}

// MarshalJSON implements [json.Marshaler] (see [Resolution]): the tool
// results the model has not seen yet and the pause.
func (p PausedCalls) MarshalJSON() ([]byte, error) {
	return marshalState(p.pause.adapter(), stateCalls, p.seal, p.stamp(), func() ([]byte, error) {
		w, err := p.pause.encode()
		if err != nil {
			return nil, err
		}
		return json.Marshal(struct {
			stored.Batch
			pauseJSON
		}{stored.NewBatch(p.Calls, p.Next, p.messages, p.media, p.State), w})
	})
}

// UnmarshalJSON implements [json.Unmarshaler] (see [Resolution]).
func (p *PausedCalls) UnmarshalJSON(b []byte) error {
	return unmarshalState("paused tool calls", b, p, func(seal stateSeal) PausedCalls { return PausedCalls{seal: seal, unopened: seal.stamp()} })
}

// decode sets p from payload, with seal, opened by s (nil: not sealed);
// the pause, sealed inside, is opened by s too, with stamp st when it has
// an ID (the envelope's, shared by the copies of one decoded value).
func (p *PausedCalls) decode(s *states, payload []byte, seal stateSeal, st stamp) error {
	var w pausedCallsJSON
	if err := json.Unmarshal(payload, &w); err != nil {
		return errorf("mcpadapter: decoding paused tool calls: %w: %w", ErrInvalidState, err)
	}
	if s != nil {
		w.pause.opened(s, st)
	}
	calls, err := w.Batch.Check()
	if err == nil {
		err = w.pause.check(calls[w.Next].FunctionCall.Name)
	}
	if err != nil {
		return errorf("mcpadapter: decoding paused tool calls: %w: %w", ErrInvalidState, err)
	}
	*p = PausedCalls{Calls: calls, Next: w.Next, State: w.State, messages: w.Messages, media: w.Media, pause: w.pause, seal: seal}
	return nil
}
