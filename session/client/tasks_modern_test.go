//go:build unix

package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// modernTaskFake is a 2026-07-28 server with the tasks extension, in
// process over HTTP, scripted to check the wire shapes the client sends
// and to answer each of the extension's shapes: tools "job" (a task that
// completes on its third poll), "ask" (a task that asks a question with
// inputRequests and completes with the answer sent by tasks/update), "boom"
// (a task that fails with a JSON-RPC error), "forever" (a task that runs
// until tasks/cancel), "quick" (a plain result: the server decides).
type modernTaskFake struct {
	*httpFake
	mu      sync.Mutex
	tasks   map[string]*fakeTask
	updates []map[string]json.RawMessage
	n       int
}

type fakeTask struct {
	tool      string
	polls     int
	answer    json.RawMessage
	cancelled bool
}

func taskJSON(id, status string, extra map[string]any) map[string]any {
	m := map[string]any{"taskId": id, "status": status, "createdAt": "2026-11-27T00:00:00Z",
		"lastUpdatedAt": "2026-11-27T00:00:01Z", "ttlMs": 60000, "pollIntervalMs": 20}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func newModernTaskFake(t *testing.T) *modernTaskFake {
	f := &modernTaskFake{tasks: map[string]*fakeTask{}}
	f.httpFake = newHTTPFake(t, func(w http.ResponseWriter, r *http.Request, m fakeMsg) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var p struct {
			Name           string                     `json:"name"`
			TaskID         string                     `json:"taskId"`
			Task           json.RawMessage            `json:"task"`
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
			Meta           struct {
				Caps struct {
					Extensions map[string]json.RawMessage `json:"extensions"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		}
		json.Unmarshal(m.Params, &p)
		_, declared := p.Meta.Caps.Extensions[mcp.TasksExtension]
		if strings.HasPrefix(m.Method, "tasks/") {
			if !declared {
				writeJSON(w, 200, rpcError(m.ID, -32021, "Missing required client capability", nil))
				return
			}
			if got := r.Header.Get("Mcp-Name"); got != p.TaskID {
				writeJSON(w, 400, rpcError(m.ID, -32020, "Header mismatch: Mcp-Name "+got, nil))
				return
			}
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		switch m.Method {
		case "server/discover":
			writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{}, "extensions": map[string]any{mcp.TasksExtension: map[string]any{}}},
				"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "fake-tasks", "version": "1"}}}))
		case "tools/call":
			if len(p.Task) > 0 {
				t.Errorf("params.task sent to a 2026-07-28 server: %s", p.Task)
			}
			if !declared || p.Name == "quick" {
				writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("at once (extension declared: %v)", declared)}}}))
				return
			}
			f.n++
			id := fmt.Sprintf("task-%d/%s", f.n, p.Name) // a slash: Mcp-Name must carry it as it is
			f.tasks[id] = &fakeTask{tool: p.Name}
			writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "task", "taskId": id, "status": "working",
				"createdAt": "2026-11-27T00:00:00Z", "lastUpdatedAt": "2026-11-27T00:00:00Z", "ttlMs": 60000, "pollIntervalMs": 20}))
		case "tasks/get":
			ft := f.tasks[p.TaskID]
			if ft == nil {
				writeJSON(w, 200, rpcError(m.ID, -32602, "Failed to retrieve task: Task not found", nil))
				return
			}
			ft.polls++
			res := taskJSON(p.TaskID, "working", map[string]any{"resultType": "complete", "statusMessage": fmt.Sprintf("poll %d", ft.polls)})
			switch {
			case ft.cancelled:
				res = taskJSON(p.TaskID, "cancelled", map[string]any{"resultType": "complete", "statusMessage": "cancelled by request"})
			case ft.tool == "job" && ft.polls >= 3:
				res = taskJSON(p.TaskID, "completed", map[string]any{"resultType": "complete", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "job done"}}}})
			case ft.tool == "boom" && ft.polls >= 2:
				res = taskJSON(p.TaskID, "failed", map[string]any{"resultType": "complete", "statusMessage": "it blew up", "error": map[string]any{"code": -32603, "message": "API rate limit exceeded"}})
			case ft.tool == "ask" && ft.answer == nil:
				res = taskJSON(p.TaskID, "input_required", map[string]any{"resultType": "complete", "inputRequests": map[string]any{
					"name": map[string]any{"method": "elicitation/create", "params": map[string]any{"mode": "form", "message": "Your name?", "requestedSchema": map[string]any{"type": "object"}}},
				}})
			case ft.tool == "ask":
				res = taskJSON(p.TaskID, "completed", map[string]any{"resultType": "complete", "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "hello " + string(ft.answer)}}}})
			}
			writeJSON(w, 200, result(m.ID, res))
		case "tasks/update":
			f.updates = append(f.updates, p.InputResponses)
			if ft := f.tasks[p.TaskID]; ft != nil {
				ft.answer = p.InputResponses["name"]
			}
			writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete"}))
		case "tasks/cancel":
			if ft := f.tasks[p.TaskID]; ft != nil {
				ft.cancelled = true
			}
			writeJSON(w, 200, result(m.ID, map[string]any{"resultType": "complete"}))
		default:
			writeJSON(w, 404, rpcError(m.ID, -32601, "Method not found", nil))
		}
	})
	return f
}

func connectModernTasks(t *testing.T, o client.Options) (*modernTaskFake, *client.Client) {
	t.Helper()
	f := newModernTaskFake(t)
	o.Era = client.EraModern
	c, err := client.ConnectURL(ctx(t), f.url(), opts(o))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return f, c
}

// TestModernTaskPolled: a 2026-07-28 task from the call to its result:
// the extension declared on the tools/call and on every tasks/* request
// (beside the Options' own extensions), never params.task; the flat
// CreateTaskResult read as a task; tasks/get polled at the server's
// pollIntervalMs with Mcp-Name = the task id; each new status reported
// once; the result inlined in the completed task returned.
func TestModernTaskPolled(t *testing.T) {
	t.Parallel()
	f, c := connectModernTasks(t, client.Options{Extensions: map[string]json.RawMessage{"io.modelcontextprotocol/ui": nil}})
	if !c.CanTask(mcp.Tool{Name: "job"}) {
		t.Error("CanTask is false for a server that declares the extension")
	}
	task, res, err := c.CallToolTask(ctx(t), "job", map[string]any{"n": 1})
	if err != nil || task == nil || res != nil {
		t.Fatalf("CallToolTask: task %+v result %s err %v", task, res, err)
	}
	if task.Status != client.TaskWorking || task.TTL != time.Minute || task.PollInterval != 20*time.Millisecond || !strings.HasPrefix(task.ID, "task-") {
		t.Errorf("created task %+v", task)
	}
	var seen []string
	raw, err := c.AwaitTask(ctx(t), task, func(tk client.Task) { seen = append(seen, string(tk.Status)+" "+tk.StatusMessage) })
	if err != nil {
		t.Fatal(err)
	}
	var r mcp.CallToolResult
	if json.Unmarshal(raw, &r) != nil || len(r.Content) != 1 || r.Content[0].Text != "job done" {
		t.Fatalf("result %s", raw)
	}
	if want := []string{"working ", "working poll 1", "working poll 2", "completed "}; strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("statuses %q, want %q", seen, want)
	}
	for _, s := range f.requests("") {
		if s.method != http.MethodPost || s.msg.Method == "server/discover" {
			continue
		}
		var p struct {
			Meta struct {
				Caps struct {
					Extensions map[string]json.RawMessage `json:"extensions"`
				} `json:"io.modelcontextprotocol/clientCapabilities"`
			} `json:"_meta"`
		}
		json.Unmarshal(s.msg.Params, &p)
		if _, ok := p.Meta.Caps.Extensions[mcp.TasksExtension]; !ok {
			t.Errorf("%s without the tasks extension: %s", s.msg.Method, s.msg.Params)
		}
		if _, ok := p.Meta.Caps.Extensions["io.modelcontextprotocol/ui"]; !ok {
			t.Errorf("%s lost the Options' extensions: %s", s.msg.Method, s.msg.Params)
		}
		if strings.HasPrefix(s.msg.Method, "tasks/") && s.header.Get("Mcp-Name") != task.ID {
			t.Errorf("%s Mcp-Name %q, want %q", s.msg.Method, s.header.Get("Mcp-Name"), task.ID)
		}
	}
	if n := len(f.requests("tasks/get")); n != 3 {
		t.Errorf("%d polls, want 3", n)
	}
}

// TestModernTaskPlainResult: the server decides; a plain result to a call
// that declared the extension is the call's result. A plain CallTool
// does not declare the extension, so a server never makes a task of it.
func TestModernTaskPlainResult(t *testing.T) {
	t.Parallel()
	_, c := connectModernTasks(t, client.Options{})
	task, raw, err := c.CallToolTask(ctx(t), "quick", nil)
	if err != nil || task != nil || !strings.Contains(string(raw), "extension declared: true") {
		t.Fatalf("task %+v result %s err %v", task, raw, err)
	}
	r, err := c.CallTool(ctx(t), "job", nil)
	if err != nil || toolText(t, r) != "at once (extension declared: false)" {
		t.Fatalf("plain CallTool: %+v %v", r, err)
	}
}

// TestModernTaskInput: input_required answered through the Options'
// Elicitation with tasks/update (inputResponses by key), once although
// the server asks again until its state moves on.
func TestModernTaskInput(t *testing.T) {
	t.Parallel()
	var asked int
	var mu sync.Mutex
	f, c := connectModernTasks(t, client.Options{Elicitation: func(_ context.Context, params json.RawMessage) (any, error) {
		mu.Lock()
		asked++
		mu.Unlock()
		if !strings.Contains(string(params), "Your name?") {
			t.Errorf("elicitation params %s", params)
		}
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Luca"}}, nil
	}})
	task, _, err := c.CallToolTask(ctx(t), "ask", nil)
	if err != nil || task == nil {
		t.Fatal(task, err)
	}
	raw, err := c.AwaitTask(ctx(t), task, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `hello {\"action\":\"accept\",\"content\":{\"name\":\"Luca\"}}`) {
		t.Errorf("result %s", raw)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.updates) != 1 || asked != 1 {
		t.Errorf("%d updates, %d questions asked; want one each: %v", len(f.updates), asked, f.updates)
	}
}

// TestModernTaskFailedAndCancelled: a failed task is the JSON-RPC error it
// failed with (an *RPCError, as a plain call's would be); tasks/cancel is
// an acknowledgement (no task), and the poll that sees the task cancelled
// ends the wait with ErrTaskCancelled.
func TestModernTaskFailedAndCancelled(t *testing.T) {
	t.Parallel()
	_, c := connectModernTasks(t, client.Options{})
	task, _, err := c.CallToolTask(ctx(t), "boom", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.AwaitTask(ctx(t), task, nil)
	var re *client.RPCError
	if !errors.As(err, &re) || re.Err.Code != -32603 || re.Err.Message != "API rate limit exceeded" {
		t.Fatalf("failed task: %v", err)
	}

	task, _, err = c.CallToolTask(ctx(t), "forever", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.CancelTask(ctx(t), task.ID)
	if err != nil || got != nil {
		t.Fatalf("CancelTask: %+v %v", got, err)
	}
	_, err = c.AwaitTask(ctx(t), task, nil)
	if !errors.Is(err, client.ErrTaskCancelled) || !strings.Contains(err.Error(), "cancelled by request") {
		t.Fatalf("cancelled task: %v", err)
	}
	if _, err := c.GetTask(ctx(t), "no-such-task"); err == nil {
		t.Error("tasks/get of an unknown task succeeded")
	}
	if _, err := c.ListTasks(ctx(t)); err == nil {
		t.Error("tasks/list in 2026-07-28 did not fail")
	}
	if _, err := c.TaskResult(ctx(t), task.ID); err == nil {
		t.Error("tasks/result in 2026-07-28 did not fail")
	}
}
