package mcpadapter

// Tracing with the OpenTelemetry API (never an SDK): spans for dial, list and
// call, named and attributed after the OpenTelemetry semantic conventions
// for MCP and for GenAI tool execution, and the W3C trace context in each
// tools/call request's _meta so that a server can join the trace.

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// instrumentationName names the adapter's tracer.
const instrumentationName = "github.com/mcpadapter/mcpadapter"

// Attribute keys of the semantic conventions (MCP and GenAI, development
// status at the time of writing).
const (
	attrMCPMethod       = attribute.Key("mcp.method.name")
	attrMCPProtocol     = attribute.Key("mcp.protocol.version")
	attrMCPSession      = attribute.Key("mcp.session.id")
	attrGenAIOperation  = attribute.Key("gen_ai.operation.name")
	attrGenAITool       = attribute.Key("gen_ai.tool.name")
	attrGenAIToolCallID = attribute.Key("gen_ai.tool.call.id")
	attrGenAIToolType   = attribute.Key("gen_ai.tool.type")
	attrNetTransport    = attribute.Key("network.transport")
	attrServerAddress   = attribute.Key("server.address")
	attrServerPort      = attribute.Key("server.port")
	attrErrorType       = attribute.Key("error.type")
	attrRPCStatus       = attribute.Key("rpc.response.status_code")
	// attrServer is the adapter's own: the server's name in Config.Servers.
	attrServer = attribute.Key("mcpadapter.server")
)

// newTracer returns the adapter's tracer, or nil when tracing is off.
// A no-op provider is off too, so that it costs nothing.
func newTracer(tp trace.TracerProvider) trace.Tracer {
	if _, noop := tp.(noop.TracerProvider); tp == nil || noop {
		return nil
	}
	return tp.Tracer(instrumentationName)
}

// A callWatch is the one observer of a tool call: the call's span (GenAI
// "execute_tool"), the client span of each tools/call request it sends,
// its metrics and its debug record. A nil *callWatch watches nothing, and its methods
// cost nothing: the call path holds one and never asks whether anyone
// looks.
type callWatch struct {
	t     *Tool
	span  trace.Span // the call's; nil without a tracer
	debug bool       // the logger takes debug records for the call's ctx
	began time.Time
}

// watch returns the observer of a call of t under ctx, or nil when there is
// neither a tracer, nor metrics (metrics.go), nor a debug log to tell.
func (t *Tool) watch(ctx context.Context) *callWatch {
	debug := t.a.logger.Enabled(ctx, slog.LevelDebug)
	if t.a.tracer == nil && t.a.metrics == nil && !debug {
		return nil
	}
	return &callWatch{t: t, debug: debug}
}

// start opens the call's span (a child of ctx's), and returns the context
// of the call under it.
func (w *callWatch) start(ctx context.Context, callID string) context.Context {
	if w == nil {
		return ctx
	}
	w.began = time.Now()
	tr := w.t.a.tracer
	if tr == nil {
		return ctx
	}
	t := w.t
	ctx, w.span = tr.Start(ctx, "execute_tool "+t.name, trace.WithSpanKind(trace.SpanKindInternal))
	if w.span.IsRecording() {
		w.span.SetAttributes(
			attrGenAIOperation.String("execute_tool"),
			attrGenAITool.String(t.name),
			attrGenAIToolCallID.String(callID),
			attrGenAIToolType.String("extension"),
			attrServer.String(t.server),
		)
	}
	return ctx
}

// request watches one tools/call request of the call on c: it returns the
// request's context (under its client span) and its _meta with the W3C trace
// context added, and the func to call with the request's outcome. The trace
// context is sent even with a nil w: the caller's ctx may carry a span of
// its own.
func (w *callWatch) request(ctx context.Context, c *conn, mcpName string, meta mcp.Meta) (context.Context, mcp.Meta, func(*mcp.CallToolResult, *Result, error)) {
	var span trace.Span
	if w != nil {
		ctx, span = c.startRequestSpan(ctx, "tools/call", mcpName)
	}
	meta = withTraceContext(ctx, meta)
	if span == nil {
		return ctx, meta, func(*mcp.CallToolResult, *Result, error) {}
	}
	return ctx, meta, func(raw *mcp.CallToolResult, res *Result, err error) {
		if res == nil && raw != nil {
			res = &Result{IsError: raw.IsError}
		}
		endSpan(span, res, err)
	}
}

// end closes the call's span, records its metrics and writes its debug
// record.
func (w *callWatch) end(ctx context.Context, res *Result, err error, info *callInfo) {
	if w == nil {
		return
	}
	took := time.Since(w.began)
	endSpan(w.span, res, err)
	t := w.t
	t.a.metrics.call(ctx, t, took, res, err)
	if w.debug {
		t.a.logger.DebugContext(ctx, "mcpadapter: tool call", "server", t.server, "tool", t.name, "call", info.id,
			"duration", took, "isError", res != nil && res.IsError, "rounds", info.requests, "error", err)
	}
}

// startRequestSpan starts the client span of one request of method on c
// ("tools/call get_weather"), or returns ctx and nil when tracing is off.
// target is the tool name of a tools/call, or "".
func (c *conn) startRequestSpan(ctx context.Context, method, target string) (context.Context, trace.Span) {
	tr := c.a.tracer
	if tr == nil {
		return ctx, nil
	}
	name := method
	if target != "" {
		name += " " + target
	}
	ctx, span := tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
	if !span.IsRecording() {
		return ctx, span
	}
	attrs := append(make([]attribute.KeyValue, 0, 10), attrMCPMethod.String(method), attrServer.String(c.server))
	if target != "" {
		attrs = append(attrs, attrGenAITool.String(target), attrGenAIOperation.String("execute_tool"))
	}
	if c.info.ProtocolVersion != "" {
		attrs = append(attrs, attrMCPProtocol.String(c.info.ProtocolVersion))
	}
	if c.session != nil {
		if id := c.session.ID(); id != "" {
			attrs = append(attrs, attrMCPSession.String(id))
		}
	}
	span.SetAttributes(append(attrs, transportAttrs(c.cfg)...)...)
	return ctx, span
}

// transportAttrs describes how s is reached: a pipe for stdio, TCP (with
// the server's address) for a URL; nothing for a custom transport.
func transportAttrs(s *Server) []attribute.KeyValue {
	switch {
	case s.Command != "":
		return []attribute.KeyValue{attrNetTransport.String("pipe")}
	case s.URL != "":
		attrs := []attribute.KeyValue{attrNetTransport.String("tcp")}
		if u, err := url.Parse(s.URL); err == nil {
			host, port := u.Hostname(), u.Port()
			if port == "" {
				port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
			}
			attrs = append(attrs, attrServerAddress.String(host))
			if n, err := strconv.Atoi(port); err == nil {
				attrs = append(attrs, attrServerPort.Int(n))
			}
		}
		return attrs
	}
	return nil
}

// endSpan ends span (nil when tracing is off), recording err, or the
// result's isError as the error type "tool_error".
func endSpan(span trace.Span, res *Result, err error) {
	if span == nil {
		return
	}
	typ := outcomeType(res, err)
	switch {
	case err != nil:
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			span.SetAttributes(attrRPCStatus.String(typ))
		}
		span.SetAttributes(attrErrorType.String(typ))
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	case typ != "":
		span.SetAttributes(attrErrorType.String(typ))
		span.SetStatus(codes.Error, typ)
	}
	span.End()
}

// outcomeType is the error.type of an outcome, for spans and metrics: the
// JSON-RPC error code, errorType's word for another failure, "tool_error"
// for an isError result, and "" for a success.
func outcomeType(res *Result, err error) string {
	switch {
	case err != nil:
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return strconv.Itoa(int(we.Code))
		}
		return errorType(err)
	case res != nil && res.IsError:
		return "tool_error"
	}
	return ""
}

// errorType is the error.type of a failure that is not a JSON-RPC error.
func errorType(err error) string {
	var intr *Interrupt
	var ask *ApprovalRequired
	var oe *net.OpError
	var de *net.DNSError
	switch {
	case errors.As(err, &intr):
		return "input_required"
	case errors.As(err, &ask):
		return "approval_required"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, ErrClosed):
		return "closed"
	case errors.As(err, &oe), errors.As(err, &de): // not net.Error: a syscall.Errno (a missing program) is one
		return "network"
	}
	return "_OTHER"
}

// withTraceContext returns meta with the W3C trace context of ctx
// (traceparent, tracestate) added, or meta itself when ctx carries no valid
// span context.
func withTraceContext(ctx context.Context, meta map[string]any) map[string]any {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return meta
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	if meta == nil {
		meta = make(map[string]any, len(carrier))
	}
	for k, v := range carrier {
		meta[k] = v
	}
	return meta
}
