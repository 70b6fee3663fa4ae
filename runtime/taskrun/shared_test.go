package taskrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/handlers/tasks/etcdstore"
	"github.com/mcprt/mcprt/runtime/taskrun"
	"github.com/mcprt/mcprt/test/etcdtest"
)

// Replicas on one etcd: any of them answers for a task another runs
// (get, a blocking result, a cancel that reaches the work), and when
// the one running tasks goes, another takes them over: a resumable
// tool's task is run again, once; any other is failed, saying so.
func TestSharedStoreReplicas(t *testing.T) {
	cl := etcdtest.Start(t, 1)
	open := func(tag string) *taskrun.Manager {
		s, err := etcdstore.Open(etcdstore.Options{Endpoints: cl.Endpoints(), Prefix: "replicas/", Name: tag, HoldTTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return start(t, taskrun.Config{Store: s, Tag: tag})
	}
	a, b := open("a"), open("b")
	cancelled := make(chan struct{})
	blocked := func(ctx context.Context, _ map[string]json.RawMessage) tasks.Outcome {
		<-ctx.Done()
		close(cancelled)
		return result("too late")
	}
	tk, err := a.Create(own("alice"), "block", true, 0, blocked)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Get("alice", tk.ID); err != nil || got.Status != tasks.Working {
		t.Fatalf("b's get of a's task: %+v %v", got, err)
	}
	if _, err := b.Get("mallory", tk.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("another owner's get through b: %v, want ErrNotFound", err)
	}
	waited := make(chan tasks.Task, 1)
	go func() { waited <- wait(t, b, "alice", tk.ID) }()
	if _, err := b.Cancel("alice", tk.ID); err != nil {
		t.Fatalf("b's cancel of a's task: %v", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("a's work was not cancelled by b's cancel")
	}
	if got := <-waited; got.Status != tasks.Cancelled {
		t.Fatalf("b's blocking result: %s, want cancelled", got.Status)
	}
	if got, _ := a.Get("alice", tk.ID); got.Status != tasks.Cancelled {
		t.Fatalf("after the work returned: %s, want cancelled still", got.Status)
	}
	if list, _ := b.List("alice", ""); len(list) != 1 {
		t.Fatalf("b's list for alice: %d tasks, want 1", len(list))
	}

	// Answers given at b reach the work running at a (tasks/update).
	asking, err := a.Create(own("alice"), "ask", true, 0, func(_ context.Context, answers map[string]json.RawMessage) tasks.Outcome {
		if len(answers) == 0 {
			return tasks.Outcome{Input: map[string]json.RawMessage{"name": json.RawMessage(`{"method":"elicitation/create"}`)}}
		}
		return result("hello " + string(answers["name"]))
	})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got, _ := b.Get("alice", asking.ID)
		if got.Status == tasks.InputRequired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the asking task: %s, want input_required", got.Status)
		}
	}
	if err := b.Answer("alice", asking.ID, map[string]json.RawMessage{"name": json.RawMessage(`"bob"`)}); err != nil {
		t.Fatalf("b's answer to a's task: %v", err)
	}
	if got := wait(t, b, "alice", asking.ID); got.Status != tasks.Completed || !strings.Contains(string(got.Result), `hello \"bob\"`) {
		t.Fatalf("a's task after b's answer: %s %s", got.Status, got.Result)
	}

	// A change made at a is told to whoever listens at b (status
	// notifications reach a stream held by any replica).
	seen := make(chan tasks.Task, 16)
	b.OnStatus(func(tk tasks.Task) { seen <- tk })
	quick, err := a.Create(own("alice"), "quick", true, 0, func(context.Context, map[string]json.RawMessage) tasks.Outcome { return result("done") })
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.After(10 * time.Second); ; {
		var tk tasks.Task
		select {
		case tk = <-seen:
		case <-deadline:
			t.Fatal("b was not told of a's task completing")
		}
		if tk.ID == quick.ID && tk.Status == tasks.Completed {
			break
		}
	}
	b.OnStatus(func(tasks.Task) {})

	// c runs a resumable task and a plain one, then goes.
	c := open("c")
	ran := make(chan string, 4)
	b.Resume(func(tk tasks.Task) tasks.Work {
		return func(context.Context, map[string]json.RawMessage) tasks.Outcome {
			ran <- tk.ID
			return result("again")
		}
	})
	hang := func(ctx context.Context, _ map[string]json.RawMessage) tasks.Outcome {
		<-ctx.Done()
		return result("x")
	}
	res, err := c.CreateResumable(own("alice"), "sleep", true, 0, &tasks.Rerun{Args: json.RawMessage(`{}`)}, hang)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := c.Create(own("alice"), "block", true, 0, hang)
	if err != nil {
		t.Fatal(err)
	}
	c.Stop(context.Background())
	got := wait(t, b, "alice", res.ID)
	if got.Status != tasks.Completed || got.Message != "" || got.Rerun.Resumed != 1 {
		t.Fatalf("the resumable task after its server went: %+v", got)
	}
	if id := <-ran; id != res.ID {
		t.Fatalf("ran again %s, want %s", id, res.ID)
	}
	got = wait(t, a, "alice", plain.ID)
	if got.Status != tasks.Failed || got.Message != taskrun.LostMessage {
		t.Fatalf("the plain task after its server went: %s %q", got.Status, got.Message)
	}
	select {
	case id := <-ran:
		t.Fatalf("ran %s a second time", id)
	case <-time.After(300 * time.Millisecond):
	}
}
