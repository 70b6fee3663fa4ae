package session

import (
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers/trace"
)

// DefaultMaxInFlight is how many requests may be worked on at once: far
// above the handful of workers some SDKs use, so slow tools do not hold up
// quick ones. On stdio it is also the reader's bound on lines handed on and
// answers not yet written, so that a client that never reads cannot make
// the server buffer without bound.
const DefaultMaxInFlight = 512

// DefaultMaxQueued is how many requests may wait for one of the
// MaxInFlight to finish before further ones are refused with
// CodeServerBusy (handlers/jsonrpc).
const DefaultMaxQueued = 1024

// Options are what a session's user chooses, whatever the transport: the
// bounds, deadlines, crash policy and logging of each session. They are
// one struct, embedded in runtime.Options (stdio) and streamhttp.Options
// (HTTP), because they used to be copied field by field into each
// transport's own configuration, and the HTTP copy had lost five of them
// (the crash policy among them): one value, read in one place, cannot
// drift.
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

// Overload counts requests refused as busy (past MaxInFlight and
// MaxQueued) across the sessions that share it, and the requests they
// have in flight and queued now: the sessions add to the counters, a
// process's metrics Load them. Safe for concurrent use.
type Overload struct {
	Refused  atomic.Uint64 // requests refused so far
	InFlight atomic.Int64  // requests holding a slot or a place among the waiting
	Queued   atomic.Int64  // requests parked for a slot (past MaxInFlight)
}
