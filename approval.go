package mcpadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/stored"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ApprovalRequired is returned (as an error) by [Tool.Invoke],
// [Tool.InvokeJSON], [Tool.Call] and [Toolset.HandleToolCalls] when
// [Config.Approval] says that a call needs human approval. The server has
// not been contacted. Find it with [errors.As], show Call to a human (who
// may edit Call.Args: they are sent as they are then; [Adapter.Unseal]
// opens a decoded sealed one to show), and settle it with [Adapter.Resume]
// and [Approved] or [Rejected]. It is stored state (see [Resolution]); a
// decoded one has no Metadata until it is settled. The tool runs as the
// catalog describes it then; an interrupt it returns is marked approved, so
// that resuming it does not ask again.
type ApprovalRequired struct {
	Call ToolCall

	tool      *Tool       // nil after JSON decoding
	resume    *resumeCall // set when the call is the resume of an interrupt
	principal string      // whom the call acts for ([WithPrincipal]); stored
	seal      stateSeal
	stamp     // ID and Issued (the interrupt's, for a resume); claimed by the decision
}

// A resumeCall is the resume that an approval of a resumed interrupt sends
// (see [Adapter.Resume]): it holds the user's answers, so it is never
// stored.
type resumeCall struct {
	in        *Interrupt
	reqs      []ElicitationRequest
	responses mcp.InputResponseMap
}

// newApproval returns the request that holds call of t, made under ctx,
// for approval; resume is set when the call is the resume of an interrupt,
// whose stamp the request shares.
func newApproval(ctx context.Context, t *Tool, call ToolCall, resume *resumeCall) *ApprovalRequired {
	p := &ApprovalRequired{Call: call, tool: t, resume: resume, principal: principalFrom(ctx), stamp: newStamp()}
	if resume != nil {
		p.stamp = resume.in.stamp
	}
	return p
}

// Error implements error. It names the server and the tool, never the
// arguments.
func (p *ApprovalRequired) Error() string {
	if p == nil {
		return "mcpadapter: <nil approval request>"
	}
	return fmt.Sprintf("mcpadapter: server %q: tool %q needs approval", p.Call.Server, p.Call.Tool)
}

// decide settles the call that p holds for approval with r: [Approved]
// runs it, with p.Call.Args, and returns what [Tool.Invoke] would have (the
// error may be an [*Interrupt], resumed without asking for approval again,
// or a [*ServerError]); [Rejected] runs nothing and returns a result for
// the model: an error result (IsError set) saying that the user rejected
// the call, with the reason when it is not empty, so that the model can
// tell the user or try something else. p may come from this Adapter,
// another one, or another process through JSON.
//
// p is checked first, as [Adapter.Resume] checks an interrupt: the seal
// ([ErrTamperedState]), the principal of ctx against the one the call was
// made for ([ErrWrongPrincipal]; a refusal decides
// nothing), then the server, the tool's name and the server's catalog
// ([ErrInvalidState]). The tool runs as the catalog describes it now; an
// interrupt it returns is marked approved, so that resuming it does not
// ask again (across processes, only when it is sealed with
// [StateOptions.Key] and [StateOptions.Claims] is set). p is claimed right
// before the decision is applied: a second decision fails with
// [ErrClaimedState] and runs nothing; see [ApprovalRequired] for once
// across processes. With [StateOptions.MaxAge], a request issued longer ago
// fails with [ErrInvalidState].
func (a *Adapter) decide(ctx context.Context, p *ApprovalRequired, r Resolution) (*Result, error) {
	if p != nil {
		var err error
		if p, err = openState(&a.states, stateApproval, p); err != nil {
			return nil, errorf("mcpadapter: decide: %w", err)
		}
	}
	if p == nil || p.used == nil {
		return nil, errors.New("mcpadapter: decide: not an approval request returned by a tool call")
	}
	fail := func(err error) error {
		return errorf("mcpadapter: server %q: tool %q: decide: %w", p.Call.Server, p.Call.Tool, err)
	}
	if r.verdict == "" {
		return nil, fail(errors.New("the call waits for approval: resolve it with Approved or Rejected"))
	}
	if err := a.states.open(ctx, stateApproval, p.seal, p.stamp, p.Call.Server, p.principal); err != nil {
		return nil, fail(err)
	}
	// The tool the call runs on: p's own when this adapter made p, else
	// the checked tool of the server's catalog.
	t := p.tool
	if t == nil || t.a != a {
		var err error
		if t, err = a.catalogs.storedTool(ctx, p.Call.Server, p.Call.Tool, p.Call.MCPName); err != nil {
			return nil, fail(err)
		}
		p.Call.Metadata = t.meta
	}
	if err := a.states.claim(ctx, p.stamp); err != nil {
		return nil, fail(err)
	}
	if r.verdict == verdictReject {
		text := fmt.Sprintf("The user rejected the call to tool %s; it was not run.", p.Call.Tool)
		if r.reason != "" {
			text += " Reason: " + r.reason
		}
		return errorResult(text), nil
	}
	if rc := p.resume; rc != nil {
		return t.resume(ctx, rc.in, rc.reqs, rc.responses, true)
	}
	res, err := t.invoke(ctx, p.Call.Args)
	return res, t.interrupted(err, true)
}

// MarshalJSON implements [json.Marshaler] (see [Resolution]): the call with
// its Call.Args as they are now. A decoded sealed request is written as it
// was read (edits to its Call are sent, not stored). The approval of a
// resumed interrupt holds the answers and cannot be stored.
func (p ApprovalRequired) MarshalJSON() ([]byte, error) {
	var a *Adapter
	if p.tool != nil {
		a = p.tool.a
	}
	return marshalState(a, stateApproval, p.seal, p.stamp, p.encode)
}

// encode returns the JSON of p, not sealed.
func (p ApprovalRequired) encode() ([]byte, error) {
	if p.resume != nil {
		return nil, errors.New("mcpadapter: encoding approval request: the approval of a resumed call holds the user's answers and cannot be stored: decide it in this process")
	}
	w := stored.Approval{ID: p.id, Issued: p.issued, Server: p.Call.Server, Tool: p.Call.Tool, MCPName: p.Call.MCPName, Principal: p.principal}
	b, err := w.Encode(p.Call.Args)
	if err != nil {
		return nil, errorf("mcpadapter: encoding approval request: %w", err)
	}
	return b, nil
}

// UnmarshalJSON implements [json.Unmarshaler] (see [Resolution]).
func (p *ApprovalRequired) UnmarshalJSON(b []byte) error {
	return unmarshalState("approval request", b, p, func(seal stateSeal) ApprovalRequired {
		return ApprovalRequired{seal: seal, stamp: seal.stamp()}
	})
}

// sealState returns the request's seal and stamp (openState).
func (p *ApprovalRequired) sealState() (stateSeal, stamp) { return p.seal, p.stamp }

// decode sets p from payload, with seal; with stamp st when it has an ID
// (an opened request's, its envelope's), else the payload's.
func (p *ApprovalRequired) decode(_ *states, payload []byte, seal stateSeal, st stamp) error {
	fail := func(err error) error {
		return errorf("mcpadapter: decoding approval request: %w: %w", ErrInvalidState, err)
	}
	w, args, err := stored.DecodeApproval(payload)
	if err != nil {
		return fail(err)
	}
	if st, err = decodeStamp(st, w.ID, w.Issued); err != nil {
		return fail(err)
	}
	*p = ApprovalRequired{Call: ToolCall{Server: w.Server, Tool: w.Tool, MCPName: w.MCPName, Args: args}, principal: w.Principal, seal: seal, stamp: st}
	return nil
}
