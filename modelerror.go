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
// [*ServerError].

// answered applies the rule above to the outcome of a model-facing call
// of t.
func (t *Tool) answered(res *Result, err error) (*Result, error) {
	if err == nil {
		return res, nil
	}
	var se *ServerError
	var we *jsonrpc.Error
	if !errors.As(err, &se) || !errors.As(err, &we) || !serverSent(we) ||
		errors.Is(err, ErrUnsupportedInputRequest) || errors.Is(err, ErrMessageTooLarge) ||
		t.conn.usable(se.Op) != nil {
		return res, err
	}
	msg := we.Message
	if msg == "" {
		msg = fmt.Sprintf("the server failed the call (JSON-RPC error %d)", we.Code)
	}
	return errorResult(msg), nil
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
