package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// modernTaskServer is a 2026-07-28 server with the tasks extension, in
// this process: "job" is a task completed on its third poll, "bad" one
// whose tool reports an error, "boom" one that fails with a JSON-RPC
// error; each poll says which it is.
func modernTaskServer(t *testing.T) string {
	var mu sync.Mutex
	polls := map[string]int{}
	n := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name   string `json:"name"`
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		json.Unmarshal(body, &m)
		reply := func(res any) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
		}
		task := func(id, status string, extra map[string]any) map[string]any {
			t := map[string]any{"resultType": "complete", "taskId": id, "status": status, "createdAt": "2026-11-27T00:00:00Z",
				"lastUpdatedAt": "2026-11-27T00:00:00Z", "ttlMs": 60000, "pollIntervalMs": 10}
			for k, v := range extra {
				t[k] = v
			}
			return t
		}
		mu.Lock()
		defer mu.Unlock()
		switch m.Method {
		case "server/discover":
			reply(map[string]any{"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{}, "extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
				"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "tasks", "version": "1"}}})
		case "tools/list":
			reply(map[string]any{"resultType": "complete", "tools": []any{map[string]any{"name": "job", "inputSchema": map[string]any{"type": "object"}}}})
		case "tools/call":
			n++
			res := task(fmt.Sprintf("t-%d-%s", n, m.Params.Name), "working", nil)
			res["resultType"] = "task"
			reply(res)
		case "tasks/get":
			polls[m.Params.TaskID]++
			p := polls[m.Params.TaskID]
			msg := map[string]any{"statusMessage": fmt.Sprintf("step %d", p)}
			switch {
			case p < 3:
				reply(task(m.Params.TaskID, "working", msg))
			case strings.HasSuffix(m.Params.TaskID, "-job"):
				reply(task(m.Params.TaskID, "completed", map[string]any{"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "job done"}}}}))
			case strings.HasSuffix(m.Params.TaskID, "-bad"):
				reply(task(m.Params.TaskID, "completed", map[string]any{"result": map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": "no good"}}}}))
			default:
				reply(task(m.Params.TaskID, "failed", map[string]any{"error": map[string]any{"code": -32603, "message": "the job blew up"}}))
			}
		default:
			reply(map[string]any{"resultType": "complete"})
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestCallTaskModern: mcprt call -task with a 2026-07-28 server: each
// status on stderr (one line each: not a terminal), the result on stdout
// as a plain call's; a tool error exits 1 with its content printed, a
// failed task exits 1 saying why.
func TestCallTaskModern(t *testing.T) {
	t.Parallel()
	url := modernTaskServer(t)
	out, errs, code := runURLVerb(t, "call", "-era", "modern", "-task", "-url", url, "job")
	if code != 0 || out != "job done\n" {
		t.Fatalf("job: exit %d stdout %q stderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"mcprt call: task t-1-job working\n", "mcprt call: task t-1-job working: step 1\n", "mcprt call: task t-1-job working: step 2\n", "mcprt call: task t-1-job completed\n"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	out, errs, code = runURLVerb(t, "call", "-era", "modern", "-task", "-url", url, "bad")
	if code != 1 || out != "no good\n" || !strings.Contains(errs, "tool bad reported an error") {
		t.Errorf("bad: exit %d stdout %q stderr:\n%s", code, out, errs)
	}
	out, errs, code = runURLVerb(t, "call", "-era", "modern", "-task", "-url", url, "boom")
	if code != 1 || out != "" || !strings.Contains(errs, "the job blew up") {
		t.Errorf("boom: exit %d stdout %q stderr:\n%s", code, out, errs)
	}
	if _, errs, code = runURLVerb(t, "call", "-task-ttl", "1m", "-url", url, "job"); code != 2 || !strings.Contains(errs, "-task-ttl is for -task") {
		t.Errorf("-task-ttl without -task: exit %d stderr %q", code, errs)
	}
}
