package observe

// The one observer of a tool call.

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// A Call is the one observer of a tool call: the call's span (GenAI
// "execute_tool"), the client span of each tools/call request it sends,
// its metrics and its debug record. A nil *Call watches nothing, and its
// methods cost nothing: the call path holds one and never asks whether
// anyone looks.
type Call struct {
	tracer  *Tracer
	metrics *Metrics
	logger  *slog.Logger
	server  string
	tool    string     // the name the model sees
	span    trace.Span // the call's; nil without a tracer
	debug   bool       // the logger takes debug records for the call's ctx
	began   time.Time
}

// Watch returns the observer of a call under ctx of tool of server, or nil
// when there is neither a tracer, nor metrics, nor a debug log to tell.
// logger must not be nil.
func Watch(ctx context.Context, tr *Tracer, m *Metrics, logger *slog.Logger, server, tool string) *Call {
	debug := logger.Enabled(ctx, slog.LevelDebug)
	if tr == nil && m == nil && !debug {
		return nil
	}
	return &Call{tracer: tr, metrics: m, logger: logger, server: server, tool: tool, debug: debug}
}

// Start opens the call's span (a child of ctx's), and returns the context
// of the call under it.
func (w *Call) Start(ctx context.Context, callID string) context.Context {
	if w == nil {
		return ctx
	}
	w.began = time.Now()
	if w.tracer == nil {
		return ctx
	}
	ctx, w.span = w.tracer.tr.Start(ctx, "execute_tool "+w.tool, trace.WithSpanKind(trace.SpanKindInternal))
	if w.span.IsRecording() {
		w.span.SetAttributes(
			attrGenAIOperation.String("execute_tool"),
			attrGenAITool.String(w.tool),
			attrGenAIToolCallID.String(callID),
			attrGenAIToolType.String("extension"),
			attrServer.String(w.server),
		)
	}
	return ctx
}

// Request watches one tools/call request of the call, of the tool named
// mcpName on the server peer describes: it returns the request's context
// (under its client span) and its _meta with the W3C trace context added,
// and the func to call with the request's outcome. The trace context is
// sent even with a nil w: the caller's ctx may carry a span of its own.
func (w *Call) Request(ctx context.Context, mcpName string, peer func() Peer, meta map[string]any) (context.Context, map[string]any, func(isError bool, err error)) {
	var span trace.Span
	if w != nil {
		ctx, span = w.tracer.StartRequest(ctx, "tools/call", mcpName, peer)
	}
	meta = WithTraceContext(ctx, meta)
	if span == nil {
		return ctx, meta, func(bool, error) {}
	}
	return ctx, meta, func(isError bool, err error) { w.tracer.End(span, isError, err) }
}

// End closes the call's span, records its metrics and writes its debug
// record: the call callID ended, after rounds tools/call requests, with
// err or a result that isError or not.
func (w *Call) End(ctx context.Context, isError bool, err error, callID string, rounds int) {
	if w == nil {
		return
	}
	took := time.Since(w.began)
	w.tracer.End(w.span, isError, err)
	w.metrics.Call(ctx, w.server, w.tool, took, isError, err)
	if w.debug {
		w.logger.DebugContext(ctx, "mcpadapter: tool call", "server", w.server, "tool", w.tool, "call", callID,
			"duration", took, "isError", isError, "rounds", rounds, "error", err)
	}
}
