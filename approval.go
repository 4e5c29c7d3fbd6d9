package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ApprovalRequired is returned (as an error) by [Tool.Invoke],
// [Tool.InvokeJSON], [Tool.Call] and [Toolset.HandleToolCalls] when
// [Config.Approval] says that a call needs human approval. The server has
// not been contacted. Find it with [errors.As], show Call to a human, then
// decide once: [ApprovalRequired.Approve] runs the call,
// [ApprovalRequired.Reject] runs nothing and returns a result for the
// model.
//
// Approve sends Call.Args as they are when it is called, so a reviewer may
// edit them first. An ApprovalRequired is bound to the Adapter that made
// it; it is not serializable.
type ApprovalRequired struct {
	Call ToolCall

	tool    *Tool
	decided atomic.Bool // set by the first Approve or Reject
}

// Error implements error. It names the server and the tool, never the
// arguments.
func (p *ApprovalRequired) Error() string {
	if p == nil {
		return "mcpadapter: <nil approval request>"
	}
	return fmt.Sprintf("mcpadapter: server %q: tool %q needs approval", p.Call.Server, p.Call.Tool)
}

// decide records the decision; it fails when one was already made.
func (p *ApprovalRequired) decide(verb string) error {
	if !p.decided.CompareAndSwap(false, true) {
		return fmt.Errorf("mcpadapter: server %q: tool %q: %s: the call was already approved or rejected", p.Call.Server, p.Call.Tool, verb)
	}
	return nil
}

// Approve runs the approved call, with Call.Args, and returns what
// [Tool.Invoke] would have: the error may be an [*Interrupt] (resumed
// without asking for approval again) or a [*ServerError]. It runs the call
// at most once: a second Approve, or one after Reject, fails and runs
// nothing.
func (p *ApprovalRequired) Approve(ctx context.Context) (*Result, error) {
	if p == nil || p.tool == nil {
		return nil, errors.New("mcpadapter: approve: not an approval request returned by a tool call")
	}
	if err := p.decide("approve"); err != nil {
		return nil, err
	}
	return p.tool.invoke(ctx, p.Call.Args)
}

// Reject runs nothing and returns a result for the model: an error result
// (IsError set) saying that the user rejected the call, with reason when it
// is not empty, so that the model can tell the user or try something else.
// It fails after Approve, or a previous Reject.
func (p *ApprovalRequired) Reject(ctx context.Context, reason string) (*Result, error) {
	if p == nil {
		return nil, errors.New("mcpadapter: reject: nil approval request")
	}
	if err := p.decide("reject"); err != nil {
		return nil, err
	}
	text := fmt.Sprintf("The user rejected the call to tool %s; it was not run.", p.Call.Tool)
	if reason != "" {
		text += " Reason: " + reason
	}
	return textResult(true, text), nil
}

// MayBeDestructive is a [Config.Approval] policy, also useful inside one:
// it reports whether a call may change or destroy something, following the
// MCP specification's defaults for tool annotations. It is false only when
// the server declared the tool read-only (readOnlyHint) or not destructive
// (destructiveHint false); a tool without annotations may be destructive.
// Annotations are hints from the server, not guarantees: trust them as far
// as you trust the server. Compare [IsDestructive], which is true only when
// the server declared destructiveHint true.
func MayBeDestructive(call ToolCall) bool { return mayDestroy(call.Metadata.Annotations()) }

// mayDestroy reports whether a tool with annotations ann may change or
// destroy something, by the MCP specification's defaults.
func mayDestroy(ann *mcp.ToolAnnotations) bool {
	switch {
	case ann == nil:
		return true
	case ann.ReadOnlyHint:
		return false
	default:
		return ann.DestructiveHint == nil || *ann.DestructiveHint
	}
}
