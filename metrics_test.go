package mcpadapter

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/observe"
	"github.com/mcpadapter/mcpadapter/internal/testing/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// instrumentationName names the adapter's tracer and meter (observe.Scope),
// as the tests expect to find it.
const instrumentationName = observe.Scope

// TestMetrics: with a MeterProvider, the SDK's manual reader sees every
// instrument with its attributes: the duration of each tool call by server
// and tool (a success, an isError result, a JSON-RPC error), the dials of
// three servers (one failing), the open connections and per-principal
// connections (two principals), the log messages dropped behind a stuck
// Logger; and, after Close, no connection open. Both eras.
func TestMetrics(t *testing.T) {
	for _, era := range modes {
		t.Run(era.name, func(t *testing.T) {
			legacy := era.mode == ModeLegacy
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			defer mp.Shutdown(context.Background())

			s := testserver.New(testserver.Options{Legacy: legacy}).AddWeather().AddFeatures()
			const floods = 2000
			addRawTool(s, "flood", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				for i := range floods {
					if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: i}); err != nil {
						return nil, err
					}
				}
				return textResult1("flooded"), nil
			})
			srv := memServer(s, era.mode)
			if !legacy {
				srv.LogLevel = "debug"
			}
			users := testserver.New(testserver.Options{Legacy: legacy}).AddWeather()
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return users.Server },
				&mcp.StreamableHTTPOptions{Stateless: !legacy})
			release, first := make(chan struct{}), make(chan struct{}, 1)
			a := newAdapter(t, Config{
				Servers: map[string]Server{
					"srv":    srv,
					"users":  {URL: "http://users.test/mcp", Mode: era.mode, HeadersFor: bearer, HTTPClient: &http.Client{Transport: inProcess{h}}},
					"broken": {Command: filepath.Join(t.TempDir(), "missing")},
				},
				OnConnectionError: IgnoreConnectionErrors,
				Logger:            slog.New(&stuckHandler{release: release, first: first, other: new(syncBuffer)}),
				MeterProvider:     mp,
			})
			unstick := sync.OnceFunc(func() { close(release) })
			t.Cleanup(unstick) // before the Close of newAdapter's cleanup, which waits for the Logger

			alice, bob := WithPrincipal(t.Context(), "alice"), WithPrincipal(t.Context(), "bob")
			ts, err := a.ListTools(alice)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.ListTools(bob); err != nil {
				t.Fatal(err)
			}
			call := func(name string, args map[string]any) {
				t.Helper()
				if _, err := ts.Lookup(name).Invoke(alice, args); err != nil && name != "srv__rpc_error" {
					t.Fatalf("%s: %v", name, err)
				}
			}
			call("srv__get_weather", map[string]any{"city": "Oslo"})
			call("srv__get_weather", map[string]any{"city": "Rome"})
			call("srv__fail", nil)
			call("srv__rpc_error", nil)
			if legacy {
				if err := a.SetLoggingLevel(t.Context(), "srv", "debug"); err != nil {
					t.Fatal(err)
				}
			}
			call("srv__flood", nil)
			receive(t, first, "the Logger to get a server log")

			// The SDK may still hand over the last messages: Status, read
			// after, may count more.
			got := collect(t, reader)
			dropped := a.Status().Servers["srv"].Deliveries.DroppedLogs
			if n := got["mcpadapter.deliveries.dropped{mcpadapter.server=srv}"]; n == 0 || n > float64(dropped) {
				t.Errorf("dropped deliveries = %v, Status counts %d: want some, not more than Status", n, dropped)
			}
			delete(got, "mcpadapter.deliveries.dropped{mcpadapter.server=srv}")
			want := map[string]float64{
				"mcpadapter.tool.call.duration{gen_ai.tool.name=srv__get_weather,mcpadapter.server=srv}":                 2,
				"mcpadapter.tool.call.duration{error.type=tool_error,gen_ai.tool.name=srv__fail,mcpadapter.server=srv}":  1,
				"mcpadapter.tool.call.duration{error.type=-32001,gen_ai.tool.name=srv__rpc_error,mcpadapter.server=srv}": 1,
				"mcpadapter.tool.call.duration{gen_ai.tool.name=srv__flood,mcpadapter.server=srv}":                       1,
				"mcpadapter.dials{mcpadapter.server=srv}":                                                                1,
				"mcpadapter.dials{mcpadapter.server=users}":                                                              2,
				"mcpadapter.dials{error.type=_OTHER,mcpadapter.server=broken}":                                           1,
				"mcpadapter.connections{mcpadapter.server=srv}":                                                          1,
				"mcpadapter.connections{mcpadapter.server=users}":                                                        2,
				"mcpadapter.principal.connections{mcpadapter.server=users}":                                              2,
			}
			if !maps.Equal(got, want) {
				t.Errorf("metrics:\n%s\nwant:\n%s", show(got), show(want))
			}

			unstick()
			a.Close()
			got = collect(t, reader)
			for _, k := range []string{"mcpadapter.connections{mcpadapter.server=srv}", "mcpadapter.connections{mcpadapter.server=users}", "mcpadapter.principal.connections{mcpadapter.server=users}"} {
				if got[k] != 0 {
					t.Errorf("after Close %s = %v, want 0", k, got[k])
				}
			}
		})
	}
}

// TestMetricsOff: without Config.MeterProvider the adapter records nothing,
// not even through the global provider, and a call allocates less than
// with metrics on: it takes the path that watches nothing.
func TestMetricsOff(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	global := otel.GetMeterProvider()
	otel.SetMeterProvider(mp)
	defer otel.SetMeterProvider(global)

	invoke := func(cfg Config) func() {
		cfg.Servers = map[string]Server{"s": memServer(testserver.Lean(testserver.Options{}), ModeAuto)}
		tool := lookupTool(t, newAdapter(t, cfg), "s__echo")
		return func() {
			if _, err := tool.Invoke(t.Context(), echoArgs); err != nil {
				t.Fatal(err)
			}
		}
	}
	off := invoke(Config{})
	off()
	if got := collect(t, reader); len(got) != 0 {
		t.Errorf("metrics without a MeterProvider: %s", show(got))
	}
	on := invoke(Config{MeterProvider: mp})
	offAllocs, onAllocs := testing.AllocsPerRun(50, off), testing.AllocsPerRun(50, on)
	if offAllocs >= onAllocs {
		t.Errorf("a call allocates %v times without metrics, %v with: want fewer without", offAllocs, onAllocs)
	}
}

// collect reads reader's metrics as name{attributes} → value: a sum's
// value, a histogram's count.
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	key := func(name string, set attribute.Set) string {
		var kv []string
		for _, a := range set.ToSlice() {
			kv = append(kv, fmt.Sprintf("%s=%s", a.Key, a.Value.Emit()))
		}
		return name + "{" + strings.Join(kv, ",") + "}"
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != instrumentationName {
			continue
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[key(m.Name, p.Attributes)] = float64(p.Value)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					got[key(m.Name, p.Attributes)] = float64(p.Count)
				}
			default:
				t.Errorf("metric %s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return got
}

// show lists metrics one a line, sorted.
func show(m map[string]float64) string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		lines = append(lines, fmt.Sprintf("  %s = %v", k, m[k]))
	}
	return strings.Join(lines, "\n")
}

// BenchmarkMetrics measures what metrics cost a call: Tool.Invoke of the
// lean echo tool in memory without a MeterProvider (metrics=off) and with
// the SDK's (metrics=on; a manual reader, never collected), each alone for
// allocations, and as a pair for the ratio of their medians (on/off).
func BenchmarkMetrics(b *testing.B) {
	for _, era := range benchEras {
		opts := testserver.Options{Legacy: era == "legacy"}
		tool := func(b *testing.B, cfg Config) *Tool {
			cfg.Servers = map[string]Server{"s": InMemory(testserver.Lean(opts).Server)}
			return lookupTool(b, newAdapter(b, cfg), "s__echo")
		}
		on := func(b *testing.B) *Tool {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			b.Cleanup(func() { mp.Shutdown(context.Background()) })
			return tool(b, Config{MeterProvider: mp})
		}
		b.Run("era="+era+"/metrics=off", func(b *testing.B) { benchInvoke(b, tool(b, Config{}), echoArgs, echoText) })
		b.Run("era="+era+"/metrics=on", func(b *testing.B) { benchInvoke(b, on(b), echoArgs, echoText) })
		b.Run("era="+era+"/pair", func(b *testing.B) {
			benchPair(b, "off", invokeCall(b, tool(b, Config{}), echoArgs, echoText), "on", invokeCall(b, on(b), echoArgs, echoText))
		})
	}
}
