// Package observe is the adapter's side of OpenTelemetry (the API, never an
// SDK): the spans of dials, requests and tool calls, named and attributed
// after the semantic conventions for MCP and for GenAI tool execution; the
// W3C trace context in each tools/call request's _meta, so that a server
// can join the trace; the metric instruments (metrics.go); and the one
// observer a tool call holds ([Call]: its span, its requests' spans, its
// metrics and its debug record).
//
// It takes plain values: server and tool names, a [Peer] describing the
// server end, and the root package's classification of its own failures
// (the classify func of [NewTracer] and [NewMetrics]). It knows nothing of
// the adapter's types.
package observe

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope names the adapter's tracer and meter.
const Scope = "github.com/mcpadapter/mcpadapter"

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

// Outcome is the error.type of an outcome, for spans and metrics: the
// JSON-RPC error code of err, classify's word for another failure,
// "tool_error" for an isError result, and "" for a success.
func Outcome(isError bool, err error, classify func(error) string) string {
	switch {
	case err != nil:
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return strconv.Itoa(int(we.Code))
		}
		return classify(err)
	case isError:
		return "tool_error"
	}
	return ""
}

// A Tracer makes the adapter's spans. A nil *Tracer makes none, and its
// methods cost nothing.
type Tracer struct {
	tr       trace.Tracer
	classify func(error) string // the error.type of a failure that is not a JSON-RPC error
}

// NewTracer returns the tracer of tp, or nil when tp is nil or a no-op
// provider (which costs nothing then). classify names the failures that
// are not JSON-RPC errors, for error.type ([Outcome]).
func NewTracer(tp trace.TracerProvider, classify func(error) string) *Tracer {
	if _, noop := tp.(noop.TracerProvider); tp == nil || noop {
		return nil
	}
	return &Tracer{tr: tp.Tracer(Scope), classify: classify}
}

// A Peer describes the server end of a span.
type Peer struct {
	Server   string // the server's name in Config.Servers
	Stdio    bool   // a stdio server: network.transport "pipe"
	URL      string // a URL server (unless Stdio): "tcp", with the server's address and port
	Protocol string // the protocol version negotiated, or ""
	Session  string // the session's id, or ""
}

// transport describes how p is reached: a pipe for stdio, TCP (with the
// server's address) for a URL; nothing for a custom transport.
func (p Peer) transport() []attribute.KeyValue {
	switch {
	case p.Stdio:
		return []attribute.KeyValue{attrNetTransport.String("pipe")}
	case p.URL != "":
		attrs := []attribute.KeyValue{attrNetTransport.String("tcp")}
		if u, err := url.Parse(p.URL); err == nil {
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

// StartDial starts the client span of a dial of p's server ("initialize"),
// a child of parent (the span of the caller whose discovery started the
// dial). End it with [Tracer.EndDial].
func (t *Tracer) StartDial(parent trace.SpanContext, p Peer) trace.Span {
	if t == nil {
		return nil
	}
	ctx := trace.ContextWithSpanContext(context.Background(), parent)
	attrs := append([]attribute.KeyValue{attrServer.String(p.Server)}, p.transport()...)
	_, span := t.tr.Start(ctx, "initialize", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return span
}

// EndDial ends the span of a dial that failed with err, or, when err is
// nil, made a connection that speaks the modern era or not, with the
// protocol version and session id of p.
func (t *Tracer) EndDial(span trace.Span, modern bool, p Peer, err error) {
	if span == nil {
		return
	}
	method := "initialize"
	if err == nil {
		if modern {
			method = "server/discover"
			span.SetName(method)
		}
		span.SetAttributes(attrMCPProtocol.String(p.Protocol))
		if p.Session != "" {
			span.SetAttributes(attrMCPSession.String(p.Session))
		}
	}
	span.SetAttributes(attrMCPMethod.String(method))
	t.End(span, false, err)
}

// StartRequest starts the client span of one request of method
// ("tools/call get_weather") to the server peer describes (called only
// when the span records), and returns the request's context under it; or
// ctx and nil when tracing is off. target is the tool name of a
// tools/call, or "".
func (t *Tracer) StartRequest(ctx context.Context, method, target string, peer func() Peer) (context.Context, trace.Span) {
	if t == nil {
		return ctx, nil
	}
	name := method
	if target != "" {
		name += " " + target
	}
	ctx, span := t.tr.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
	if !span.IsRecording() {
		return ctx, span
	}
	p := peer()
	attrs := append(make([]attribute.KeyValue, 0, 10), attrMCPMethod.String(method), attrServer.String(p.Server))
	if target != "" {
		attrs = append(attrs, attrGenAITool.String(target), attrGenAIOperation.String("execute_tool"))
	}
	if p.Protocol != "" {
		attrs = append(attrs, attrMCPProtocol.String(p.Protocol))
	}
	if p.Session != "" {
		attrs = append(attrs, attrMCPSession.String(p.Session))
	}
	span.SetAttributes(append(attrs, p.transport()...)...)
	return ctx, span
}

// End ends span (nil when tracing is off), recording err, or an isError
// result as the error type "tool_error".
func (t *Tracer) End(span trace.Span, isError bool, err error) {
	if span == nil {
		return
	}
	typ := Outcome(isError, err, t.classify)
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

// WithTraceContext returns meta with the W3C trace context of ctx
// (traceparent, tracestate) added, or meta itself when ctx carries no valid
// span context.
func WithTraceContext(ctx context.Context, meta map[string]any) map[string]any {
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
