package taskrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/runtime/taskrun"
)

// fullDisk is a store whose writes fail with ENOSPC while full is set, as
// a journal's do on a full disk: refused, and not applied.
type fullDisk struct {
	tasks.Store
	full atomic.Bool
}

func (s *fullDisk) Put(t tasks.Task) error {
	if s.full.Load() {
		return syscall.ENOSPC
	}
	return s.Store.Put(t)
}

func (s *fullDisk) Delete(id string) error {
	if s.full.Load() {
		return syscall.ENOSPC
	}
	return s.Store.Delete(id)
}

func openJournal(t *testing.T, dir string) tasks.Store {
	t.Helper()
	j, err := tasks.OpenJournal(dir, tasks.JournalOptions{Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// Issue 32, item 4: a task's completion that cannot be written is not
// served (at 00335bc it was served as completed, and after a restart the
// same task was failed: two terminal states); it reads as working, and is
// stored, and served, once the disk has room again.
func TestCompletionWaitsForTheDisk(t *testing.T) {
	dir := t.TempDir()
	s := &fullDisk{Store: openJournal(t, dir)}
	m := start(t, taskrun.Config{Store: s, Logger: quietLog()})
	release := make(chan struct{})
	tk, err := m.Create(own("o"), "x", false, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome {
		<-release
		return result("done")
	})
	if err != nil {
		t.Fatal(err)
	}
	s.full.Store(true)
	close(release)
	time.Sleep(200 * time.Millisecond) // the work returns; its outcome is refused, and tried again
	if got, err := m.Get("o", tk.ID); err != nil || got.Status != tasks.Working {
		t.Fatalf("task whose completion could not be stored: %+v, %v; want working", got, err)
	}
	s.full.Store(false)
	got := wait(t, m, "o", tk.ID)
	if got.Status != tasks.Completed || !strings.Contains(string(got.Result), "done") {
		t.Fatalf("once the disk has room: %+v; want completed with its result", got)
	}
	m.Stop(context.Background())
	m2 := start(t, taskrun.Config{Store: openJournal(t, dir), Name: "tasks2", Logger: quietLog()})
	if got, _ := m2.Get("o", tk.ID); got.Status != tasks.Completed {
		t.Fatalf("after a restart: %s; want completed, as served", got.Status)
	}
}

// The same while the disk stays full through a restart: the task was
// never served as completed, and after the restart it is failed, its only
// terminal state.
func TestCompletionLostWithTheDisk(t *testing.T) {
	dir := t.TempDir()
	s := &fullDisk{Store: openJournal(t, dir)}
	m := start(t, taskrun.Config{Store: s, Logger: quietLog()})
	tk, err := m.Create(own("o"), "x", false, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome {
		return result("done")
	})
	if err != nil {
		t.Fatal(err)
	}
	s.full.Store(true) // likely before the work ends; if not, the task completed durably
	time.Sleep(100 * time.Millisecond)
	before, _ := m.Get("o", tk.ID)
	m.Stop(context.Background())
	m2 := start(t, taskrun.Config{Store: openJournal(t, dir), Name: "tasks2", Logger: quietLog()})
	after, _ := m2.Get("o", tk.ID)
	if before.Status.Terminal() && after.Status != before.Status {
		t.Fatalf("served %s, then %s after a restart: two terminal states", before.Status, after.Status)
	}
	if !after.Status.Terminal() {
		t.Fatalf("after a restart: %s; want it ended", after.Status)
	}
}

// A create that cannot be written fails its request and leaves no phantom
// working task behind (tasks/list, the live bounds); once the disk has
// room, creates work again.
func TestCreateRefusedOnAFullDisk(t *testing.T) {
	s := &fullDisk{Store: openJournal(t, t.TempDir())}
	m := start(t, taskrun.Config{Store: s, Logger: quietLog(), MaxLivePerOwner: 1})
	s.full.Store(true)
	work := func(context.Context, map[string]json.RawMessage) tasks.Outcome { return result("ok") }
	if _, err := m.Create(own("o"), "x", false, 0, work); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Create on a full disk: %v; want the write's error", err)
	}
	if l, _ := m.List("o", ""); len(l) != 0 {
		t.Fatalf("tasks/list after a failed create: %v; want none", l)
	}
	if m.Live() != 0 {
		t.Fatalf("%d live tasks after a failed create", m.Live())
	}
	s.full.Store(false)
	tk, err := m.Create(own("o"), "x", false, 0, work)
	if err != nil {
		t.Fatalf("Create once the disk has room: %v", err)
	}
	wait(t, m, "o", tk.ID)
}
