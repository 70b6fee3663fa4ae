package supervisor

import (
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/anthdm/hollywood/actor"
)

// Inbox is the mailbox of an actor that runs on a goroutine of its own (see
// Loop). Any goroutine may Send to it; the messages are delivered in the
// order they were sent.
//
// It exists because hollywood v1.0.5 starts a new goroutine whenever a
// message reaches an idle actor: for an actor on the hot path of every
// request (the session, the writer) that is a goroutine start, a small
// stack grown again and again, and a registry lookup per message. A Loop's
// goroutine lives as long as the actor, and sending to its Inbox is a
// mutex-guarded append plus, when the loop was idle, one wake-up.
//
// An Inbox outlives the incarnations of its actor: messages sent while the
// actor is being restarted wait for the next incarnation, as they would in
// a PID's inbox. It is unbounded, like hollywood's; bound what flows into it
// (the runtime does so with wire.Backlog).
type Inbox struct {
	mu         sync.Mutex
	queue      []any
	wakeOnPost bool
	// signalled: a wake token was sent since the loop last took the queue.
	// Not simply "the queue was empty": Post may leave messages queued
	// with the loop asleep, and the next Send must still wake it.
	signalled bool
	wake      chan struct{}
	// lent is the loop of an OnRunners actor while an incarnation runs:
	// it is given a goroutine when messages come, rather than woken.
	// running: it has one, or is being given one.
	lent    *lentLoop
	running bool
}

// NewInbox returns an empty inbox.
func NewInbox() *Inbox { return &Inbox{wake: make(chan struct{}, 1)} }

// Send queues msg. It never blocks and is safe from any goroutine.
func (in *Inbox) Send(msg any) {
	in.mu.Lock()
	in.queue = append(in.queue, msg)
	if in.lent != nil {
		l := in.schedule()
		in.mu.Unlock()
		l.lend()
		return
	}
	wake := !in.signalled
	in.signalled = true
	in.mu.Unlock()
	if wake {
		in.signal()
	}
}

// Post queues msg like Send but, unless the loop asked for it with
// WakeOnPost, does not wake an idle loop: the message waits for whatever
// wakes it next, and is delivered before that. It is for news the loop
// needs only once it has other work: a worker reporting that it is free
// matters to the session only when a call is waiting for one, and waking
// the session for it anyway would cost a thread wake-up per request.
func (in *Inbox) Post(msg any) {
	in.mu.Lock()
	in.queue = append(in.queue, msg)
	if in.lent != nil {
		var l *lentLoop
		if in.wakeOnPost {
			l = in.schedule()
		}
		in.mu.Unlock()
		l.lend()
		return
	}
	wake := in.wakeOnPost && !in.signalled
	if wake {
		in.signalled = true
	}
	in.mu.Unlock()
	if wake {
		in.signal()
	}
}

// Len is how many messages wait in the inbox now, not yet taken by its
// loop: its depth, for a gauge. It takes the inbox's lock, so read it at a
// scrape, not per message.
func (in *Inbox) Len() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.queue)
}

// schedule claims the lent loop's run, under in.mu: it returns the loop
// when it is to be given a goroutine, nil when it has one already.
func (in *Inbox) schedule() *lentLoop {
	if in.running {
		return nil
	}
	in.running = true
	in.lent.runs.Add(1)
	return in.lent
}

// signal leaves a wake token. One may still be there, unconsumed, from a
// time the loop found work without waiting for it.
func (in *Inbox) signal() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// WakeOnPost says whether Post wakes an idle loop. A loop sets it before it
// goes idle (BatchEnder is the place): under the same lock as the queue, so
// a Post either lands before the loop's last look at the queue or sees the
// new setting.
func (in *Inbox) WakeOnPost(on bool) {
	in.mu.Lock()
	in.wakeOnPost = on
	in.mu.Unlock()
}

// take returns every queued message, leaving spare (emptied) as the queue.
// Swapping two slices keeps a busy loop from allocating.
func (in *Inbox) take(spare []any) []any {
	in.mu.Lock()
	q := in.queue
	in.queue = spare[:0]
	in.signalled = false
	in.mu.Unlock()
	return q
}

// requeue puts back, ahead of anything sent since, the messages of a batch
// that were not delivered because the loop stopped.
func (in *Inbox) requeue(rest []any) {
	if len(rest) == 0 {
		return
	}
	in.mu.Lock()
	in.queue = append(append(make([]any, 0, len(rest)+len(in.queue)), rest...), in.queue...)
	in.mu.Unlock()
}

// maxSpare bounds the batch slice a loop keeps, so one burst does not pin
// its memory for the actor's life.
const maxSpare = 4096

// Loop is the body of an actor that runs on a goroutine it owns for its
// whole life. Build the actor with OwnGoroutine.
//
// Receive gets, in order: actor.Started, then every message of the Inbox
// (whether sent to the Inbox directly or to the actor's PID, which forwards
// it), all on the loop's goroutine; then actor.Stopped, after that goroutine
// has ended. A panic in Receive ends the loop and is the actor's exit reason,
// as a panic in an ordinary supervised actor is; the messages after it wait
// in the inbox for the next incarnation.
type Loop interface {
	Receive(lc *LoopContext, msg any)
}

// BatchEnder is a Loop that wants to know when it has been given everything
// that was queued: the messages that arrived together. A writer coalesces
// them into one write there.
type BatchEnder interface {
	EndBatch(lc *LoopContext)
}

// LoopContext is what a Loop may use from its goroutine. Unlike an
// actor.Context, it is safe to keep and to use from other goroutines.
type LoopContext struct {
	engine *actor.Engine
	pid    *actor.PID
	inbox  *Inbox
}

// Engine is the engine the actor runs in.
func (lc *LoopContext) Engine() *actor.Engine { return lc.engine }

// PID is the actor's PID.
func (lc *LoopContext) PID() *actor.PID { return lc.pid }

// Inbox is the actor's inbox.
func (lc *LoopContext) Inbox() *Inbox { return lc.inbox }

// Exit stops the actor with reason (nil: a normal exit), as Exit does for an
// ordinary actor. It returns at once; messages already queued may still be
// delivered before the actor stops.
func (lc *LoopContext) Exit(reason error) { lc.engine.Send(lc.pid, loopExit{reason}) }

// Pending removes and returns the messages still queued, for the Loop to
// handle now. A writer takes them in Stopped, to deliver its last output
// (a loop that does not leaves them to the actor's next incarnation), and
// in EndBatch, to gather more messages into one write.
func (lc *LoopContext) Pending() []any { return lc.inbox.take(nil) }

// Messages between a loop's goroutine and its actor.
type (
	loopExit  struct{ reason error }
	loopPanic struct{ pe *PanicError }
)

// OwnGoroutine returns a Producer for an actor whose Loop, made by newLoop
// for each incarnation, runs on a goroutine of its own fed by in. The
// actor's goroutine only forwards what reaches its PID to in, and starts,
// stops and waits for the loop: the loop is owned, never leaked.
//
// Stopping the actor waits for the message being handled to finish; the
// messages after it stay in the inbox. A Loop that may block for long (a
// writer on a full pipe) is bounded by its supervisor's Shutdown time.
func OwnGoroutine(in *Inbox, newLoop func() Loop) actor.Producer {
	return func() actor.Receiver {
		return &loopActor{in: in, loop: newLoop(), quit: make(chan struct{}), done: make(chan struct{})}
	}
}

type loopActor struct {
	in      *Inbox
	loop    Loop
	lc      *LoopContext
	quit    chan struct{}
	done    chan struct{}
	started bool
	stopped bool
}

func (a *loopActor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Initialized:
	case actor.Started:
		a.lc = &LoopContext{engine: c.Engine(), pid: c.PID(), inbox: a.in}
		a.started = true
		go a.run()
	case actor.Stopped:
		if a.stopped {
			return
		}
		a.stopped = true
		if a.started {
			close(a.quit)
			<-a.done
		} else {
			a.lc = &LoopContext{engine: c.Engine(), pid: c.PID(), inbox: a.in}
		}
		a.loop.Receive(a.lc, m)
	case loopExit:
		Exit(c, m.reason)
	case loopPanic:
		// Re-raised here so the supervisor sees it as this actor's panic.
		panic(m.pe)
	default:
		a.in.Send(m)
	}
}

// run is the loop's goroutine.
func (a *loopActor) run() {
	defer close(a.done)
	if !a.deliver(actor.Started{}) {
		return
	}
	ender, _ := a.loop.(BatchEnder)
	var batch []any
	for {
		select {
		case <-a.quit:
			return
		default:
		}
		batch = a.in.take(batch)
		if len(batch) == 0 {
			select {
			case <-a.in.wake:
				continue
			case <-a.quit:
				return
			}
		}
		for i, m := range batch {
			batch[i] = nil
			ok := a.deliver(m)
			if !ok || a.quitting() {
				// The rest stays queued: for Stopped's Pending, or for the
				// next incarnation (after a panic, say) to handle.
				a.in.requeue(batch[i+1:])
				return
			}
		}
		if ender != nil && !a.guard(func() { ender.EndBatch(a.lc) }) {
			return
		}
		if cap(batch) > maxSpare {
			batch = nil
		}
	}
}

func (a *loopActor) quitting() bool {
	select {
	case <-a.quit:
		return true
	default:
		return false
	}
}

func (a *loopActor) deliver(m any) bool { return a.lc.deliver(a.loop, m) }

func (a *loopActor) guard(f func()) bool { return a.lc.guard(f) }

// deliver gives l a message, on the loop's goroutine of the moment.
func (lc *LoopContext) deliver(l Loop, m any) bool {
	return lc.guard(func() { l.Receive(lc, m) })
}

// guard runs f, turning a panic into the actor's exit: it reports false
// when f panicked.
func (lc *LoopContext) guard(f func()) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			lc.engine.Send(lc.pid, loopPanic{asPanicError(v, debug.Stack())})
			ok = false
		}
	}()
	f()
	return true
}

// OnRunners returns a Producer for an actor whose Loop, made by newLoop for
// each incarnation, runs on a goroutine borrowed from p while in has
// messages, and holds none while it waits. It is OwnGoroutine for actors
// that are many and mostly idle (a Streamable HTTP server's sessions):
// the same order, the same Started and Stopped, the same exits, but a
// stack only while there is work. A message to an idle loop costs a
// goroutine handed over from p instead of a wake-up; p must outlive the
// actor (its owner stops after it).
func OnRunners(in *Inbox, p *Runners, newLoop func() Loop) actor.Producer {
	return func() actor.Receiver {
		return &lentLoop{in: in, p: p, loop: newLoop()}
	}
}

// lentLoop is an OnRunners actor. Its actor goroutine starts the first run
// (which delivers Started), forwards what reaches its PID to the inbox, and
// on Stopped ends the runs and waits for them. A run takes the queue, batch
// by batch, until it finds it empty; at most one runs at a time (the
// inbox's running flag).
type lentLoop struct {
	in    *Inbox
	p     *Runners
	loop  Loop
	lc    *LoopContext
	batch []any
	// first: the next run delivers Started first. Set before the first
	// run is handed over, read and cleared by runs, which never overlap.
	first   bool
	quit    atomic.Bool
	runs    sync.WaitGroup // each run, from its claim (Inbox.schedule) to its end
	started bool           // actor goroutine only
	stopped bool           // actor goroutine only
}

func (a *lentLoop) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Initialized:
	case actor.Started:
		a.lc = &LoopContext{engine: c.Engine(), pid: c.PID(), inbox: a.in}
		a.started, a.first = true, true
		a.in.mu.Lock()
		a.in.lent = a // every run of an earlier incarnation has ended, and cleared running
		l := a.in.schedule()
		a.in.mu.Unlock()
		l.lend()
	case actor.Stopped:
		if a.stopped {
			return
		}
		a.stopped = true
		if a.started {
			a.quit.Store(true)
			a.in.mu.Lock()
			if a.in.lent == a {
				a.in.lent = nil
			}
			a.in.mu.Unlock()
			a.runs.Wait()
		} else {
			a.lc = &LoopContext{engine: c.Engine(), pid: c.PID(), inbox: a.in}
		}
		a.loop.Receive(a.lc, m)
	case loopExit:
		Exit(c, m.reason)
	case loopPanic:
		panic(m.pe) // re-raised here so the supervisor sees it as this actor's panic
	default:
		a.in.Send(m)
	}
}

// lend hands the loop a goroutine for one run (nil: nothing to do). A
// closed pool has none: the messages wait for an incarnation whose pool is
// open, as they wait in an OwnGoroutine's inbox during a restart.
func (a *lentLoop) lend() {
	if a == nil || a.p.Go(a) {
		return
	}
	a.in.mu.Lock()
	a.in.running = false
	a.in.mu.Unlock()
	a.runs.Done()
}

// Run implements Job: one run, on a borrowed goroutine.
func (a *lentLoop) Run() {
	defer a.runs.Done()
	if a.first {
		a.first = false
		if !a.deliver(actor.Started{}) {
			a.end(true)
			return
		}
	}
	ender, _ := a.loop.(BatchEnder)
	for {
		a.in.mu.Lock()
		if len(a.in.queue) == 0 || a.quit.Load() || a.in.lent != a {
			a.in.running = false
			a.in.mu.Unlock()
			return
		}
		batch := a.in.queue
		a.in.queue = a.batch[:0]
		a.in.signalled = false
		a.in.mu.Unlock()
		for i, m := range batch {
			batch[i] = nil
			ok := a.deliver(m)
			if !ok || a.quit.Load() {
				// The rest stays queued, for the next incarnation.
				a.in.requeue(batch[i+1:])
				a.end(!ok)
				return
			}
		}
		if ender != nil && !a.guard(func() { ender.EndBatch(a.lc) }) {
			a.end(true)
			return
		}
		a.batch = batch
		if cap(a.batch) > maxSpare {
			a.batch = nil
		}
	}
}

// end gives up the run. After a panic the loop takes no more messages:
// they wait for the next incarnation.
func (a *lentLoop) end(panicked bool) {
	a.in.mu.Lock()
	a.in.running = false
	if panicked && a.in.lent == a {
		a.in.lent = nil
	}
	a.in.mu.Unlock()
}

func (a *lentLoop) deliver(m any) bool { return a.lc.deliver(a.loop, m) }

func (a *lentLoop) guard(f func()) bool { return a.lc.guard(f) }
