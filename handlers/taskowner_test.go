package handlers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/tasks"
)

// Tasks belong to the caller when there is one (across sessions,
// replicas and restarts), else to nobody in particular: the task id binds
// them, a legacy HTTP session's too (it does not outlive its session). What
// they count against is the caller, else the connection's address (an
// IPv6 one by its /64), else one client (stdio).
func TestTaskOwner(t *testing.T) {
	ctx := context.Background()
	sess := tasks.WithSession(tasks.WithRemote(ctx, "127.0.0.2:4242"), "s1")
	withCaller := handlers.WithCaller(sess, &handlers.Caller{Subject: "alice"})
	v6 := tasks.WithRemote(ctx, "[2001:db8:1:2:3:4:5:6]:443")
	mapped := tasks.WithRemote(ctx, "[::ffff:10.0.0.1]:80")
	for _, c := range []struct {
		ctx           context.Context
		owner, client string
	}{
		{ctx, "", ""},
		{sess, "", "addr:127.0.0.2"},
		{withCaller, "sub:alice", "sub:alice"},
		{v6, "", "addr:2001:db8:1:2::/64"},
		{mapped, "", "addr:10.0.0.1"},
	} {
		if got := handlers.TaskOwner(c.ctx); got != c.owner {
			t.Errorf("TaskOwner = %q, want %q", got, c.owner)
		}
		if got := handlers.TaskClient(c.ctx); got != c.client {
			t.Errorf("TaskClient = %q, want %q", got, c.client)
		}
	}
}

// A task's handler sees its request's caller, as a plain call's handler
// does, and the task is the caller's.
func TestTaskKeepsCaller(t *testing.T) {
	srv, m := benchTaskServer(t, nil)
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "who", Execution: json.RawMessage(`{"taskSupport":"required"}`)}},
		func(_ context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
			return mcp.TextResult("caller " + req.Caller.Principal()), nil
		})
	alice := &handlers.Caller{Subject: "alice"}
	req := benchRequest("who")
	req.Caller = alice
	call, _ := srv.Method("tools/call")
	res, err := call.Run(handlers.WithCaller(context.Background(), alice), req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	var tk struct {
		TaskID string `json:"taskId"`
	}
	json.Unmarshal(raw, &tk)
	if _, err := m.Get("", tk.TaskID); err == nil {
		t.Fatal("a task of alice's found by nobody in particular")
	}
	got, err := m.Wait(context.Background(), "sub:alice", tk.TaskID)
	if err != nil || !strings.Contains(string(got.Result), "caller sub:alice") {
		t.Fatalf("task: %+v, %v; want its handler to see the caller", got, err)
	}
}
