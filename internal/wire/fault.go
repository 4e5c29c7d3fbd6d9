package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A Kind is a kind of server message the screen cannot pass on.
type Kind string

// Kinds of faults.
const (
	// TooLarge is a message over Options.MaxMessageBytes.
	TooLarge Kind = "messageTooLarge"
	// Malformed is a message that is not JSON, or not JSON-RPC.
	Malformed Kind = "malformedMessage"
	// TooDeep is a message nesting deeper than the SDK decodes.
	TooDeep Kind = "messageTooDeep"
	// InvalidResult is a result the SDK would misread or panic on: an
	// input request that is not an object, a resultType the protocol does
	// not define.
	InvalidResult Kind = "invalidResult"
)

// A Fault is a server message the screen could not pass on. The call the
// message answers fails with it: as the error response the screen put in
// the message's place (a *jsonrpc.Error, which [FaultOf] recognises), or as
// the error that ends the stream when the message answers no call the
// screen can name.
type Fault struct {
	Kind Kind
	Text string // what happened, for people
}

// Error returns the fault's text.
func (f *Fault) Error() string { return f.Text }

const (
	// faultCode is the JSON-RPC error code of the error responses the
	// screen puts in place of server messages it cannot pass on. The kind
	// of fault travels in the error's data.
	faultCode = jsonrpc.CodeInternalError
	// faultKey is the member of the error data that holds the kind.
	faultKey = "mcpadapter"
)

// response returns the JSON-RPC error response standing for f, answering
// request id (raw JSON).
func (f *Fault) response(id []byte) []byte {
	m, _ := json.Marshal(f.Text) // a string always marshals
	out := make([]byte, 0, len(id)+len(m)+128)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = fmt.Appendf(out, `,"error":{"code":%d,"message":`, faultCode)
	out = append(out, m...)
	out = append(out, `,"data":{"`+faultKey+`":"`...)
	out = append(out, f.Kind...)
	return append(out, `"}}}`...)
}

// rpcError returns f as a decoded error response.
func (f *Fault) rpcError() *jsonrpc.Error {
	data, _ := json.Marshal(map[string]Kind{faultKey: f.Kind})
	return &jsonrpc.Error{Code: faultCode, Message: f.Text, Data: data}
}

// FaultOf returns the fault err reports, or nil: a *Fault in its chain (a
// stream the screen ended), an error response the screen substituted for a
// message, or one of the SDK's own size caps (the in-memory transport's
// line cap, the SSE event cap), which it reports as untyped strings and
// FaultOf reports as [TooLarge].
func FaultOf(err error) *Fault {
	if err == nil {
		return nil
	}
	var f *Fault
	if errors.As(err, &f) {
		return f
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == faultCode && len(we.Data) > 0 {
		var d map[string]Kind
		if json.Unmarshal(we.Data, &d) == nil && d[faultKey] != "" {
			return &Fault{Kind: d[faultKey], Text: we.Message}
		}
	}
	msg := err.Error()
	if strings.Contains(msg, "exceeded the configured maximum line length") || strings.Contains(msg, "SSE event exceeded") {
		return &Fault{Kind: TooLarge, Text: msg}
	}
	return nil
}
