package supervisor

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
)

var errBoom = errors.New("boom")

// TestRestartMatrix covers every restart type × strategy × exit kind. The
// middle child b exits; a and c are permanent siblings.
func TestRestartMatrix(t *testing.T) {
	exits := []struct {
		name  string
		cmd   any
		check func(error) bool
	}{
		{"normal", cmdExit{nil}, func(err error) bool { return err == nil }},
		{"shutdown", cmdExit{Shutdown(errBoom)}, func(err error) bool {
			return errors.Is(err, ErrShutdown) && errors.Is(err, errBoom) && !IsAbnormal(err)
		}},
		{"error", cmdExit{errBoom}, func(err error) bool { return errors.Is(err, errBoom) && IsAbnormal(err) }},
		{"panic", cmdPanic{"kaboom"}, func(err error) bool {
			var p *PanicError
			return errors.As(err, &p) && p.Value == "kaboom" && len(p.Stack) > 0
		}},
	}
	tails := map[Strategy][]string{
		OneForOne:  {"start:b"},
		OneForAll:  {"stop:c", "stop:a", "start:a", "start:b", "start:c"},
		RestForOne: {"stop:c", "start:b", "start:c"},
	}
	lastStarted := map[Strategy]string{OneForOne: "b", OneForAll: "c", RestForOne: "c"}

	for _, strategy := range []Strategy{OneForOne, OneForAll, RestForOne} {
		for _, restart := range []Restart{Permanent, Transient, Temporary} {
			for _, ex := range exits {
				t.Run(fmt.Sprintf("%v/%v/%s", strategy, restart, ex.name), func(t *testing.T) {
					h := newHarness(t)
					root := h.start("m", Spec{Strategy: strategy, Children: []ChildSpec{
						workerSpec("a", h.rec, Permanent),
						workerSpec("b", h.rec, restart),
						workerSpec("c", h.rec, Permanent),
					}})
					h.assertLog("start:a", "start:b", "start:c") // started synchronously

					h.e.Send(ChildPID(root.PID(), "b"), ex.cmd)
					ev := h.waitFor("b exited", isExited("b")).(EventChildExited)
					if !ex.check(ev.Reason) {
						t.Fatalf("unexpected exit reason %#v", ev.Reason)
					}
					want := []string{"start:a", "start:b", "start:c", "stop:b"}
					restarted := restart.restarts(ev.Reason)
					if restarted {
						h.waitFor("restart done", isStarted(lastStarted[strategy]))
						want = append(want, tails[strategy]...)
					}
					h.barrier(root.PID())
					h.assertLog(want...)
					if !restarted {
						if err := TerminateChild(h.e, root.PID(), "b"); !errors.Is(err, ErrUnknownChild) {
							t.Fatalf("b should have been removed, TerminateChild: %v", err)
						}
						if h.e.Registry.GetPID(root.PID().ID, "b") != nil {
							t.Fatal("b still registered")
						}
					}
					if err := stopRoot(t, root); err != nil {
						t.Fatal(err)
					}
					if !errors.Is(root.Err(), ErrShutdown) {
						t.Fatalf("Err after Stop = %v", root.Err())
					}
				})
			}
		}
	}
}

// TestStrategyRemovesTemporarySibling: OTP stops temporary siblings for a
// restart but does not bring them back.
func TestStrategyRemovesTemporarySibling(t *testing.T) {
	h := newHarness(t)
	root := h.start("tmp", Spec{Strategy: OneForAll, Children: []ChildSpec{
		workerSpec("a", h.rec, Temporary),
		workerSpec("b", h.rec, Permanent),
		workerSpec("c", h.rec, Permanent),
	}})
	h.e.Send(ChildPID(root.PID(), "b"), cmdPanic{"x"})
	h.waitFor("b exited", isExited("b"))
	h.waitFor("c restarted", isStarted("c"))
	h.barrier(root.PID())
	h.assertLog("start:a", "start:b", "start:c", "stop:b", "stop:c", "stop:a", "start:b", "start:c")
	if err := TerminateChild(h.e, root.PID(), "a"); !errors.Is(err, ErrUnknownChild) {
		t.Fatalf("temporary a should be gone: %v", err)
	}
}

func TestIntensity(t *testing.T) {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

	t.Run("limit reached then exceeded", func(t *testing.T) {
		h := newHarness(t)
		clk := &fakeClock{t: base}
		s := Spec{Intensity: 3, Period: 5 * time.Second, Children: []ChildSpec{workerSpec("w", h.rec, Permanent)}}
		s.now = clk.now
		root := h.start("i", s)
		h.waitFor("started", isStarted("w"))
		for i := 1; i <= 3; i++ {
			clk.advance(time.Second) // all inside the window
			h.e.Send(ChildPID(root.PID(), "w"), cmdPanic{i})
			ev := h.waitFor("restart", func(ev Event) bool { _, ok := ev.(EventChildRestarted); return ok })
			if n := ev.(EventChildRestarted).Restarts; n != i {
				t.Fatalf("restart %d reported %d in window", i, n)
			}
			h.waitFor("started", isStarted("w"))
		}
		h.e.Send(ChildPID(root.PID(), "w"), cmdPanic{4})
		h.waitFor("gave up", func(ev Event) bool { _, ok := ev.(EventGaveUp); return ok })
		h.waitDone(root)
		var g *GaveUpError
		if !errors.As(root.Err(), &g) || g.Restarts != 3 || g.Period != 5*time.Second || g.Supervisor != "i" {
			t.Fatalf("Err = %#v", root.Err())
		}
		var p *PanicError
		if !errors.As(g, &p) || p.Value != 4 || !IsAbnormal(g) {
			t.Fatalf("GaveUpError should wrap the last panic: %v", g)
		}
		if err := stopRoot(t, root); !errors.As(err, &g) {
			t.Fatalf("Stop after giving up should return the reason, got %v", err)
		}
		if got := h.rec.get(); got[len(got)-1] != "stop:w" {
			t.Fatalf("child not stopped: %v", got)
		}
	})

	t.Run("spread beyond period never gives up", func(t *testing.T) {
		h := newHarness(t)
		clk := &fakeClock{t: base}
		s := Spec{Intensity: 1, Period: 5 * time.Second, Children: []ChildSpec{workerSpec("w", h.rec, Permanent)}}
		s.now = clk.now
		root := h.start("i", s)
		h.waitFor("started", isStarted("w"))
		for i := 0; i < 20; i++ {
			clk.advance(5*time.Second + time.Millisecond)
			h.e.Send(ChildPID(root.PID(), "w"), cmdExit{errBoom})
			ev := h.waitFor("restart", func(ev Event) bool { _, ok := ev.(EventChildRestarted); return ok })
			if n := ev.(EventChildRestarted).Restarts; n != 1 {
				t.Fatalf("window should hold one restart, has %d", n)
			}
			h.waitFor("started", isStarted("w"))
		}
		select {
		case <-root.Done():
			t.Fatalf("gave up: %v", root.Err())
		default:
		}
	})

	t.Run("negative intensity gives up at once", func(t *testing.T) {
		h := newHarness(t)
		root := h.start("i", Spec{Intensity: -1, Children: []ChildSpec{workerSpec("w", h.rec, Permanent)}})
		h.e.Send(ChildPID(root.PID(), "w"), cmdExit{errBoom})
		h.waitDone(root)
		var g *GaveUpError
		if !errors.As(root.Err(), &g) || !errors.Is(g, errBoom) {
			t.Fatalf("Err = %v", root.Err())
		}
	})
}

func TestShutdownOrder(t *testing.T) {
	h := newHarness(t)
	root := h.start("s", Spec{Children: []ChildSpec{
		workerSpec("a", h.rec, Permanent),
		workerSpec("b", h.rec, Transient),
		workerSpec("c", h.rec, Temporary),
	}})
	if err := stopRoot(t, root); err != nil {
		t.Fatal(err)
	}
	h.assertLog("start:a", "start:b", "start:c", "stop:c", "stop:b", "stop:a")
	if !errors.Is(root.Err(), ErrShutdown) {
		t.Fatalf("Err = %v", root.Err())
	}
	if err := stopRoot(t, root); err != nil { // idempotent
		t.Fatal(err)
	}
	if _, err := StartChild(h.e, root.PID(), workerSpec("late", h.rec, Temporary)); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("StartChild after stop: %v", err)
	}
}

func TestStuckChildAbandoned(t *testing.T) {
	h := newHarness(t)
	stuck := workerSpec("b", h.rec, Permanent)
	stuck.Shutdown = 50 * time.Millisecond
	root := h.start("s", Spec{Children: []ChildSpec{
		workerSpec("a", h.rec, Permanent), stuck, workerSpec("c", h.rec, Permanent),
	}})
	release := make(chan struct{})
	defer close(release)
	h.e.Send(ChildPID(root.PID(), "b"), cmdBlock{release})

	begin := time.Now()
	if err := stopRoot(t, root); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d < 50*time.Millisecond || d > 2*time.Second {
		t.Fatalf("stop took %v", d)
	}
	h.waitFor("stop timeout", func(ev Event) bool {
		e, ok := ev.(EventStopTimeout)
		return ok && e.Child == "b" && e.Timeout == 50*time.Millisecond
	})
	h.assertLog("start:a", "start:b", "start:c", "stop:c", "stop:a")
}

func TestSignificantChild(t *testing.T) {
	for _, tc := range []struct {
		name    string
		restart Restart
		reason  error
	}{
		{"transient normal", Transient, nil},
		{"transient shutdown", Transient, ErrShutdown},
		{"temporary error", Temporary, errBoom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			sig := workerSpec("s", h.rec, tc.restart)
			sig.Significant = true
			root := h.start("sig", Spec{Children: []ChildSpec{
				workerSpec("a", h.rec, Permanent), sig, workerSpec("c", h.rec, Permanent),
			}})
			h.e.Send(ChildPID(root.PID(), "s"), cmdExit{tc.reason})
			h.waitDone(root)
			if root.Err() != tc.reason {
				t.Fatalf("Err = %v, want %v", root.Err(), tc.reason)
			}
			h.assertLog("start:a", "start:s", "start:c", "stop:s", "stop:c", "stop:a")
		})
	}
}

// TestNestedGiveUpEscalates: the inner supervisor's child crash-loops in
// Started, the inner gives up, and the outer restarts the inner, whose child
// then comes up.
func TestNestedGiveUpEscalates(t *testing.T) {
	h := newHarness(t)
	var starts atomic.Int32
	crasher := ChildSpec{ID: "crasher", Start: func() actor.Receiver {
		return &worker{name: "crasher", rec: h.rec, panicInStart: func() bool { return starts.Add(1) <= 2 }}
	}}
	inner := ChildSpec{ID: "inner", Shutdown: time.Second, Start: New(h.spec(Spec{
		Name: "inner", Intensity: 1, Children: []ChildSpec{crasher},
	}))}
	root := h.start("outer", Spec{Intensity: 5, Children: []ChildSpec{inner}})

	h.waitFor("inner gave up", func(ev Event) bool { e, ok := ev.(EventGaveUp); return ok && e.Supervisor == "inner" })
	ev := h.waitFor("inner exited", func(ev Event) bool {
		e, ok := ev.(EventChildExited)
		return ok && e.Supervisor == "outer" && e.Child == "inner"
	}).(EventChildExited)
	var g *GaveUpError
	if !errors.As(ev.Reason, &g) || g.Supervisor != "inner" {
		t.Fatalf("inner exit reason = %v", ev.Reason)
	}
	h.waitFor("outer restarted inner", func(ev Event) bool {
		e, ok := ev.(EventChildRestarted)
		return ok && e.Supervisor == "outer" && e.Child == "inner"
	})
	h.waitFor("crasher up", func(ev Event) bool { e, ok := ev.(EventChildStarted); return ok && e.Supervisor == "inner" })
	innerPID := ChildPID(root.PID(), "inner")
	if h.e.Registry.GetPID(innerPID.ID, "crasher") == nil {
		t.Fatal("crasher is not running after the outer restart")
	}
	if err := stopRoot(t, root); err != nil {
		t.Fatal(err)
	}
	h.assertLog("start:crasher", "stop:crasher", "start:crasher", "stop:crasher", "start:crasher", "stop:crasher")
}

func TestPanicDuringStart(t *testing.T) {
	t.Run("Started", func(t *testing.T) {
		h := newHarness(t)
		var once atomic.Bool
		p := ChildSpec{ID: "p", Start: func() actor.Receiver {
			return &worker{name: "p", rec: h.rec, panicInStart: func() bool { return once.CompareAndSwap(false, true) }}
		}}
		root := h.start("ps", Spec{Children: []ChildSpec{workerSpec("a", h.rec, Permanent), p}})
		ev := h.waitFor("p exited", isExited("p")).(EventChildExited)
		var pe *PanicError
		if !errors.As(ev.Reason, &pe) || pe.Value != "boom in Started" {
			t.Fatalf("reason = %v", ev.Reason)
		}
		h.waitFor("p restarted", isStarted("p"))
		h.barrier(root.PID())
		h.assertLog("start:a", "start:p", "stop:p", "start:p")
	})
	t.Run("Producer", func(t *testing.T) {
		h := newHarness(t)
		var once atomic.Bool
		p := ChildSpec{ID: "p", Start: func() actor.Receiver {
			if once.CompareAndSwap(false, true) {
				panic(errBoom)
			}
			return &worker{name: "p", rec: h.rec}
		}}
		root := h.start("pp", Spec{Children: []ChildSpec{p}})
		ev := h.waitFor("p exited", isExited("p")).(EventChildExited)
		if !errors.Is(ev.Reason, errBoom) {
			t.Fatalf("reason = %v", ev.Reason)
		}
		h.waitFor("p restarted", isStarted("p"))
		h.barrier(root.PID())
		h.assertLog("start:p")
	})
	t.Run("re-panic keeps PanicError", func(t *testing.T) {
		h := newHarness(t)
		root := h.start("rp", Spec{Children: []ChildSpec{workerSpec("w", h.rec, Permanent)}})
		orig := &PanicError{Value: "original", Stack: []byte("original stack")}
		h.e.Send(ChildPID(root.PID(), "w"), cmdPanic{orig})
		ev := h.waitFor("w exited", isExited("w")).(EventChildExited)
		if ev.Reason != error(orig) {
			t.Fatalf("reason = %#v", ev.Reason)
		}
	})
}

func TestDynamicChildren(t *testing.T) {
	h := newHarness(t)
	root := h.start("dyn", Spec{})
	const n = 10
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("d%d", i)
			pid, err := StartChild(h.e, root.PID(), workerSpec(id, h.rec, Temporary))
			if err != nil {
				errs <- err
				return
			}
			if !pid.Equals(ChildPID(root.PID(), id)) || h.e.Registry.GetPID(root.PID().ID, id) == nil {
				errs <- fmt.Errorf("%s: not spawned on return (pid %v)", id, pid)
			}
		})
	}
	wg.Wait()
	if _, err := StartChild(h.e, root.PID(), workerSpec("d0", h.rec, Temporary)); err == nil {
		t.Fatal("duplicate ID accepted")
	}
	if _, err := StartChild(h.e, root.PID(), ChildSpec{ID: "nil-start"}); err == nil {
		t.Fatal("nil Start accepted")
	}
	for i := range n {
		wg.Go(func() {
			if err := TerminateChild(h.e, root.PID(), fmt.Sprintf("d%d", i)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range n {
		if h.e.Registry.GetPID(root.PID().ID, fmt.Sprintf("d%d", i)) != nil {
			t.Fatalf("d%d still running", i)
		}
	}
	if err := TerminateChild(h.e, root.PID(), "d3"); !errors.Is(err, ErrUnknownChild) {
		t.Fatalf("second terminate: %v", err)
	}
	stops := 0
	for _, l := range h.rec.get() {
		if len(l) > 5 && l[:5] == "stop:" {
			stops++
		}
	}
	if stops != n {
		t.Fatalf("%d stops, want %d", stops, n)
	}
	if _, err := StartChild(h.e, actor.NewPID(h.e.Address(), "nobody"), workerSpec("x", h.rec, Temporary)); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("unknown supervisor: %v", err)
	}
}

// TestStartChildFromOwnGoroutine: a child whose Started asks its own
// supervisor for a sibling would deadlock; it gets an error instead.
func TestStartChildFromOwnGoroutine(t *testing.T) {
	h := newHarness(t)
	got := make(chan error, 1)
	var sup *actor.PID
	spawner := ChildSpec{ID: "spawner", Start: func() actor.Receiver {
		return &worker{name: "spawner", rec: h.rec, onStartedHook: func(c *actor.Context) {
			_, err := StartChild(c.Engine(), sup, workerSpec("sib", h.rec, Temporary))
			got <- err
		}}
	}}
	root := h.start("own", Spec{})
	sup = root.PID()
	if _, err := StartChild(h.e, sup, spawner); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err == nil {
		t.Fatal("expected a self-deadlock error")
	}
}

// TestStartChildFromOwnEventHook: an EventHook runs on its supervisor's
// goroutine too, so asking that supervisor for a child from it gets an
// error rather than a deadlock; from another goroutine, the same call works
// while the supervisor is idle.
func TestStartChildFromOwnEventHook(t *testing.T) {
	h := newHarness(t)
	got := make(chan error, 1)
	var sup *actor.PID
	var once sync.Once
	spec := h.spec(Spec{})
	spec.EventHook = func(ev Event) {
		if _, ok := ev.(EventChildStarted); ok {
			once.Do(func() {
				_, err := StartChild(h.e, sup, workerSpec("from-hook", h.rec, Temporary))
				got <- err
			})
		}
	}
	root, err := Start(h.e, "hook", spec)
	if err != nil {
		t.Fatal(err)
	}
	sup = root.PID()
	if _, err := StartChild(h.e, sup, workerSpec("first", h.rec, Temporary)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("expected a self-deadlock error")
		}
	case <-time.After(hangTimeout):
		t.Fatal("StartChild from the EventHook hung")
	}
	if _, err := StartChild(h.e, sup, workerSpec("second", h.rec, Temporary)); err != nil {
		t.Fatalf("StartChild from another goroutine afterwards: %v", err)
	}
}

// TestStartChildOnGrandparentFromStarted: a child of a child supervisor is
// started on the root's goroutine (hollywood runs Started inside Spawn, all
// the way down), so asking the root for a child from there is caught too.
func TestStartChildOnGrandparentFromStarted(t *testing.T) {
	h := newHarness(t)
	got := make(chan error, 1)
	rootPID := RootPID(h.e, "gp") // known before the tree starts, as it must be
	grandchild := ChildSpec{ID: "gc", Restart: Temporary, Start: func() actor.Receiver {
		return &worker{name: "gc", rec: h.rec, onStartedHook: func(c *actor.Context) {
			_, err := StartChild(c.Engine(), rootPID, workerSpec("sib", h.rec, Temporary))
			got <- err
		}}
	}}
	h.start("gp", Spec{Children: []ChildSpec{
		{ID: "mid", Start: New(h.spec(Spec{Children: []ChildSpec{grandchild}}))},
	}})
	select {
	case err := <-got:
		if err == nil || errors.Is(err, ErrNotRunning) {
			t.Fatalf("got %v, want a self-deadlock error", err)
		}
	case <-time.After(hangTimeout):
		t.Fatal("StartChild from a grandchild's Started hung")
	}
}

func TestEnumsAndErrors(t *testing.T) {
	for v, want := range map[fmt.Stringer]string{
		Permanent: "permanent", Transient: "transient", Temporary: "temporary", Restart(9): "Restart(9)",
		OneForOne: "one_for_one", OneForAll: "one_for_all", RestForOne: "rest_for_one", Strategy(9): "Strategy(9)",
	} {
		if v.String() != want {
			t.Errorf("%v.String() = %q, want %q", want, v.String(), want)
		}
	}
	if Shutdown(nil) != ErrShutdown {
		t.Error("Shutdown(nil) != ErrShutdown")
	}
	r := Shutdown(errBoom)
	if !errors.Is(r, ErrShutdown) || !errors.Is(r, errBoom) || IsAbnormal(r) {
		t.Errorf("Shutdown(cause) = %v", r)
	}
	if IsAbnormal(nil) || !IsAbnormal(errBoom) || !IsAbnormal(&PanicError{Value: 1}) {
		t.Error("IsAbnormal")
	}
	if (&PanicError{Value: "x"}).Error() != "panic: x" || !errors.Is(&PanicError{Value: errBoom}, errBoom) {
		t.Error("PanicError")
	}
	if _, err := Start(nil, "x", Spec{}); err == nil {
		t.Error("nil engine accepted")
	}
	h := newHarness(t)
	if _, err := Start(h.e, "dup", Spec{Children: []ChildSpec{workerSpec("a", h.rec, 0), workerSpec("a", h.rec, 0)}}); err == nil {
		t.Error("duplicate child IDs accepted")
	}
	h.start("twice", Spec{})
	if _, err := Start(h.e, "twice", Spec{}); err == nil {
		t.Error("second root with the same name accepted")
	}
}

// TestExitSignal: a supervisor told to exit with an abnormal reason stops
// its children and fails; its parent sees that reason and restarts it.
func TestExitSignal(t *testing.T) {
	h := newHarness(t)
	inner := ChildSpec{ID: "inner", Shutdown: time.Second, Start: New(h.spec(Spec{
		Name: "inner", Children: []ChildSpec{workerSpec("w", h.rec, Permanent)},
	}))}
	root := h.start("outer", Spec{Children: []ChildSpec{inner}})
	h.waitFor("w up", isStarted("w"))
	innerPID := ChildPID(root.PID(), "inner")
	boom := errors.New("boom")
	h.e.Send(innerPID, ExitSignal{}) // nil: ignored
	h.e.Send(innerPID, ExitSignal{Reason: boom})
	ev := h.waitFor("inner exited", func(ev Event) bool {
		e, ok := ev.(EventChildExited)
		return ok && e.Supervisor == "outer" && e.Child == "inner"
	}).(EventChildExited)
	if !errors.Is(ev.Reason, boom) {
		t.Fatalf("inner exit reason = %v, want boom", ev.Reason)
	}
	h.waitFor("outer restarted inner", func(ev Event) bool {
		e, ok := ev.(EventChildRestarted)
		return ok && e.Supervisor == "outer" && e.Child == "inner"
	})
	h.waitFor("w up again", isStarted("w"))
	if err := stopRoot(t, root); err != nil {
		t.Fatal(err)
	}
	h.assertLog("start:w", "stop:w", "start:w", "stop:w")
}

// fakeTimers is the injected Spec.after: a test fires what is due by hand.
type fakeTimers struct {
	mu      sync.Mutex
	pending []fakeTimer
	set     chan time.Duration
}

type fakeTimer struct {
	d       time.Duration
	f       func()
	stopped *bool
}

func (ft *fakeTimers) after(d time.Duration, f func()) func() bool {
	ft.mu.Lock()
	stopped := new(bool)
	ft.pending = append(ft.pending, fakeTimer{d, f, stopped})
	ft.mu.Unlock()
	ft.set <- d
	return func() bool {
		ft.mu.Lock()
		defer ft.mu.Unlock()
		was := !*stopped
		*stopped = true
		return was
	}
}

// fire runs the newest timer that is not stopped.
func (ft *fakeTimers) fire(t *testing.T) {
	t.Helper()
	ft.mu.Lock()
	var f func()
	for i := len(ft.pending) - 1; i >= 0; i-- {
		if p := ft.pending[i]; !*p.stopped {
			*p.stopped, f = true, p.f
			break
		}
	}
	ft.mu.Unlock()
	if f == nil {
		t.Fatal("no timer to fire")
	}
	f()
}

// TestBackoff: with Spec.Backoff, each restart within the window waits
// twice as long as the one before, up to Max; the event says how long and
// which attempt; a stop while a restart waits cancels it.
func TestBackoff(t *testing.T) {
	h := newHarness(t)
	clk := &fakeClock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	ft := &fakeTimers{set: make(chan time.Duration, 16)}
	s := Spec{Intensity: 10, Period: time.Minute, Backoff: Backoff{Initial: 100 * time.Millisecond, Max: 300 * time.Millisecond},
		Children: []ChildSpec{workerSpec("w", h.rec, Permanent)}}
	s.now, s.after = clk.now, ft.after
	root := h.start("b", s)
	h.waitFor("started", isStarted("w"))
	for i, want := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond} {
		clk.advance(time.Second)
		h.e.Send(ChildPID(root.PID(), "w"), cmdExit{errBoom})
		h.waitFor("exited", isExited("w"))
		select {
		case d := <-ft.set:
			if d != want {
				t.Fatalf("restart %d waits %v, want %v", i+1, d, want)
			}
		case <-time.After(hangTimeout):
			t.Fatalf("restart %d set no timer", i+1)
		}
		// The restart is announced when decided, with its attempt and
		// delay; nothing starts before the timer fires, and the
		// supervisor still answers meanwhile.
		ev := h.waitFor("restart", func(ev Event) bool { _, ok := ev.(EventChildRestarted); return ok }).(EventChildRestarted)
		if ev.Restarts != i+1 || ev.Delay != want {
			t.Fatalf("restart event %+v, want attempt %d after %v", ev, i+1, want)
		}
		h.barrier(root.PID())
		select {
		case ev := <-h.events:
			t.Fatalf("before its backoff passed: %v", ev)
		default:
		}
		ft.fire(t)
		h.waitFor("started", isStarted("w"))
	}

	// A stop while a restart waits: no restart, and a prompt, clean stop.
	h.e.Send(ChildPID(root.PID(), "w"), cmdExit{errBoom})
	<-ft.set
	if err := stopRoot(t, root); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	ft.mu.Lock()
	stopped := *ft.pending[len(ft.pending)-1].stopped
	ft.mu.Unlock()
	if !stopped {
		t.Error("the pending restart's timer was not stopped with the supervisor")
	}
	for len(h.events) > 0 {
		if ev := <-h.events; isStarted("w")(ev) {
			t.Errorf("restarted after the stop: %v", ev)
		}
	}
}
