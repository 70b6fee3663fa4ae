package streamhttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// A legacy session's task is bound by its id, not by the session (which
// ends while its client still holds the id): another session asking for
// it by id gets it, on whatever connection. tasks/list lists the tasks a
// session made, not every anonymous one. Task ids carry the replica's
// tag. A 2026-07-28 tasks/get must name its task in Mcp-Name.
func TestLegacyTaskBoundByIDNotSession(t *testing.T) {
	srv := testServer(nil)
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "job", Execution: json.RawMessage(`{"taskSupport":"optional"}`)}},
		func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
			return mcp.TextResult("done"), nil
		})
	m, err := runtime.StartTasks(nil, srv, runtime.TasksOptions{Tag: "r7"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	f := start(t, srv, streamhttp.Options{})
	a := map[string]string{"Mcp-Session-Id": f.initialize(`{}`), "MCP-Protocol-Version": "2025-11-25"}
	b := map[string]string{"Mcp-Session-Id": f.initialize(`{}`), "MCP-Protocol-Version": "2025-11-25"}

	r := f.do("POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job","task":{}}}`, a)
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	json.Unmarshal(r.last()["result"], &created)
	id := created.Task.TaskID
	if !strings.HasPrefix(id, "r7.") {
		t.Fatalf("CreateTaskResult: %v; want a task id with the tag r7", r.msgs)
	}
	get := `{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"` + id + `"}}`
	for name, s := range map[string]map[string]string{"own": a, "another": b} {
		if r := f.do("POST", get, s); !strings.Contains(string(r.last()["result"]), `"text":"done"`) {
			t.Fatalf("%s session's tasks/result: %v", name, r.msgs)
		}
	}
	list := `{"jsonrpc":"2.0","id":3,"method":"tasks/list"}`
	if r := f.do("POST", list, a); !strings.Contains(string(r.last()["result"]), id) {
		t.Errorf("own session's tasks/list: %v; want the task", r.msgs)
	}
	if r := f.do("POST", list, b); strings.Contains(string(r.last()["result"]), id) || r.last()["result"] == nil {
		t.Errorf("another session's tasks/list: %v; want an empty list", r.msgs)
	}

	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	r = f.do("POST", `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"x",`+meta+`}}`, modernHeaders("tasks/get", "y"))
	if r.status != http.StatusBadRequest || errCode(r.last()) != -32020 {
		t.Fatalf("tasks/get with Mcp-Name not its taskId: %d %v; want 400 and -32020", r.status, r.msgs)
	}
}

// The 2025-11-25 way for a task that needs input: the client sees
// input_required and calls tasks/result, on whose stream the task's
// question comes (asked again there: the session has no GET stream for it
// to have gone to); the answer resumes the task, and tasks/result's stream
// ends with the result.
func TestTaskAsksOnTasksResultStream(t *testing.T) {
	srv := testServer(nil)
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "askjob", Execution: json.RawMessage(`{"taskSupport":"required"}`)}},
		func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
			res, err := req.Elicit(ctx, "Name?", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`))
			if err != nil {
				return nil, err
			}
			return mcp.TextResult("hello " + res.Content["name"].(string)), nil
		})
	m, err := runtime.StartTasks(nil, srv, runtime.TasksOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	f := start(t, srv, streamhttp.Options{})
	s := map[string]string{"Mcp-Session-Id": f.initialize(`{"elicitation":{}}`), "MCP-Protocol-Version": "2025-11-25"}
	r := f.do("POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"askjob","task":{}}}`, s)
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	json.Unmarshal(r.last()["result"], &created)
	id := created.Task.TaskID
	for i := 0; ; i++ {
		r := f.do("POST", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"`+id+`"}}`, s)
		if strings.Contains(string(r.last()["result"]), `"status":"input_required"`) {
			break
		}
		if i > 10000 {
			t.Fatalf("never input_required: %v", r.msgs)
		}
	}
	resp := f.send(context.Background(), "POST", `{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"`+id+`"}}`, s)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var result string
	for sc.Scan() && result == "" {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		msg := decode(t, []byte(data))
		switch {
		case string(msg["method"]) == `"elicitation/create"`:
			if !strings.Contains(string(msg["params"]), `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
				t.Fatalf("question not tied to the task: %s", data)
			}
			a := f.do("POST", `{"jsonrpc":"2.0","id":`+string(msg["id"])+`,"result":{"action":"accept","content":{"name":"Ada"}}}`, s)
			if a.status != http.StatusAccepted {
				t.Fatalf("answer: %d", a.status)
			}
		case string(msg["id"]) == "3":
			result = string(msg["result"])
		}
	}
	if !strings.Contains(result, `"text":"hello Ada"`) {
		t.Fatalf("tasks/result: %q", result)
	}
}

// A legacy session's running task is cancelled by the session's DELETE
// (its client is done), not by the session's other ends: one that ends
// idle leaves it running, for its client to get back by id from a new
// session.
func TestSessionEndsAndItsTasks(t *testing.T) {
	srv := testServer(nil)
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "block", Execution: json.RawMessage(`{"taskSupport":"required"}`)}},
		func(ctx context.Context, _ *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	m, err := runtime.StartTasks(nil, srv, runtime.TasksOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	f := start(t, srv, streamhttp.Options{SessionIdle: 50 * time.Millisecond})
	legacy := func(sid string) map[string]string {
		return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	}
	task := func(sid string) string {
		r := f.do("POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block","task":{}}}`, legacy(sid))
		var created struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		json.Unmarshal(r.last()["result"], &created)
		if created.Task.TaskID == "" {
			t.Fatalf("no task: %v", r.msgs)
		}
		return created.Task.TaskID
	}
	status := func(id string) string {
		// A session of its own, used at once: it does not go idle first.
		r := f.do("POST", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"`+id+`"}}`, legacy(f.initialize(`{}`)))
		var got struct {
			Status string `json:"status"`
		}
		json.Unmarshal(r.last()["result"], &got)
		return got.Status
	}
	idle := f.initialize(`{}`)
	left := task(idle)
	// Watched without a request, which would keep it in use.
	for deadline := time.Now().Add(10 * time.Second); f.h.Stats().Sessions > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the idle session never ended")
		}
	}
	if r := f.do("POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, legacy(idle)); r.status != http.StatusNotFound {
		t.Fatalf("the idle session's request: %d, want 404", r.status)
	}
	if got := status(left); got != "working" {
		t.Errorf("the task of a session ended idle: %q, want working", got)
	}
	deleted := f.initialize(`{}`)
	gone := task(deleted)
	if r := f.do("DELETE", "", legacy(deleted)); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d", r.status)
	}
	if got := status(gone); got != "cancelled" {
		t.Errorf("the task of a DELETEd session: %q, want cancelled", got)
	}
	if got := status(left); got != "working" {
		t.Errorf("another session's task after the DELETE: %q, want working", got)
	}
}
