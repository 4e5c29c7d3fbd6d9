package mcpadapter

// Requests a server sends while serving a call: a legacy server's live
// elicitation/create, sampling/createMessage and roots/list requests.
//
// MCP links such a request to no call: over stdio and in-memory pipes
// nothing on the wire says which tools/call it serves (no related-request
// id, and the server's request carries no progress token of the call).
// Over Streamable HTTP a server sends it on the response stream of the
// call's POST, but go-sdk's client merges every stream into one and tells
// a client handler nothing (v1.8.0). The adapter therefore attributes a
// request to a call only when that call is the only tools/call open on the
// connection, and otherwise to none:
//
//   - A refused sampling or roots request makes its call fail with
//     ErrUnsupportedInputRequest only when it was the one call open; with
//     several open, no call is blamed (each ends as the server answers it).
//   - A live elicitation request is accepted only while a call is open on a
//     legacy session, at most one per open call and maxLiveElicitations
//     at once; the others are declined without asking the handler. With
//     one call open the handler gets that call's context and tool; with
//     several it gets a context carrying none of theirs and no tool, since
//     answering one caller's question with another caller's identity
//     would be worse than not knowing.
//   - Without a handler, the one open call takes the request itself, as a
//     live interrupt (live.go): a tools/call, or a legacy task's
//     tasks/result sent on the connection (tasks.go), whose call is then
//     the one waiting for the task. With several open it cannot be told
//     which call asks, and the request is declined, as it is under the
//     decline setting (a negative StateOptions.LiveMaxAge).
//   - A call whose question waits for its user (a held live interrupt)
//     counts as none of these: its server waits for the answer, so it is
//     not the one asking, and one user's unanswered question does not
//     switch questions off for the other calls on the connection.

import (
	"context"
	"fmt"
	"slices"

	"github.com/mcpadapter/mcpadapter/internal/elicit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// methodComplete is the method of a completion request, which only a
// client sends.
const methodComplete = "completion/complete"

// maxLiveElicitations caps the live elicitation requests of one connection
// answered at once.
const maxLiveElicitations = 8

// soleCallLocked returns the one open call that may be asking, or nil when
// none or several are, and how many are. A call whose live question waits
// for its user (a held live interrupt) is not asking: its server waits for
// the answer, so the question is another call's. c.openMu must be held.
func (c *conn) soleCallLocked() (*openCall, int) {
	var sole *openCall
	n := 0
	for oc := range c.open {
		if oc.live != nil && oc.live.held.Load() != nil {
			continue
		}
		sole = oc
		n++
	}
	if n != 1 {
		return nil, n
	}
	return sole, 1
}

// blame records a refused server request of method against the call it
// served, when that call can be told (see the file comment).
func (c *conn) blame(method string) {
	c.openMu.Lock()
	oc, n := c.soleCallLocked()
	if oc != nil {
		oc.refused = method
	}
	c.openMu.Unlock()
	if oc == nil {
		c.a.logger.Debug("mcpadapter: refused a server request no single call can be blamed for", "server", c.server, "method", method, "open calls", n)
	}
}

// liveToolKey carries, in the context of the handler of a live
// elicitation request, what it learns of the call it serves: the
// adapter's name of its tool ("" when it cannot be told).
type liveToolKey struct{}

// checkRequests is a receiving middleware that answers invalid params
// (-32602) to the server requests go-sdk's client handlers would panic on
// (v1.8.0), before any handler sees them: an elicitation/create without
// params, which Client.elicit reads unchecked, or whose requested schema
// has null for an enum option (elicit.NullEnumOption); a sampling/createMessage
// with a null message, which CreateMessageWithToolsParams.toBase
// dereferences. A completion/complete, which MCP defines as a client's
// request only, is answered method not found (-32601): go-sdk's client
// takes it as a request of the server's (v1.8.0, clientMethodInfos) and
// sends it back to the server, waiting for its answer without bound, so
// that a server could make its client speak for it and hold a goroutine
// per request for as long as it left them unanswered. It is stateless,
// and guards prebuilt clients too (prepare): the panics come before their
// own handlers run. On the adapter's clients it runs first: such a
// sampling request is answered invalid params, not refused and blamed
// (refuseInputRequests).
func checkRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == methodComplete {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "completion/complete is a client's request, not a server's"}
		}
		var why string
		switch r := req.(type) {
		case *mcp.ElicitRequest:
			switch {
			case r == nil || r.Params == nil:
				why = "elicitation/create without params"
			case elicit.NullEnumOption(r.Params.RequestedSchema):
				why = "elicitation/create: requestedSchema has null for an enum option's schema"
			}
		case *mcp.CreateMessageWithToolsRequest:
			if r != nil && r.Params != nil && slices.Contains(r.Params.Messages, nil) {
				why = "sampling/createMessage: a message is null"
			}
		}
		if why != "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: why}
		}
		return next(ctx, method, req)
	}
}

// checkRequestedSchema is a receiving middleware of prebuilt clients
// (prepare), after checkRequests: it answers invalid params (-32602) to an
// elicitation/create whose requested schema elicit.CheckSchema refuses,
// before the client's handler sees it. go-sdk's client (v1.8.0,
// Client.elicit) resolves and validates an accepted answer against that
// schema with jsonschema-go, which follows a cycle of references
// ({"$ref":"#/properties/p"} in p) until the stack overflows, a fatal
// error. The adapter's own clients need no such check: their handler
// refuses such an answer before go-sdk validates it (elicit.Content).
func checkRequestedSchema(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.ElicitRequest); ok && r != nil && r.Params != nil {
			if err := elicit.CheckSchema(r.Params.RequestedSchema); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "elicitation/create: " + err.Error()}
			}
		}
		return next(ctx, method, req)
	}
}

// liveElicitation screens a live elicitation/create request before next
// (the SDK's handler, elicitor.live) sees it; see the file comment.
// checkRequests, outside it, answered the requests the SDK's handler
// would panic on: req has params.
func (c *conn) liveElicitation(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	er := req.(*mcp.ElicitRequest)
	decline := func(why string) (mcp.Result, error) {
		c.a.logger.Warn("mcpadapter: declined live elicitation", "server", c.server, "reason", why)
		return &mcp.ElicitResult{Action: string(Decline)}, nil
	}
	c.openMu.Lock()
	oc, n := c.soleCallLocked()
	switch {
	case n == 0:
		c.openMu.Unlock()
		return decline("no call is open")
	case c.modern():
		// (c.info is read after a call was registered: it is set by then.)
		c.openMu.Unlock()
		return decline("a modern session asks through input-required results")
	case oc != nil && oc.live != nil:
		// The call takes it itself (live.go), once: while it waits for its
		// user the call does not count above, and its server is not asking.
		c.openMu.Unlock()
		return oc.live.ask(ctx, er)
	case c.asking >= min(n, maxLiveElicitations):
		c.openMu.Unlock()
		return decline("too many live elicitations at once")
	case c.asksLive() && oc == nil:
		c.openMu.Unlock()
		return decline(fmt.Sprintf("no ElicitationHandler, and %d calls are open: MCP does not say which one asks, so none can take it as a live interrupt", n))
	}
	c.asking++
	c.openMu.Unlock()
	defer func() {
		c.openMu.Lock()
		c.asking--
		c.openMu.Unlock()
	}()
	var tool string
	if oc != nil {
		// The caller's context, ended also when the server gives up.
		callCtx, cancel := context.WithCancel(oc.ctx)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		ctx, tool = callCtx, oc.tool
	}
	return next(context.WithValue(ctx, liveToolKey{}, tool), method, req)
}

// liveToolOf returns the tool whose call a live request's context serves.
func liveToolOf(ctx context.Context) string {
	tool, _ := ctx.Value(liveToolKey{}).(string)
	return tool
}
