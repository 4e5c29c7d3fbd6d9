package mcpadapter

import (
	"context"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// BenchmarkPipeline measures what the call pipeline costs per Invoke of an
// in-memory echo tool, each variant against the plain adapter in one run
// (benchPair, ratio side/plain): one pass-through middleware, a no-op
// tracer provider, a recording tracer (spans sampled, nothing exported), and
// a progress listener for every call (a progress token per call).
func BenchmarkPipeline(b *testing.B) {
	pass := func(next CallHandler) CallHandler {
		return func(ctx context.Context, req *CallRequest) (*Result, error) { return next(ctx, req) }
	}
	recording := sdktrace.NewTracerProvider()
	b.Cleanup(func() { recording.Shutdown(context.Background()) })
	variants := []struct {
		name string
		cfg  Config
	}{
		{"hook", Config{Middleware: []Middleware{pass}}},
		{"noop-tracer", Config{TracerProvider: noop.NewTracerProvider()}},
		{"recording-tracer", Config{TracerProvider: recording}},
		{"progress", Config{Middleware: []Middleware{progressEverywhere(func(context.Context, Progress) {})}}},
	}
	for _, era := range benchEras {
		opts := testserver.Options{Legacy: era == "legacy"}
		plain := adapterTool(b, memServer(testserver.Lean(opts), ModeAuto), "echo")
		for _, v := range variants {
			cfg := v.cfg
			cfg.Servers = map[string]Server{"s": memServer(testserver.Lean(opts), ModeAuto)}
			a := newAdapter(b, cfg)
			ts, err := a.ListTools(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			side := ts.Lookup("s__echo")
			b.Run("era="+era+"/"+v.name, func(b *testing.B) {
				benchPair(b, "plain", invokeCall(b, plain, echoArgs, echoText), v.name, invokeCall(b, side, echoArgs, echoText))
			})
			b.Run("era="+era+"/"+v.name+"/allocs", func(b *testing.B) { benchInvoke(b, side, echoArgs, echoText) })
		}
		b.Run("era="+era+"/plain/allocs", func(b *testing.B) { benchInvoke(b, plain, echoArgs, echoText) })
	}
}
