package supervisor

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/anthdm/hollywood/actor"
)

type childStatus int

const (
	notRunning     childStatus = iota // stopped by a strategy (or abandoned); may be started again
	running                           // spawned (or its spawn failure is on the way as an exit)
	stopping                          // shutdownRequest sent, waiting for its exit or timeout
	exitedDeferred                    // exited while a stop sequence ran; handled when it ends
)

type child struct {
	spec         ChildSpec
	pid          *actor.PID
	gen          uint64 // which incarnation exits must belong to
	sig          *stopSignal
	status       childStatus
	removed      bool
	removeOnStop bool                  // temporary children stopped by a strategy, and TerminateChild
	onStop       []func(timedOut bool) // run once the child is stopped or abandoned
}

// sequence stops children one at a time, in the given order, and then runs
// then. OTP's supervisor does this synchronously; here the waiting happens
// in messages so the supervisor's inbox keeps moving.
type sequence struct {
	queue []*child
	then  func()
}

type deferredExit struct {
	ch     *child
	gen    uint64
	reason error
}

// supervisor is the receiver behind New and Start. All fields are owned by
// the actor's goroutine.
type supervisor struct {
	spec      Spec
	name      string
	intensity int
	period    time.Duration
	now       func() time.Time
	log       *slog.Logger

	c   *actor.Context
	e   *actor.Engine
	pid *actor.PID
	sh  *shared

	children []*child
	byID     map[string]*child
	gen      uint64
	restarts Window // the restarts within Period: the intensity
	seq      *sequence
	// A restart waiting out its Backoff: the timer, and the token that
	// tells its restartDue from a superseded one's.
	restartTimer func() bool // stops it
	restartToken uint64
	deferred     []deferredExit

	inCallout   bool  // sh.goid is set: see enterCallout
	exiting     bool  // an exit reason is decided
	terminating bool  // the final stop sequence is running
	finished    bool  // children are stopped; the cell has been told to exit
	exitReason  error // valid when exiting
}

func newSupervisor(spec Spec) *supervisor {
	s := &supervisor{spec: spec, intensity: spec.Intensity, period: spec.Period, now: spec.now, log: spec.Logger}
	if s.intensity == 0 {
		s.intensity = defaultIntensity
	}
	if s.period <= 0 {
		s.period = defaultPeriod
	}
	s.restarts = Window{Max: s.intensity, Period: s.period}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

func (s *supervisor) Receive(c *actor.Context) {
	defer s.leaveCallouts()
	switch m := c.Message().(type) {
	case actor.Initialized:
		s.init(c)
	case actor.Started:
		if err := s.spec.validate(); err != nil {
			s.exit(err)
			return
		}
		for _, cs := range s.spec.Children {
			ch := s.add(cs)
			s.start(ch)
		}
	case childExited:
		s.onChildExited(m)
	case restartDue:
		s.onRestartDue(m)
	case stopTimeout:
		s.onStopTimeout(m)
	case startChildRequest:
		s.onStartChild(m)
	case terminateChildRequest:
		s.onTerminateChild(m)
	case shutdownRequest:
		s.exit(ErrShutdown)
	case ExitSignal:
		if m.Reason != nil {
			s.exit(m.Reason)
		}
	case actor.Stopped:
		s.onStopped()
	}
}

func (s *supervisor) init(c *actor.Context) {
	s.c, s.e, s.pid = c, c.Engine(), c.PID()
	if s.name = s.spec.Name; s.name == "" {
		s.name = s.pid.ID
	}
	s.byID = make(map[string]*child, len(s.spec.Children))
	s.sh = &shared{pid: s.pid, gone: make(chan struct{})}
	register(s.e, s.sh)
}

// enterCallout is called before the supervisor runs code that is not its
// own on its goroutine: a child's Initialized and Started (hollywood runs
// them inside Spawn), the logger and the EventHook. Only such code can call
// this package's API from the supervisor's goroutine, which would deadlock
// (see reachable), so only then is the goroutine's ID recorded, once per
// Receive. Finding it takes a traceback of the whole stack (runtime.Stack):
// microseconds, tens of them the first time in a process and on the deep
// stack of a tree being started. It used to be paid for every message,
// four times before the runtime's tree could answer its first request; now
// once.
func (s *supervisor) enterCallout() {
	if s.sh != nil && !s.inCallout {
		s.sh.goid.Store(goid())
		s.inCallout = true
	}
}

// leaveCallouts ends what enterCallout recorded, as Receive returns.
func (s *supervisor) leaveCallouts() {
	if s.inCallout {
		s.sh.goid.Store(0)
		s.inCallout = false
	}
}

func (s *supervisor) emit(ev Event) {
	s.enterCallout()
	logEvent(s.log, ev)
	if s.spec.EventHook == nil {
		return
	}
	// A faulty hook must not take the supervisor down with it.
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("supervisor event hook panicked", "supervisor", s.name, "panic", fmt.Sprint(v))
		}
	}()
	s.spec.EventHook(ev)
}

func (s *supervisor) add(cs ChildSpec) *child {
	ch := &child{spec: cs}
	s.children = append(s.children, ch)
	s.byID[cs.ID] = ch
	return ch
}

func (s *supervisor) remove(ch *child) {
	if ch.removed {
		return
	}
	ch.removed = true
	delete(s.byID, ch.spec.ID)
	for i, x := range s.children {
		if x == ch {
			s.children = append(s.children[:i], s.children[i+1:]...)
			break
		}
	}
}

// spawn starts one incarnation of ch. The child's Initialized and Started
// run right here, on this goroutine; their panics come back as exits.
func (s *supervisor) spawn(ch *child) error {
	s.gen++
	ch.gen, ch.sig, ch.status, ch.pid = s.gen, newStopSignal(), running, nil
	if s.e.Registry.GetPID(s.pid.ID, ch.spec.ID) != nil {
		return errIDInUse
	}
	sup, id, gen, sig := s.pid, ch.spec.ID, ch.gen, ch.sig
	producer := func() actor.Receiver {
		return &cell{
			start: ch.spec.Start,
			sig:   sig,
			report: func(c *actor.Context, reason error) {
				c.Engine().Send(sup, childExited{id: id, gen: gen, reason: reason})
			},
		}
	}
	opts := append(append([]actor.OptFunc(nil), ch.spec.Options...),
		actor.WithID(id),
		actor.WithMaxRestarts(math.MaxInt32),
		actor.WithRestartDelay(lastResortRestartDelay))
	s.enterCallout()
	ch.pid = s.e.Spawn(producer, s.pid.ID, opts...)
	s.emit(EventChildStarted{Supervisor: s.name, Child: id, PID: ch.pid})
	return nil
}

// start spawns ch; a failure to spawn is fed back as an exit so that it goes
// through the same restart decision (and intensity limit) as any other.
func (s *supervisor) start(ch *child) {
	if err := s.spawn(ch); err != nil {
		s.e.Send(s.pid, childExited{id: ch.spec.ID, gen: ch.gen, reason: err})
	}
}

func (s *supervisor) onChildExited(m childExited) {
	ch := s.byID[m.id]
	if ch == nil || ch.gen != m.gen || (ch.status != running && ch.status != stopping) {
		return // stale: an earlier incarnation, or one already abandoned
	}
	ch.pid = nil
	s.emit(EventChildExited{Supervisor: s.name, Child: m.id, Reason: m.reason})
	if ch.status == stopping {
		s.stopped(ch, false)
		return
	}
	if s.seq != nil || s.exiting {
		ch.status = exitedDeferred
		s.deferred = append(s.deferred, deferredExit{ch: ch, gen: ch.gen, reason: m.reason})
		return
	}
	ch.status = notRunning
	s.handleExit(ch, m.reason)
}

func (s *supervisor) onStopTimeout(m stopTimeout) {
	ch := s.byID[m.id]
	if ch == nil || ch.gen != m.gen || ch.status != stopping {
		return
	}
	ch.pid = nil
	s.emit(EventStopTimeout{Supervisor: s.name, Child: m.id, Timeout: ch.spec.shutdown()})
	s.stopped(ch, true)
}

// handleExit makes the restart decision for a child that exited on its own.
func (s *supervisor) handleExit(ch *child, reason error) {
	if !ch.spec.Restart.restarts(reason) {
		s.remove(ch)
		if ch.spec.Significant {
			s.exit(reason)
		}
		return
	}
	n, ok := s.restarts.Add(s.now())
	if !ok {
		err := &GaveUpError{Supervisor: s.name, Restarts: n - 1, Period: s.period, Last: reason}
		if n == 0 {
			err.Restarts = 0
		}
		s.emit(EventGaveUp{Supervisor: s.name, Reason: err})
		s.exit(err)
		return
	}
	var others []*child // in reverse start order
	switch s.spec.Strategy {
	case OneForAll:
		for i := len(s.children) - 1; i >= 0; i-- {
			if x := s.children[i]; x != ch {
				others = append(others, x)
			}
		}
	case RestForOne:
		for i := len(s.children) - 1; i >= 0 && s.children[i] != ch; i-- {
			others = append(others, s.children[i])
		}
	}
	var queue []*child
	for _, x := range others {
		if x.status == running || x.status == stopping {
			if x.spec.Restart == Temporary {
				x.removeOnStop = true
			}
			queue = append(queue, x)
		}
	}
	s.runSequence(queue, func() { s.restartAfter(n) })
}

// restartAfter restarts what is stopped, at once or, with a Backoff, once
// its delay for restart n has passed. The events say so when the restart
// is decided, so that an observer learns of it without waiting out the
// delay. The supervisor's inbox keeps moving meanwhile: a later exit
// supersedes the pending restart with its own (longer) delay, and a stop
// cancels it.
func (s *supervisor) restartAfter(n int) {
	d := s.spec.Backoff.Delay(n)
	if d <= 0 {
		s.restartStopped(n, true)
		return
	}
	for _, ch := range s.children {
		if ch.status == notRunning && !ch.removed {
			s.emit(EventChildRestarted{Supervisor: s.name, Child: ch.spec.ID, Restarts: n, Delay: d})
		}
	}
	s.cancelRestart()
	s.restartToken++
	e, pid, due := s.e, s.pid, restartDue{token: s.restartToken, n: n}
	after := s.spec.after
	if after == nil {
		after = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	s.restartTimer = after(d, func() { e.Send(pid, due) })
}

// restartDue says a restart's Backoff has passed.
type restartDue struct {
	token uint64
	n     int
}

func (s *supervisor) onRestartDue(m restartDue) {
	// A sequence running now ends in a restart decision of its own; an
	// exit stops everything anyway.
	if m.token != s.restartToken || s.restartTimer == nil || s.seq != nil || s.exiting {
		return
	}
	s.restartTimer = nil
	s.restartStopped(m.n, false)
}

// cancelRestart drops a restart waiting out its Backoff.
func (s *supervisor) cancelRestart() {
	if s.restartTimer != nil {
		s.restartTimer()
		s.restartTimer = nil
	}
}

// restartStopped starts, in start order, every child that a strategy (or the
// exit itself) left not running, each announced first unless that was done
// when the restart was decided.
func (s *supervisor) restartStopped(n int, announce bool) {
	for _, ch := range append([]*child(nil), s.children...) {
		if ch.status != notRunning || ch.removed {
			continue
		}
		if announce {
			s.emit(EventChildRestarted{Supervisor: s.name, Child: ch.spec.ID, Restarts: n})
		}
		s.start(ch)
	}
}

func (s *supervisor) runSequence(queue []*child, then func()) {
	s.seq = &sequence{queue: queue, then: then}
	s.seqNext(false)
}

func (s *supervisor) seqNext(bool) {
	for s.seq != nil && len(s.seq.queue) > 0 {
		ch := s.seq.queue[0]
		s.seq.queue = s.seq.queue[1:]
		if !ch.removed && (ch.status == running || ch.status == stopping) {
			s.stopChild(ch, s.seqNext)
			return
		}
	}
	if s.seq == nil {
		return
	}
	then := s.seq.then
	s.seq = nil
	if s.exiting && !s.terminating {
		s.terminate() // an exit was decided while this sequence ran
		return
	}
	then()
	s.drainDeferred()
}

func (s *supervisor) drainDeferred() {
	for s.seq == nil && !s.exiting && len(s.deferred) > 0 {
		d := s.deferred[0]
		s.deferred = s.deferred[1:]
		if d.ch.removed || d.ch.gen != d.gen || d.ch.status != exitedDeferred {
			continue
		}
		d.ch.status = notRunning
		s.handleExit(d.ch, d.reason)
	}
}

// stopChild asks ch to stop and arranges for done to run once it has (or
// once it was abandoned). A watcher goroutine enforces the timeout so the
// supervisor itself never blocks.
func (s *supervisor) stopChild(ch *child, done func(timedOut bool)) {
	ch.onStop = append(ch.onStop, done)
	if ch.status == stopping {
		return
	}
	ch.status = stopping
	if ch.pid == nil {
		return // its spawn failed; that exit is already on the way
	}
	s.e.Send(ch.pid, shutdownRequest{})
	e, sup, id, gen, sig, d := s.e, s.pid, ch.spec.ID, ch.gen, ch.sig, ch.spec.shutdown()
	go func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-sig.ch:
		case <-t.C:
			e.Send(sup, stopTimeout{id: id, gen: gen})
		}
	}()
}

func (s *supervisor) stopped(ch *child, timedOut bool) {
	ch.status, ch.pid = notRunning, nil
	if ch.removeOnStop {
		s.remove(ch)
	}
	cbs := ch.onStop
	ch.onStop = nil
	for _, cb := range cbs {
		cb(timedOut)
	}
}

// exit decides the supervisor's own exit reason (the first one wins) and
// starts stopping the children, unless a stop sequence is already running,
// in which case it takes over when that one ends.
func (s *supervisor) exit(reason error) {
	if s.exiting {
		return
	}
	s.exiting, s.exitReason = true, reason
	s.cancelRestart()
	if s.seq == nil {
		s.terminate()
	}
}

func (s *supervisor) terminate() {
	s.terminating = true
	var queue []*child
	for i := len(s.children) - 1; i >= 0; i-- {
		queue = append(queue, s.children[i])
	}
	s.runSequence(queue, s.finish)
}

func (s *supervisor) finish() {
	s.finished = true
	deregister(s.e, s.sh)
	Exit(s.c, s.exitReason)
}

// onStopped runs when the actor was stopped without going through exit:
// poisoned from outside, or this package's own code panicked. The inbox is
// already dead, so the children are stopped synchronously, each still
// bounded by its Shutdown time.
func (s *supervisor) onStopped() {
	if s.finished || s.sh == nil {
		return
	}
	s.finished = true
	s.cancelRestart()
	for i := len(s.children) - 1; i >= 0; i-- {
		ch := s.children[i]
		if ch.pid == nil || (ch.status != running && ch.status != stopping) {
			continue
		}
		if ch.status == running {
			s.e.Send(ch.pid, shutdownRequest{})
		}
		t := time.NewTimer(ch.spec.shutdown())
		select {
		case <-ch.sig.ch:
		case <-t.C:
			s.emit(EventStopTimeout{Supervisor: s.name, Child: ch.spec.ID, Timeout: ch.spec.shutdown()})
		}
		t.Stop()
	}
	deregister(s.e, s.sh)
}

func (s *supervisor) onStartChild(m startChildRequest) {
	if s.exiting {
		m.reply <- startChildReply{err: ErrNotRunning}
		return
	}
	if err := m.spec.validate(); err != nil {
		m.reply <- startChildReply{err: err}
		return
	}
	if s.byID[m.spec.ID] != nil {
		m.reply <- startChildReply{err: fmt.Errorf("supervisor %s: child %q already exists", s.name, m.spec.ID)}
		return
	}
	ch := s.add(m.spec)
	if err := s.spawn(ch); err != nil {
		s.remove(ch)
		m.reply <- startChildReply{err: err}
		return
	}
	m.reply <- startChildReply{pid: ch.pid}
}

func (s *supervisor) onTerminateChild(m terminateChildRequest) {
	ch := s.byID[m.id]
	if ch == nil {
		m.reply <- ErrUnknownChild
		return
	}
	ch.removeOnStop = true
	if ch.status != running && ch.status != stopping {
		s.remove(ch)
		m.reply <- nil
		return
	}
	d := ch.spec.shutdown()
	s.stopChild(ch, func(timedOut bool) {
		if timedOut {
			m.reply <- fmt.Errorf("supervisor %s: child %q did not stop within %v; abandoned", s.name, m.id, d)
			return
		}
		m.reply <- nil
	})
}
