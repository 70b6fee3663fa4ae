package session

import (
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers/trace"
)

// Options are what a session's user chooses, whatever the transport: the
// bounds, deadlines, crash policy and logging of each session. They are
// one struct, embedded in runtime.Options (stdio) and streamhttp.Options
// (HTTP), because they used to be copied field by field into each
// transport's Config, and the HTTP copy had lost five of them (the crash
// policy among them): one value, read in one place (Config), cannot drift.
// The fields mean what Config's of the same names do.
type Options struct {
	// MaxInFlight bounds the requests in progress (0: DefaultMaxInFlight)
	// and, on stdio, the reader's lines and answers not yet dealt with;
	// MaxQueued bounds the requests waiting for a slot (0:
	// DefaultMaxQueued); past it a request is refused at once.
	MaxInFlight int
	MaxQueued   int
	// Overload counts the requests refused past them (nil: not counted).
	Overload *Overload
	// RequestTimeout is each request's deadline (0: 60s;
	// <0: none). DrainTimeout bounds the wait for in-flight requests after
	// EOF, Drain or a signal (0: 5s).
	RequestTimeout time.Duration
	DrainTimeout   time.Duration
	// CacheTTL is the ttlMs of cacheable 2026-07-28 results (0: always
	// re-fetch).
	CacheTTL time.Duration
	// CrashPolicy, CrashIntensity and CrashPeriod decide what happens to a
	// tool whose handlers keep panicking (see CrashPolicy): by default it
	// is suspended for a period; with Escalate the handler supervisor
	// fails, and repeated crash loops climb to the root.
	CrashPolicy    CrashPolicy
	CrashIntensity int
	CrashPeriod    time.Duration
	// PanicDetail shows a panicking tool's panic value to the client, in
	// the text of its isError result (default: a generic message; the
	// value and stack go to the log either way).
	PanicDetail bool
	// DefaultLogLevel admits server-wide logs to a legacy client that has
	// not sent logging/setLevel ("": none until it does). LogBuffer bounds
	// what waits for notifications/initialized (0: 1024).
	DefaultLogLevel string
	LogBuffer       int
	// OnLogLevel is called when a client changes its log level.
	OnLogLevel func(level string)
	// Tracer traces each request handed to a handler (nil: off);
	// TraceResourceURI adds the opt-in mcp.resource.uri.
	Tracer           *trace.Tracer
	TraceResourceURI bool
}

// Config is a Config with o's fields set; the transport adds its own
// (Server, Writer or Deliver, Inbox, Handlers, Backlog, Logger, …).
func (o Options) Config() Config {
	return Config{
		MaxInFlight:      o.MaxInFlight,
		MaxQueued:        o.MaxQueued,
		Overload:         o.Overload,
		RequestTimeout:   o.RequestTimeout,
		DrainTimeout:     o.DrainTimeout,
		CacheTTL:         o.CacheTTL,
		CrashPolicy:      o.CrashPolicy,
		CrashIntensity:   o.CrashIntensity,
		CrashPeriod:      o.CrashPeriod,
		PanicDetail:      o.PanicDetail,
		DefaultLogLevel:  o.DefaultLogLevel,
		LogBuffer:        o.LogBuffer,
		OnLogLevel:       o.OnLogLevel,
		Tracer:           o.Tracer,
		TraceResourceURI: o.TraceResourceURI,
	}
}

// Overload counts requests refused as busy (past MaxInFlight and
// MaxQueued) across the sessions that share it, and the requests they
// have in flight and queued now. Safe for concurrent use.
type Overload struct {
	busy     atomic.Uint64
	inFlight atomic.Int64 // holding a slot or a place among the waiting
	queued   atomic.Int64 // parked for a slot
}

// Refused is how many requests were refused so far.
func (o *Overload) Refused() uint64 { return o.busy.Load() }

// InFlight is how many requests handlers are working on now.
func (o *Overload) InFlight() int64 { return o.inFlight.Load() }

// Queued is how many requests wait for a slot now (past MaxInFlight).
func (o *Overload) Queued() int64 { return o.queued.Load() }
