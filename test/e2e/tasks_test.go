//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Tasks that outlive their request, their connection and their process:
// `mcprt serve -tasks-dir DIR` is killed with SIGKILL and started again on
// the same directory, and what it says of each task is checked.

// taskOf reads a task's fields from a result (flat, 2026-07-28, or under
// "task", 2025-11-25 CreateTaskResult).
type taskOf struct {
	TaskID        string          `json:"taskId"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"statusMessage"`
	Result        json.RawMessage `json:"result"`
	Error         *RPCError       `json:"error"`
	Task          *taskOf         `json:"task"`
}

func readTask(t *testing.T, raw json.RawMessage) taskOf {
	t.Helper()
	var tk taskOf
	if err := json.Unmarshal(raw, &tk); err != nil {
		t.Fatalf("not a task: %s", raw)
	}
	if tk.Task != nil {
		return *tk.Task
	}
	return tk
}

// TestTasksSurviveKillStdio: 2025-11-25 over stdio. A completed task's
// result, and the failure of one that was running, are served by the next
// process on the same -tasks-dir.
func TestTasksSurviveKillStdio(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-fixture", "conformance", "-tasks-dir", dir}
	c := Start(t, Options{Args: args})
	c.Initialize("2025-11-25")
	call := func(c *Client, seconds float64) string {
		m := c.Call("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": seconds, "label": "e2e"}, "task": map[string]any{}})
		if m.Error != nil {
			t.Fatalf("tools/call as a task: %s", m)
		}
		tk := readTask(t, m.Result)
		if tk.TaskID == "" || tk.Status != "working" {
			t.Fatalf("CreateTaskResult: %s", m)
		}
		return tk.TaskID
	}
	done := call(c, 0)
	res := c.Call("tasks/result", map[string]any{"taskId": done})
	if res.Error != nil || !strings.Contains(string(res.Result), `computed \"e2e\"`) {
		t.Fatalf("tasks/result: %s", res)
	}
	running := call(c, 3600)
	_ = c.cmd.Process.Kill()
	<-c.exited

	c = Start(t, Options{Args: args})
	c.Initialize("2025-11-25")
	if m := c.Call("tasks/get", map[string]any{"taskId": done}); m.Error != nil || readTask(t, m.Result).Status != "completed" {
		t.Fatalf("completed task after kill -9: %s", m)
	}
	if again := c.Call("tasks/result", map[string]any{"taskId": done}); again.Error != nil || string(again.Result) != string(res.Result) {
		t.Fatalf("result after kill -9:\n%s\nbefore:\n%s", again, res)
	}
	m := c.Call("tasks/get", map[string]any{"taskId": running})
	if tk := readTask(t, m.Result); m.Error != nil || tk.Status != "failed" || !strings.Contains(tk.StatusMessage, "restarted") {
		t.Fatalf("running task after kill -9: %s; want failed, saying the server restarted", m)
	}
}

// modernPost sends one 2026-07-28 request on a connection of its own (no
// keep-alive), as a client that reconnects for every poll would.
func modernPost(t *testing.T, url, method string, params map[string]any) json.RawMessage {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "e2e", "version": "0"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if n, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", n)
	} else if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: callTimeout}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if i := bytes.Index(raw, []byte("data: ")); i >= 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		raw = raw[i+len("data: "):]
		raw = raw[:bytes.IndexByte(raw, '\n')]
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.Error != nil {
		t.Fatalf("%s: HTTP %d %s", method, resp.StatusCode, raw)
	}
	return m.Result
}

// TestTasksSurviveKillHTTP: the 2026-07-28 extension over Streamable HTTP.
// Each request is a connection of its own, so a task outlives the one
// that made it and is polled from others; then the server is killed and
// a new one on the same -tasks-dir answers for both tasks.
func TestTasksSurviveKillHTTP(t *testing.T) {
	dir := t.TempDir()
	args := []string{"serve", "-http", "127.0.0.1:0", "-fixture", "conformance", "-tasks-dir", dir}
	p := startHTTP(t, binPath, args...)
	create := func(url string, seconds float64) string {
		tk := readTask(t, modernPost(t, url, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": seconds, "label": "http"}}))
		if tk.TaskID == "" {
			t.Fatalf("no task made")
		}
		return tk.TaskID
	}
	get := func(url, id string) taskOf {
		return readTask(t, modernPost(t, url, "tasks/get", map[string]any{"taskId": id}))
	}
	done := create(p.url, 0.2)
	var first taskOf
	for deadline := time.Now().Add(callTimeout); ; {
		if first = get(p.url, done); first.Status == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task never completed: %+v", first)
		}
		time.Sleep(50 * time.Millisecond)
	}
	running := create(p.url, 3600)
	_ = p.cmd.Process.Kill()
	<-p.exited

	p = startHTTP(t, binPath, args...)
	if got := get(p.url, done); got.Status != "completed" || string(got.Result) != string(first.Result) {
		t.Fatalf("completed task after kill -9: %+v; before: %+v", got, first)
	}
	got := get(p.url, running)
	if got.Status != "failed" || got.Error == nil || !strings.Contains(got.StatusMessage, "restarted") {
		t.Fatalf("running task after kill -9: %+v; want failed, with the error and the reason", got)
	}
}

// TestTasksResumeAfterKill: the reference server's sleep is resumable
// (handlers.Tool.Resumable). Killed with SIGKILL while its sleep tasks
// run, the server started again on the same -tasks-dir runs them again:
// one completes; the other, still running again when the server is
// killed a second time, is failed by the third, not run a third time.
func TestTasksResumeAfterKill(t *testing.T) {
	dir := t.TempDir()
	args := []string{"serve", "-http", "127.0.0.1:0", "-tasks-dir", dir}
	p := startHTTP(t, binPath, args...)
	create := func(ms int) string {
		tk := readTask(t, modernPost(t, p.url, "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": ms}}))
		if tk.TaskID == "" || tk.Status != "working" {
			t.Fatalf("no task made: %+v", tk)
		}
		return tk.TaskID
	}
	get := func(id string) taskOf {
		return readTask(t, modernPost(t, p.url, "tasks/get", map[string]any{"taskId": id}))
	}
	short, long := create(3000), create(3600_000)
	if got := get(short); got.Status != "working" {
		t.Fatalf("the 3 s sleep ended before the kill (machine too slow?): %+v", got)
	}
	kill := func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
		p = startHTTP(t, binPath, args...)
	}
	kill()
	if got := get(long); got.Status != "working" || !strings.Contains(got.StatusMessage, "run again") {
		t.Fatalf("resumable task after kill -9: %+v; want working again, saying so", got)
	}
	for deadline := time.Now().Add(callTimeout + 3*time.Second); ; time.Sleep(100 * time.Millisecond) {
		got := get(short)
		if got.Status == "completed" {
			if !strings.Contains(string(got.Result), "slept") {
				t.Fatalf("resumed task's result: %s", got.Result)
			}
			break
		}
		if got.Status != "working" || time.Now().After(deadline) {
			t.Fatalf("resumed task: %+v, want working until completed", got)
		}
	}
	kill()
	got := get(long)
	if got.Status != "failed" || got.Error == nil || !strings.Contains(got.StatusMessage, "again") {
		t.Fatalf("task resumed once, then killed again: %+v; want failed, saying why", got)
	}
}
