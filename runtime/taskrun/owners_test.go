package taskrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/runtime/taskrun"
)

func blockUntilCancelled(ctx context.Context, _ map[string]json.RawMessage) tasks.Outcome {
	<-ctx.Done()
	return tasks.Outcome{}
}

// Anonymous clients share the owner "" (their ids bind their tasks) but
// not the bound on live tasks: that counts per client.
func TestTaskLimitPerClientNotOwner(t *testing.T) {
	m := start(t, taskrun.Config{MaxLivePerOwner: 2})
	a := tasks.Requestor{Client: "addr:127.0.0.1"}
	b := tasks.Requestor{Client: "addr:127.0.0.2"}
	for range 2 {
		if _, err := m.Create(a, "x", true, 0, blockUntilCancelled); err != nil {
			t.Fatal(err)
		}
	}
	var le *tasks.LimitError
	if _, err := m.Create(a, "x", true, 0, blockUntilCancelled); !errors.As(err, &le) || !le.PerOwner {
		t.Fatalf("a's third task: %v, want the per-client LimitError", err)
	}
	for range 2 {
		if _, err := m.Create(b, "x", true, 0, blockUntilCancelled); err != nil {
			t.Fatalf("b's task, with a at its bound: %v", err)
		}
	}
}

// Without an owner, tasks/list lists the tasks of the session asking; any
// session (or none) gets one by its id. With an owner, every session lists
// all of the owner's.
func TestTaskListScope(t *testing.T) {
	m := start(t, taskrun.Config{})
	s1, err := m.Create(tasks.Requestor{Session: "s1"}, "x", false, 0, blockUntilCancelled)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := m.Create(tasks.Requestor{Session: "s2"}, "x", false, 0, blockUntilCancelled)
	alice, _ := m.Create(tasks.Requestor{Owner: "sub:alice", Session: "s1"}, "x", false, 0, blockUntilCancelled)
	ids := func(owner, session string) string {
		l, err := m.List(owner, session)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tk := range l {
			out = append(out, tk.ID)
		}
		return strings.Join(out, ",")
	}
	if got := ids("", "s1"); got != s1.ID {
		t.Errorf("session s1 lists %q, want only its own %q", got, s1.ID)
	}
	if got := ids("", "s3"); got != "" {
		t.Errorf("a new session lists %q, want nothing", got)
	}
	if got := ids("sub:alice", "s9"); got != alice.ID {
		t.Errorf("alice in another session lists %q, want hers %q", got, alice.ID)
	}
	for _, id := range []string{s1.ID, s2.ID} {
		if _, err := m.Get("", id); err != nil {
			t.Errorf("anonymous task %s by its id: %v", id, err)
		}
	}
	if _, err := m.Get("", alice.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("alice's task found without her: %v", err)
	}
}

// EndSession cancels the session's running tasks, and only those; what
// ended stays.
func TestEndSessionCancelsItsRunningTasks(t *testing.T) {
	m := start(t, taskrun.Config{})
	s1 := tasks.Requestor{Session: "s1"}
	done, _ := m.Create(s1, "x", false, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome { return result("kept") })
	wait(t, m, "", done.ID)
	running, _ := m.Create(s1, "x", false, 0, blockUntilCancelled)
	other, _ := m.Create(tasks.Requestor{Session: "s2"}, "x", false, 0, blockUntilCancelled)
	m.EndSession("s1")
	if got, _ := m.Get("", running.ID); got.Status != tasks.Cancelled || !strings.Contains(got.Message, "session") {
		t.Errorf("the ended session's running task: %+v, want cancelled, saying why", got)
	}
	if got, _ := m.Get("", done.ID); got.Status != tasks.Completed || !strings.Contains(string(got.Result), "kept") {
		t.Errorf("the ended session's completed task: %+v, want kept", got)
	}
	if got, _ := m.Get("", other.ID); got.Status != tasks.Working {
		t.Errorf("another session's task: %+v, want working", got)
	}
	if m.Live() != 1 {
		t.Errorf("%d live, want 1", m.Live())
	}
}

// Past MaxEndedPerClient a client's task that ended first is deleted;
// another client's are not touched, and a restart on the store applies
// the bound to what it finds.
func TestEndedTasksBoundedPerClient(t *testing.T) {
	dir := t.TempDir()
	j, err := tasks.OpenJournal(dir, tasks.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := start(t, taskrun.Config{Store: j, MaxEndedPerClient: 3})
	a := tasks.Requestor{Client: "addr:a"}
	var ids []string
	for i := range 5 {
		tk, err := m.Create(a, "x", false, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome { return result(fmt.Sprint(i)) })
		if err != nil {
			t.Fatal(err)
		}
		wait(t, m, "", tk.ID)
		ids = append(ids, tk.ID)
	}
	b, _ := m.Create(tasks.Requestor{Client: "addr:b"}, "x", false, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome { return result("b") })
	wait(t, m, "", b.ID)
	for i, id := range ids {
		_, err := m.Get("", id)
		if gone := errors.Is(err, tasks.ErrNotFound); gone != (i < 2) {
			t.Errorf("a's task %d of 5: err %v; want the 2 oldest deleted, the 3 newest kept", i, err)
		}
	}
	if _, err := m.Get("", b.ID); err != nil {
		t.Errorf("b's only task: %v", err)
	}
	m.Stop(context.Background())

	j, err = tasks.OpenJournal(dir, tasks.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m = start(t, taskrun.Config{Store: j, MaxEndedPerClient: 1})
	for i, id := range ids {
		_, err := m.Get("", id)
		if gone := errors.Is(err, tasks.ErrNotFound); gone != (i < 4) {
			t.Errorf("after a restart with the bound at 1, a's task %d of 5: err %v", i, err)
		}
	}
	if _, err := m.Get("", b.ID); err != nil {
		t.Errorf("b's only task after the restart: %v", err)
	}
}

// A record written when a legacy session owned its tasks ("session:<id>")
// is bound by its id after the upgrade's restart.
func TestOldSessionOwnedRecordBoundByID(t *testing.T) {
	store := tasks.NewMemoryStore()
	old := tasks.Task{ID: tasks.NewID(""), Owner: "session:abc", Tool: "x", Status: tasks.Completed, Created: time.Now(), Updated: time.Now(), TTL: time.Hour}
	if err := store.Put(old); err != nil {
		t.Fatal(err)
	}
	m := start(t, taskrun.Config{Store: store})
	if got, err := m.Get("", old.ID); err != nil || got.Status != tasks.Completed {
		t.Fatalf("an old session-owned task by its id: %+v, %v", got, err)
	}
	if _, err := m.Get("sub:alice", old.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("found for a caller: %v", err)
	}
}
