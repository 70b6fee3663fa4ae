package otlp

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/trace"
)

// Exporter sends spans (it is a trace.Exporter) and, when given
// Durations, the histograms, to an OTLP/HTTP JSON receiver. Its one
// goroutine starts with Start and is stopped, after a last flush bounded
// by Config.Timeout, by Close.
type Exporter struct {
	cfg       Config
	scope     string // the instrumentation scope's version
	durations *Durations
	log       *slog.Logger
	client    *http.Client

	queue   chan *trace.Span
	dropped atomic.Uint64 // spans the full queue turned away
	failed  atomic.Uint64 // spans a failed export lost
	sent    atomic.Uint64

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// New returns an Exporter for cfg (Enabled), exporting d too when d is
// not nil; version is mcprt's, the instrumentation scope's.
func New(cfg Config, d *Durations, version string, log *slog.Logger) *Exporter {
	if log == nil {
		log = slog.Default()
	}
	return &Exporter{
		cfg: cfg, scope: version, durations: d, log: log,
		client: &http.Client{Timeout: cfg.Timeout},
		queue:  make(chan *trace.Span, cfg.MaxQueue),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
}

// Export implements trace.Exporter: it queues the span, or drops it and
// counts the drop when the queue is full. It never blocks.
func (e *Exporter) Export(s *trace.Span) {
	if e.cfg.TracesURL == "" {
		return
	}
	select {
	case e.queue <- s:
	default:
		e.dropped.Add(1)
	}
}

// Dropped is how many spans were lost: turned away by the full queue, or
// in an export that failed.
func (e *Exporter) Dropped() uint64 { return e.dropped.Load() + e.failed.Load() }

// sentCount is how many spans a receiver accepted.
func (e *Exporter) sentCount() uint64 { return e.sent.Load() }

// Start starts the exporting goroutine.
func (e *Exporter) Start() { go e.run() }

// Close stops the goroutine after a last export of what is queued,
// bounded by Config.Timeout, and waits for it. It is safe to call more
// than once.
func (e *Exporter) Close() {
	e.once.Do(func() { close(e.stop) })
	<-e.done
}

func (e *Exporter) run() {
	defer close(e.done)
	delay := time.NewTicker(e.cfg.Delay)
	defer delay.Stop()
	var metrics <-chan time.Time
	if e.durations != nil && e.cfg.MetricsURL != "" {
		t := time.NewTicker(e.cfg.MetricInterval)
		defer t.Stop()
		metrics = t.C
	}
	batch := make([]*trace.Span, 0, e.cfg.BatchSize)
	ctx := context.Background()
	for {
		select {
		case s := <-e.queue:
			batch = append(batch, s)
			if len(batch) >= e.cfg.BatchSize {
				e.sendSpans(ctx, batch)
				batch = batch[:0]
			}
		case <-delay.C:
			if len(batch) > 0 {
				e.sendSpans(ctx, batch)
				batch = batch[:0]
			}
		case <-metrics:
			e.sendMetrics(ctx)
		case <-e.stop:
			// The last flush: what is queued now, and the histograms,
			// within one Timeout in all.
			fctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
			defer cancel()
			for more := true; more; {
				select {
				case s := <-e.queue:
					batch = append(batch, s)
					if len(batch) >= e.cfg.BatchSize {
						e.sendSpans(fctx, batch)
						batch = batch[:0]
					}
				default:
					more = false
				}
			}
			if len(batch) > 0 {
				e.sendSpans(fctx, batch)
			}
			if metrics != nil {
				e.sendMetrics(fctx)
			}
			return
		}
	}
}

func (e *Exporter) sendSpans(ctx context.Context, batch []*trace.Span) {
	body := e.appendSpans(make([]byte, 0, 512*len(batch)), batch)
	if err := e.post(ctx, e.cfg.TracesURL, body); err != nil {
		e.failed.Add(uint64(len(batch)))
		e.log.Warn("otlp: spans not exported", "spans", len(batch), "err", err)
		return
	}
	e.sent.Add(uint64(len(batch)))
}

func (e *Exporter) sendMetrics(ctx context.Context) {
	body, ok := e.appendMetrics(nil, time.Now())
	if !ok {
		return
	}
	if err := e.post(ctx, e.cfg.MetricsURL, body); err != nil {
		e.log.Warn("otlp: metrics not exported", "err", err)
	}
}

// post sends one export request. The URL and headers may hold secrets
// (an API key in either): errors name neither.
func (e *Exporter) post(ctx context.Context, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("bad endpoint")
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the receiver is unreachable")
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return nil
}

// appendSpans encodes an ExportTraceServiceRequest.
func (e *Exporter) appendSpans(b []byte, spans []*trace.Span) []byte {
	b = append(b, `{"resourceSpans":[{"resource":`...)
	b = e.appendResource(b)
	b = append(b, `,"scopeSpans":[{"scope":`...)
	b = e.appendScope(b)
	b = append(b, `,"spans":[`...)
	for i, s := range spans {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendSpan(b, s)
	}
	return append(b, `]}]}]}`...)
}

func (e *Exporter) appendResource(b []byte) []byte {
	b = append(b, `{"attributes":`...)
	b = appendAttrs(b, e.cfg.Resource)
	return append(b, '}')
}

func (e *Exporter) appendScope(b []byte) []byte {
	b = append(b, `{"name":"mcprt","version":`...)
	b = jsonrpc.AppendString(b, e.scope)
	return append(b, '}')
}

func appendSpan(b []byte, s *trace.Span) []byte {
	b = append(b, `{"traceId":"`...)
	b = hex.AppendEncode(b, s.Context.TraceID[:])
	b = append(b, `","spanId":"`...)
	b = hex.AppendEncode(b, s.Context.SpanID[:])
	b = append(b, '"')
	if s.Context.State != "" {
		b = append(b, `,"traceState":`...)
		b = jsonrpc.AppendString(b, s.Context.State)
	}
	if s.Parent != (trace.SpanID{}) {
		b = append(b, `,"parentSpanId":"`...)
		b = hex.AppendEncode(b, s.Parent[:])
		b = append(b, '"')
	}
	// flags: the W3C flags (sampled), and whether the parent is remote
	// known (0x100) and remote (0x200), as SpanFlags has them.
	flags := uint32(0x01)
	if s.Parent != (trace.SpanID{}) {
		flags |= 0x100
		if s.Remote {
			flags |= 0x200
		}
	}
	b = append(b, `,"flags":`...)
	b = strconv.AppendUint(b, uint64(flags), 10)
	b = append(b, `,"name":`...)
	b = jsonrpc.AppendString(b, s.Name)
	b = append(b, `,"kind":`...)
	b = strconv.AppendInt(b, int64(s.Kind), 10)
	b = append(b, `,"startTimeUnixNano":"`...)
	b = strconv.AppendInt(b, s.Start.UnixNano(), 10)
	b = append(b, `","endTimeUnixNano":"`...)
	b = strconv.AppendInt(b, s.End.UnixNano(), 10)
	b = append(b, `","attributes":`...)
	b = appendAttrs(b, s.Attrs)
	if len(s.Links) > 0 {
		b = append(b, `,"links":[`...)
		for i, l := range s.Links {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"traceId":"`...)
			b = hex.AppendEncode(b, l.TraceID[:])
			b = append(b, `","spanId":"`...)
			b = hex.AppendEncode(b, l.SpanID[:])
			b = append(b, `"}`...)
		}
		b = append(b, ']')
	}
	if s.Failed {
		// STATUS_CODE_ERROR; its description is error.type's already.
		b = append(b, `,"status":{"code":2}`...)
	}
	return append(b, '}')
}

func appendAttrs(b []byte, attrs []trace.Attr) []byte {
	b = append(b, '[')
	for i, a := range attrs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = jsonrpc.AppendString(b, a.Key)
		if a.IsInt {
			b = append(b, `,"value":{"intValue":"`...)
			b = strconv.AppendInt(b, a.Int, 10)
			b = append(b, `"}}`...)
			continue
		}
		b = append(b, `,"value":{"stringValue":`...)
		b = jsonrpc.AppendString(b, a.Str)
		b = append(b, `}}`...)
	}
	return append(b, ']')
}

// appendMetrics encodes an ExportMetricsServiceRequest of the
// histograms, cumulative since the Durations were made; ok is false when
// there is nothing yet.
func (e *Exporter) appendMetrics(b []byte, now time.Time) ([]byte, bool) {
	ps := e.durations.snapshot()
	if len(ps) == 0 {
		return b, false
	}
	b = append(b, `{"resourceMetrics":[{"resource":`...)
	b = e.appendResource(b)
	b = append(b, `,"scopeMetrics":[{"scope":`...)
	b = e.appendScope(b)
	b = append(b, `,"metrics":[`...)
	first := true
	for f, fam := range families {
		name, desc := fam.name, fam.what+"."
		open := false
		for _, p := range ps {
			if p.key.family != f {
				continue
			}
			if !open {
				if !first {
					b = append(b, ',')
				}
				first = false
				b = append(b, `{"name":"`+name+`","description":"`+desc+`","unit":"s","histogram":{"aggregationTemporality":2,"dataPoints":[`...)
				open = true
			} else {
				b = append(b, ',')
			}
			b = appendPoint(b, p, e.durations.start, now)
		}
		if open {
			b = append(b, `]}}`...)
		}
	}
	return append(b, `]}]}]}`...), true
}

func appendPoint(b []byte, p point, start, now time.Time) []byte {
	var attrs []trace.Attr
	for i, v := range p.key.labels {
		if v != "" {
			attrs = append(attrs, trace.String(labelKeys[i], v))
		}
	}
	b = append(b, `{"attributes":`...)
	b = appendAttrs(b, attrs)
	b = append(b, `,"startTimeUnixNano":"`...)
	b = strconv.AppendInt(b, start.UnixNano(), 10)
	b = append(b, `","timeUnixNano":"`...)
	b = strconv.AppendInt(b, now.UnixNano(), 10)
	b = append(b, `","count":"`...)
	b = strconv.AppendUint(b, p.h.count, 10)
	b = append(b, `","sum":`...)
	b = strconv.AppendFloat(b, p.h.sum, 'g', -1, 64)
	b = append(b, `,"bucketCounts":[`...)
	for i, c := range p.h.counts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendUint(b, c, 10)
		b = append(b, '"')
	}
	b = append(b, `],"explicitBounds":[`...)
	for i, bound := range durationBounds {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, bound, 'g', -1, 64)
	}
	return append(b, `]}`...)
}
