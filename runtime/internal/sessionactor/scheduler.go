package sessionactor

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/stdio/wire"
	"github.com/mcprt/mcprt/supervisor"
)

// scheduler is the session's scheduling half: which calls run, when, on
// which handler actor, and until when. It owns the calls in flight (by
// key), the slots' queue (parked), the worker pool (workers, idle, waiting,
// starting, the handler supervisor's generation), the deadline queues, and
// the answers a crash or a lost supervisor calls for. The protocol half
// (session) decodes, validates and routes requests, then hands each call
// here (admit, enter) and asks after them (inUse, lookup, pending); what
// the scheduler needs back is host.
//
// Like the session, it belongs to the session's goroutine: only the slots
// and waits in env, which answers give back from anywhere, are atomic.
type scheduler struct {
	host host
	env  *env

	handlers     *actor.PID          // the supervisor of the handler actors
	runners      *supervisor.Runners // the goroutines their calls run on
	workerPrefix string
	maxInFlight  int
	maxQueued    int
	overload     *session.Overload // nil: refusals not counted
	panicDetail  bool
	logger       *slog.Logger

	calls    map[string]*call // by key, until the worker is done with it
	parked   []*call          // calls waiting for a slot, oldest first
	workers  map[*worker]bool // the live workers of the current generation
	idle     []*worker        // workers ready for a call
	starting int              // workers asked for, not yet ready
	waiting  []*call          // calls waiting for a worker
	gen      int              // the handler supervisor's incarnation (WorkersLost)
	nextW    int
	retrying bool // a retryWorkers is on its way
	// wakeOnIdle: a worker's workerIdle wakes the session (see endBatch).
	wakeOnIdle bool

	deadlines *deadlines                   // nil: no RequestTimeout
	own       map[time.Duration]*deadlines // see ownDeadline
}

// host is what the scheduler needs of the protocol half that owns it.
type host interface {
	// crashed counts a handler's panic against its tool (the crash-loop
	// policy is the protocol's: it suspends a tool, or escalates).
	crashed(cl *call)
	// checkDrain is told that calls have ended: a drain waiting for
	// them may be over. It reports whether the session is exiting.
	checkDrain() bool
}

// newScheduler returns the scheduler of a session whose env is made.
func newScheduler(h host, e *env, cfg *Config) *scheduler {
	sc := &scheduler{
		host: h, env: e,
		handlers: cfg.Handlers, runners: cfg.Runners, workerPrefix: cfg.WorkerPrefix,
		maxInFlight: cfg.MaxInFlight, maxQueued: cfg.MaxQueued, overload: cfg.Overload,
		panicDetail: cfg.PanicDetail, logger: cfg.Logger,
		calls:   map[string]*call{},
		workers: map[*worker]bool{},
	}
	if d := cfg.RequestTimeout; d > 0 {
		sc.deadlines = newDeadlines(d, e.post)
	}
	return sc
}

// admit gives a request of a method that waits (handlers.Method.Waits)
// or not what it holds while it is in progress: a place among the waiting
// ones, a slot, or a place in the queue for a slot (park). A request that
// finds all taken gets errBusy, to answer. A batch's part takes nothing:
// the batch's message holds the unit for all its parts.
func (sc *scheduler) admit(t *ticket, waits bool) (park bool, busy *jsonrpc.Error) {
	if t.batch != nil {
		return false, nil
	}
	switch {
	case waits && sc.env.takeWait():
		t.hold = holdWait
	case sc.env.takeSlot():
		t.hold = holdSlot
	case sc.roomToPark():
		t.hold, park = holdNothing, true
	default:
		if sc.overload != nil {
			sc.overload.Refused.Add(1)
		}
		return false, sc.errBusy()
	}
	// The request's unit of backlog is given back: its answer takes one
	// of its own (ticket.release).
	sc.env.backlog.Done()
	return park, nil
}

// enter takes an admitted call: it is known by its key from now on, its
// deadline runs, and it waits for a slot (park) or goes to a worker.
func (sc *scheduler) enter(cl *call, park bool) {
	sc.calls[cl.key] = cl
	if sc.deadlines != nil {
		sc.deadlines.add(cl, len(sc.calls))
	}
	if park {
		sc.parked = append(sc.parked, cl)
		sc.env.countQueued(1)
		sc.env.slots.parked.Store(true)
		// A slot given back before the flag was up woke nobody.
		sc.unpark()
		return
	}
	sc.assign(cl)
}

// lookup is the call in flight keyed key, or nil.
func (sc *scheduler) lookup(key string) *call { return sc.calls[key] }

// inUse reports whether a call still pending holds key. A call stays
// known until its worker is done with it, which the session may hear
// after the client has its answer, so only a pending call holds its id:
// one that is claimed has its answer on the way (the client may have it
// before the worker has marked it delivered), and an answered or
// cancelled one is over.
func (sc *scheduler) inUse(key string) bool {
	cl, ok := sc.calls[key]
	return ok && cl.state.Load() == statePending
}

// cancel settles the call keyed key with no response at all, and reports
// whether it did (false: unknown, or already answered).
func (sc *scheduler) cancel(key string) bool {
	cl := sc.calls[key]
	if cl == nil || !cl.settle(stateCancelled, wire.Out{}, Outcome{}) {
		return false
	}
	cl.cancel()
	if cl.worker == nil {
		sc.forget(cl) // still waiting for a worker: it never runs
	}
	return true
}

// failAll answers every call not yet answered with e, and reports how
// many it answered.
func (sc *scheduler) failAll(e *jsonrpc.Error) int {
	n := 0
	for _, cl := range sc.calls {
		if cl.fail(e) {
			n++
		}
	}
	return n
}

// slotFreed runs when a slot was given back while calls were parked.
func (sc *scheduler) slotFreed() {
	sc.env.slots.woken.Store(false)
	sc.unpark()
}

// retryWorkers runs when the retry ensureWorkers asked for is due.
func (sc *scheduler) retryWorkers() {
	sc.retrying = false
	sc.ensureWorkers()
}

// endBatch runs at the end of each batch of the session's messages: the
// deadlines read the clock afresh, and a worker's report wakes the
// session only when a call waits for a worker or a drain for the last
// answer (draining).
func (sc *scheduler) endBatch(inbox *supervisor.Inbox, draining bool) {
	if sc.deadlines != nil {
		sc.deadlines.tick()
	}
	for _, q := range sc.own {
		q.tick()
	}
	if want := len(sc.waiting) > 0 || draining; want != sc.wakeOnIdle {
		sc.wakeOnIdle = want
		inbox.WakeOnPost(want)
	}
}

// stop runs when the session stops: calls nobody will answer get e now,
// the deadline timers stop, and every handler is cancelled.
func (sc *scheduler) stop(e *jsonrpc.Error) {
	sc.failAll(e)
	// The parked calls are answered; they wait for nothing any more.
	sc.env.countQueued(-int64(len(sc.parked)))
	sc.parked = nil
	if sc.deadlines != nil {
		sc.deadlines.stop()
	}
	for _, q := range sc.own {
		q.stop()
	}
	sc.cancelAll()
}

// roomToPark reports whether one more call may wait for a slot, first
// dropping those that were settled while they waited.
func (sc *scheduler) roomToPark() bool {
	if len(sc.parked) < sc.maxQueued {
		return true
	}
	kept := sc.parked[:0]
	for _, cl := range sc.parked {
		if cl.state.Load() == statePending {
			kept = append(kept, cl)
		} else {
			sc.forget(cl)
		}
	}
	clear(sc.parked[len(kept):])
	sc.env.countQueued(int64(len(kept) - len(sc.parked)))
	sc.parked = kept
	return len(sc.parked) < sc.maxQueued
}

// unpark runs parked calls, oldest first, while slots are free. A call
// settled while it waited (cancelled, timed out, drained) is dropped.
func (sc *scheduler) unpark() {
	for len(sc.parked) > 0 {
		cl := sc.parked[0]
		if cl.state.Load() == statePending {
			if !sc.env.takeSlot() {
				return
			}
			cl.mu.Lock()
			pending := cl.state.Load() == statePending
			if pending {
				cl.ticket.hold = holdSlot
			}
			cl.mu.Unlock()
			if !pending {
				sc.env.slots.busy.Add(-1)
				sc.env.countInFlight(-1)
			}
		}
		sc.parked[0] = nil
		sc.parked = sc.parked[1:]
		sc.env.countQueued(-1)
		if cl.ticket.hold == holdSlot {
			sc.assign(cl)
		} else {
			sc.forget(cl)
		}
	}
	sc.parked = nil
	sc.env.slots.parked.Store(false)
	// A slot given back between the last take and the flag going down
	// posted a slotFreed; it finds nothing to do.
}

// errBusy answers a request that found every slot taken and the queue full.
func (sc *scheduler) errBusy() *jsonrpc.Error {
	return &jsonrpc.Error{
		Code: jsonrpc.CodeServerBusy,
		Message: fmt.Sprintf("Server busy: %d requests in progress and %d waiting; retry later",
			sc.maxInFlight, sc.maxQueued),
		Data: map[string]int{"maxInFlight": sc.maxInFlight, "maxQueued": sc.maxQueued},
	}
}

// assign offers a call to its method's Start, then gives it to an idle
// worker, or queues it and asks for one more.
func (sc *scheduler) assign(cl *call) {
	if cl.start != nil && sc.startCall(cl) {
		return
	}
	if n := len(sc.idle); n > 0 {
		w := sc.idle[n-1]
		sc.idle = sc.idle[:n-1]
		sc.run(cl, w)
		return
	}
	sc.waiting = append(sc.waiting, cl)
	sc.ensureWorkers()
}

// startCall offers a call to its method's Start, on the session's
// goroutine, and reports whether Start took it: the call then holds its
// slot, without a worker, until it is answered (deferredDone) or handed
// back (fallback). A Start that panics fails the call as a handler's
// panic does.
func (sc *scheduler) startCall(cl *call) (taken bool) {
	start := cl.start
	cl.start = nil // tried once: a call handed back goes to a worker
	cl.deferred = true
	defer func() {
		if v := recover(); v != nil {
			sc.logger.Error("a handler's Start panicked", "method", cl.method, "id", string(cl.id), "panic", v, "stack", string(debug.Stack()))
			sc.host.crashed(cl)
			sc.answerPanic(cl, v)
			cl.cancel()
			sc.forget(cl)
			taken = true
		}
	}()
	// A timeout Start sets (handlers.Tool.Timeout) goes in a queue, not
	// a timer; one set later, from elsewhere, gets a timer as usual.
	cl.inStart.Store(true)
	taken = start(&cl.cx, &cl.req, cl)
	cl.inStart.Store(false)
	if d := cl.startTimeout.Swap(0); d > 0 && cl.state.Load() == statePending {
		sc.ownDeadline(cl, time.Duration(d))
	}
	if !taken {
		cl.deferred = false
	}
	return taken
}

// fallback gives a call that a Start handed back to a worker.
func (sc *scheduler) fallback(cl *call) {
	if cl.state.Load() != statePending {
		sc.forget(cl) // answered meanwhile (a deadline, a cancel, a drain)
		sc.host.checkDrain()
		return
	}
	cl.deferred = false
	sc.assign(cl)
}

// ensureWorkers asks for as many new workers as there are calls waiting
// beyond those already being started.
func (sc *scheduler) ensureWorkers() {
	for sc.starting < len(sc.waiting) {
		sc.nextW++
		id := sc.workerPrefix + "w" + strconv.Itoa(sc.nextW)
		w := &worker{gen: sc.gen, runners: sc.runners, in: sc.env.inbox}
		_, err := supervisor.StartChild(sc.env.engine, sc.handlers, supervisor.ChildSpec{
			ID:       id,
			Start:    newHandlerActor(w),
			Restart:  supervisor.Temporary,
			Shutdown: 200 * time.Millisecond,
			Options:  []actor.OptFunc{actor.WithInboxSize(8)},
		})
		if errors.Is(err, supervisor.ErrNotRunning) {
			// The handler supervisor is being restarted (WorkersLost
			// follows), or its new incarnation is not registered yet: try
			// again shortly. The waiting calls' deadlines bound this.
			if !sc.retrying {
				sc.retrying = true
				post := sc.env.post
				time.AfterFunc(10*time.Millisecond, func() { post(retryWorkers{}) })
			}
			return
		}
		if err != nil {
			// Without a handler actor the waiting calls cannot run: answer
			// them now rather than at their deadline.
			sc.logger.Error("cannot start a handler actor", "err", err)
			for _, cl := range sc.waiting {
				sc.forget(cl)
				cl.fail(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: no handler available"})
			}
			clear(sc.waiting)
			sc.waiting = sc.waiting[:0]
			return
		}
		w.starting = true
		sc.starting++
		sc.workers[w] = true
	}
}

func (sc *scheduler) run(cl *call, w *worker) {
	cl.worker = w
	w.busy = cl
	w.dispatch(cl)
}

// forget drops a call that is over from the session's tables. Nothing may
// keep it after that: a call holds its input line, which may be megabytes.
func (sc *scheduler) forget(cl *call) {
	if sc.calls[cl.key] == cl {
		delete(sc.calls, cl.key)
	}
	if cl.dlq != nil {
		cl.dlq.remove(cl)
	}
}

// workerDone forgets a worker's current call (the call is over, whoever
// answered it) and reports whether the worker is one of the current
// generation'sc.
func (sc *scheduler) workerDone(w *worker) bool {
	if w.gen != sc.gen {
		return false // from a supervisor generation that is gone
	}
	if w.starting {
		w.starting = false
		sc.starting--
	}
	if cl := w.busy; cl != nil {
		w.busy = nil
		sc.forget(cl)
		cl.cancel()
	}
	return true
}

func (sc *scheduler) workerCrashed(w *worker, value any) {
	if cl := w.busy; w.gen == sc.gen && cl != nil {
		sc.host.crashed(cl)
		sc.answerPanic(cl, value)
	}
	if sc.workerDone(w) {
		delete(sc.workers, w)
	}
	sc.ensureWorkers()
	sc.host.checkDrain()
}

// answerPanic answers a call whose handler panicked. A tool's panic is a
// tool error, a result with isError set: the model reads it and can act on
// it, where SDK-based clients treat a JSON-RPC error as a failure of the
// host application. No other result type carries errors, so the other
// methods get errHandlerPanic. The panic value goes to the client only with
// Config.PanicDetail; the stack never does.
func (sc *scheduler) answerPanic(cl *call, value any) {
	if cl.method != "tools/call" {
		cl.fail(errHandlerPanic)
		return
	}
	name := strings.TrimPrefix(crashKey(cl.method, cl.req.Params), "tools/call ")
	msg := "Tool " + strconv.Quote(name) + " failed with an internal error."
	if sc.panicDetail {
		msg = "Tool " + strconv.Quote(name) + " panicked: " + fmt.Sprint(value)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(msg)}, IsError: true}
	if out, o := cl.encode(res, nil); cl.settleTool(stateClaimed, out, o, true) {
		cl.cancel()
	}
}

func (sc *scheduler) workerIdle(w *worker) {
	if !sc.workerDone(w) || !sc.workers[w] {
		return
	}
	for len(sc.waiting) > 0 {
		cl := sc.waiting[0]
		sc.waiting[0] = nil
		sc.waiting = sc.waiting[1:]
		if cl.state.Load() != statePending {
			sc.forget(cl)
			continue
		}
		sc.run(cl, w)
		sc.host.checkDrain()
		return
	}
	sc.idle = append(sc.idle, w)
	sc.host.checkDrain()
}

func (sc *scheduler) pendingCount() int {
	n := 0
	for _, cl := range sc.calls {
		if st := cl.state.Load(); st == statePending || st == stateClaimed {
			n++
		}
	}
	return n
}

// workersLost runs when the handler supervisor was restarted: its actors,
// and whatever they were running, are gone. Their requests are answered now
// rather than at their deadlines, and waiting ones get fresh actors.
func (sc *scheduler) workersLost() {
	for w := range sc.workers {
		if cl := w.busy; cl != nil {
			cl.fail(&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the handler was stopped"})
			sc.forget(cl)
			w.busy = nil
		}
	}
	clear(sc.idle)
	sc.idle = sc.idle[:0]
	sc.starting = 0
	// A worker of the old supervisor that outlived its shutdown timeout
	// may still report once its handler returns: it must not be used.
	clear(sc.workers)
	sc.gen++
	sc.ensureWorkers()
	sc.host.checkDrain()
}

// cancelAll cancels the context of every call still known, answered or not:
// their handlers are to stop now. (Call contexts are not children of one
// session context: with hundreds in flight, registering each with a shared
// parent cost more than the handful of calls this loop visits.)
func (sc *scheduler) cancelAll() {
	for _, cl := range sc.calls { // running calls (busy) are among them
		cl.cancel()
	}
}
