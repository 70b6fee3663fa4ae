//go:build unix

package client_test

import (
	"encoding/json"
	"fmt"
	"time"
)

// legacyTask is one task of the fake in mode legacy-tasks: the tool
// "ttask", which reports three progress notifications with the token of
// its tools/call after answering it with the task, then (once tasks/result
// is asked for, as the TypeScript SDK does) asks an elicitation related to
// the task, and completes with the answer it got.
type legacyTask struct {
	id       string
	status   string
	asked    chan struct{} // closed by the first tasks/result
	done     chan struct{} // closed when the task completed
	answer   json.RawMessage
	askedOne bool
}

func (t *legacyTask) json() map[string]any {
	return map[string]any{"taskId": t.id, "status": t.status, "createdAt": "2026-11-27T00:00:00Z",
		"lastUpdatedAt": "2026-11-27T00:00:00Z", "ttl": 60000, "pollInterval": 20}
}

// handleTasks answers what mode legacy-tasks adds; false for the rest.
func (f *fake) handleTasks(m fakeMsg) bool {
	var p struct {
		Name   string                     `json:"name"`
		TaskID string                     `json:"taskId"`
		Task   *struct{ TTL int64 }       `json:"task"`
		Meta   map[string]json.RawMessage `json:"_meta"`
	}
	json.Unmarshal(m.Params, &p)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tasks == nil {
		f.tasks = map[string]*legacyTask{}
	}
	switch m.Method {
	case "initialize":
		f.result(m.ID, map[string]any{"protocolVersion": "2025-11-25",
			"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}},
			"serverInfo":   map[string]any{"name": "fake-tasks", "version": "1"}})
	case "tools/list":
		f.result(m.ID, map[string]any{"tools": []any{
			map[string]any{"name": "ttask", "inputSchema": map[string]any{"type": "object"}, "execution": map[string]any{"taskSupport": "optional"}},
			map[string]any{"name": "tnotify", "inputSchema": map[string]any{"type": "object"}, "execution": map[string]any{"taskSupport": "required"}},
			map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}},
		}})
	case "tools/call":
		if p.Name == "tnotify" && p.Task != nil {
			// Completed at once, but polls asked for once an hour: only
			// its status notifications, sent until tasks/result is asked
			// for, tell the client.
			t := &legacyTask{id: fmt.Sprintf("lt-%d", len(f.tasks)+1), status: "working", asked: make(chan struct{}), done: make(chan struct{})}
			f.tasks[t.id] = t
			created := t.json()
			created["pollInterval"] = 3600000
			f.result(m.ID, map[string]any{"task": created})
			t.status = "completed"
			t.answer = json.RawMessage(`"notified"`)
			close(t.done)
			go func() {
				for {
					select {
					case <-t.asked:
						return
					case <-time.After(20 * time.Millisecond):
					}
					f.mu.Lock()
					st := t.json()
					f.mu.Unlock()
					f.notify("notifications/tasks/status", st)
				}
			}()
			return true
		}
		if p.Name != "ttask" || p.Task == nil {
			return false
		}
		t := &legacyTask{id: fmt.Sprintf("lt-%d", len(f.tasks)+1), status: "working", asked: make(chan struct{}), done: make(chan struct{})}
		f.tasks[t.id] = t
		f.result(m.ID, map[string]any{"task": t.json()})
		tok := p.Meta["progressToken"]
		go func() {
			for i := 1; i <= 3; i++ {
				f.notify("notifications/progress", map[string]any{"progressToken": tok, "progress": i, "total": 3, "message": fmt.Sprintf("step %d", i)})
			}
			f.mu.Lock()
			t.status = "input_required"
			f.mu.Unlock()
			<-t.asked
			raw := f.ask("elicitation/create", map[string]any{"message": "name?", "requestedSchema": map[string]any{"type": "object"},
				"_meta": map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": t.id}}})
			f.mu.Lock()
			t.answer, t.status = raw, "completed"
			f.mu.Unlock()
			f.notify("notifications/tasks/status", t.json())
			close(t.done)
		}()
	case "tasks/get":
		t := f.tasks[p.TaskID]
		if t == nil {
			f.error(m.ID, -32602, "Failed to retrieve task: Task not found", nil)
			return true
		}
		f.result(m.ID, t.json())
	case "tasks/result":
		t := f.tasks[p.TaskID]
		if t == nil {
			f.error(m.ID, -32602, "Failed to retrieve task: Task not found", nil)
			return true
		}
		if !t.askedOne {
			t.askedOne = true
			close(t.asked)
		}
		go func() {
			<-t.done
			f.mu.Lock()
			answer := t.answer
			f.mu.Unlock()
			res := text(string(answer))
			res["_meta"] = map[string]any{"io.modelcontextprotocol/related-task": map[string]any{"taskId": t.id}}
			f.result(m.ID, res)
		}()
	default:
		return false
	}
	return true
}
