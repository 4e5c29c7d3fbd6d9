package mcpadapter

import (
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
//   - everything else stays an error that ends the run: transport and
//     session failures, timeouts and cancellation, [ErrClosed], messages
//     the adapter refused ([ErrMessageTooLarge] and the like), and the
//     SDK's own local errors.
//
// [Tool.Invoke] and [Tool.InvokeJSON], for programs, keep returning the
// [*ServerError], but for invalid params (-32602): every caller gets that
// one as an isError result, since its arguments can be fixed.

// answered applies the rule above to the outcome of a model-facing call
// of t.
func (t *Tool) answered(res *Result, err error) (*Result, error) {
	if r := t.conn.asResult(err, true); r != nil {
		return r, nil
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
