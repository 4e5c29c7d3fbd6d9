package mcpadapter

// Tracing with the OpenTelemetry API (never an SDK): spans for dial, list and
// call, named and attributed after the OpenTelemetry semantic conventions
// for MCP and for GenAI tool execution, and the W3C trace context in each
// tools/call request's _meta so that a server can join the trace.

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// startToolSpan starts the span of one execution of t (GenAI "execute_tool",
// internal), or returns ctx and nil when tracing is off.
func (t *Tool) startToolSpan(ctx context.Context, callID string) (context.Context, trace.Span) {
	tr := t.a.tracer
	if tr == nil {
		return ctx, nil
	}
	ctx, span := tr.Start(ctx, "execute_tool "+t.name, trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(
			attrGenAIOperation.String("execute_tool"),
			attrGenAITool.String(t.name),
			attrGenAIToolCallID.String(callID),
			attrGenAIToolType.String("extension"),
			attrServer.String(t.server),
		)
	}
	return ctx, span
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
	switch {
	case err != nil:
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			code := strconv.Itoa(int(we.Code))
			span.SetAttributes(attrRPCStatus.String(code), attrErrorType.String(code))
		} else {
			span.SetAttributes(attrErrorType.String(errorType(err)))
		}
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	case res != nil && res.IsError:
		span.SetAttributes(attrErrorType.String("tool_error"))
		span.SetStatus(codes.Error, "tool_error")
	}
	span.End()
}

// errorType is the error.type of a failure that is not a JSON-RPC error.
func errorType(err error) string {
	var intr *Interrupt
	var ask *ApprovalRequired
	var ne net.Error
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
	case errors.As(err, &ne):
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

// tracedDial is [Adapter.dial] in a client span ("initialize", or
// "server/discover" when the modern era was negotiated), a child of the
// span of the caller whose discovery started the dial.
func (a *Adapter) tracedDial(parent trace.SpanContext, g *generation, key connKey, s *Server) (*conn, error) {
	if a.tracer == nil {
		return a.dial(g, key, s)
	}
	ctx := trace.ContextWithSpanContext(context.Background(), parent)
	attrs := append([]attribute.KeyValue{attrServer.String(key.server)}, transportAttrs(s)...)
	_, span := a.tracer.Start(ctx, "initialize", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	c, err := a.dial(g, key, s)
	method := "initialize"
	if err == nil {
		if c.modern() {
			method = "server/discover"
			span.SetName(method)
		}
		span.SetAttributes(attrMCPProtocol.String(c.info.ProtocolVersion))
		if id := c.session.ID(); id != "" {
			span.SetAttributes(attrMCPSession.String(id))
		}
	}
	span.SetAttributes(attrMCPMethod.String(method))
	endSpan(span, nil, err)
	return c, err
}
