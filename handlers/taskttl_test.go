package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/taskrun"
)

// Issue 32, item 7: a huge ttl is the longest allowed (the manager's cap,
// 24 h), not a product that wrapped (at 00335bc 18446744073710 ms became
// 448 µs, reported as "ttl":0, and the task was deleted at once). And a
// task object whose ttl is bad is told so, not that it is no object.
func TestTaskHugeTTL(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "ttl", Version: "0"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "job", Execution: json.RawMessage(`{"taskSupport":"optional"}`)}},
		func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
			return mcp.TextResult("done"), nil
		})
	e, _ := actor.NewEngine(actor.NewEngineConfig())
	m, err := taskrun.Start(e, taskrun.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	srv.ServeTasks(m, handlers.TasksOptions{})
	call, _ := srv.Method("tools/call")
	run := func(task string) (json.RawMessage, error) {
		req := &handlers.Request{Method: "tools/call", Version: "2025-11-25",
			Params: json.RawMessage(`{"name":"job","arguments":{},"task":` + task + `}`)}
		res, err := call.Run(context.Background(), req)
		raw, _ := json.Marshal(res)
		return raw, err
	}
	for _, ttl := range []string{"18446744073710", "1e300", "9223372036855"} {
		raw, err := run(`{"ttl":` + ttl + `}`)
		if err != nil {
			t.Fatalf("ttl %s: %v", ttl, err)
		}
		var created struct {
			Task struct {
				TaskID string `json:"taskId"`
				TTL    int64  `json:"ttl"`
			} `json:"task"`
		}
		json.Unmarshal(raw, &created)
		if want := (24 * time.Hour).Milliseconds(); created.Task.TTL != want {
			t.Fatalf("ttl %s: created with ttl %d ms (%s); want the cap, %d", ttl, created.Task.TTL, raw, want)
		}
		time.Sleep(time.Millisecond)
		if got, err := m.Get("", created.Task.TaskID); err != nil || got.TTL != 24*time.Hour {
			t.Fatalf("ttl %s: task %+v, %v; want it kept for 24 h", ttl, got, err)
		}
	}
	for task, want := range map[string]string{
		`{"ttl":"soon"}`: "task.ttl must be a number",
		`{"ttl":[1]}`:    "task.ttl must be a number",
		`5`:              "task must be an object",
		`"x"`:            "task must be an object",
	} {
		_, err := run(task)
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, want) {
			t.Errorf("task %s: %v; want invalid params, %q", task, err, want)
		}
	}
	if _, err := run(`{"ttl":null}`); err != nil {
		t.Errorf("ttl null: %v; want the default ttl", err)
	}
}
