package supervisor

import (
	"runtime/debug"
	"sync"

	"github.com/anthdm/hollywood/actor"
)

// Messages between supervisors and the cells of their children. They are
// unexported so nothing outside the package can forge an exit.
type (
	// childExited is sent by a cell to its supervisor from Stopped, i.e.
	// after hollywood removed the PID from its registry, so the supervisor
	// may spawn the same ID again as soon as it reads this.
	childExited struct {
		id     string
		gen    uint64
		reason error
	}
	// shutdownRequest asks a cell to exit with ErrShutdown. A cell holding a
	// supervisor passes it on, so the supervisor can stop its own children
	// in order first; Poison would give it no chance to (its inbox is dead
	// by the time it hears about it).
	shutdownRequest struct{}
	// stopTimeout is posted by a watcher goroutine when a child did not stop
	// within its Shutdown time.
	stopTimeout struct {
		id  string
		gen uint64
	}
)

// stopSignal is closed once a cell has finished its Stopped handling. It is
// how waiters off the supervisor's goroutine learn that a child is gone.
type stopSignal struct {
	ch   chan struct{}
	once sync.Once
}

func newStopSignal() *stopSignal { return &stopSignal{ch: make(chan struct{})} }

func (s *stopSignal) close() { s.once.Do(func() { close(s.ch) }) }

// cell is the receiver hollywood actually runs for every supervised actor.
// It exists so that no panic ever reaches hollywood (whose own restart path
// crashes the process at MaxRestarts) and so that every exit, however it
// happened, is reported exactly once to the supervisor.
type cell struct {
	start  actor.Producer
	inner  actor.Receiver
	report func(c *actor.Context, reason error) // called once, from Stopped
	sig    *stopSignal

	exited  bool  // an exit reason is decided; further messages are dropped
	reason  error // valid when exited
	stopped bool  // Stopped already handled (hollywood may deliver it twice)
}

func (w *cell) Receive(c *actor.Context) {
	switch c.Message().(type) {
	case actor.Stopped:
		w.onStopped(c)
		return
	case actor.Initialized:
		if w.exited {
			return
		}
		// The producer is user code too: a panic in it is an exit reason.
		if !w.guard(c, func() { w.inner = w.start() }) {
			return
		}
		if w.inner == nil {
			w.exit(c, &PanicError{Value: "supervisor: Start returned a nil receiver"})
			return
		}
	case shutdownRequest:
		if _, ok := w.inner.(*supervisor); !ok {
			w.exit(c, ErrShutdown)
			return
		}
	}
	if w.exited || w.inner == nil {
		return
	}
	w.guard(c, func() { w.inner.Receive(c) })
}

// guard runs f and turns a panic into the cell's exit reason.
func (w *cell) guard(c *actor.Context, f func()) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			w.exit(c, asPanicError(v, debug.Stack()))
			ok = false
		}
	}()
	f()
	return true
}

// exit decides the reason (first one wins) and poisons the actor. The cell
// is the only party that ever poisons a supervised PID, which is what
// guarantees it is never poisoned twice (a second pill's Done never fires).
func (w *cell) exit(c *actor.Context, reason error) {
	if w.exited {
		return
	}
	w.exited, w.reason = true, reason
	c.Engine().Poison(c.PID())
}

func (w *cell) onStopped(c *actor.Context) {
	if w.stopped {
		return
	}
	w.stopped = true
	reason := ErrShutdown // poisoned by someone else: treat as a shutdown
	if w.exited {
		reason = w.reason
	}
	w.exited = true // Exit from inside Stopped is a no-op
	if w.inner != nil {
		// Stopped is the inner receiver's chance to clean up, even after a
		// panic. A panic here makes an otherwise clean exit abnormal, because
		// it is a bug worth seeing; it never overrides an earlier failure.
		func() {
			defer func() {
				if v := recover(); v != nil && !IsAbnormal(reason) {
					reason = asPanicError(v, debug.Stack())
				}
			}()
			w.inner.Receive(c)
		}()
	}
	if w.report != nil {
		w.report(c, reason)
	}
	w.sig.close()
}

// Exit stops the calling actor with reason (nil means a normal exit). It must
// be called from inside the actor's Receive. Unlike Poison, it records why,
// which is what the supervisor's restart decision is based on; messages that
// arrive after it are dropped.
func Exit(c *actor.Context, reason error) {
	if w, ok := c.Receiver().(*cell); ok {
		w.exit(c, reason)
		return
	}
	// Not supervised: there is nobody to tell the reason to.
	c.Engine().Poison(c.PID())
}
