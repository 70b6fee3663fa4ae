package sessionactor

import (
	"runtime/debug"
	"sync"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/supervisor"
)

// errHandlerPanic is the error a request other than tools/call gets when
// its handler panicked (a tool's panic is a result with isError set, which
// the model can read). It says nothing of the panic: the value and stack go
// to the log, not the client.
var errHandlerPanic = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the handler failed"}

// worker is the session's record of one handler actor it started. Its
// reports carry the record itself, so the session finds the worker's call
// without a lookup.
type worker struct {
	busy     *call // the call it runs; nil when idle; session goroutine only
	starting bool  // started, not yet reported idle; session goroutine only
	gen      int   // the handler supervisor's incarnation it belongs to

	runners *supervisor.Runners // where its calls get a goroutine
	in      *supervisor.Inbox   // the session's, for its reports

	// Set by the actor's Started, before its first idle report: what a
	// panicking call needs to stop the actor.
	engine *actor.Engine
	self   *actor.PID

	// mu guards the hand-over between the session (dispatch), the runner
	// (runCall's end) and the actor's stop, which waits for a running call.
	mu      sync.Mutex
	stopped bool
	running *call         // the call handed to a runner, until it ends
	ended   chan struct{} // made by a stop that waits; closed as the call ends
}

// Worker reports, as the session's inbox carries them: one pointer each,
// so sending one allocates nothing.
type (
	// workerIdle: the worker can take a call, when it starts and after
	// each call.
	workerIdle struct{ w *worker }
	// workerCrashed: the worker's handler panicked while running its call,
	// and the worker is gone. The session answers the call at once (with
	// errHandlerPanic or a tool error): it can then count the crash
	// against the tool before anything the client sends after seeing the
	// answer arrives. Workers are temporary children: a panicking request
	// is a failed request, not a failing service, so it costs no restart
	// intensity; the session starts a fresh worker when it next needs one.
	workerCrashed struct {
		w *worker
		// value is what the handler panicked with. It is for the
		// session's decision and logs; it reaches the client only with
		// Config.PanicDetail.
		value any
	}
)

// handlerActor is a handler actor: the supervised unit that runs the calls
// the session gives its worker, one at a time. It keeps no state between
// calls, so reusing one for many calls is safe; after a panic it exits (the
// panic and its stack go to the supervisor's log) and a fresh one takes its
// place.
//
// The calls run neither on the goroutine hollywood lends an actor for each
// burst of messages (new whenever the actor was idle, so every call would
// start on a small stack and pay, again and again, for growing it: a third
// of the CPU of a tools/call, by profile) nor on one the actor owns for
// life (an idle stack per actor: see supervisor.Runners), but on a
// goroutine of the session's Runners, for the length of the call. Neither
// the call nor the report is an actor message (the call goes straight to a
// runner, the reports to the session's inbox), so a call costs no
// goroutine start on either side.
type handlerActor struct{ w *worker }

// crashed tells the handler actor that its call's handler panicked.
type crashed struct{ pe *supervisor.PanicError }

// newHandlerActor returns a Producer of the handler actor for w.
func newHandlerActor(w *worker) actor.Producer {
	return func() actor.Receiver { return &handlerActor{w: w} }
}

// Receive implements actor.Receiver.
func (a *handlerActor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		a.w.engine, a.w.self = c.Engine(), c.PID()
		a.w.idle()
	case crashed:
		// Exit by panic, so the supervisor logs the value and stack, and
		// no state the panic may have broken survives.
		panic(m.pe)
	case actor.Stopped:
		a.w.stop() // a handler that ignores its context holds this up; the supervisor's shutdown timeout bounds it
	}
}

// idle tells the session the worker is free. That is news only when a call
// waits for one or a drain waits for the last answer (EndBatch tells the
// inbox which): otherwise it waits, posted, for the next line, and a
// request costs one thread wake-up less.
func (w *worker) idle() { w.in.Post(workerIdle{w}) }

// dispatch gives the worker a call, on the session's goroutine, once the
// worker has reported idle. A worker whose actor has stopped takes none:
// the call is answered by its deadline, or sooner when the session hears
// that its workers are lost.
func (w *worker) dispatch(cl *call) {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.running = cl
	w.mu.Unlock()
	if !w.runners.Go(w) {
		w.callEnded()
	}
}

// Run implements supervisor.Job: it runs the worker's call on a runner's
// goroutine, then reports.
func (w *worker) Run() {
	// No lock: dispatch set it before handing the worker over (a channel
	// send, which orders the two), and only callEnded, below, changes it.
	cl := w.running
	ok := w.run(cl)
	w.callEnded()
	switch {
	case ok && cl.large:
		// Woken, so that it forgets the call now: the session's tables
		// hold the call, and the call its request, until the session
		// hears that the worker is done. Posted, that news waits for the
		// session's next message, which for an idle client may be
		// minutes away, and a large request would stay in memory that
		// long (up to MaxBodyBytes per session over HTTP). A small one
		// is not worth a wake-up.
		w.in.Send(workerIdle{w})
	case ok:
		w.idle()
	}
}

// largeRequest is the size of a request from which its worker wakes the
// session when the call is done (see worker.Run).
const largeRequest = 64 << 10

// callEnded lets a stop waiting for the call go on.
func (w *worker) callEnded() {
	w.mu.Lock()
	w.running = nil
	if w.ended != nil {
		close(w.ended)
		w.ended = nil
	}
	w.mu.Unlock()
}

// stop takes no more calls and waits for the running one, if any.
func (w *worker) stop() {
	w.mu.Lock()
	w.stopped = true
	if w.running == nil {
		w.mu.Unlock()
		return
	}
	ended := make(chan struct{})
	w.ended = ended
	w.mu.Unlock()
	<-ended
}

// run runs one call and reports whether its handler returned (rather than
// panicked).
func (w *worker) run(cl *call) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			pe := &supervisor.PanicError{Value: v, Stack: debug.Stack()}
			// The actor first, then the session: the session answers at
			// once (the request must not wait for its deadline), and a
			// client that then closes its end shuts the tree down; the
			// actor must have its crash in its inbox before that stop, or
			// it exits stopped rather than panicked and the panic and its
			// stack never reach the log (a CI run under load lost
			// TestPanicStackReadable's stack so).
			w.engine.Send(w.self, crashed{pe})
			w.in.Send(workerCrashed{w, v})
			ok = false
		}
	}()
	res, err := cl.run(&cl.cx, &cl.req)
	cl.Reply(res, err)
	return true
}
