package otlp

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/handlers/trace"
)

// durationBounds are the conventions' bucket boundaries, in seconds, for the MCP
// duration histograms.
var durationBounds = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// The histograms' names, as OpenTelemetry has them.
const (
	serverDuration        = "mcp.server.operation.duration"
	clientDuration        = "mcp.client.operation.duration"
	serverSessionDuration = "mcp.server.session.duration"
	clientSessionDuration = "mcp.client.session.duration"
)

// families are the four histograms, in the order they are written: the
// name OpenTelemetry gives, the name Prometheus renders it as (dots to
// underscores, the unit appended), and what it measures.
var families = [...]struct{ name, prom, what string }{
	{serverDuration, "mcp_server_operation_duration_seconds", "Duration of MCP requests served"},
	{clientDuration, "mcp_client_operation_duration_seconds", "Duration of MCP requests sent"},
	{serverSessionDuration, "mcp_server_session_duration_seconds", "Duration of MCP sessions served, recorded when each ends"},
	{clientSessionDuration, "mcp_client_session_duration_seconds", "Duration of MCP sessions opened as a client (a gateway's to its backends), recorded when each ends"},
}

const (
	famServerOp = iota
	famClientOp
	famServerSession
	famClientSession
)

// labelKeys are the span attributes a histogram's series are keyed by:
// those the conventions give the metrics, less the high-cardinality ones
// (request ids, session ids, resource URIs).
var labelKeys = []string{
	trace.AttrMethod, trace.AttrToolName, trace.AttrPromptName, trace.AttrErrorType,
	trace.AttrStatusCode, trace.AttrProtocolVersion, trace.AttrTransport,
}

// Durations records mcp.server.operation.duration and
// mcp.client.operation.duration from the spans a Tracer ends (Record is
// a Tracer's OnEnd), for the Prometheus page (WritePrometheus) and the
// OTLP export.
type Durations struct {
	start  time.Time
	mu     sync.Mutex
	series map[seriesKey]*histogram
}

type seriesKey struct {
	family int       // an index of families
	labels [7]string // labelKeys' values
}

type histogram struct {
	counts [15]uint64 // len(durationBounds)+1
	count  uint64
	sum    float64
}

// NewDurations returns empty histograms.
func NewDurations() *Durations {
	return &Durations{start: time.Now(), series: map[seriesKey]*histogram{}}
}

// Record counts a finished span's duration. It takes a lock for the
// time of a map look-up: it runs on the goroutine that answers.
func (d *Durations) Record(s *trace.Span) {
	if s.Kind != trace.KindServer && s.Kind != trace.KindClient {
		return // a task's work: an operation of neither histogram
	}
	k := seriesKey{family: famServerOp}
	if s.Kind == trace.KindClient {
		k.family = famClientOp
	}
	for _, a := range s.Attrs {
		if i := slices.Index(labelKeys, a.Key); i >= 0 {
			k.labels[i] = a.Str
		}
	}
	d.add(k, s.End.Sub(s.Start).Seconds())
}

// RecordSession counts an ended session's duration (it is a Tracer's
// OnSessionEnd), keyed by the attributes the conventions give the
// session histograms: error.type, mcp.protocol.version and
// network.transport.
func (d *Durations) RecordSession(e trace.SessionEnd) {
	k := seriesKey{family: famServerSession}
	if e.Client {
		k.family = famClientSession
	}
	for i, key := range labelKeys {
		switch key {
		case trace.AttrErrorType:
			k.labels[i] = e.ErrorType
		case trace.AttrProtocolVersion:
			k.labels[i] = e.ProtocolVersion
		case trace.AttrTransport:
			k.labels[i] = e.Transport
		}
	}
	d.add(k, e.End.Sub(e.Start).Seconds())
}

func (d *Durations) add(k seriesKey, secs float64) {
	b, _ := slices.BinarySearch(durationBounds, secs) // le: a value on a bound is in its bucket
	d.mu.Lock()
	h := d.series[k]
	if h == nil {
		h = &histogram{}
		d.series[k] = h
	}
	h.counts[b]++
	h.count++
	h.sum += secs
	d.mu.Unlock()
}

// point is one series, copied out of the lock.
type point struct {
	key seriesKey
	h   histogram
}

func (d *Durations) snapshot() []point {
	d.mu.Lock()
	ps := make([]point, 0, len(d.series))
	for k, h := range d.series {
		ps = append(ps, point{k, *h})
	}
	d.mu.Unlock()
	slices.SortFunc(ps, func(a, b point) int {
		if a.key.family != b.key.family {
			return a.key.family - b.key.family
		}
		return slices.Compare(a.key.labels[:], b.key.labels[:])
	})
	return ps
}

// WritePrometheus writes the histograms in the Prometheus text format,
// named as Prometheus renders OpenTelemetry's (dots to underscores, the
// unit appended): mcp_server_operation_duration_seconds,
// mcp_client_operation_duration_seconds, and the session durations
// mcp_server_session_duration_seconds and
// mcp_client_session_duration_seconds. A family with no series yet is
// left out.
func (d *Durations) WritePrometheus(w io.Writer) {
	ps := d.snapshot()
	var b strings.Builder
	for f, fam := range families {
		name, help := fam.prom, fam.what+", in seconds (OpenTelemetry's "+fam.name+")."
		head := false
		for _, p := range ps {
			if p.key.family != f {
				continue
			}
			if !head {
				fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
				head = true
			}
			labels := promLabels(p.key.labels)
			var cum uint64
			for i, bound := range durationBounds {
				cum += p.h.counts[i]
				fmt.Fprintf(&b, "%s_bucket{%sle=\"%s\"} %d\n", name, labels, strconv.FormatFloat(bound, 'g', -1, 64), cum)
			}
			fmt.Fprintf(&b, "%s_bucket{%sle=\"+Inf\"} %d\n", name, labels, p.h.count)
			trimmed := strings.TrimSuffix(labels, ",")
			fmt.Fprintf(&b, "%s_sum{%s} %s\n%s_count{%s} %d\n", name, trimmed, strconv.FormatFloat(p.h.sum, 'g', -1, 64), name, trimmed, p.h.count)
		}
	}
	_, _ = io.WriteString(w, b.String())
}

// promLabels renders a series' labels, each followed by a comma, empty
// ones left out.
func promLabels(vals [7]string) string {
	var b strings.Builder
	for i, v := range vals {
		if v == "" {
			continue
		}
		b.WriteString(strings.ReplaceAll(labelKeys[i], ".", "_"))
		b.WriteString(`="`)
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v))
		b.WriteString(`",`)
	}
	return b.String()
}
