package sessionactor

import (
	"runtime/debug"
	"sync/atomic"

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
	// slot takes the worker's next call. It has room for one, and the
	// session fills it only when the worker has reported idle.
	slot     chan *call
	busy     *call // the call it runs; nil when idle
	starting bool  // started, not yet reported idle
	gen      int   // the handler supervisor's incarnation it belongs to
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

// handlerActor is a handler actor: it runs the calls the session puts in
// its worker's slot, one at a time. It keeps no state between calls, so
// reusing one for many calls is safe; after a panic it exits (the panic and
// its stack go to the supervisor's log) and a fresh one takes its place.
//
// The calls run on a goroutine the actor owns for its whole life (started
// in Started, stopped and waited for in Stopped), not on the goroutine
// hollywood lends an actor for each burst of messages: that one is new
// whenever the actor was idle, so every call would start on a small stack
// and pay, again and again, for growing it (a third of the CPU of a
// tools/call, by profile).
//
// Neither the call nor the report is an actor message (the slot is a
// channel, the reports go to the session's inbox), so a call costs no
// goroutine start on either side.
type handlerActor struct {
	w  *worker
	in *supervisor.Inbox // the session's
	// stopping asks the loop to end. It waits on the slot alone (a select
	// with a quit channel was 7% of the CPU under load), so Stopped also
	// puts a nil call in the slot when there is room: the loop wakes, or
	// finds the flag before it runs whatever it takes next.
	stopping atomic.Bool
	started  bool
	done     chan struct{}
}

// crashed tells the handler actor that its goroutine's handler panicked.
type crashed struct{ pe *supervisor.PanicError }

// newHandlerActor returns a Producer of the handler actor for w, which
// reports to the session's inbox in.
func newHandlerActor(w *worker, in *supervisor.Inbox) actor.Producer {
	return func() actor.Receiver { return &handlerActor{w: w, in: in} }
}

// Receive implements actor.Receiver.
func (a *handlerActor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		a.started = true
		a.done = make(chan struct{})
		go a.loop(c.Engine(), c.PID())
		a.idle()
	case crashed:
		// Exit by panic, so the supervisor logs the value and stack, and
		// no state the panic may have broken survives.
		panic(m.pe)
	case actor.Stopped:
		if a.started {
			a.stopping.Store(true)
			select {
			case a.w.slot <- nil:
			default: // a call is in the slot: the loop takes it and sees the flag
			}
			<-a.done // a handler that ignores its context holds this up; the supervisor's shutdown timeout bounds it
		}
	}
}

// idle tells the session the worker is free. That is news only when a call
// waits for one or a drain waits for the last answer (EndBatch tells the
// inbox which): otherwise it waits, posted, for the next line, and a
// request costs one thread wake-up less.
func (a *handlerActor) idle() { a.in.Post(workerIdle{a.w}) }

func (a *handlerActor) loop(e *actor.Engine, self *actor.PID) {
	defer close(a.done)
	for {
		cl := <-a.w.slot
		if cl == nil || a.stopping.Load() {
			// Leaving by a receive keeps the slot from staying full: a
			// session that sends just as the worker stops never blocks.
			return
		}
		if !a.run(e, self, cl) {
			return
		}
		a.idle()
	}
}

// run runs one call and reports whether its handler returned (rather than
// panicked).
func (a *handlerActor) run(e *actor.Engine, self *actor.PID, cl *call) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			pe := &supervisor.PanicError{Value: v, Stack: debug.Stack()}
			// The session answers at once: the request must not wait for
			// its deadline.
			a.in.Send(workerCrashed{a.w, v})
			e.Send(self, crashed{pe})
			ok = false
		}
	}()
	res, err := cl.run(&cl.cx, &cl.req)
	cl.Reply(res, err)
	return true
}
