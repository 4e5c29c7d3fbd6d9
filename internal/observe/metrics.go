package observe

// Metrics with the OpenTelemetry metrics API (never an SDK): the adapter's
// instruments and the one small seam that records them. Every method of
// *Metrics is a no-op on a nil receiver, which is what an Adapter without
// Config.MeterProvider holds: the call path, the pool and the notifier call
// the seam unconditionally and pay a nil check.
//
// Instruments (attributes in brackets; error.type takes the values of the
// spans' error.type, [Outcome]):
//
//	mcpadapter.tool.call.duration     histogram, s: one per tool call
//	                                  [mcpadapter.server, gen_ai.tool.name, error.type on failure]
//	mcpadapter.dials                  counter: dial attempts
//	                                  [mcpadapter.server, error.type on failure]
//	mcpadapter.connections            up-down counter: open connections
//	                                  [mcpadapter.server]
//	mcpadapter.principal.connections  up-down counter: live principals of per-principal
//	                                  servers, one per principal and server, each on a
//	                                  connection of its own or sharing a stateless
//	                                  server's [mcpadapter.server]
//	mcpadapter.deliveries.dropped     counter: notifications dropped before
//	                                  reaching user code [mcpadapter.server]

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// The instruments' names.
const (
	metricCallDuration         = "mcpadapter.tool.call.duration"
	metricDials                = "mcpadapter.dials"
	metricConnections          = "mcpadapter.connections"
	metricPrincipalConnections = "mcpadapter.principal.connections"
	metricDropped              = "mcpadapter.deliveries.dropped"
)

// callDurationBounds are the buckets of the call duration histogram, in
// seconds: those of the GenAI and MCP semantic conventions' operation
// durations, from 10 ms to over a minute.
var callDurationBounds = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// Metrics holds an Adapter's instruments; nil when metrics are off.
type Metrics struct {
	callDuration metric.Float64Histogram
	dials        metric.Int64Counter
	conns        metric.Int64UpDownCounter
	principals   metric.Int64UpDownCounter
	dropped      metric.Int64Counter
	classify     func(error) string // the error.type of a failure that is not a JSON-RPC error
}

// NewMetrics returns the instruments of mp, or nil when mp is nil or a
// no-op provider. An instrument mp fails to make is logged; the API then
// hands out a working no-op one. classify names the failures that are not
// JSON-RPC errors, for error.type ([Outcome]).
func NewMetrics(mp metric.MeterProvider, logger *slog.Logger, classify func(error) string) *Metrics {
	if _, noop := mp.(noop.MeterProvider); mp == nil || noop {
		return nil
	}
	meter := mp.Meter(Scope)
	m := &Metrics{classify: classify}
	var errs [5]error
	m.callDuration, errs[0] = meter.Float64Histogram(metricCallDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of tool calls, by server and tool; failed calls carry error.type."),
		metric.WithExplicitBucketBoundaries(callDurationBounds...))
	m.dials, errs[1] = meter.Int64Counter(metricDials, metric.WithUnit("{dial}"),
		metric.WithDescription("Dial attempts of servers; failed ones carry error.type."))
	m.conns, errs[2] = meter.Int64UpDownCounter(metricConnections, metric.WithUnit("{connection}"),
		metric.WithDescription("Open server connections."))
	m.principals, errs[3] = meter.Int64UpDownCounter(metricPrincipalConnections, metric.WithUnit("{connection}"),
		metric.WithDescription("Live principals of per-principal servers, one per principal and server, on a session of their own or sharing a stateless server's."))
	m.dropped, errs[4] = meter.Int64Counter(metricDropped, metric.WithUnit("{delivery}"),
		metric.WithDescription("Server notifications dropped before reaching user code (a slow callback or Logger)."))
	if err := errors.Join(errs[:]...); err != nil {
		logger.Warn("mcpadapter: metrics: instrument", "error", err)
	}
	return m
}

// Call records one tool call of tool (the name the model sees) on server
// that took d and ended with err or a result that isError or not.
func (m *Metrics) Call(ctx context.Context, server, tool string, d time.Duration, isError bool, err error) {
	if m == nil {
		return
	}
	attrs := []attribute.KeyValue{attrServer.String(server), attrGenAITool.String(tool)}
	if typ := Outcome(isError, err, m.classify); typ != "" {
		attrs = append(attrs, attrErrorType.String(typ))
	}
	m.callDuration.Record(ctx, d.Seconds(), metric.WithAttributeSet(attribute.NewSet(attrs...)))
}

// Dialed records a dial attempt of server that failed with err, or
// succeeded when err is nil.
func (m *Metrics) Dialed(server string, err error) {
	if m == nil {
		return
	}
	set := attribute.NewSet(attrServer.String(server))
	if err != nil {
		set = attribute.NewSet(attrServer.String(server), attrErrorType.String(Outcome(false, err, m.classify)))
	}
	m.dials.Add(context.Background(), 1, metric.WithAttributeSet(set))
}

// Connection records that a connection to server, per-principal or
// shared, opened (delta 1) or was released (delta -1).
func (m *Metrics) Connection(server string, perPrincipal bool, delta int64) {
	if m == nil {
		return
	}
	opt := metric.WithAttributeSet(attribute.NewSet(attrServer.String(server)))
	m.conns.Add(context.Background(), delta, opt)
	if perPrincipal {
		m.principals.Add(context.Background(), delta, opt)
	}
}

// Principal records that a principal joined (delta 1) or left (-1) the
// shared session of server: counted as a principal, not as a connection.
func (m *Metrics) Principal(server string, delta int64) {
	if m == nil {
		return
	}
	m.principals.Add(context.Background(), delta, metric.WithAttributeSet(attribute.NewSet(attrServer.String(server))))
}

// Dropped records a notification of server dropped before it reached user
// code.
func (m *Metrics) Dropped(server string) {
	if m == nil {
		return
	}
	m.dropped.Add(context.Background(), 1, metric.WithAttributeSet(attribute.NewSet(attrServer.String(server))))
}
