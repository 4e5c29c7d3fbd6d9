package observe

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"
)

func TestOutcome(t *testing.T) {
	classify := func(error) string { return "mine" }
	for _, c := range []struct {
		isError bool
		err     error
		want    string
	}{
		{false, nil, ""},
		{true, nil, "tool_error"},
		{true, errors.New("x"), "mine"},
		{false, &jsonrpc.Error{Code: -32602}, "-32602"},
	} {
		if got := Outcome(c.isError, c.err, classify); got != c.want {
			t.Errorf("Outcome(%v, %v) = %q, want %q", c.isError, c.err, got, c.want)
		}
	}
}

func TestPeerTransport(t *testing.T) {
	for _, c := range []struct {
		p    Peer
		want map[attribute.Key]string
	}{
		{Peer{Stdio: true, URL: "http://x"}, map[attribute.Key]string{attrNetTransport: "pipe"}},
		{Peer{URL: "https://api.example.com/mcp"}, map[attribute.Key]string{attrNetTransport: "tcp", attrServerAddress: "api.example.com", attrServerPort: "443"}},
		{Peer{URL: "http://127.0.0.1:8080/mcp"}, map[attribute.Key]string{attrNetTransport: "tcp", attrServerAddress: "127.0.0.1", attrServerPort: "8080"}},
		{Peer{}, map[attribute.Key]string{}},
	} {
		got := map[attribute.Key]string{}
		for _, kv := range c.p.transport() {
			got[kv.Key] = kv.Value.Emit()
		}
		if len(got) != len(c.want) {
			t.Errorf("%+v: transport() = %v, want %v", c.p, got, c.want)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%+v: %s = %q, want %q", c.p, k, got[k], v)
			}
		}
	}
}

// TestOff: without a tracer, meter or debug log nothing watches, nil
// receivers cost nothing, and a request still carries no trace context
// when the caller has no span.
func TestOff(t *testing.T) {
	if NewTracer(nil, nil) != nil || NewTracer(noop.NewTracerProvider(), nil) != nil {
		t.Error("NewTracer of nil or no-op provider is not nil")
	}
	if NewMetrics(nil, nil, nil) != nil {
		t.Error("NewMetrics(nil) is not nil")
	}
	ctx := context.Background()
	w := Watch(ctx, nil, nil, slog.New(slog.DiscardHandler), "s", "s__t")
	if w != nil {
		t.Fatal("Watch with nothing to tell is not nil")
	}
	ctx = w.Start(ctx, "call-1")
	_, meta, end := w.Request(ctx, "t", func() Peer { t.Fatal("peer asked for"); return Peer{} }, nil)
	if meta != nil {
		t.Errorf("meta = %v, want nil", meta)
	}
	end(false, nil)
	w.End(ctx, false, nil, "call-1", 1)
	var m *Metrics
	m.Dialed("s", errors.New("x"))
	m.Connection("s", true, 1)
	m.Dropped("s")
}

// TestRequestSpan: a request's client span carries the method, the
// server, the tool, the peer's protocol, session and transport; its W3C
// trace context goes into _meta; a JSON-RPC error sets error.type and
// rpc.response.status_code.
func TestRequestSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tr := NewTracer(tp, func(error) string { return "_OTHER" })
	w := Watch(context.Background(), tr, nil, slog.New(slog.DiscardHandler), "s", "s__echo")
	ctx := w.Start(context.Background(), "call-1")
	peer := func() Peer { return Peer{Server: "s", Stdio: true, Protocol: "2025-11-25", Session: "abc"} }
	_, meta, end := w.Request(ctx, "echo", peer, nil)
	if meta["traceparent"] == nil {
		t.Errorf("meta = %v, want a traceparent", meta)
	}
	end(false, &jsonrpc.Error{Code: -32603})
	w.End(ctx, false, nil, "call-1", 1)
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "tools/call echo" || spans[1].Name != "execute_tool s__echo" {
		t.Fatalf("spans = %v", spans.Snapshots())
	}
	got := map[attribute.Key]string{}
	for _, kv := range spans[0].Attributes {
		got[kv.Key] = kv.Value.Emit()
	}
	for k, v := range map[attribute.Key]string{
		attrMCPMethod: "tools/call", attrServer: "s", attrGenAITool: "echo", attrMCPProtocol: "2025-11-25",
		attrMCPSession: "abc", attrNetTransport: "pipe", attrErrorType: "-32603", attrRPCStatus: "-32603",
	} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if spans[0].Parent.SpanID() != spans[1].SpanContext.SpanID() {
		t.Error("the request's span is not a child of the call's")
	}
}
