package mcpadapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The model-facing calls ([Tool.Call], [Toolset.HandleToolCalls]) answer a
// JSON-RPC error of a healthy server as an isError result: the server
// understood the call and said why it failed (server-postgres reports every
// SQL error so, as -32603), and the model can often fix its arguments,
// while an error would end the agent's run. The rule:
//
//   - the server answered the tools/call with a JSON-RPC error, and the
//     connection is still fine: the model sees the error's message as an
//     isError result;
//   - a tool that did not answer within its own timeout
//     ([Config.DefaultToolTimeout], [Server.DefaultToolTimeout]) while the
//     caller's context is still live: in [Toolset.HandleToolCalls] and
//     [Toolset.ResumeToolCalls] (and a [ToolSearch]'s), the model sees an
//     isError result saying so ([Tool.TimedOut]) and the batch goes on,
//     unless the [TimeoutErrors] option asks for the error;
//   - everything else stays an error that ends the run: transport and
//     session failures, the caller's own deadline and cancellation,
//     [ErrClosed], messages the adapter refused ([ErrMessageTooLarge] and
//     the like), the SDK's own local errors, and, in [Tool.Call], timeouts.
//
// [Tool.Invoke] and [Tool.InvokeJSON], for programs, keep returning the
// [*ServerError], but for invalid params (-32602): every caller gets that
// one as an isError result, since its arguments can be fixed.
//
// Why a tool's timeout is a message by default in a batch: the connection
// is fine, only this call is lost, and the model can act on it (try again,
// take another way, tell the user), as it acts on an isError result; one
// slow server no longer ends the whole run. The run keeps its own bound:
// its context's deadline and cancellation still end it.

// TimeoutErrors returns a [PartOption] for [Toolset.HandleToolCalls] and
// [Toolset.ResumeToolCalls] (and a [ToolSearch]'s): a tool that does not
// answer within its timeout stops the batch with its [*ServerError]
// (wrapping [context.DeadlineExceeded]), as a transport failure does,
// instead of answering the model with a tool message ([Tool.TimedOut]).
// It was the behaviour before this option existed. It does nothing in
// [Result.Parts] and [Result.Messages].
func TimeoutErrors() PartOption {
	return func(o *partOptions) { o.timeoutErrors = true }
}

// TimedOut returns what the model reads when err, the error of a call of
// t under ctx, is t's own timeout: that the tool did not answer within it
// (the bound that applied, or "in time" when it is not known) and may
// still be running on the server. ok is false for any other error, and
// when ctx is done: the caller's own deadline or cancellation is not the
// tool's timeout, and ends the caller's run.
//
// [Toolset.HandleToolCalls] answers a timeout so, unless [TimeoutErrors];
// an agent that runs tools itself through [Tool.Call], which returns
// timeouts as errors, uses it to do the same (package agent's Executor
// does).
func (t *Tool) TimedOut(ctx context.Context, err error) (text string, ok bool) {
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || t == nil {
		return "", false
	}
	within := "in time"
	var te *timeoutError // the bound err ran into: the round's (exchange.go)
	if errors.As(err, &te) && te.d > 0 {
		within = fmt.Sprintf("within %v", te.d)
		if te.idle {
			within = fmt.Sprintf("nor report progress within %v", te.d)
		}
	}
	return fmt.Sprintf("Error: tool %s did not answer %s and may still be running on the server; its result is lost. "+
		"Try again, take another way, or tell the user.", t.name, within), true
}

// timedOut returns the isError result the model reads in place of err,
// the error of a call of t under ctx, when err is t's own timeout and
// opts do not ask for [TimeoutErrors]; nil otherwise.
func (t *Tool) timedOut(ctx context.Context, err error, opts []PartOption) *Result {
	if applyParts(opts).timeoutErrors {
		return nil
	}
	if text, ok := t.TimedOut(ctx, err); ok {
		return errorResult(text)
	}
	return nil
}

// answered applies the rule above to the outcome of a model-facing call
// of t under ctx, judging the connection the call went to (servedBy).
func (t *Tool) answered(ctx context.Context, res *Result, err error) (*Result, error) {
	if c := t.servedBy(ctx); c != nil {
		if r := c.asResult(err, true); r != nil {
			return r, nil
		}
	}
	return res, err
}

// asResult is the one place where a failed tools/call on c becomes a
// result: it returns the isError result that err stands for, or nil when err
// stays an error. For every caller, a JSON-RPC invalid-params error the
// server sent is a result (the caller can fix its arguments); for the model
// (forModel), so is any other JSON-RPC error the server sent while c is
// still fine, as the rule above says.
func (c *conn) asResult(err error, forModel bool) *Result {
	var we *jsonrpc.Error
	if err == nil || !errors.As(err, &we) || !serverSent(we) ||
		errors.Is(err, ErrUnsupportedInputRequest) || errors.Is(err, ErrMessageTooLarge) {
		return nil
	}
	if we.Code == jsonrpc.CodeInvalidParams {
		return errorResult(we.Message)
	}
	var se *ServerError
	if !forModel || !errors.As(err, &se) || c.usable(se.Op) != nil {
		return nil
	}
	msg := we.Message
	if msg == "" {
		msg = fmt.Sprintf("the server failed the call (JSON-RPC error %d)", we.Code)
	}
	return errorResult(msg)
}

// serverSent reports whether we came from the server: not one of the SDK's
// local errors, nor an error response the adapter substituted for a server
// message it could not pass on (internal/wire).
func serverSent(we *jsonrpc.Error) bool {
	switch we.Code {
	case codeClientClosing, codeServerClosing, codeRejected:
		return false
	}
	return wire.FaultOf(we) == nil
}
