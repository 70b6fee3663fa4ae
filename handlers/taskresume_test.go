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

// A resumable tool's task, cut short by its server's stop, is run again
// by the next server on the same journal with what the call had: its
// arguments and the caller its transport vouched for (whose tasks it
// stays). A tool that is not resumable is failed as before.
func TestTaskOfResumableToolRunsAgain(t *testing.T) {
	dir := t.TempDir()
	alice := &handlers.Caller{Subject: "alice", ClientID: "c", Scopes: []string{"s"}}
	serve := func(name string, block bool) (*handlers.Server, *taskrun.Manager) {
		srv := handlers.NewServer(mcp.Implementation{Name: "resume", Version: "0"}, "")
		handler := func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
			if block {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			who := "nobody"
			if c := handlers.CallerFrom(ctx); c != nil && req.Caller != nil && c.Subject == req.Caller.Subject {
				who = c.Subject
			}
			return mcp.TextResult("ran " + string(args) + " for " + who), nil
		}
		srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "job", Execution: json.RawMessage(`{"taskSupport":"optional"}`)}, Resumable: true}, handler)
		srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "once", Execution: json.RawMessage(`{"taskSupport":"optional"}`)}}, handler)
		j, err := tasks.OpenJournal(dir, tasks.JournalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e, _ := actor.NewEngine(actor.NewEngineConfig())
		m, err := taskrun.Start(e, taskrun.Config{Store: j, Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Stop(context.Background()) })
		srv.ServeTasks(m, handlers.TasksOptions{})
		return srv, m
	}
	srv, m := serve("tasks1", true)
	call, _ := srv.Method("tools/call")
	create := func(tool string) string {
		req := benchRequest(tool)
		req.Params = json.RawMessage(`{"name":"` + tool + `","arguments":{"n":7}}`)
		req.Caller = alice
		res, err := call.Run(handlers.WithCaller(context.Background(), alice), req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(res)
		var tk struct {
			TaskID string `json:"taskId"`
		}
		if json.Unmarshal(raw, &tk) != nil || tk.TaskID == "" {
			t.Fatalf("not a task: %s", raw)
		}
		return tk.TaskID
	}
	job, once := create("job"), create("once")
	owner := alice.Principal() // the task's owner: its caller
	if rec, err := m.Get(owner, job); err != nil || rec.Rerun == nil || string(rec.Rerun.Args) != `{"n":7}` || !strings.Contains(string(rec.Rerun.Caller), `"alice"`) {
		t.Fatalf("resumable task's record: %+v, %v", rec, err)
	}
	if rec, _ := m.Get(owner, once); rec.Rerun != nil {
		t.Fatalf("a task of a tool that is not resumable keeps its call: %+v", rec.Rerun)
	}
	m.Stop(context.Background())

	_, m = serve("tasks2", false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := m.Wait(ctx, owner, job)
	if err != nil || got.Status != tasks.Completed || !strings.Contains(string(got.Result), `ran {\"n\":7} for alice`) {
		t.Fatalf("resumable task after a restart: %+v, %v", got, err)
	}
	if got, _ := m.Get(owner, once); got.Status != tasks.Failed || got.Message != tasks.RestartedMessage {
		t.Fatalf("a task of a tool that is not resumable after a restart: %+v", got)
	}
}
