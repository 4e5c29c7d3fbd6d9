package mcpadapter

// What the adapter relies on in go-sdk (v1.8.0) that go-sdk does not
// promise: internals, undocumented behaviour, and behaviour of go-sdk
// servers the adapter works around. Each entry names where the adapter
// depends on it and the test of sdkcompat_test.go that pins it: the test
// fails when go-sdk changes the behaviour, so that a go-sdk upgrade starts
// with
//
//	go test -run TestSDKCompat .
//
// and with reading this file.
//
//  1. The closing codes of go-sdk's internal jsonrpc2: a request or
//     notification sent on a closing connection fails with ErrClientClosing
//     (codeClientClosing, -32003), and the handlers of a connection whose
//     writes broke are cancelled with ErrServerClosing (codeServerClosing,
//     -32004). The SDK makes them itself; a call sees them behind
//     mcp.ErrConnectionClosed, anything else as a *jsonrpc.Error. Used by
//     serverSent (modelerror.go): these are never a server's answer; and
//     by callTool (exchange.go): a call that fails so was never sent
//     (jsonrpc2 refuses it before writing), and may go on a new
//     connection (Tool.resend). Pinned by TestSDKCompatClosingCodes.
//
//  2. The code of jsonrpc2.ErrRejected (codeRejected, -32005), which the
//     Streamable HTTP transport wraps around the failure of one request
//     that leaves the connection alive: an HTTP request that got no answer
//     (an EOF included), a transient status. Used by conn.callError
//     (rejected: such an EOF is not the peer gone) and serverSent. Pinned
//     by TestSDKCompatRejected.
//
//  3. Era negotiation passes through the sending middleware: Client.Connect
//     sends server/discover, and after any failure of it sends initialize,
//     both through the client's sending middleware, and returns the
//     middleware's error wrapped (%w). When the server's discover answer
//     offers no modern version the SDK fails discover itself, after the
//     middleware saw it succeed. go-sdk has no modern-only option; eraPolicy
//     and classifyModern (eras.go) make one from this. Pinned by
//     TestSDKCompatEraFallback.
//
//  4. The list cache of modern sessions (SEP-2549, go-sdk mcp/cache.go,
//     research notes §4): tools/list, resources/list,
//     resources/templates/list and resources/read answers are cached per
//     session, only when the negotiated version is modern, keyed by the
//     cursor (or URI), with no bypass. The lookup happens before the sending
//     middleware, and the answer is stored under the key the params hold
//     when the middleware returns: the middleware gets the very params
//     object the SDK keys by. CallTool takes a tool's definition (its
//     x-mcp-header bindings, sent as Mcp-Param headers over HTTP) from that
//     cache, whatever the key. sdkcache.go (sdkCacheSlots, c.sdkSlots,
//     recordTools) and internal/sdkcache (Send, Collect) build on this.
//     Pinned by TestSDKCompatListCache.
//
//  5. Unwrappable Streamable HTTP connections: after the handshake the SDK
//     finds its own Streamable HTTP connection behind a session through an
//     interface of unexported methods, which no wrapper can have, to open
//     the standalone event stream and to send the negotiated version in
//     the Mcp-Protocol-Version header. A wrapped connection silently loses
//     both. So Streamable HTTP is never wrapped (conn.own,
//     connectStreamable): it is screened in its RoundTripper
//     (httptransport.go) and its calls are ended through their contexts.
//     Pinned by TestSDKCompatUnwrappableStreamable.
//
//  6. POST bodies: the Streamable HTTP transport posts one JSON-RPC message
//     per request, with a GetBody. internal/httptransport (cancelNotice) reads it to
//     count the cancellation notices Close waits for (conn.close); a
//     message it cannot read there costs Close cancelNoticeTimeout. Pinned
//     by TestSDKCompatPostBodies.
//
//  7. Multi-round-trip off (MultiRoundTripOptions.Disabled, newClient): the
//     adapter drives input rounds itself. go-sdk's legacy server shim, which
//     turns input requests into live elicitation requests, runs a handler
//     again only once, so that the second round of a two-round tool reaches
//     a legacy client as a result with InputRequests but NeedsInput false;
//     the call's rounds (call.go) take InputRequests as asking too. Pinned
//     by TestSDKCompatLegacyShimSecondRound.
//
//  8. Requests of the adapter's own (internal/tasks/rawrpc.go, tasks.Calls),
//     the seam of tasks (internal/tasks; the adapter's side is tasks.go),
//     for which go-sdk v1.8.0 has no API: the adapter writes a JSON-RPC
//     request with a string id of its own namespace (tasks.IDPrefix) on
//     the transport connection a session runs on, through
//     Connection.Write (documented as safe for concurrent use): the
//     adapter's wrapper of every transport but Streamable HTTP, and go-sdk's
//     own Streamable HTTP connection, recorded unwrapped (Calls.Record, in
//     connectStreamable), which posts the request with the session's
//     headers and reads its answer stream as its own, passing the server's
//     requests on it (a legacy tasks/result's elicitation) to the session.
//     Undocumented: go-sdk's jsonrpc2 numbers its own requests with
//     integers, so no id of its collides, and it drops a response to no
//     request of its own without failing the session. The answer is taken
//     by the screen as it passes (internal/wire, Options.Claim). On modern
//     sessions the request carries the per-request _meta go-sdk adds to its
//     own (tasks.Meta). Pinned by TestSDKCompatForeignRequests.
//     A task line (internal/tasks/line.go; tasks.go, taskLine) is a
//     go-sdk StreamableClientTransport connection used bare, with no
//     ClientSession and no initialize: Connect does no I/O, the adapter's
//     transport gives its requests the session's Mcp-Session-Id and
//     protocol version (go-sdk sets them only after an initialize it
//     saw), the server's answers and requests on its streams are read
//     from Connection.Read, and its DELETE on Close is not sent
//     (httptransport.Options.Tasks: tasks.Joined). Pinned by
//     TestSDKCompatTaskLine.
//     Task lines are kept, not made opt-in, after the review of December
//     (second, change 4): real servers need them. A legacy server on the
//     TypeScript SDK's task stores (server-everything over Streamable HTTP,
//     integration_tasks_test.go) binds a task to the session that made it
//     and asks its questions on the stream of tasks/result; without a line
//     such a question could only be answered while the call waits, never
//     as an interrupt resumed later or in another process, and a pending
//     task could not be collected by another Adapter. What tasks use of a
//     conn is one field (conn.tasks, taskConn in tasks.go), and of the HTTP
//     transport one option (Options.Tasks), so that the lines cost the rest
//     of the adapter nothing.
//
//  9. Requests carry their context to the wire: over Streamable HTTP the
//     context of a request is the one its http.Request is made with
//     (go-sdk internal/jsonrpc2 conn.go:763 hands Connection.Write the
//     caller's ctx; streamable.go:2293 NewRequestWithContext(ctx, ...)),
//     and the notifications/cancelled of a cancelled call is sent under
//     context.WithoutCancel of the call's (transport.go:316), values
//     kept. A shared session (share.go) relies on it: each request takes
//     its principal's credentials from its context in the RoundTripper
//     (httpOptions), and a request the SDK makes with no principal's
//     context carries none. The one such request of a modern session,
//     the subscriptions/listen that Connect opens when the server
//     announces list changes (client.go:352, under context.Background),
//     passes the sending middleware, which answers it unsent on a
//     carrier (dropListen). What else the SDK keeps per session is
//     shared by the principals on it: the list cache, which the
//     adapter's lookups never hit (entry 4), so that no principal is
//     answered with another's list, though CallTool takes a tool's
//     x-mcp-header bindings from the last listing of any principal
//     (lookupTool, client.go:599); and the progress handler, whose
//     tokens the adapter routes to their own request (notify.go).
//     Pinned by TestSDKCompatRequestContext.
//
// 10. A failing answer to one request: over Streamable HTTP, a request
//     whose http.Client.Do fails (the RoundTripper's error) fails alone,
//     wrapped in jsonrpc2.ErrRejected (streamable.go:2309-2315), and so
//     does an answer outside 2xx whose body is a JSON-RPC error response
//     (checkResponse, streamable.go:2589-2596) and a transient status
//     (429, 502, 503, 504: :2585-2587); any other failing answer (a 401 of
//     an auth proxy with a text body) fails the whole connection
//     (streamable.go:2364-2367, c.fail). A shared session's requests act
//     for different principals, and one's refusal must not end the
//     others' session: its RoundTripper returns the failing status of an
//     answer with no JSON-RPC error as an error (httptransport.Options.
//     PerRequest). Pinned by TestSDKCompatFailingStatus.
//
// 11. A server's elicitation/create without params: Client.elicit reads
//     req.Params.Mode before anything checks that params came
//     (mcp/client.go:874), on a goroutine of the connection's, so such a
//     request from a hostile or broken server panics and ends the
//     process. checkRequests (serverreq.go), a receiving middleware that
//     runs first on the adapter's clients and is added to prebuilt ones
//     (prepare), answers it invalid params (-32602) before any handler
//     runs. Pinned by TestLiveElicitationWithoutParams and
//     TestServerRequestPanicsAnswered, which crash without that check; they
//     cannot tell when go-sdk stops panicking, and the check stays
//     harmless then.
//
// 12. A server's notifications/elicitation/complete without params
//     (missing or null): the method is declared params-optional, and
//     Client.callElicitationCompleteHandler then reads
//     req.Params.ElicitationID (mcp/client.go:1526) on a goroutine of the
//     connection's: a panic that ends the process, whatever the client's
//     options. The wire screen drops such a notification on every
//     transport (internal/wire: methodElicitationComplete). Pinned by
//     TestElicitationCompleteWithoutParams (byte and decoded screens).
//
// 13. An elicitation whose requested schema has null for a titled enum
//     option (a string property's oneOf, an array property's items.anyOf):
//     validateTitledEnumEntry dereferences it (mcp/client.go:1094), in
//     Client.elicit, for a live request (connection goroutine) and for an
//     input request the multi-round-trip middleware fulfils (mrtr.go:298,
//     an errgroup goroutine). checkRequests answers the live one -32602;
//     the screen fails a result carrying such an input request
//     (internal/wire sdkPanics, elicit.NullEnumOption). Pinned by
//     TestServerRequestPanicsAnswered and TestInputRequestPanicsRefused.
//
// 14. A sampling/createMessage with a null message: CreateMessageWithToolsParams.
//     toBase (mcp/protocol.go:741, when only CreateMessageHandler is set)
//     and createMessageParamsToWithTools (mrtr.go:207) dereference it. Only
//     a prebuilt client with a sampling handler reaches them (the adapter's
//     clients refuse sampling first). checkRequests answers a live one
//     -32602; the screen fails a result carrying one as an input request.
//     Pinned by TestServerRequestPanicsAnswered and
//     TestInputRequestPanicsRefused.
//
// 15. The standalone event stream of a legacy Streamable HTTP session is
//     opened within Client.Connect (sessionUpdated, streamable.go:2164),
//     under the connection's own context, detached from Connect's
//     (streamable.go:2074), and a GET that fails in the transport (a
//     dropped connection, a redirect loop) is tried again after a backoff
//     of a second and more (connectSSE, 5 tries by default), which only
//     the connection's Close ends: Connect outlives its context by up to
//     tens of seconds, and the adapter's Close waited for it.
//     connectStreamable closes the connection when the dial's context
//     ends while Connect runs. Pinned by TestSDKCompatStandaloneRetry; the
//     close stays harmless when go-sdk stops retrying so.
//
// 16. A server's completion/complete request: go-sdk's client lists
//     completion/complete among the methods it receives (clientMethodInfos,
//     mcp/client.go:1162, handled by ClientSession.Complete), so such a
//     request from a server is sent back to that server and its answer
//     relayed, the client's goroutine waiting for it without bound. MCP
//     defines the method as a client's request only. checkRequests
//     (serverreq.go) answers it method not found (-32601) on the
//     adapter's clients and prebuilt ones. Pinned by
//     TestServerCompletionRequestRefused, which cannot tell when go-sdk
//     stops taking it; the check stays harmless then.
//
// 17. An elicitation whose requested schema has a cycle of references
//     that jsonschema-go (v0.4.3) follows without end, such as a property
//     whose $ref is itself: go-sdk's Client.elicit (mcp/client.go:897)
//     resolves and validates the handler's accepted answer against it,
//     and the validator recurses until the stack overflows, a fatal
//     error no recover stops, for a live request and for an input
//     request its multi-round-trip middleware fulfils. Only prebuilt
//     clients reach it with an accepted answer (the adapter's handler
//     refuses such answers first, elicit.Content). checkRequestedSchema
//     (serverreq.go, added by prepare) answers the live one -32602; the
//     screen fails a result asking one (internal/wire
//     Options.SDKRounds, set for prebuilt clients). Pinned by
//     TestCyclicSchemaRefusedBeforeSDK.
//
// Not listed: behaviour go-sdk documents (ClientSession.Close waits for the
// requests in flight; IOTransport.MaxLineLength < 0 lifts its cap; a
// non-nil ClientOptions.Capabilities drops the default roots capability;
// mcp.CodeUnsupportedProtocolVersion), and behaviour the adapter does not
// depend on but only guards against (unknown content types failing a whole
// result: the screen, internal/wire).
//
// go-sdk deprecations the adapter uses (staticcheck SA1019), all from
// SEP-2577, which deprecates logging, sampling and roots as of protocol
// version 2026-07-28 "for at least twelve months". They stay while legacy
// servers use these features:
//   - logging: mcp.LoggingLevel and mcp.MetaKeyLogLevel (Server.LogLevel,
//     requestLogLevel, slogLevel), ClientSession.SetLoggingLevel and
//     mcp.SetLoggingLevelParams (Adapter.SetLoggingLevel),
//     ClientOptions.LoggingMessageHandler (newClient) and
//     mcp.LoggingMessageParams (notify.go);
//   - sampling: mcp.ToolUseContent and mcp.ToolResultContent (result.go, newBlock),
//     mcp.CreateMessageParams and mcp.CreateMessageWithToolsParams
//     (internal/elicit: refused input requests);
//   - roots: mcp.ListRootsParams (internal/elicit: refused input requests).

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC error codes of go-sdk's internal jsonrpc2 (entries 1 and 2).
const (
	codeClientClosing = -32003 // jsonrpc2.ErrClientClosing
	codeServerClosing = -32004 // jsonrpc2.ErrServerClosing
	codeRejected      = -32005 // jsonrpc2.ErrRejected
)

// rejected reports whether err is a request the transport rejected alone,
// its connection left alive (entry 2).
func rejected(err error) bool {
	return errors.Is(err, &jsonrpc.Error{Code: codeRejected})
}
