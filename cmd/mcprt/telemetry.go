package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/audit"
	"github.com/mcprt/mcprt/cmd/mcprt/internal/otlp"
	"github.com/mcprt/mcprt/handlers/trace"
)

// telemetryUsage is the part of serve's and gateway's help on traces,
// the duration histograms and the audit log.
const telemetryUsage = `Traces and metrics (OpenTelemetry): with OTEL_EXPORTER_OTLP_ENDPOINT (or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / _METRICS_ENDPOINT) set, each request
served is an mcp.server span and each request sent on to a backend an
mcp.client span, named and attributed by the OpenTelemetry conventions for
MCP, exported over OTLP/HTTP with the JSON encoding (http/json: no other
OTEL_EXPORTER_OTLP_PROTOCOL), with the histograms mcp.server.operation.duration
and mcp.client.operation.duration. The W3C trace context (traceparent,
tracestate, baggage) is read from and put in each request's params._meta,
so a trace runs from the client through the gateway to its backends.
Also read: OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and _ARG (always_on,
always_off, traceidratio, parentbased_*; default parentbased_always_on),
OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_METRIC_EXPORT_INTERVAL,
OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_SDK_DISABLED. A collector that is down
never slows a request: past the queue, spans are dropped and counted.
-http-metrics shows the histograms too, as
mcp_server_operation_duration_seconds and mcp_client_operation_duration_seconds.

-audit FILE writes one JSON line per request that reached a handler or a
backend: time, principal and clientId (the access token's subject and
client, never the token), endpoint, method, tool, prompt or resource,
backend, outcome (result, tool_error, error with its code, refused by
access, cancelled), durationMs, taskId, traceId. Arguments and results only
with -audit-args. The file is appended to and reopened on SIGHUP (for
logrotate). -audit - writes to stdout, which only -http leaves free: over
stdio, stdout is the protocol, and -audit - is refused.
`

// telemetryFlags are the flags of traces and the audit log.
type telemetryFlags struct {
	audit     string
	auditArgs bool
	uri       bool
}

func addTelemetryFlags(fs *flag.FlagSet) *telemetryFlags {
	tf := &telemetryFlags{}
	fs.StringVar(&tf.audit, "audit", "", "append one JSON line per request served to `file` (- for stdout, with -http only); reopened on SIGHUP")
	fs.BoolVar(&tf.auditArgs, "audit-args", false, "put each tool call's arguments and each result in its -audit line (off: they may hold anything)")
	fs.BoolVar(&tf.uri, "trace-resource-uri", false, "give resource requests' spans mcp.resource.uri (opt-in by the conventions: URIs make many series)")
	return tf
}

// telemetry is what a serving verb runs for traces, the histograms and
// the audit log: nil parts are off.
type telemetry struct {
	tracer    *trace.Tracer
	durations *otlp.Durations
	exporter  *otlp.Exporter
	audit     *audit.Log
}

// startTelemetry starts what the environment and flags ask for.
// overStdio says stdout is the protocol; metricsPage that -http-metrics
// is on; endpoint names the requests' endpoint in the audit log; backend
// names a tool's backend (the gateway's) or is nil, and credential its
// credential mode (audit.Options.Credential) or is nil.
func startTelemetry(tf *telemetryFlags, service string, overStdio, metricsPage bool, endpoint string, stdout io.Writer, backend func(method, name string) string, credential func(backend string) string) (*telemetry, error) {
	cfg, err := otlp.ConfigFromEnv(os.Getenv, service)
	if err != nil {
		return nil, err
	}
	t := &telemetry{}
	if cfg.Enabled() || metricsPage {
		t.durations = otlp.NewDurations()
	}
	if cfg.Enabled() {
		t.exporter = otlp.New(cfg, t.durations, version, slog.Default())
	}
	if tf.audit != "" {
		if tf.audit == "-" && overStdio {
			return nil, errors.New("-audit -: stdout is the protocol over stdio; give a file, or serve -http")
		}
		t.audit, err = audit.Open(tf.audit, stdout, audit.Options{Endpoint: endpoint, Backend: backend, Credential: credential, Args: tf.auditArgs})
		if err != nil {
			return nil, fmt.Errorf("-audit: %w", err)
		}
	}
	if t.durations == nil && t.audit == nil {
		return t, nil // tracing off: no Tracer, nothing on the hot path
	}
	t.tracer = &trace.Tracer{Sampler: cfg.Sampler}
	if t.exporter != nil {
		t.tracer.Exporter = t.exporter
		t.exporter.Start()
	}
	switch d, a := t.durations, t.audit; {
	case d != nil && a != nil:
		t.tracer.OnEnd = func(s *trace.Span) { d.Record(s); a.Record(s) }
	case d != nil:
		t.tracer.OnEnd = d.Record
	case a != nil:
		t.tracer.OnEnd = a.Record
	}
	if d := t.durations; d != nil {
		t.tracer.OnSessionEnd = d.RecordSession
	}
	if a := t.audit; a != nil {
		a.Start()
	}
	return t, nil
}

// writeMetrics adds the histograms to the -http-metrics page, and what
// the exporter and the audit log dropped.
func (t *telemetry) writeMetrics(w io.Writer) {
	if t.durations != nil {
		t.durations.WritePrometheus(w)
	}
	if t.exporter != nil {
		family(w, "mcprt_otlp_spans_dropped_total", "counter", "Spans not exported: the queue was full (a collector down or slow) or the export failed.")
		sample(w, "mcprt_otlp_spans_dropped_total", "", float64(t.exporter.Dropped()))
	}
	if t.audit != nil {
		family(w, "mcprt_audit_lines_dropped_total", "counter", "Audit lines lost: the queue was full (a disk slower than the calls) or the write failed.")
		sample(w, "mcprt_audit_lines_dropped_total", "", float64(t.audit.Dropped()))
	}
}

// reopen reopens the audit log (SIGHUP).
func (t *telemetry) reopen() {
	if t.audit == nil {
		return
	}
	if err := t.audit.Reopen(); err != nil {
		slog.Error("mcprt: -audit: reopening", "err", err)
	}
}

// close flushes and stops what runs, the exporter's last export bounded
// by OTEL_EXPORTER_OTLP_TIMEOUT.
func (t *telemetry) close() {
	if t.exporter != nil {
		t.exporter.Close()
		if n := t.exporter.Dropped(); n > 0 {
			slog.Warn("mcprt: OTLP spans dropped (queue full or receiver unreachable)", "spans", n)
		}
	}
	if t.audit != nil {
		_ = t.audit.Close()
		if n := t.audit.Dropped(); n > 0 {
			slog.Warn("mcprt: -audit lines dropped (queue full or write failed)", "lines", n)
		}
	}
}

// gatewayBackend names the backend of a gateway's tool or prompt
// (<server>__<name>); resources keep their URIs and say no backend.
func gatewayBackend(method, name string) string {
	if method != "tools/call" && method != "prompts/get" {
		return ""
	}
	b, _, ok := strings.Cut(name, "__")
	if !ok {
		return ""
	}
	return b
}

// onHUP calls fn on each SIGHUP until the returned stop is called, which
// waits for the goroutine it started. fn nil: SIGHUP keeps its default.
func onHUP(fn func()) (stop func()) {
	if fn == nil {
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-hup:
				fn()
			case <-quit:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(quit)
		<-done
	}
}
