package mcpadapter

import (
	"context"
	"fmt"
)

// ApprovalRequired is returned (as an error) by [Tool.Invoke] and
// [Tool.Call] when [Config.Approval] says a call needs human approval. The
// server has not been contacted. [ApprovalRequired.Approve] runs the call;
// [ApprovalRequired.Reject] runs nothing. Find it with [errors.As].
type ApprovalRequired struct {
	Call ToolCall

	tool *Tool
}

// Error implements error.
func (p *ApprovalRequired) Error() string {
	return fmt.Sprintf("mcpadapter: server %q: tool %q needs approval", p.Call.Server, p.Call.Tool)
}

// Approve runs the approved call. It may itself return an [*Interrupt].
func (p *ApprovalRequired) Approve(ctx context.Context) (*Result, error) {
	return p.tool.invoke(ctx, p.Call.Args)
}

// Reject runs nothing and returns a result for the model saying that the
// call was rejected, with reason.
func (p *ApprovalRequired) Reject(ctx context.Context, reason string) (*Result, error) {
	text := fmt.Sprintf("The call to tool %s was rejected by the user", p.Call.Tool)
	if reason != "" {
		text += ": " + reason
	}
	return textResult(true, text), nil
}
