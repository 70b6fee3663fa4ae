package handlers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/runtime/taskrun"
)

// A tool's Timeout is its own bound on its handler, and holds when the
// call runs as a task (in both revisions): the handler's context ends
// once it has passed and the task fails with a timeout error, whatever
// the handler returns then. A task that ends within its tool's Timeout
// completes.
func TestTaskHonoursToolTimeout(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "timeout", Version: "0"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "stuck", Execution: json.RawMessage(`{"taskSupport":"optional"}`)}, Timeout: 50 * time.Millisecond},
		func(ctx context.Context, _ *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
			<-ctx.Done() // a request's timeout would end it: so must the tool's own
			return mcp.TextResult("late"), nil
		})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "quick", Execution: json.RawMessage(`{"taskSupport":"optional"}`)}, Timeout: time.Hour},
		func(ctx context.Context, _ *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
			return mcp.TextResult("in time"), nil
		})
	e, _ := actor.NewEngine(actor.NewEngineConfig())
	m, err := taskrun.Start(e, taskrun.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	srv.ServeTasks(m, handlers.TasksOptions{})
	call, _ := srv.Method("tools/call")
	run := func(tool string, modern bool) tasks.Task {
		t.Helper()
		req := benchRequest(tool)
		if !modern {
			req = &handlers.Request{Method: "tools/call", Params: json.RawMessage(`{"name":"` + tool + `","arguments":{},"task":{}}`), Version: "2025-11-25"}
		}
		res, err := call.Run(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(res)
		var tk struct {
			TaskID string `json:"taskId"`
			Task   *struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		json.Unmarshal(raw, &tk)
		if tk.Task != nil {
			tk.TaskID = tk.Task.TaskID
		}
		if tk.TaskID == "" {
			t.Fatalf("%s: not a task: %s", tool, raw)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		got, err := m.Wait(ctx, "", tk.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, modern := range []bool{true, false} {
		if got := run("stuck", modern); got.Status != tasks.Failed || got.Error == nil || !strings.Contains(got.Error.Message, "timed out after 50ms") || strings.Contains(string(got.Result), "late") {
			t.Errorf("modern %v: a task past its tool's Timeout: %+v, want failed, timed out", modern, got)
		}
		if got := run("quick", modern); got.Status != tasks.Completed || !strings.Contains(string(got.Result), "in time") {
			t.Errorf("modern %v: a task within its tool's Timeout: %+v", modern, got)
		}
	}
}
