package supervisor

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// jobFunc makes a func a Job, for tests.
type jobFunc func()

func (f jobFunc) Run() { f() }

// waitGoroutines waits until the process has at most n goroutines.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	got := runtime.NumGoroutine()
	for deadline := time.Now().Add(hangTimeout); got > n && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		got = runtime.NumGoroutine()
	}
	if got > n {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines, want at most %d\n%s", got, n, buf[:runtime.Stack(buf, true)])
	}
}

// Runners keeps as many goroutines as jobs ran at once, reuses the most
// recently idle first, ends the idle ones after a sweep period, and Close
// waits for a busy one.
func TestRunners(t *testing.T) {
	base := runtime.NumGoroutine()
	p := NewRunners()
	p.every = time.Hour // no sweep until the test asks for one

	// Three at once: three goroutines.
	var started, release sync.WaitGroup
	started.Add(3)
	release.Add(1)
	ids := make(chan uint64, 3)
	for range 3 {
		if !p.Go(jobFunc(func() { ids <- goid(); started.Done(); release.Wait() })) {
			t.Fatal("Go refused on an open pool")
		}
	}
	started.Wait()
	release.Done()
	waitIdle := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(hangTimeout); ; time.Sleep(time.Millisecond) {
			p.mu.Lock()
			idle := len(p.idle)
			p.mu.Unlock()
			if idle == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d idle, want %d", idle, n)
			}
		}
	}
	waitIdle(3)
	if got := runtime.NumGoroutine(); got > base+3 {
		t.Fatalf("%d goroutines after three jobs, want at most %d", got, base+3)
	}
	close(ids)
	seen := map[uint64]bool{}
	for id := range ids {
		seen[id] = true
	}

	// One at a time, many times: always the same goroutine, the last to
	// go idle, and one of the three.
	var last uint64
	for i := range 100 {
		done := make(chan uint64)
		p.Go(jobFunc(func() { done <- goid() }))
		id := <-done
		if !seen[id] || (i > 0 && id != last) {
			t.Fatalf("job %d ran on goroutine %d (last %d; pool %v)", i, id, last, seen)
		}
		last = id
		waitIdle(3)
	}

	// Two sweeps with nothing to do end all three.
	p.sweepIdle()
	waitIdle(3) // the first sweep ends none: they went idle after the last one
	p.sweepIdle()
	waitIdle(0)
	waitGoroutines(t, base)

	// Close waits for a busy job, and Go refuses after it.
	entered, free := make(chan struct{}), make(chan struct{})
	p.Go(jobFunc(func() { close(entered); <-free }))
	<-entered
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a job ran")
	case <-time.After(20 * time.Millisecond): // can only hide a bug, never fail a correct run
	}
	close(free)
	<-closed
	if p.Go(jobFunc(func() { t.Error("ran after Close") })) {
		t.Fatal("Go accepted a job after Close")
	}
	waitGoroutines(t, base)
}

// The sweep runs by itself while goroutines are idle, and stops when none
// is left.
func TestRunnersSweepByItself(t *testing.T) {
	base := runtime.NumGoroutine()
	p := NewRunners()
	p.every = time.Millisecond
	defer p.Close()
	done := make(chan struct{})
	p.Go(jobFunc(func() { close(done) }))
	<-done
	for deadline := time.Now().Add(hangTimeout); ; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		armed, idle := p.sweep != nil, len(p.idle)
		p.mu.Unlock()
		if !armed && idle == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("idle %d, sweep armed %v: want none idle and no sweep", idle, armed)
		}
	}
	waitGoroutines(t, base)
}

// The pool's owner in a tree closes it when the tree stops, after the
// actors started after it: an OnRunners loop still handling a message when
// the tree stops finishes it first.
func TestRunnersOwnedByTree(t *testing.T) {
	h := newHarness(t)
	base := runtime.NumGoroutine()
	p := NewRunners()
	in := NewInbox()
	root := h.start("runners", Spec{Children: []ChildSpec{
		{ID: "runners", Start: p.Actor(), Restart: Permanent, Shutdown: hangTimeout},
		{ID: "loop", Start: OnRunners(in, p, func() Loop {
			return &recLoop{name: "loop", rec: h.rec, routines: map[uint64]bool{}}
		}), Restart: Permanent, Shutdown: hangTimeout},
	}})
	h.waitFor("start", isStarted("loop"))
	entered, release := make(chan struct{}), make(chan struct{})
	in.Send(loopBlock{entered, release})
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- stopRoot(t, root) }()
	time.Sleep(20 * time.Millisecond) // can only hide a bug, never fail a correct run
	close(release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	h.assertLog("start:loop", "stop:loop")
	if p.Go(jobFunc(func() {})) {
		t.Fatal("the pool is open after its owner stopped")
	}
	waitGoroutines(t, base+1) // the harness's engine may keep one
}

// An idle OnRunners loop holds no goroutine: a thousand of them cost none.
func TestOnRunnersIdleHoldsNoGoroutine(t *testing.T) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := NewRunners()
	p.every = time.Hour
	defer p.Close()
	rec := &recorder{}
	base := runtime.NumGoroutine()
	const n = 1000
	pids := make([]*actor.PID, n)
	ins := make([]*Inbox, n)
	for i := range n {
		ins[i] = NewInbox()
		pids[i] = e.Spawn(OnRunners(ins[i], p, func() Loop {
			return &recLoop{name: "l", rec: rec, routines: map[uint64]bool{}}
		}), "idle", actor.WithID(string(rune('a'+i%26))+time.Now().Format("150405.000000000")))
	}
	for _, in := range ins {
		in.Send(loopRecord{"x"})
	}
	for deadline := time.Now().Add(hangTimeout); len(rec.get()) < 2*n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries, want %d", len(rec.get()), 2*n)
		}
	}
	// The pool's goroutines (as many as ran at once, idle now) and none
	// per loop, once the last runs have given theirs back and hollywood's
	// own goroutines for the Started messages have ended; once swept, none
	// at all.
	for deadline := time.Now().Add(hangTimeout); ; time.Sleep(time.Millisecond) {
		p.mu.Lock()
		idle := len(p.idle)
		p.mu.Unlock()
		got := runtime.NumGoroutine() - base
		if got <= idle+2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines for %d idle loops (pool: %d idle)", got, n, idle)
		}
	}
	p.mu.Lock()
	p.every = time.Millisecond
	p.mu.Unlock()
	p.sweepIdle() // re-arms the sweep at the new period
	waitGoroutines(t, base+2)
	for _, pid := range pids {
		<-e.Poison(pid).Done()
	}
}
