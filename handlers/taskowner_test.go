package handlers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

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
