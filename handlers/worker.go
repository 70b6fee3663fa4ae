package handlers

import (
	"context"
	"runtime/debug"
	"sync/atomic"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/session/jsonrpc"
	"github.com/mcprt/mcprt/supervisor"
)

// Call asks a worker to run one request. Its Replier must be safe to call
// from the worker's goroutine and must make sure a request is answered at
// most once (the session guards it: a request that timed out or was
// cancelled has already been settled, and a late reply is dropped).
type Call struct {
	Key   string // the session's key for the request
	Ctx   context.Context
	Req   *Request
	Run   MethodFunc
	Reply Replier
}

// Replier takes a handler's answer. An interface rather than a func: the
// owner's per-request state implements it, where a method value would be
// one more allocation per request.
type Replier interface {
	Reply(result any, err error)
}

// WorkerIdle tells the worker's owner that the worker can take a call:
// when it starts and after each call. It carries only the worker's PID, so
// sending it allocates nothing (the owner knows which call the worker had).
type WorkerIdle struct {
	PID *actor.PID
}

// WorkerCrashed tells the owner that the worker's handler panicked while
// running the call Key, and that the worker is gone. The owner answers the
// call (with ErrHandlerPanic): it can then count the crash against the tool
// before anything the client sends after seeing the answer arrives. Workers are temporary children: a panicking request is a
// failed request, not a failing service, so it costs no restart intensity;
// the owner starts a fresh worker when it next needs one.
type WorkerCrashed struct {
	PID *actor.PID
	Key string
	// Value is what the handler panicked with. It is for the owner's
	// decision and logs; it reaches the client only if the server opts in.
	Value any
}

// ErrHandlerPanic is the error a request other than tools/call gets when its
// handler panicked (a tool's panic is a result with isError set, which the
// model can read). It says nothing of the panic: the value and stack go to
// the log, not the client.
var ErrHandlerPanic = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: the handler failed"}

// Worker is a handler actor: it runs one call at a time. It keeps no state
// between calls, so reusing one for many calls is safe; after a panic it
// exits (the panic and its stack go to the supervisor's log) and a fresh one
// takes its place.
//
// The calls run on a goroutine the worker owns for its whole life (started
// in Started, stopped and waited for in Stopped), not on the goroutine
// hollywood lends an actor for each burst of messages: that one is new
// whenever the actor was idle, so every call would start on a small stack
// and pay, again and again, for growing it (a third of the CPU of a
// tools/call, by profile).
type Worker struct {
	report func(msg any)
	calls  chan *Call
	// stopping asks the loop to end. It waits on calls alone (a select
	// with a quit channel was 7% of the CPU under load), so Stopped also
	// puts a nil call in the slot when there is room: the loop wakes, or
	// finds the flag before it runs whatever it takes next.
	stopping atomic.Bool
	started  bool
	done     chan struct{}
}

// crashed tells the worker actor that its goroutine's handler panicked.
type crashed struct{ pe *supervisor.PanicError }

// NewWorker returns a Producer of workers that take their calls from calls,
// which the owner creates with room for one call and fills only when the
// worker has reported idle, and that tell their owner about themselves
// (WorkerIdle, WorkerCrashed) through report, which must not block and must
// be safe from any goroutine: a supervisor.Inbox's Send, say. Neither
// direction is an actor message, so a call costs no goroutine start on
// either side.
func NewWorker(report func(msg any), calls chan *Call) actor.Producer {
	return func() actor.Receiver { return &Worker{report: report, calls: calls} }
}

// Receive implements actor.Receiver.
func (w *Worker) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		w.started = true
		w.done = make(chan struct{})
		go w.loop(c.Engine(), c.PID())
		w.report(WorkerIdle{PID: c.PID()})
	case crashed:
		// Exit by panic, so the supervisor logs the value and stack, and
		// no state the panic may have broken survives.
		panic(m.pe)
	case actor.Stopped:
		if w.started {
			w.stopping.Store(true)
			select {
			case w.calls <- nil:
			default: // a call is in the slot: the loop takes it and sees the flag
			}
			<-w.done // a handler that ignores its context holds this up; the supervisor's shutdown timeout bounds it
		}
	}
}

func (w *Worker) loop(e *actor.Engine, self *actor.PID) {
	defer close(w.done)
	for {
		m := <-w.calls
		if m == nil || w.stopping.Load() {
			// Leaving by a receive keeps the slot from staying full: an
			// owner that sends just as the worker stops never blocks.
			return
		}
		if !w.run(e, self, m) {
			return
		}
		w.report(WorkerIdle{PID: self})
	}
}

// run runs one call and reports whether its handler returned (rather than
// panicked).
func (w *Worker) run(e *actor.Engine, self *actor.PID, m *Call) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			pe := &supervisor.PanicError{Value: v, Stack: debug.Stack()}
			// The owner answers at once: the request must not wait for its
			// deadline.
			w.report(WorkerCrashed{PID: self, Key: m.Key, Value: v})
			e.Send(self, crashed{pe})
			ok = false
		}
	}()
	res, err := m.Run(m.Ctx, m.Req)
	m.Reply.Reply(res, err)
	return true
}
