package mcpadapter

// Pauses: a tool call that stopped at an [*Interrupt] or an
// [*ApprovalRequired], inside a batch of native tool calls (PausedCalls,
// tools.go) or an agent run (PausedRun, run.go), and the Resolution that
// settles it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A Resolution settles a paused tool call: [Answered] for an interrupt,
// [Approved] or [Rejected] for an approval request. Pass it to
// [Toolset.ResumeToolCalls] or [Executor.Resume].
type Resolution struct {
	answers map[string]Answer
	verdict string // "approve" or "reject"; "" for answers
	reason  string
}

// Answered resolves an interrupt with the user's answers, one per request
// key, as [Adapter.Resume] takes them.
func Answered(answers map[string]Answer) Resolution { return Resolution{answers: answers} }

// Approved resolves an approval request by running the call, as
// [Adapter.Approve] does.
func Approved() Resolution { return Resolution{verdict: "approve"} }

// Rejected resolves an approval request by running nothing, as
// [Adapter.Reject] does, with reason for the model.
func Rejected(reason string) Resolution { return Resolution{verdict: "reject", reason: reason} }

// A pause is what a paused call waits for: exactly one of an
// interrupt and an approval request.
type pause struct {
	Interrupt *Interrupt        `json:"interrupt,omitempty"`
	Approval  *ApprovalRequired `json:"approval,omitempty"`
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
	return pause{}, false
}

// err returns the pause as an error, or nil when it holds neither.
func (p pause) err() error {
	switch {
	case p.Interrupt != nil:
		return p.Interrupt
	case p.Approval != nil:
		return p.Approval
	}
	return nil // an untyped nil: a zero pause is no error
}

// check refuses a decoded pause that is not exactly one thing, or
// that is not a call of tool (as an agent or a model names it: case is
// ignored, as langchaingo's executor and [Toolset.Lookup] ignore it).
func (p pause) check(tool string) error {
	switch {
	case (p.Interrupt == nil) == (p.Approval == nil):
		return errors.New("a paused call needs exactly one of an interrupt and an approval request")
	case p.Interrupt != nil && !strings.EqualFold(p.Interrupt.Tool, tool), p.Approval != nil && !strings.EqualFold(p.Approval.Call.Tool, tool):
		return fmt.Errorf("the paused call is to tool %q, its pause is for another tool", tool)
	}
	return nil
}

// open checks stored state of kind (sealed with seal) that p is the pause
// of, before p is settled on a under ctx: the seal, then the principal, as
// [Adapter.Resume] does. The stored state is the principal's of its pause.
func (p pause) open(ctx context.Context, a *Adapter, kind string, seal stateSeal) error {
	if err := a.checkSeal(kind, seal); err != nil {
		return err
	}
	switch {
	case p.Interrupt != nil:
		return a.checkOwner(ctx, p.Interrupt.Server, p.Interrupt.principal)
	case p.Approval != nil:
		return a.checkOwner(ctx, p.Approval.Call.Server, p.Approval.principal)
	}
	return nil
}

// settle resolves the paused call with r on the adapter of t, the tool
// that the paused call names, and returns the call's result; the error may
// be a new pause.
func (p pause) settle(ctx context.Context, t *Tool, r Resolution) (*Result, error) {
	if err := p.check(t.name); err != nil {
		return nil, fmt.Errorf("mcpadapter: %w: %w", ErrInvalidState, err)
	}
	switch {
	case p.Interrupt != nil && r.verdict == "":
		return t.a.Resume(ctx, p.Interrupt, r.answers)
	case p.Approval != nil && r.verdict == "approve":
		return t.a.Approve(ctx, p.Approval)
	case p.Approval != nil && r.verdict == "reject":
		return t.a.Reject(ctx, p.Approval, r.reason)
	case p.Interrupt != nil:
		return nil, fmt.Errorf("mcpadapter: %s: the call waits for user input: resolve it with Answered", p.Interrupt.Error())
	default:
		return nil, fmt.Errorf("mcpadapter: %s: the call waits for approval: resolve it with Approved or Rejected", p.Approval.Error())
	}
}

// adapter returns the adapter that made the pause, or nil for a decoded
// one.
func (p pause) adapter() *Adapter {
	switch {
	case p.Interrupt != nil:
		return p.Interrupt.a
	case p.Approval != nil && p.Approval.tool != nil:
		return p.Approval.tool.a
	}
	return nil
}

// decodeState decodes stored state b into v after unsealing it (see
// state.go), and returns its seal.
func decodeState(what string, b []byte, v any) (stateSeal, error) {
	payload, seal, err := unsealState(what, b)
	if err != nil {
		return stateSeal{}, err
	}
	if err := json.Unmarshal(payload, v); err != nil {
		return stateSeal{}, fmt.Errorf("mcpadapter: decoding %s: %w: %w", what, ErrInvalidState, err)
	}
	return seal, nil
}
