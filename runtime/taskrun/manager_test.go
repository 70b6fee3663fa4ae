package taskrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/runtime/taskrun"
)

func start(t *testing.T, cfg taskrun.Config) *taskrun.Manager {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	m, err := taskrun.Start(e, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	return m
}

func result(text string) tasks.Outcome {
	raw, _ := json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": text}}})
	return tasks.Outcome{Result: raw}
}

func wait(t *testing.T, m *taskrun.Manager, owner, id string) tasks.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tk, err := m.Wait(ctx, owner, id)
	if err != nil {
		t.Fatalf("Wait(%s): %v", id, err)
	}
	return tk
}

func TestTaskCompletes(t *testing.T) {
	m := start(t, taskrun.Config{Tag: "r1"})
	tk, err := m.Create(own("alice"), "echo", false, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome {
		return result("hi")
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tk.ID, "r1.") || len(tk.ID) != len("r1.")+32 {
		t.Fatalf("id %q: want the tag, a dot and 32 hex digits", tk.ID)
	}
	if tk.Status != tasks.Working || tk.TTL != time.Hour {
		t.Fatalf("new task %+v", tk)
	}
	got := wait(t, m, "alice", tk.ID)
	if got.Status != tasks.Completed || !strings.Contains(string(got.Result), `"hi"`) {
		t.Fatalf("ended as %+v", got)
	}
	if m.Live() != 0 {
		t.Fatalf("%d live after the only task ended", m.Live())
	}
}

// Another owner's task is not found, not forbidden: its existence is not
// revealed.
func TestTaskOwnerIsolation(t *testing.T) {
	m := start(t, taskrun.Config{})
	tk, _ := m.Create(own("alice"), "x", false, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome { return result("a") })
	wait(t, m, "alice", tk.ID)
	if _, err := m.Get("bob", tk.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("bob's Get of alice's task: %v, want ErrNotFound", err)
	}
	if _, err := m.Cancel("bob", tk.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("bob's Cancel: %v, want ErrNotFound", err)
	}
	if l, _ := m.List("bob", ""); len(l) != 0 {
		t.Fatalf("bob lists %d tasks", len(l))
	}
}

// A panic in the work fails the task; the manager and the other tasks go on.
func TestTaskPanicFailsTask(t *testing.T) {
	m := start(t, taskrun.Config{})
	tk, _ := m.Create(own("o"), "bad", true, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome { panic("boom") })
	got := wait(t, m, "o", tk.ID)
	if got.Status != tasks.Failed || got.Error == nil || got.Error.Code != -32603 {
		t.Fatalf("panicked task: %+v", got)
	}
	tk2, _ := m.Create(own("o"), "ok", true, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome { return result("fine") })
	if got := wait(t, m, "o", tk2.ID); got.Status != tasks.Completed {
		t.Fatalf("task after a panic: %+v", got)
	}
}

func TestTaskCancel(t *testing.T) {
	m := start(t, taskrun.Config{})
	var sawCancel atomic.Bool
	tk, _ := m.Create(own("o"), "slow", false, 0, func(ctx context.Context, _ map[string]json.RawMessage) tasks.Outcome {
		<-ctx.Done()
		sawCancel.Store(true)
		return result("late")
	})
	got, err := m.Cancel("o", tk.ID)
	if err != nil || got.Status != tasks.Cancelled {
		t.Fatalf("Cancel: %+v, %v", got, err)
	}
	if _, err := m.Cancel("o", tk.ID); !errors.Is(err, tasks.ErrTerminal) {
		t.Fatalf("second Cancel: %v, want ErrTerminal", err)
	}
	for m.Live() != 0 {
		time.Sleep(time.Millisecond)
	}
	got, _ = m.Get("o", tk.ID)
	if got.Status != tasks.Cancelled || got.Result != nil {
		t.Fatalf("after the work returned: %+v; want cancelled, its late result dropped", got)
	}
}

func TestTaskLimits(t *testing.T) {
	m := start(t, taskrun.Config{MaxLive: 3, MaxLivePerOwner: 2})
	block := func(ctx context.Context, _ map[string]json.RawMessage) tasks.Outcome {
		<-ctx.Done()
		return tasks.Outcome{}
	}
	for range 2 {
		if _, err := m.Create(own("a"), "x", false, 0, block); err != nil {
			t.Fatal(err)
		}
	}
	var le *tasks.LimitError
	if _, err := m.Create(own("a"), "x", false, 0, block); !errors.As(err, &le) || !le.PerOwner {
		t.Fatalf("third task of one owner: %v, want the per-owner LimitError", err)
	}
	if _, err := m.Create(own("b"), "x", false, 0, block); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(own("c"), "x", false, 0, block); !errors.As(err, &le) || le.PerOwner {
		t.Fatalf("fourth task overall: %v, want the overall LimitError", err)
	}
	l, _ := m.List("a", "")
	m.Cancel("a", l[0].ID)
	if _, err := m.Create(own("c"), "x", false, 0, block); err != nil {
		t.Fatalf("after a cancel freed a place: %v", err)
	}
	// Four created, two refused, one cancelled, three working.
	if c := m.Counts(); c != (taskrun.Counts{Working: 3, Created: 4, Cancelled: 1, Refused: 2}) {
		t.Errorf("Counts = %+v", c)
	}
}

func TestTaskTTLExpires(t *testing.T) {
	m := start(t, taskrun.Config{TTL: 200 * time.Millisecond})
	tk, _ := m.Create(own("o"), "x", false, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome { return result("a") })
	wait(t, m, "o", tk.ID)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := m.Get("o", tk.ID); errors.Is(err, tasks.ErrNotFound) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("task still there long after its ttl")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Input rounds: the work asks two things; answering one leaves the task
// waiting for the other; answering both runs it again with both.
func TestTaskInputRounds(t *testing.T) {
	m := start(t, taskrun.Config{})
	var runs atomic.Int32
	tk, _ := m.Create(own("o"), "ask", true, 0, func(_ context.Context, ans map[string]json.RawMessage) tasks.Outcome {
		runs.Add(1)
		need := map[string]json.RawMessage{}
		for _, k := range []string{"a", "b"} {
			if _, ok := ans[k]; !ok {
				need[k] = json.RawMessage(`{"method":"elicitation/create"}`)
			}
		}
		if len(need) > 0 {
			return tasks.Outcome{Input: need}
		}
		return result(string(ans["a"]) + string(ans["b"]))
	})
	waitStatus := func(st tasks.Status) tasks.Task {
		for i := 0; ; i++ {
			got, _ := m.Get("o", tk.ID)
			if got.Status == st || i > 5000 {
				return got
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	got := waitStatus(tasks.InputRequired)
	if got.Status != tasks.InputRequired || !strings.Contains(string(got.Input), `"a"`) || !strings.Contains(string(got.Input), `"b"`) {
		t.Fatalf("asking: %+v", got)
	}
	m.Answer("o", tk.ID, map[string]json.RawMessage{"a": json.RawMessage(`1`), "zz": json.RawMessage(`9`)})
	got, _ = m.Get("o", tk.ID)
	if got.Status != tasks.InputRequired || strings.Contains(string(got.Input), `"a"`) || !strings.Contains(string(got.Input), `"b"`) {
		t.Fatalf("after answering a: %+v; want still input_required, for b only", got)
	}
	m.Answer("o", tk.ID, map[string]json.RawMessage{"b": json.RawMessage(`2`)})
	got = wait(t, m, "o", tk.ID)
	if got.Status != tasks.Completed || !strings.Contains(string(got.Result), `12`) || runs.Load() != 2 {
		t.Fatalf("after both answers: %+v after %d runs", got, runs.Load())
	}
}

// After a restart on the same journal, a completed task is served as it
// was, and one that was running is failed with the reason.
func TestTaskRestartSettles(t *testing.T) {
	dir := t.TempDir()
	open := func() tasks.Store {
		j, err := tasks.OpenJournal(dir, tasks.JournalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	e, _ := actor.NewEngine(actor.NewEngineConfig())
	m, err := taskrun.Start(e, taskrun.Config{Store: open()})
	if err != nil {
		t.Fatal(err)
	}
	done, _ := m.Create(own("o"), "x", false, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome { return result("kept") })
	wait(t, m, "o", done.ID)
	running, _ := m.Create(own("o"), "x", false, 0, func(ctx context.Context, _ map[string]json.RawMessage) tasks.Outcome {
		<-ctx.Done()
		return result("never")
	})
	m.Stop(context.Background())

	m = start(t, taskrun.Config{Store: open(), Name: "tasks2"})
	got, err := m.Get("o", done.ID)
	if err != nil || got.Status != tasks.Completed || !strings.Contains(string(got.Result), "kept") {
		t.Fatalf("completed task after restart: %+v, %v", got, err)
	}
	got, err = m.Get("o", running.ID)
	if err != nil || got.Status != tasks.Failed || got.Message != tasks.RestartedMessage || got.Error == nil {
		t.Fatalf("running task after restart: %+v, %v", got, err)
	}
}

// A task whose record keeps a Rerun (a resumable tool's) and that a
// restart left working is run again by Resume, once: its record says so
// (Resumed 1, durably, before the work runs), it completes, and after a
// second restart in the middle of that run it is failed, not run a third
// time. A plain task is failed as before, and so is a resumable one whose
// work cannot be made again (rework returns nil).
func TestTaskResumeOnce(t *testing.T) {
	dir := t.TempDir()
	open := func() tasks.Store {
		j, err := tasks.OpenJournal(dir, tasks.JournalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	block := func(ctx context.Context, _ map[string]json.RawMessage) tasks.Outcome {
		<-ctx.Done()
		return result("never")
	}
	e, _ := actor.NewEngine(actor.NewEngineConfig())
	m, err := taskrun.Start(e, taskrun.Config{Store: open(), Name: "tasks1"})
	if err != nil {
		t.Fatal(err)
	}
	rerun := &tasks.Rerun{Args: json.RawMessage(`{"n":7}`), Version: "2026-07-28", Caller: json.RawMessage(`{"Subject":"alice"}`)}
	resumable, err := m.CreateResumable(own("o"), "job", true, 0, rerun, block)
	if err != nil {
		t.Fatal(err)
	}
	gone, _ := m.CreateResumable(own("o"), "gone", true, 0, rerun, block)
	plain, _ := m.Create(own("o"), "job", true, 0, block)
	m.Stop(context.Background())

	// Second process: the resumable task runs again, from its record.
	m2 := start(t, taskrun.Config{Store: open(), Name: "tasks2"})
	if got, _ := m2.Get("o", resumable.ID); got.Status != tasks.Working {
		t.Fatalf("resumable task before Resume: %+v, want still working", got)
	}
	if got, _ := m2.Get("o", plain.ID); got.Status != tasks.Failed || got.Message != tasks.RestartedMessage {
		t.Fatalf("plain task after restart: %+v", got)
	}
	reran := make(chan tasks.Task, 4)
	release := make(chan struct{})
	m2.Resume(func(tk tasks.Task) tasks.Work {
		if tk.Tool == "gone" {
			return nil
		}
		reran <- tk
		return func(ctx context.Context, _ map[string]json.RawMessage) tasks.Outcome {
			// Marked resumed, durably, before the work runs.
			if cur, _ := m2.Get("o", tk.ID); cur.Rerun == nil || cur.Rerun.Resumed != 1 || cur.Message != taskrun.ResumedMessage {
				return tasks.Outcome{Error: &tasks.Error{Code: -32603, Message: "not marked resumed"}}
			}
			select {
			case <-release:
				return result("again " + string(tk.Rerun.Args))
			case <-ctx.Done():
				return result("never")
			}
		}
	})
	m2.Resume(func(tasks.Task) tasks.Work { t.Error("Resume ran twice"); return nil })
	tk := <-reran
	if tk.ID != resumable.ID || string(tk.Rerun.Caller) != string(rerun.Caller) || tk.Owner != "o" || tk.Tool != "job" {
		t.Fatalf("reworked from %+v", tk)
	}
	if got, _ := m2.Get("o", gone.ID); got.Status != tasks.Failed || got.Message != tasks.RestartedMessage {
		t.Fatalf("resumable task whose tool is gone: %+v", got)
	}
	close(release)
	if got := wait(t, m2, "o", resumable.ID); got.Status != tasks.Completed || !strings.Contains(string(got.Result), `again {\"n\":7}`) {
		t.Fatalf("resumed task: %+v", got)
	}

	// A resumed task whose server dies again is failed on the next start.
	again, _ := m2.CreateResumable(own("o"), "job", true, 0, rerun, block)
	m2.Stop(context.Background())
	m3 := start(t, taskrun.Config{Store: open(), Name: "tasks3"})
	m3.Resume(func(tk tasks.Task) tasks.Work { return block })
	m3.Stop(context.Background())
	m4 := start(t, taskrun.Config{Store: open(), Name: "tasks4"})
	m4.Resume(func(tk tasks.Task) tasks.Work { t.Errorf("task %s resumed a second time", tk.ID); return nil })
	if got, _ := m4.Get("o", again.ID); got.Status != tasks.Failed || got.Message != taskrun.ResumedAgainMessage || got.Error == nil {
		t.Fatalf("task resumed once, then its server stopped again: %+v", got)
	}
	if got, _ := m4.Get("o", resumable.ID); got.Status != tasks.Completed {
		t.Fatalf("completed resumed task after another restart: %+v", got)
	}
}

// Stopping a manager with many live tasks whose handlers ignore their
// cancellation costs one ShutdownGrace, not one per task: they are all
// cancelled at once and waited for together. Each handler's goroutine is
// still its actor's, and returns once released.
func TestTaskStopBoundedWithStuckHandlers(t *testing.T) {
	const n, grace = 100, 100 * time.Millisecond
	e, _ := actor.NewEngine(actor.NewEngineConfig())
	m, err := taskrun.Start(e, taskrun.Config{ShutdownGrace: grace, MaxLive: -1, MaxLivePerOwner: -1, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var started, returned atomic.Int32
	for range n {
		if _, err := m.Create(own("o"), "stuck", false, 0, func(ctx context.Context, _ map[string]json.RawMessage) tasks.Outcome {
			started.Add(1)
			<-release // ignores ctx
			returned.Add(1)
			return result("late")
		}); err != nil {
			t.Fatal(err)
		}
	}
	for started.Load() < n {
		time.Sleep(time.Millisecond)
	}
	begin := time.Now()
	if err := m.Stop(context.Background()); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	// One grace one after another would be n*grace (10 s); together, one.
	if took := time.Since(begin); took > n*grace/2 {
		t.Fatalf("Stop took %v with %d stuck handlers and a grace of %v: they were waited for one at a time", took, n, grace)
	}
	close(release)
	for deadline := time.Now().Add(10 * time.Second); returned.Load() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d handlers returned after release", returned.Load(), n)
		}
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// own is the requestor whose owner and client are both who.
func own(who string) tasks.Requestor { return tasks.Requestor{Owner: who, Client: who} }

// Several servers may serve one manager (a gateway and its virtual
// endpoints): each listener is told of every change until it stops.
func TestOnStatusListeners(t *testing.T) {
	m := start(t, taskrun.Config{})
	var a, b atomic.Int32
	stopA := m.OnStatus(func(tasks.Task) { a.Add(1) })
	m.OnStatus(func(tasks.Task) { b.Add(1) })
	run := func() {
		tk, err := m.Create(own("o"), "echo", false, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome {
			return result("hi")
		})
		if err != nil {
			t.Fatal(err)
		}
		wait(t, m, "o", tk.ID)
	}
	// The last report may come just after Wait returns: wait for it.
	until := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !ok(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: a %d, b %d reports", what, a.Load(), b.Load())
			}
		}
	}
	run()
	until("after one task, both told alike", func() bool { return a.Load() > 0 && a.Load() == b.Load() })
	was := a.Load()
	stopA()
	stopA() // twice is harmless
	run()
	until("after a stopped, b told of the second task", func() bool { return b.Load() == 2*was })
	if a.Load() != was {
		t.Fatalf("a was told %d more after it stopped", a.Load()-was)
	}
}
