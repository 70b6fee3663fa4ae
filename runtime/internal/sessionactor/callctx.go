package sessionactor

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers/trace"
)

// callCtx is a call's context, as its handler sees it: cancelled once the
// call is over (answered, cancelled by the client, past its deadline,
// drained) or its handler has returned. It lives inside the call, where
// context.WithCancel would cost two allocations per request and a cancel
// that takes its own lock and walks its children; the channel is made only
// for a handler that asks for it. It carries no deadline (the session
// enforces deadlines by cancelling), as context.Background did, and only
// the values its transport attached to the request (In.Values).
//
// Contexts derived from it stay cheap: it implements the AfterFunc method
// that the context package looks for on a parent, so a child is cancelled
// through a registered function rather than a goroutine that watches Done.
type callCtx struct {
	done atomic.Value // chan struct{}, made by the first Done
	// in is the transport's message (nil: a stdio line): Value reads its
	// Values.
	in *In
	// span is the call's mcp.server span (nil: not traced): Value gives
	// its context for trace.ContextKey.
	span *trace.Span

	mu  sync.Mutex
	err error
	// afters are the funcs AfterFunc registered: a slice, as there are
	// seldom more than one or two, whose first element lives here.
	afters []afterFunc
	first  [1]afterFunc
}

// afterFunc is a registration, numbered (from afterFuncs) so that its stop
// func finds it by number: a registration then costs only the stop func,
// not also a record to point at (a forwarding gateway registers one on
// every call). The counter is the process's, not the context's: the call
// that holds the context stays in its allocation size class.
type afterFunc struct {
	f func()
	n uint64
}

var afterFuncs atomic.Uint64

// closedDone is the Done of a context cancelled before anyone asked for it.
var closedDone = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Deadline implements context.Context: none.
func (cx *callCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// Value implements context.Context: the request's values (In.Values),
// if its transport gave any.
func (cx *callCtx) Value(key any) any {
	if _, ok := key.(trace.ContextKey); ok && cx.span != nil {
		return cx.span
	}
	if cx.in == nil || cx.in.Values == nil {
		return nil
	}
	return cx.in.Values.Value(key)
}

// Done implements context.Context.
func (cx *callCtx) Done() <-chan struct{} {
	if d, ok := cx.done.Load().(chan struct{}); ok {
		return d
	}
	cx.mu.Lock()
	defer cx.mu.Unlock()
	if d, ok := cx.done.Load().(chan struct{}); ok {
		return d
	}
	d := closedDone
	if cx.err == nil {
		d = make(chan struct{})
	}
	cx.done.Store(d)
	return d
}

// Err implements context.Context.
func (cx *callCtx) Err() error {
	cx.mu.Lock()
	defer cx.mu.Unlock()
	return cx.err
}

// AfterFunc runs f on its own goroutine once the context is cancelled (at
// once if it already is), as context.AfterFunc does; stop unregisters f
// and reports whether it did so before f was started.
func (cx *callCtx) AfterFunc(f func()) (stop func() bool) {
	cx.mu.Lock()
	if cx.err != nil {
		cx.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	if cx.afters == nil {
		cx.afters = cx.first[:0]
	}
	n := afterFuncs.Add(1)
	cx.afters = append(cx.afters, afterFunc{f: f, n: n})
	cx.mu.Unlock()
	return func() bool {
		cx.mu.Lock()
		defer cx.mu.Unlock()
		i := slices.IndexFunc(cx.afters, func(a afterFunc) bool { return a.n == n })
		if i < 0 {
			return false
		}
		cx.afters = slices.Delete(cx.afters, i, i+1)
		return true
	}
}

// cancel cancels the context; only the first call does anything. Safe from
// any goroutine.
func (cx *callCtx) cancel() {
	cx.mu.Lock()
	if cx.err != nil {
		cx.mu.Unlock()
		return
	}
	cx.err = context.Canceled
	if d, ok := cx.done.Load().(chan struct{}); ok {
		close(d)
	}
	afters := cx.afters
	cx.afters = nil
	cx.mu.Unlock()
	for _, a := range afters {
		go a.f()
	}
}
