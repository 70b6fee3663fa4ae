// Package trace is mcprt's tracing vocabulary, below the session: the W3C
// trace context (traceparent, tracestate, baggage) as MCP carries it in a
// request's params._meta (SEP-414), the spans the session and the client
// make by the OpenTelemetry conventions for MCP (mcp.server, mcp.client),
// and the Exporter an embedder may give them. It starts nothing and
// imports nothing of mcprt: the command's OTLP exporter
// (cmd/mcprt/internal/otlp) exports what it records.
//
// A nil *Tracer is tracing off: the session and the client check for nil
// and do nothing else, so off costs a pointer comparison per request.
package trace

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/bits"
	"sync/atomic"
	"time"
)

// The _meta keys of the trace context (SEP-414): unprefixed, as W3C names
// the headers.
const (
	MetaTraceparent = "traceparent"
	MetaTracestate  = "tracestate"
	MetaBaggage     = "baggage"
)

// TraceID and SpanID are W3C trace context ids.
type (
	TraceID [16]byte
	SpanID  [8]byte
)

func (t TraceID) String() string { return hex.EncodeToString(t[:]) }
func (s SpanID) String() string  { return hex.EncodeToString(s[:]) }

// isZero reports an all-zero (invalid) id.
func (t TraceID) isZero() bool { return t == TraceID{} }
func (s SpanID) isZero() bool  { return s == SpanID{} }

// SpanContext is what crosses a process boundary: the ids, the sampled
// flag, and tracestate and baggage as they came (opaque to mcprt).
type SpanContext struct {
	TraceID TraceID
	SpanID  SpanID
	Sampled bool
	State   string // tracestate
	Baggage string // baggage
}

// valid reports whether both ids are set.
func (c SpanContext) valid() bool { return !c.TraceID.isZero() && !c.SpanID.isZero() }

// errTraceparent is a traceparent that is not of the W3C form.
var errTraceparent = errors.New("trace: malformed traceparent")

// parseTraceparent reads a W3C traceparent, version-format-trace-parent-flags
// (00-<32 hex>-<16 hex>-<2 hex>). A later version's value is read by its
// first four fields, as the recommendation says; all-zero ids, version ff
// and uppercase hex are malformed.
func parseTraceparent(s string) (SpanContext, error) {
	var c SpanContext
	if len(s) < 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return c, errTraceparent
	}
	ver, ok := hexByte(s[0:2])
	if !ok || ver == 0xff || (ver == 0 && len(s) != 55) || (ver != 0 && len(s) > 55 && s[55] != '-') {
		return c, errTraceparent
	}
	if !hexInto(c.TraceID[:], s[3:35]) || !hexInto(c.SpanID[:], s[36:52]) {
		return c, errTraceparent
	}
	flags, ok := hexByte(s[53:55])
	if !ok || !c.valid() {
		return SpanContext{}, errTraceparent
	}
	c.Sampled = flags&1 == 1
	return c, nil
}

// appendTraceparent appends c as a version 00 traceparent.
func (c SpanContext) appendTraceparent(dst []byte) []byte {
	dst = append(dst, "00-"...)
	dst = hex.AppendEncode(dst, c.TraceID[:])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, c.SpanID[:])
	if c.Sampled {
		return append(dst, "-01"...)
	}
	return append(dst, "-00"...)
}

// Traceparent is c as a version 00 traceparent.
func (c SpanContext) Traceparent() string { return string(c.appendTraceparent(make([]byte, 0, 55))) }

// hexInto decodes lowercase hex s into dst (len(s) == 2*len(dst)).
func hexInto(dst []byte, s string) bool {
	for i := range dst {
		b, ok := hexByte(s[2*i : 2*i+2])
		if !ok {
			return false
		}
		dst[i] = b
	}
	return true
}

func hexByte(s string) (byte, bool) {
	hi, ok1 := nibble(s[0])
	lo, ok2 := nibble(s[1])
	return hi<<4 | lo, ok1 && ok2
}

func nibble(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

// Kind is a span's kind, numbered as OTLP's SpanKind.
type Kind int32

const (
	KindInternal Kind = 1
	KindServer   Kind = 2
	KindClient   Kind = 3
)

// Attr is one span attribute: a string, or an integer when IsInt.
type Attr struct {
	Key   string
	Str   string
	Int   int64
	IsInt bool
}

// String makes a string attribute.
func String(key, v string) Attr { return Attr{Key: key, Str: v} }

// Span is one finished (or running) operation. Its owner fills it in
// and calls Tracer.End once; after that it belongs to the Tracer's hooks
// and must not change.
type Span struct {
	Name    string
	Kind    Kind
	Context SpanContext // its own ids; Sampled says whether it is exported
	Parent  SpanID      // zero: a root span
	// Remote says the parent came from another process (_meta).
	Remote     bool
	Start, End time.Time
	Attrs      []Attr
	// Links are spans this one follows from (a task's work links the
	// call that made it).
	Links []SpanContext
	// Failed marks the span's status ERROR (error.type is set).
	Failed bool
	// Audit is what an audit log needs beyond the attributes: who the
	// transport vouched the request comes from. It is not exported.
	Principal, ClientID string
	// Params and Response are the request's params and the response's
	// bytes, raw, as the session has them: for OnEnd's eyes only (an
	// audit log), valid while it runs, cleared before the Exporter sees
	// the span. The client's spans have neither.
	Params, Response []byte

	attrs  [8]Attr // Attrs' first array: a request's take no allocation of their own
	tracer *Tracer // the Tracer that started it, for StartLinked
}

// attr returns the attribute named key ("" when absent).
func (s *Span) attr(key string) (Attr, bool) {
	for _, a := range s.Attrs {
		if a.Key == key {
			return a, true
		}
	}
	return Attr{}, false
}

// SetError marks the span failed with error.type typ.
func (s *Span) SetError(typ string) {
	s.Failed = true
	s.Attrs = append(s.Attrs, String("error.type", typ))
}

// Exporter takes the sampled spans a Tracer ends. Export is called on the
// goroutine that ended the span and must not block: an exporter queues
// and drops (the command's OTLP exporter does).
type Exporter interface {
	Export(*Span)
}

// Sampler decides whether a new span is sampled, from its parent (zero
// when it has none) and its trace id.
type Sampler func(parent SpanContext, id TraceID) bool

// AlwaysOn, AlwaysOff, Ratio and ParentBased are OTEL_TRACES_SAMPLER's
// samplers.
func AlwaysOn(SpanContext, TraceID) bool  { return true }
func AlwaysOff(SpanContext, TraceID) bool { return false }

// Ratio samples that fraction of traces, decided by the trace id's low
// 8 bytes as OpenTelemetry's TraceIdRatioBased does, so every process
// of a trace decides alike.
func Ratio(r float64) Sampler {
	if r >= 1 {
		return AlwaysOn
	}
	if r <= 0 {
		return AlwaysOff
	}
	bound := uint64(r * (1 << 63))
	return func(_ SpanContext, id TraceID) bool {
		return binary.BigEndian.Uint64(id[8:])>>1 < bound
	}
}

// ParentBased follows a parent's sampled flag and asks root for a root span.
func ParentBased(root Sampler) Sampler {
	return func(p SpanContext, id TraceID) bool {
		if p.valid() {
			return p.Sampled
		}
		return root(p, id)
	}
}

// Tracer makes spans. Its fields are set before first use.
type Tracer struct {
	// Exporter takes the sampled spans (nil: none are exported).
	Exporter Exporter
	// Sampler decides (nil: ParentBased(AlwaysOn), OpenTelemetry's default).
	Sampler Sampler
	// OnEnd, when set, sees every span ended, sampled or not, before the
	// Exporter does: the duration histograms and the audit log read it.
	// It must not block.
	OnEnd func(*Span)
	// OnSessionEnd, when set, sees each MCP session that ends, for the
	// session-duration histograms. It must not block.
	OnSessionEnd func(SessionEnd)
}

// SessionEnd is an MCP session ended, as a server or a client saw it:
// what mcp.server.session.duration and mcp.client.session.duration
// record. A 2026-07-28 exchange over HTTP has no session and makes none.
type SessionEnd struct {
	Client          bool
	Start, End      time.Time
	ProtocolVersion string
	Transport       string // network.transport: pipe or tcp
	ErrorType       string // error.type, "" when it ended cleanly
}

// EndSession hands e to OnSessionEnd. A nil Tracer is off.
func (t *Tracer) EndSession(e SessionEnd) {
	if t != nil && t.OnSessionEnd != nil {
		t.OnSessionEnd(e)
	}
}

var defaultSampler = ParentBased(AlwaysOn)

// Start begins a span with the given parent (zero: a new trace). The
// caller fills in its attributes and ends it with End.
func (t *Tracer) Start(parent SpanContext, remote bool, name string, kind Kind, now time.Time) *Span {
	s := &Span{Name: name, Kind: kind, Start: now, Remote: remote && parent.valid(), tracer: t}
	s.Attrs = s.attrs[:0]
	if parent.valid() {
		s.Context.TraceID = parent.TraceID
		s.Parent = parent.SpanID
		s.Context.State, s.Context.Baggage = parent.State, parent.Baggage
	} else {
		s.Context.TraceID = newTraceID()
	}
	s.Context.SpanID = newSpanID()
	sampler := t.Sampler
	if sampler == nil {
		sampler = defaultSampler
	}
	s.Context.Sampled = sampler(parent, s.Context.TraceID)
	return s
}

// End ends s at now and hands it on.
func (t *Tracer) End(s *Span, now time.Time) {
	s.End = now
	if t.OnEnd != nil {
		t.OnEnd(s)
	}
	s.Params, s.Response = nil, nil
	if s.Context.Sampled && t.Exporter != nil {
		t.Exporter.Export(s)
	}
}

// Ids: random, from a generator seeded once from crypto/rand (ids need
// to be unique, not secret), advanced with a lock-free counter.
var idState = func() (s [2]atomic.Uint64) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	s[0].Store(binary.LittleEndian.Uint64(b[:8]))
	s[1].Store(binary.LittleEndian.Uint64(b[8:]) | 1)
	return
}()

// next is splitmix64 over a shared counter.
func next() uint64 {
	z := idState[0].Add(0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31) ^ bits.RotateLeft64(idState[1].Load(), 17)
}

func newTraceID() (t TraceID) {
	for t.isZero() {
		binary.BigEndian.PutUint64(t[:8], next())
		binary.BigEndian.PutUint64(t[8:], next())
	}
	return t
}

func newSpanID() (s SpanID) {
	for s.isZero() {
		binary.BigEndian.PutUint64(s[:], next())
	}
	return s
}

// ContextKey is the context key under which a request's span context
// travels to its handler (the session's call context answers it), so
// that a handler's own requests (a gateway's to its backend) are its
// children. Use FromContext and WithContext rather than the key.
type ContextKey struct{}

// FromContext returns the span context ctx carries: one WithContext put
// there, or a request's span (the session's call context holds the
// *Span).
func FromContext(ctx context.Context) (SpanContext, bool) {
	switch v := ctx.Value(ContextKey{}).(type) {
	case SpanContext:
		return v, v.valid()
	case *Span:
		return v.Context, true
	}
	return SpanContext{}, false
}

// StartLinked begins, for work a traced request started that outlives it
// (a task's), a span of its own: a root of a new trace, as the work is
// not part of the request, linked to the request's span, and made by the
// request's Tracer. It returns nil when ctx carries no request span (not
// traced). The caller ends it with Finish.
func StartLinked(ctx context.Context, name string, now time.Time) *Span {
	req, ok := ctx.Value(ContextKey{}).(*Span)
	if !ok || req.tracer == nil {
		return nil
	}
	s := req.tracer.Start(SpanContext{}, false, name, KindInternal, now)
	s.Links = append(s.Links, req.Context)
	return s
}

// Finish ends s with the Tracer that started it.
func (s *Span) Finish(now time.Time) { s.tracer.End(s, now) }

// WithContext returns ctx carrying c.
func WithContext(ctx context.Context, c SpanContext) context.Context {
	return context.WithValue(ctx, ContextKey{}, c)
}
