package gateway

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/tasks"
	mcprt "github.com/mcprt/mcprt/runtime"
)

// taskGateway is a gateway serving tasks, in front of mcprt serve with
// the conformance fixture's task tools, whose own tasks are journalled in
// the returned directory.
func taskGateway(t *testing.T) (*testGateway, string) {
	t.Helper()
	dir := t.TempDir()
	b := serve("ts")
	b.Args = []string{"serve", "-tasks-dir", dir, "-fixture", "conformance"}
	g := start(t, b)
	m, err := mcprt.StartTasks(nil, g.Server(), mcprt.TasksOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) }) // before Close (registered after it)
	return g, dir
}

// modernReq is a 2026-07-28 request from a client declaring the tasks
// extension.
func modernReq(method, params string) *handlers.Request {
	r := req(method, params, nil)
	r.Version, r.Modern = "2026-07-28", true
	r.ClientCapabilities = json.RawMessage(`{"extensions":{"` + handlers.TasksExtension + `":{}}}`)
	return r
}

// taskID reads the task id of a CreateTaskResult of either era.
func taskID(t *testing.T, out string) string {
	t.Helper()
	var r struct {
		TaskID string `json:"taskId"`
		Task   struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.TaskID+r.Task.TaskID == "" {
		t.Fatalf("not a CreateTaskResult: %s (%v)", out, err)
	}
	return r.TaskID + r.Task.TaskID
}

// TestTaskThroughGateway: a tools/call asking for a task of a backend's
// task tool is a task of the gateway's, in either era, whose result is the
// backend's; the backend ran it as a task of its own (its journal has it),
// under an id the client is never given.
func TestTaskThroughGateway(t *testing.T) {
	g, dir := taskGateway(t)
	call := `{"name":"ts__slow_compute","arguments":{"seconds":0.2,"label":"L"},"task":{}}`

	// 2025-11-25: params.task, then tasks/result.
	legacy := taskID(t, g.must("tools/call", call))
	out := g.must("tasks/result", `{"taskId":"`+legacy+`"}`)
	if !strings.Contains(out, `computed \"L\" after 0.2s`) {
		t.Errorf("legacy tasks/result: %s", out)
	}

	// 2026-07-28: the extension declared, then tasks/get until completed.
	res, err := g.run(nil, modernReq("tools/call", call))
	if err != nil {
		t.Fatal(err)
	}
	modern := taskID(t, res)
	deadline := time.Now().Add(hang)
	for {
		out, err := g.run(nil, modernReq("tasks/get", `{"taskId":"`+modern+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out, `"status":"completed"`) {
			if !strings.Contains(out, `computed \"L\" after 0.2s`) {
				t.Errorf("modern tasks/get: %s", out)
			}
			break
		}
		if !strings.Contains(out, `"status":"working"`) || time.Now().After(deadline) {
			t.Fatalf("modern tasks/get: %s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}

	journal, err := os.ReadFile(filepath.Join(dir, tasks.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(journal), `"tool":"slow_compute","modern":true,"status":"completed"`); n != 2 {
		t.Errorf("the backend completed %d tasks, want 2:\n%s", n, journal)
	}
	for _, id := range []string{legacy, modern} {
		if strings.Contains(string(journal), id) {
			t.Errorf("the gateway's task id %s is the backend's", id)
		}
	}
}

// TestTaskCancelThroughGateway: cancelling the gateway's task cancels the
// backend's.
func TestTaskCancelThroughGateway(t *testing.T) {
	g, dir := taskGateway(t)
	id := taskID(t, g.must("tools/call", `{"name":"ts__slow_compute","arguments":{"seconds":600},"task":{}}`))
	file := filepath.Join(dir, tasks.JournalFile)
	waitFor(t, "the backend's task", func() bool {
		b, _ := os.ReadFile(file)
		return strings.Contains(string(b), `"status":"working"`)
	})
	if out := g.must("tasks/cancel", `{"taskId":"`+id+`"}`); !strings.Contains(out, `"status":"cancelled"`) {
		t.Errorf("tasks/cancel: %s", out)
	}
	waitFor(t, "the backend's task cancelled", func() bool {
		b, _ := os.ReadFile(file)
		return strings.Contains(string(b), `"status":"cancelled"`)
	})
}

// TestWithoutTasks: a call the gateway forwards plainly does not declare
// the tasks extension to the backend (the gateway's tasks are its own),
// and keeps every other extension the client declared.
func TestWithoutTasks(t *testing.T) {
	for in, want := range map[string]string{
		`{"` + handlers.TasksExtension + `":{}}`:                        `{}`,
		`{"a/b":{"x":1},"` + handlers.TasksExtension + `":{},"c/d":{}}`: `{"a/b":{"x":1},"c/d":{}}`,
	} {
		if got := string(withoutTasks(json.RawMessage(in))); got != want {
			t.Errorf("withoutTasks(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestTaskAnyTool: with Options.TaskAnyTool a tool of a backend that
// knows no tasks is offered as one a client may call as a task, and such
// a call outlives the backend's Timeout (which still cuts a plain call).
func TestTaskAnyTool(t *testing.T) {
	b := serve("plain")
	b.Timeout, b.MaxTimeout = time.Second, time.Second
	g := unstarted(t, Options{TaskAnyTool: true}, b)
	g.start()
	m, err := mcprt.StartTasks(nil, g.Server(), mcprt.TasksOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	if out := g.must("tools/list", `{}`); !strings.Contains(out, `"name":"plain__sleep"`) ||
		strings.Count(out, `"taskSupport":"optional"`) != strings.Count(out, `"name":`) {
		t.Errorf("tools/list: every tool should allow a task: %s", out)
	}
	if out := g.must("tools/call", `{"name":"plain__sleep","arguments":{"ms":2500}}`); !strings.Contains(out, "did not answer tools/call within 1s") {
		t.Errorf("a plain call past the backend's timeout: %s", out)
	}
	for _, r := range []*handlers.Request{
		req("tools/call", `{"name":"plain__sleep","arguments":{"ms":2500},"task":{}}`, nil),
		modernReq("tools/call", `{"name":"plain__sleep","arguments":{"ms":2500}}`),
	} {
		out, err := g.run(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		id := taskID(t, out)
		got, err := m.Wait(context.Background(), "", id)
		if err != nil || !strings.Contains(string(got.Result), `"slept"`) {
			t.Errorf("modern %v: the task %+v, %v", r.Modern, got, err)
		}
	}
}

func TestAnyTask(t *testing.T) {
	for in, want := range map[string]string{
		``:                            `{"taskSupport":"optional"}`,
		`{}`:                          `{"taskSupport":"optional"}`,
		`{"taskSupport":"forbidden"}`: `{"taskSupport":"optional"}`,
		`{"taskSupport":"required"}`:  `{"taskSupport":"required"}`,
		`{"taskSupport":"optional"}`:  `{"taskSupport":"optional"}`,
		`{"x":1}`:                     `{"taskSupport":"optional","x":1}`,
	} {
		if got := string(anyTask(json.RawMessage(in))); got != want {
			t.Errorf("anyTask(%s) = %s, want %s", in, got, want)
		}
	}
}
