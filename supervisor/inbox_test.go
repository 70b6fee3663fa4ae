package supervisor

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// The loop tests run twice: on OwnGoroutine, and on OnRunners with a pool
// of the test's (bothLoops sets these; no test here runs in parallel).
var (
	newTestLoop    = OwnGoroutine
	lentLoops      bool
	closeTestLoops = func() {}
)

func bothLoops(t *testing.T, test func(*testing.T)) {
	t.Run("OwnGoroutine", test)
	t.Run("OnRunners", func(t *testing.T) {
		p := NewRunners()
		newTestLoop = func(in *Inbox, newLoop func() Loop) actor.Producer { return OnRunners(in, p, newLoop) }
		lentLoops, closeTestLoops = true, p.Close
		defer func() {
			newTestLoop, lentLoops, closeTestLoops = OwnGoroutine, false, func() {}
			p.Close()
		}()
		test(t)
	})
}

// Commands for the scriptable loop.
type (
	loopRecord  struct{ s string }
	loopPanicOn struct{}
	loopExitOn  struct{ reason error }
	loopBlock   struct{ entered, release chan struct{} }
)

// recLoop records, with the goroutine it ran on, everything it is given.
type recLoop struct {
	name     string
	rec      *recorder
	batches  *recorder // one entry per EndBatch: how many messages it closed
	inBatch  int
	pending  bool // take Pending at Stopped
	mu       sync.Mutex
	routines map[uint64]bool
}

func (l *recLoop) Receive(lc *LoopContext, msg any) {
	switch m := msg.(type) {
	case actor.Started:
		l.rec.add("start:" + l.name)
	case actor.Stopped:
		if l.pending {
			for _, p := range lc.Pending() {
				if r, ok := p.(loopRecord); ok {
					l.rec.add("pending:" + r.s)
				}
			}
		}
		l.rec.add("stop:" + l.name)
		return
	case loopRecord:
		l.rec.add(m.s)
	case loopPanicOn:
		panic("loop boom")
	case loopExitOn:
		lc.Exit(m.reason)
	case loopBlock:
		if m.entered != nil {
			close(m.entered)
		}
		<-m.release
	}
	l.inBatch++
	l.mu.Lock()
	l.routines[goid()] = true
	l.mu.Unlock()
}

func (l *recLoop) EndBatch(*LoopContext) {
	if l.batches != nil {
		l.batches.add(fmt.Sprint(l.inBatch))
	}
	l.inBatch = 0
}

func loopSpec(id string, in *Inbox, rec *recorder, r Restart) (ChildSpec, *[]*recLoop) {
	var made []*recLoop
	return ChildSpec{ID: id, Restart: r, Start: newTestLoop(in, func() Loop {
		l := &recLoop{name: id, rec: rec, routines: map[uint64]bool{}}
		made = append(made, l)
		return l
	})}, &made
}

func (h *harness) waitLog(n int) []string {
	h.t.Helper()
	deadline := time.Now().Add(hangTimeout)
	for len(h.rec.get()) < n {
		if time.Now().After(deadline) {
			h.t.Fatalf("log has %d entries, want %d: %v", len(h.rec.get()), n, h.rec.get())
		}
		time.Sleep(time.Millisecond)
	}
	return h.rec.get()
}

// TestLoopOrderAndOneGoroutine: messages sent to the Inbox and to the PID
// by one sender arrive in order, after Started, all on one goroutine that
// is not the sender's.
func TestLoopOrderAndOneGoroutine(t *testing.T) { bothLoops(t, testLoopOrderAndOneGoroutine) }

func testLoopOrderAndOneGoroutine(t *testing.T) {
	h := newHarness(t)
	in := NewInbox()
	spec, made := loopSpec("loop", in, h.rec, Permanent)
	root := h.start("order", Spec{Children: []ChildSpec{spec}})
	pid := ChildPID(root.PID(), "loop")
	// Before Started is even handled: the inbox keeps them.
	const n = 1000
	for i := range n {
		if i%2 == 0 {
			in.Send(loopRecord{fmt.Sprint(i)})
		} else {
			// Through the PID: forwarded, so only ordered with the direct
			// sends once it has been forwarded. Wait for that.
			h.e.Send(pid, loopRecord{fmt.Sprint(i)})
			h.waitLog(i + 2)
		}
	}
	got := h.waitLog(n + 1)
	if got[0] != "start:loop" {
		t.Fatalf("first entry %q, want start:loop", got[0])
	}
	for i := range n {
		if got[i+1] != fmt.Sprint(i) {
			t.Fatalf("entry %d is %q, want %d", i+1, got[i+1], i)
		}
	}
	if err := stopRoot(t, root); err != nil {
		t.Fatal(err)
	}
	l := (*made)[0]
	if l.routines[goid()] || (!lentLoops && len(l.routines) != 1) {
		t.Fatalf("messages ran on %d goroutines (want 1, not the test's; OnRunners: not the test's)", len(l.routines))
	}
	if last := h.rec.get()[len(h.rec.get())-1]; last != "stop:loop" {
		t.Fatalf("last entry %q, want stop:loop", last)
	}
}

// TestLoopPanicRestartsKeepingInbox: a panic in the loop is the actor's
// exit reason (a *PanicError), the supervisor restarts it, and what was sent
// meanwhile reaches the next incarnation.
func TestLoopPanicRestartsKeepingInbox(t *testing.T) { bothLoops(t, testLoopPanicRestartsKeepingInbox) }

func testLoopPanicRestartsKeepingInbox(t *testing.T) {
	h := newHarness(t)
	in := NewInbox()
	spec, made := loopSpec("loop", in, h.rec, Permanent)
	root := h.start("panic", Spec{Children: []ChildSpec{spec}})
	h.waitFor("first start", isStarted("loop"))
	in.Send(loopPanicOn{})
	ev := h.waitFor("exit", isExited("loop")).(EventChildExited)
	var pe *PanicError
	if !errors.As(ev.Reason, &pe) || pe.Value != "loop boom" || len(pe.Stack) == 0 {
		t.Fatalf("exit reason %v, want the loop's panic with a stack", ev.Reason)
	}
	in.Send(loopRecord{"after"})
	h.waitFor("restart", isStarted("loop"))
	got := h.waitLog(4)
	want := []string{"start:loop", "stop:loop", "start:loop", "after"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("log %v, want %v", got, want)
	}
	if len(*made) != 2 {
		t.Fatalf("%d incarnations, want 2", len(*made))
	}
	if err := stopRoot(t, root); err != nil {
		t.Fatal(err)
	}
}

// TestLoopExitReason: LoopContext.Exit is the actor's exit reason, as
// Exit is for an ordinary actor: a normal exit of a transient child is not
// restarted, an abnormal one is.
func TestLoopExitReason(t *testing.T) { bothLoops(t, testLoopExitReason) }

func testLoopExitReason(t *testing.T) {
	h := newHarness(t)
	in := NewInbox()
	spec, made := loopSpec("loop", in, h.rec, Transient)
	root := h.start("exit", Spec{Children: []ChildSpec{spec}})
	h.waitFor("start", isStarted("loop"))
	boom := errors.New("boom")
	in.Send(loopExitOn{boom})
	if ev := h.waitFor("exit", isExited("loop")).(EventChildExited); !errors.Is(ev.Reason, boom) {
		t.Fatalf("exit reason %v, want boom", ev.Reason)
	}
	h.waitFor("restart", isStarted("loop"))
	in.Send(loopExitOn{nil})
	if ev := h.waitFor("exit", isExited("loop")).(EventChildExited); ev.Reason != nil {
		t.Fatalf("exit reason %v, want nil", ev.Reason)
	}
	h.barrier(root.PID())
	if len(*made) != 2 {
		t.Fatalf("%d incarnations, want 2 (a normal exit of a transient child is final)", len(*made))
	}
	_ = stopRoot(t, root)
}

// TestLoopStopWaitsAndPending: stopping the actor waits for the message in
// hand, then Stopped runs with the loop's goroutine gone, and Pending gives
// it what was still queued.
func TestLoopStopWaitsAndPending(t *testing.T) { bothLoops(t, testLoopStopWaitsAndPending) }

func testLoopStopWaitsAndPending(t *testing.T) {
	h := newHarness(t)
	in := NewInbox()
	release := make(chan struct{})
	spec := ChildSpec{ID: "loop", Restart: Permanent, Shutdown: hangTimeout, Start: newTestLoop(in, func() Loop {
		return &recLoop{name: "loop", rec: h.rec, routines: map[uint64]bool{}, pending: true}
	})}
	root := h.start("pending", Spec{Children: []ChildSpec{spec}})
	h.waitFor("start", isStarted("loop"))
	entered := make(chan struct{})
	in.Send(loopBlock{entered, release})
	in.Send(loopRecord{"queued"})
	<-entered // the message is in hand: a stop before it would find nothing to wait for
	stopped := make(chan error, 1)
	go func() { stopped <- stopRoot(t, root) }()
	select {
	case <-stopped:
		t.Fatal("the tree stopped while the loop was still handling a message")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	h.assertLog("start:loop", "pending:queued", "stop:loop")
}

// TestLoopBatches: messages queued while the loop is busy are delivered
// together and closed by one EndBatch.
func TestLoopBatches(t *testing.T) { bothLoops(t, testLoopBatches) }

func testLoopBatches(t *testing.T) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	rec, batches := &recorder{}, &recorder{}
	in := NewInbox()
	pid := e.Spawn(newTestLoop(in, func() Loop {
		return &recLoop{name: "b", rec: rec, batches: batches, routines: map[uint64]bool{}}
	}), "batches")
	entered, release := make(chan struct{}), make(chan struct{})
	in.Send(loopBlock{entered, release})
	<-entered
	for i := range 10 {
		in.Send(loopRecord{fmt.Sprint(i)})
	}
	close(release)
	deadline := time.Now().Add(hangTimeout)
	for len(rec.get()) < 11 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	<-e.Poison(pid).Done()
	// The ten sent while the loop was blocked come in one batch.
	b := batches.get()
	if len(b) == 0 || b[len(b)-1] != "10" {
		t.Fatalf("batch sizes %v, want the last to be 10", b)
	}
}

// TestLoopNoGoroutineLeak: start/stop rounds leave no goroutine behind.
func TestLoopNoGoroutineLeak(t *testing.T) { bothLoops(t, testLoopNoGoroutineLeak) }

func testLoopNoGoroutineLeak(t *testing.T) {
	h := newHarness(t)
	base := runtime.NumGoroutine()
	for i := range 100 {
		in := NewInbox()
		spec, _ := loopSpec("loop", in, h.rec, Permanent)
		root, err := Start(h.e, "loopleak", h.spec(Spec{Children: []ChildSpec{spec}}))
		if err != nil {
			t.Fatal(i, err)
		}
		in.Send(loopRecord{"x"})
		if i%10 == 0 {
			in.Send(loopPanicOn{})
		}
		if err := stopRoot(t, root); err != nil {
			t.Fatal(err)
		}
	}
	closeTestLoops() // OnRunners: the pool's idle goroutines end with it
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); n > base+1 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		n = runtime.NumGoroutine()
	}
	if n > base+1 {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines: %d, baseline %d\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// TestInboxPost: a Post does not wake an idle loop, unless it asked with
// WakeOnPost; a Send after Posts wakes it and everything arrives in order.
func TestInboxPost(t *testing.T) { bothLoops(t, testInboxPost) }

func testInboxPost(t *testing.T) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	in := NewInbox()
	pid := e.Spawn(newTestLoop(in, func() Loop {
		return &recLoop{name: "p", rec: rec, routines: map[uint64]bool{}}
	}), "post")
	defer func() { <-e.Poison(pid).Done() }()
	waitLen := func(n int) []string {
		t.Helper()
		deadline := time.Now().Add(hangTimeout)
		for len(rec.get()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("log %v, want %d entries", rec.get(), n)
			}
			time.Sleep(time.Millisecond)
		}
		return rec.get()
	}
	waitLen(1) // Started
	// Nothing wakes an idle loop: the Posts must stay queued. The loop
	// may not be idle yet when Started is logged (it takes the queue once
	// more first, and would find the Posts there), so a round in which
	// the Posts were delivered is tried again, after a longer pause; a
	// loop that Posts wake fails every round. (The sleeps can only hide a
	// bug, never fail a correct run.)
	for round := 1; ; round++ {
		time.Sleep(time.Duration(round) * 10 * time.Millisecond)
		n := len(rec.get())
		in.Post(loopRecord{"p1"})
		in.Post(loopRecord{"p2"})
		time.Sleep(20 * time.Millisecond)
		if len(rec.get()) == n {
			break
		}
		if round == 5 {
			t.Fatalf("Post woke the loop in every round: %v", rec.get())
		}
	}
	base := len(rec.get())
	in.Send(loopRecord{"s1"})
	if got := waitLen(base + 3); fmt.Sprint(got[base:]) != "[p1 p2 s1]" {
		t.Fatalf("got %v, want p1 p2 s1 last", got)
	}
	in.WakeOnPost(true)
	in.Post(loopRecord{"p3"})
	if got := waitLen(base + 4); got[base+3] != "p3" {
		t.Fatalf("got %v, want p3 last", got)
	}
	// Many rounds of Posts then a Send: the Send always wakes the loop, even
	// when an unconsumed token or posted messages were already there.
	in.WakeOnPost(false)
	for i := range 200 {
		in.Post(loopRecord{fmt.Sprint("q", i)})
		in.Send(loopRecord{fmt.Sprint("r", i)})
		waitLen(base + 4 + 2*(i+1))
	}
}

// Len is the inbox's depth: what was sent and not yet taken by its loop.
func TestInboxLen(t *testing.T) {
	in := NewInbox()
	if n := in.Len(); n != 0 {
		t.Fatalf("new inbox: Len %d", n)
	}
	in.Send(1)
	in.Post(2)
	in.Send(3)
	if n := in.Len(); n != 3 {
		t.Fatalf("after three: Len %d", n)
	}
	batch := in.take(nil)
	if n := in.Len(); n != 0 || len(batch) != 3 {
		t.Fatalf("after take: Len %d, batch %v", n, batch)
	}
	in.requeue(batch[1:])
	if n := in.Len(); n != 2 {
		t.Fatalf("after requeue of two: Len %d", n)
	}
}
