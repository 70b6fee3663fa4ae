//go:build unix

package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/supervisor"
)

// tree runs one client actor under a root supervisor and records its
// events.
type tree struct {
	t      *testing.T
	e      *actor.Engine
	root   *supervisor.Root
	events chan supervisor.Event
}

func startTree(t *testing.T, name string, spec supervisor.Spec) *tree {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	tr := &tree{t: t, e: e, events: make(chan supervisor.Event, 1000)}
	spec.EventHook = func(ev supervisor.Event) { tr.events <- ev }
	spec.Logger = quiet
	tr.root, err = supervisor.Start(e, name, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
		defer cancel()
		tr.root.Stop(ctx)
	})
	return tr
}

func (tr *tree) waitFor(what string, pred func(supervisor.Event) bool) supervisor.Event {
	tr.t.Helper()
	deadline := time.After(hangTimeout)
	for {
		select {
		case ev := <-tr.events:
			if pred(ev) {
				return ev
			}
		case <-deadline:
			tr.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// call sends a Send the way non-actor code does, with Engine.Request.
func (tr *tree) call(pid *actor.PID, tool string) client.Response {
	tr.t.Helper()
	res, err := tr.e.Request(pid, client.Send{ID: tool, Method: "tools/call", Params: map[string]any{"name": tool}}, hangTimeout).Result()
	if err != nil {
		tr.t.Fatalf("Request %s: %v", tool, err)
	}
	r, ok := res.(client.Response)
	if !ok || r.ID != tool {
		tr.t.Fatalf("reply %#v", res)
	}
	return r
}

func textOf(t *testing.T, r client.Response) string {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("response error: %v", r.Err)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("result %s: %v", r.Result, err)
	}
	return res.Content[0].Text
}

// TestActorRestartsCrashedServer: under a supervisor, a server that crashes
// fails its pending request with the exit, ends the actor abnormally, and
// comes back as a fresh process under the Transient policy.
func TestActorRestartsCrashedServer(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "legacy")
	tr := startTree(t, "crashy", supervisor.Spec{Children: []supervisor.ChildSpec{{
		ID: "server", Start: client.Producer(cmd, opts(client.Options{})),
		Restart: supervisor.Transient, Shutdown: 10 * time.Second,
	}}})
	pid := supervisor.ChildPID(tr.root.PID(), "server")
	first := textOf(t, tr.call(pid, "pid"))

	r := tr.call(pid, "crash")
	var ee *client.ExitError
	if !errors.As(r.Err, &ee) || ee.Code != 3 {
		t.Fatalf("crash: %v", r.Err)
	}
	ev := tr.waitFor("the child's exit", func(ev supervisor.Event) bool { _, ok := ev.(supervisor.EventChildExited); return ok })
	if reason := ev.(supervisor.EventChildExited).Reason; !supervisor.IsAbnormal(reason) || !errors.As(reason, &ee) {
		t.Errorf("exit reason %v", reason)
	}
	// The exit is reported after the actor's Stopped, which reaped it.
	if n, err := strconv.Atoi(first); err != nil {
		t.Fatal(err)
	} else {
		assertReaped(t, n)
	}
	tr.waitFor("the restart", func(ev supervisor.Event) bool { _, ok := ev.(supervisor.EventChildRestarted); return ok })
	tr.waitFor("the new child", func(ev supervisor.Event) bool { _, ok := ev.(supervisor.EventChildStarted); return ok })

	// The new actor queues requests until its server is connected.
	second := textOf(t, tr.call(pid, "pid"))
	if second == first {
		t.Errorf("same server process %s after the restart", first)
	}
	if err := tr.root.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestActorGivesUp: a server that cannot even connect fails every restart;
// the supervisor gives up within its intensity, with the server's stderr in
// the reason.
func TestActorGivesUp(t *testing.T) {
	t.Parallel()
	cmd := client.Command{Path: "sh", Args: []string{"-c", "echo 'no config file' >&2; exit 1"}}
	tr := startTree(t, "doomed", supervisor.Spec{Intensity: 2, Period: time.Minute, Children: []supervisor.ChildSpec{{
		ID: "server", Start: client.Producer(cmd, opts(client.Options{})), Restart: supervisor.Transient,
	}}})
	select {
	case <-tr.root.Done():
	case <-time.After(hangTimeout):
		t.Fatal("supervisor did not give up")
	}
	var gave *supervisor.GaveUpError
	var ee *client.ExitError
	err := tr.root.Err()
	if !errors.As(err, &gave) || gave.Restarts != 2 || !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(err.Error(), "no config file") {
		t.Errorf("root exit: %v", err)
	}
}

// TestActorNormalExit: a server that exits with status 0 by itself ends the
// actor normally: a Transient child is not restarted, and a significant
// one takes its supervisor down cleanly.
func TestActorNormalExit(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "legacy")
	tr := startTree(t, "done", supervisor.Spec{Children: []supervisor.ChildSpec{{
		ID: "server", Start: client.Producer(cmd, opts(client.Options{})),
		Restart: supervisor.Transient, Significant: true,
	}}})
	pid := supervisor.ChildPID(tr.root.PID(), "server")
	tr.call(pid, "exit0")
	select {
	case <-tr.root.Done():
	case <-time.After(hangTimeout):
		t.Fatal("supervisor did not exit")
	}
	if err := tr.root.Err(); err != nil {
		t.Errorf("root exit %v, want a normal exit", err)
	}
}

// TestActorSubscribe: an actor that sends Subscribe gets the server's
// notifications as Notification messages.
func TestActorSubscribe(t *testing.T) {
	t.Parallel()
	cmd, _ := fakeCmd(t, "legacy")
	tr := startTree(t, "subs", supervisor.Spec{Children: []supervisor.ChildSpec{{
		ID: "server", Start: client.Producer(cmd, opts(client.Options{})), Restart: supervisor.Transient,
	}}})
	pid := supervisor.ChildPID(tr.root.PID(), "server")
	got := make(chan client.Notification, 10)
	sub := tr.e.SpawnFunc(func(c *actor.Context) {
		switch m := c.Message().(type) {
		case actor.Started:
			c.Send(pid, client.Subscribe{Method: "notifications/message"})
		case client.Notification:
			got <- m
		}
	}, "subscriber")
	defer tr.e.Poison(sub)
	if text := textOf(t, tr.call(pid, "log")); text != "logged" {
		t.Fatal(text)
	}
	select {
	case n := <-got:
		if n.Method != "notifications/message" || !strings.Contains(string(n.Params), "hello from the server") {
			t.Errorf("notification %+v", n)
		}
	case <-time.After(hangTimeout):
		t.Fatal("no notification forwarded")
	}
}
