package etcdstore

import (
	"errors"
	"strings"
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
