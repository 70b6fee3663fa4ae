//go:build unix

package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// everything is the npm reference server @modelcontextprotocol/server-
// everything, which has 2025-11-25 tasks (the TypeScript SDK's): its tool
// simulate-research-query runs four one-second stages as a task, and with
// ambiguous=true asks for a clarification by an elicitation related to the
// task, sent on the stream of tasks/result. It is installed by
// test/e2e/npm/install.sh, which prints the directory to put in
// MCPRT_NPM_SERVERS, as the e2e tests read it; without it these tests skip.
func everything(t *testing.T) client.Command {
	t.Helper()
	dir := os.Getenv("MCPRT_NPM_SERVERS")
	if dir == "" {
		t.Skip("set MCPRT_NPM_SERVERS to the directory test/e2e/npm/install.sh prints")
	}
	p := filepath.Join(dir, "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(p); err != nil {
		t.Skip(err)
	}
	return client.Command{Path: p, Args: []string{"stdio"}}
}

// researchAnswerer answers the tool's clarification, recording what it was
// asked.
type researchAnswerer struct {
	mu     sync.Mutex
	params []json.RawMessage
}

func (a *researchAnswerer) elicit(_ context.Context, params json.RawMessage) (any, error) {
	a.mu.Lock()
	a.params = append(a.params, params)
	a.mu.Unlock()
	return map[string]any{"action": "accept", "content": map[string]any{"interpretation": "snake"}}, nil
}

// TestEverythingTask: a 2025-11-25 task against the reference server, from
// the call to the result: CanTask from the server's tasks capability and
// the tool's taskSupport ("required"); params.task with the ttl asked;
// the task polled through its stages (no status message reported
// twice); the result fetched with tasks/result; tasks/list lists it. A tool
// whose taskSupport forbids tasks gets a plain call.
func TestEverythingTask(t *testing.T) {
	t.Parallel()
	a := &researchAnswerer{}
	c := connect(t, everything(t), opts(client.Options{Era: client.EraLegacy, Elicitation: a.elicit}))
	tools, err := c.ListTools(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tools, func(tl mcp.Tool) bool { return tl.Name == "simulate-research-query" })
	if i < 0 {
		t.Fatalf("no simulate-research-query among %d tools", len(tools))
	}
	if tools[i].TaskSupport() != "required" || !c.CanTask(tools[i]) {
		t.Fatalf("taskSupport %q, CanTask %v", tools[i].TaskSupport(), c.CanTask(tools[i]))
	}

	task, raw, err := c.CallToolTask(ctx(t), "simulate-research-query", map[string]any{"topic": "gophers"}, client.WithTaskTTL(5*time.Minute))
	if err != nil || task == nil {
		t.Fatalf("CallToolTask: %+v %s %v", task, raw, err)
	}
	if task.Status != client.TaskWorking || task.ID == "" || task.PollInterval <= 0 {
		t.Errorf("created %+v", task)
	}
	var msgs []string
	raw, err = c.AwaitTask(ctx(t), task, func(tk client.Task) { msgs = append(msgs, string(tk.Status)+": "+tk.StatusMessage) })
	if err != nil {
		t.Fatal(err)
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, "Research Report: gophers") {
		t.Fatalf("result %s (%v)", raw, err)
	}
	// A stage lasts a second, as does the poll interval: a loaded
	// machine may miss one, but none is reported twice.
	joined := strings.Join(msgs, "\n")
	for _, stage := range []string{"Gathering sources", "Analyzing content", "Synthesizing findings", "Generating report"} {
		if n := strings.Count(joined, "working: "+stage); n > 1 {
			t.Errorf("stage %q reported %d times, want at most once:\n%s", stage, n, joined)
		}
	}
	if !strings.HasPrefix(msgs[0], "working") || len(msgs) < 3 {
		t.Errorf("statuses:\n%s", joined)
	}
	if !strings.HasPrefix(msgs[len(msgs)-1], "completed") {
		t.Errorf("last status %q, want completed", msgs[len(msgs)-1])
	}
	if len(a.params) != 0 {
		t.Errorf("asked a question for a plain topic: %s", a.params)
	}

	list, err := c.ListTasks(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list, func(tk client.Task) bool { return tk.ID == task.ID && tk.Status == client.TaskCompleted }) {
		t.Errorf("tasks/list lacks the completed task %s: %+v", task.ID, list)
	}

	// echo forbids tasks: CallToolTask makes it a plain call.
	task, raw, err = c.CallToolTask(ctx(t), "echo", map[string]any{"message": "hi"})
	if err != nil || task != nil || !strings.Contains(string(raw), "hi") {
		t.Fatalf("echo: task %+v result %s err %v", task, raw, err)
	}
}

// TestEverythingTaskInput: the ambiguous query; the task moves to
// input_required, AwaitTask opens tasks/result, on whose stream the
// server sends its elicitation (with the related-task _meta), which the
// Options' Elicitation answers; the report names the answer.
func TestEverythingTaskInput(t *testing.T) {
	t.Parallel()
	a := &researchAnswerer{}
	c := connect(t, everything(t), opts(client.Options{Era: client.EraLegacy, Elicitation: a.elicit}))
	task, _, err := c.CallToolTask(ctx(t), "simulate-research-query", map[string]any{"topic": "python", "ambiguous": true})
	if err != nil || task == nil {
		t.Fatal(task, err)
	}
	var statuses []client.TaskStatus
	raw, err := c.AwaitTask(ctx(t), task, func(tk client.Task) { statuses = append(statuses, tk.Status) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "python (snake)") {
		t.Errorf("the report does not use the answer: %s", raw)
	}
	if !slices.Contains(statuses, client.TaskInputRequired) {
		t.Errorf("input_required never seen: %v", statuses)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.params) != 1 || !strings.Contains(string(a.params[0]), `"io.modelcontextprotocol/related-task":{"taskId":"`+task.ID+`"}`) {
		t.Errorf("elicitations: %s", a.params)
	}
}

// TestEverythingTaskCancel: tasks/cancel answers the cancelled task;
// tasks/get then says cancelled, and AwaitTask ends with
// ErrTaskCancelled; a second cancel is refused (-32602: the task is
// terminal).
func TestEverythingTaskCancel(t *testing.T) {
	t.Parallel()
	c := connect(t, everything(t), opts(client.Options{Era: client.EraLegacy}))
	task, _, err := c.CallToolTask(ctx(t), "simulate-research-query", map[string]any{"topic": "long"})
	if err != nil || task == nil {
		t.Fatal(task, err)
	}
	got, err := c.CancelTask(ctx(t), task.ID)
	if err != nil || got == nil || got.Status != client.TaskCancelled || got.ID != task.ID {
		t.Fatalf("CancelTask: %+v %v", got, err)
	}
	now, err := c.GetTask(ctx(t), task.ID)
	if err != nil || now.Status != client.TaskCancelled {
		t.Fatalf("GetTask after cancel: %+v %v", now, err)
	}
	if _, err := c.AwaitTask(ctx(t), task, nil); !errors.Is(err, client.ErrTaskCancelled) {
		t.Fatalf("AwaitTask: %v", err)
	}
	_, err = c.CancelTask(ctx(t), task.ID)
	var re *client.RPCError
	if !errors.As(err, &re) || re.Err.Code != -32602 {
		t.Errorf("second cancel: %v", err)
	}
}
