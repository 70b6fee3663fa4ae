package etcdstore

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/handlers/tasks/storetest"
	"github.com/mcprt/mcprt/test/etcdtest"
)

func TestContract(t *testing.T) {
	cl := etcdtest.Start(t, 1)
	storetest.Contract{
		// One prefix per directory: a reopen on the same dir is the same
		// deployment, a new dir a fresh one.
		Open: func(_ *testing.T, dir string) (tasks.Store, error) {
			return Open(Options{Endpoints: cl.Endpoints(), Prefix: "test" + strings.ReplaceAll(dir, "/", "_") + "/", HoldTTL: 2 * time.Second})
		},
		Durable: true,
		Break: func(_ *testing.T, s tasks.Store) func() {
			s.(*store).broken.Store(true)
			return func() { s.(*store).broken.Store(false) }
		},
	}.Run(t)
}

// Replicas on one prefix: a cancel from one fences the holder's own end;
// a replica that dies leaves its live task to exactly one adopter once
// its hold runs out.
func TestSharedHoldsAndAdoption(t *testing.T) {
	cl := etcdtest.Start(t, 1)
	open := func() *store {
		s, err := Open(Options{Endpoints: cl.Endpoints(), Prefix: "shared/", HoldTTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s.(*store)
	}
	a, b, c := open(), open(), open()
	changed := make(chan tasks.Task, 16)
	orphaned := make(chan struct{}, 16)
	b.Watch(tasks.Watchers{Changed: func(t tasks.Task) { changed <- t }, Orphaned: func() {
		select {
		case orphaned <- struct{}{}:
		default:
		}
	}})
	now := time.Now()
	work := tasks.Task{ID: "x", Status: tasks.Working, Created: now, Updated: now, TTL: time.Hour}
	if err := a.Put(work); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(work); err == nil {
		t.Fatal("a second replica wrote a live task another holds")
	}
	cancelled := work
	cancelled.Status = tasks.Cancelled
	if err := b.Put(cancelled); err != nil {
		t.Fatalf("cancel from another replica: %v", err)
	}
	done := work
	done.Status = tasks.Completed
	if err := a.Put(done); !errors.Is(err, tasks.ErrTerminal) {
		t.Fatalf("the holder's completion after a cancel: %v, want ErrTerminal", err)
	}
	if got, _, _ := c.Get("x"); got.Status != tasks.Cancelled {
		t.Fatalf("after a cancel and a late completion: %s, want cancelled", got.Status)
	}
	// A replica dies (no revoke): its task is an orphan once the hold runs out.
	y := work
	y.ID = "y"
	if err := a.Put(y); err != nil {
		t.Fatal(err)
	}
	a.stop()
	a.wg.Wait()
	if orph, _ := b.Orphans(); len(orph) != 0 {
		t.Fatalf("orphans while the hold stands: %v", orph)
	}
	deadline := time.Now().Add(10 * time.Second)
	var orphans []tasks.Task
	for time.Now().Before(deadline) {
		if orphans, _ = b.Orphans(); len(orphans) > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(orphans) != 1 || orphans[0].ID != "y" {
		t.Fatalf("orphans after the hold ran out: %v", orphans)
	}
	c.Orphans()
	taken := orphans[0]
	taken.Message = "taken"
	okB, errB := b.Adopt(taken)
	okC, errC := c.Adopt(taken)
	if errB != nil || errC != nil || okB == okC {
		t.Fatalf("two adopters: b %v %v, c %v %v; want exactly one", okB, errB, okC, errC)
	}
	doneY := y
	doneY.Status = tasks.Completed
	if err := a.Put(doneY); !errors.Is(err, tasks.ErrTakenOver) {
		t.Fatalf("the lost replica's end after another adopted the task: %v, want ErrTakenOver", err)
	}
}

// A task's end releases its hold in the same transaction that marks it
// ended: no orphan, so no replica reads every record for it (which made a
// task's cost grow with the tasks kept). A hold that runs out is one.
func TestEndedTaskIsNoOrphan(t *testing.T) {
	cl := etcdtest.Start(t, 1)
	open := func() *store {
		s, err := Open(Options{Endpoints: cl.Endpoints(), Prefix: "ends/", HoldTTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s.(*store)
	}
	a, b := open(), open()
	var orphaned atomic.Int32
	completed := make(chan string, 32)
	b.Watch(tasks.Watchers{
		Changed: func(t tasks.Task) {
			if t.Status == tasks.Completed {
				completed <- t.ID
			}
		},
		Orphaned: func() { orphaned.Add(1) },
	})
	for deadline := time.Now().Add(10 * time.Second); orphaned.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the watch never started (its first look for orphans)")
		}
	}
	now := time.Now()
	for i := range 10 {
		task := tasks.Task{ID: fmt.Sprint("t", i), Status: tasks.Working, Created: now, Updated: now, TTL: time.Hour}
		if err := a.Put(task); err != nil {
			t.Fatal(err)
		}
		task.Status = tasks.Completed
		if err := a.Put(task); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		select {
		case <-completed:
		case <-time.After(10 * time.Second):
			t.Fatal("the watch did not report every completion")
		}
	}
	if n := orphaned.Load(); n != 1 {
		t.Fatalf("ten tasks ended: %d looks for orphans, want only the watch's first", n)
	}
	live := tasks.Task{ID: "live", Status: tasks.Working, Created: now, Updated: now, TTL: time.Hour}
	if err := a.Put(live); err != nil {
		t.Fatal(err)
	}
	a.stop() // dies: no revoke, the hold runs out
	a.wg.Wait()
	for deadline := time.Now().Add(10 * time.Second); orphaned.Load() < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a hold ran out, and no look for orphans followed")
		}
	}
}

// A replica's own writes are never reported to it as another's, even when
// its watch brings them before the write has returned (on loopback, more
// than half of them did, and each status was told twice).
func TestOwnWritesNotReported(t *testing.T) {
	cl := etcdtest.Start(t, 1)
	open := func() *store {
		s, err := Open(Options{Endpoints: cl.Endpoints(), Prefix: "own/", HoldTTL: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s.(*store)
	}
	a, b := open(), open()
	var mine atomic.Int32
	theirs := make(chan tasks.Task, 1024)
	a.Watch(tasks.Watchers{Changed: func(tasks.Task) { mine.Add(1) }})
	b.Watch(tasks.Watchers{Changed: func(t tasks.Task) { theirs <- t }})
	time.Sleep(300 * time.Millisecond) // both watches up
	now := time.Now()
	const n = 200
	for i := range n {
		task := tasks.Task{ID: fmt.Sprint("t", i), Status: tasks.Working, Created: now, Updated: now, TTL: time.Hour}
		if err := a.Put(task); err != nil {
			t.Fatal(err)
		}
		task.Status, task.Updated = tasks.Completed, now.Add(time.Millisecond)
		if err := a.Put(task); err != nil {
			t.Fatal(err)
		}
	}
	// b hears every write (so the watches have caught up), a none.
	for i := range 2 * n {
		select {
		case <-theirs:
		case <-time.After(10 * time.Second):
			t.Fatalf("b heard %d of a's %d writes", i, 2*n)
		}
	}
	// a's own watch may lag b's: what a keeps of its writes empties once
	// it has seen them all.
	left := func() string {
		a.mu.Lock()
		defer a.mu.Unlock()
		if len(a.own)+len(a.writing)+len(a.early) == 0 {
			return ""
		}
		return fmt.Sprintf("%d revisions, %d writes, %d early", len(a.own), len(a.writing), len(a.early))
	}
	for deadline := time.Now().Add(10 * time.Second); left() != ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a keeps, 10 s after its last write: %s", left())
		}
	}
	if got := mine.Load(); got != 0 {
		t.Fatalf("a was told of %d of its own %d writes as another's", got, 2*n)
	}
}
