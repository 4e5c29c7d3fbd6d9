package mcpadapter

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// spanAttrs returns the attributes of s as a map.
func spanAttrs(s tracetest.SpanStub) map[attribute.Key]string {
	m := map[attribute.Key]string{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value.Emit()
	}
	return m
}

func TestTracing(t *testing.T) {
	for _, era := range pipelineEras {
		t.Run(era.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			t.Cleanup(func() { tp.Shutdown(context.Background()) })
			srv := testserver.Full(testserver.Options{})
			a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(srv, era.mode)}, TracerProvider: tp})

			ctx, root := tp.Tracer("test").Start(t.Context(), "agent step")
			ts, err := a.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ts.Lookup("s__echo").Invoke(ctx, map[string]any{"text": "hi"}); err != nil {
				t.Fatal(err)
			}
			if res, err := ts.Lookup("s__fail").Invoke(ctx, nil); err != nil || !res.IsError {
				t.Fatalf("fail = %v, %v", res, err)
			}
			if _, err := ts.Lookup("s__rpc_error").Invoke(ctx, nil); err == nil {
				t.Fatal("rpc_error succeeded")
			}
			root.End()

			spans := map[string][]tracetest.SpanStub{}
			for _, s := range exp.GetSpans() {
				spans[s.Name] = append(spans[s.Name], s)
			}
			one := func(name string) tracetest.SpanStub {
				t.Helper()
				if len(spans[name]) != 1 {
					var names []string
					for n := range spans {
						names = append(names, n)
					}
					t.Fatalf("%d spans named %q, want 1; spans: %v", len(spans[name]), name, names)
				}
				return spans[name][0]
			}
			rootSpan := one("agent step")
			dialName := map[Mode]string{ModeModern: "server/discover", ModeLegacy: "initialize"}[era.mode]
			dial := one(dialName)
			list := one("tools/list")
			exec := one("execute_tool s__echo")
			call := one("tools/call echo")

			for _, s := range []tracetest.SpanStub{dial, list, exec} {
				if s.Parent.SpanID() != rootSpan.SpanContext.SpanID() {
					t.Errorf("span %q has parent %v, want the caller's span", s.Name, s.Parent.SpanID())
				}
			}
			if call.Parent.SpanID() != exec.SpanContext.SpanID() {
				t.Errorf("tools/call span is not a child of the execute_tool span")
			}
			if call.SpanKind != trace.SpanKindClient || dial.SpanKind != trace.SpanKindClient || exec.SpanKind != trace.SpanKindInternal {
				t.Errorf("span kinds: call %v, dial %v, execute_tool %v", call.SpanKind, dial.SpanKind, exec.SpanKind)
			}
			wantVersion := map[Mode]string{ModeModern: "2026-07-28", ModeLegacy: "2025-11-25"}[era.mode]
			for key, want := range map[attribute.Key]string{
				"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool",
				"mcp.protocol.version": wantVersion, "mcpadapter.server": "s",
			} {
				if got := spanAttrs(call)[key]; got != want {
					t.Errorf("tools/call span: %s = %q, want %q", key, got, want)
				}
			}
			if got := spanAttrs(exec)["gen_ai.tool.call.id"]; got == "" {
				t.Error("execute_tool span has no gen_ai.tool.call.id")
			}
			if got := spanAttrs(dial)["mcp.method.name"]; got != dialName {
				t.Errorf("dial span: mcp.method.name = %q", got)
			}

			// The server got the tools/call span's context in _meta.
			gotTP := srv.LastMeta("echo")["traceparent"]
			want := "00-" + call.SpanContext.TraceID().String() + "-" + call.SpanContext.SpanID().String() + "-01"
			if gotTP != want {
				t.Errorf("server got traceparent %v, want %s", gotTP, want)
			}

			// Errors are recorded.
			failCall := one("tools/call fail")
			if failCall.Status.Code != codes.Error || spanAttrs(failCall)["error.type"] != "tool_error" {
				t.Errorf("isError call: status %v, error.type %q", failCall.Status, spanAttrs(failCall)["error.type"])
			}
			rpcCall := one("tools/call rpc_error")
			if rpcCall.Status.Code != codes.Error || spanAttrs(rpcCall)["rpc.response.status_code"] != "-32001" || len(rpcCall.Events) == 0 {
				t.Errorf("JSON-RPC error call: status %v, attributes %v, events %v", rpcCall.Status, spanAttrs(rpcCall), rpcCall.Events)
			}
			if !strings.Contains(one("execute_tool s__rpc_error").Status.Description, "backend unavailable") {
				t.Errorf("execute_tool span of a failed call has status %v", one("execute_tool s__rpc_error").Status)
			}
		})
	}
}

func TestTraceContextWithoutTracer(t *testing.T) {
	// No TracerProvider: no spans, but the caller's trace context still
	// reaches the server.
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	srv := testserver.Full(testserver.Options{})
	a := newAdapter(t, Config{Servers: map[string]Server{"s": memServer(srv, ModeModern)}})
	ctx, span := tp.Tracer("app").Start(t.Context(), "handler")
	defer span.End()
	if _, err := lookupTool(t, a, "s__echo").Invoke(ctx, map[string]any{"text": "hi"}); err != nil {
		t.Fatal(err)
	}
	want := "00-" + span.SpanContext().TraceID().String() + "-" + span.SpanContext().SpanID().String() + "-01"
	if got := srv.LastMeta("echo")["traceparent"]; got != want {
		t.Errorf("server got traceparent %v, want %s", got, want)
	}
}
