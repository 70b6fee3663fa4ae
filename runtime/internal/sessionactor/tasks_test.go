package sessionactor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/internal/sessionactor"
	"github.com/mcprt/mcprt/session"
)

// taskServer has a task tool that reports progress, asks the client, and
// answers; a tool that must be a task; and one that cannot be.
func taskServer(t *testing.T) *handlers.Server {
	srv := testServer()
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "job", Execution: json.RawMessage(`{"taskSupport":"optional"}`)}},
		func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
			req.Progress(1, 2, "half")
			res, err := req.Elicit(ctx, "Name?", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`))
			if err != nil {
				return nil, err
			}
			return mcp.TextResult("done for " + res.Content["name"].(string)), nil
		})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "must", Execution: json.RawMessage(`{"taskSupport":"required"}`)}}, noopTool)
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "plain"}}, noopTool)
	m, err := runtime.StartTasks(nil, srv, runtime.TasksOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	return srv
}

// reply reads lines until the response with this id, keeping the
// notifications it passes (task status) in c.seen.
func (c *client) reply(id string) string {
	c.t.Helper()
	for {
		l := c.recv()
		if strings.Contains(l, `"id":`+id+`,`) && !strings.Contains(l, `"method"`) {
			return l
		}
		seenNotes = append(seenNotes, l)
	}
}

var seenNotes []string

// recvUntil reads lines until one contains want, returning all it read.
func (c *client) recvUntil(want string) []string {
	c.t.Helper()
	var got []string
	for {
		l := c.recv()
		got = append(got, l)
		if strings.Contains(l, want) {
			return got
		}
	}
}

func TestTasksLegacy(t *testing.T) {
	seenNotes = nil
	c := startClientWith(t, taskServer(t), runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"0"}}}`)
	if got := c.recv(); !strings.Contains(got, `"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}`) {
		t.Fatalf("initialize does not advertise tasks: %s", got)
	}
	c.send(initDone)

	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"must"}}`)
	if got := c.recv(); !strings.Contains(got, `"code":-32601`) {
		t.Fatalf("required tool called without a task: %s, want -32601", got)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plain","task":{}}}`)
	if got := c.recv(); !strings.Contains(got, `"code":-32601`) {
		t.Fatalf("tool without taskSupport called as a task: %s, want -32601", got)
	}

	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"job","task":{"ttl":60000},"_meta":{"progressToken":"p"}}}`)
	lines := c.recvUntil(`"method":"elicitation/create"`)
	var created struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
				Status string `json:"status"`
				TTL    int64  `json:"ttl"`
			} `json:"task"`
		} `json:"result"`
	}
	var ask struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta map[string]struct {
				TaskID string `json:"taskId"`
			} `json:"_meta"`
		} `json:"params"`
	}
	progressed := false
	for _, l := range lines {
		switch {
		case strings.Contains(l, `"id":3,`):
			json.Unmarshal([]byte(l), &created)
		case strings.Contains(l, `notifications/progress`):
			progressed = strings.Contains(l, `"progressToken":"p"`) && strings.Contains(l, `io.modelcontextprotocol/related-task`)
		case strings.Contains(l, `elicitation/create`):
			json.Unmarshal([]byte(l), &ask)
		}
	}
	for created.Result.Task.TaskID == "" {
		l := c.recv()
		json.Unmarshal([]byte(l), &created)
	}
	id := created.Result.Task.TaskID
	if created.Result.Task.Status != "working" || created.Result.Task.TTL != 60000 {
		t.Fatalf("CreateTaskResult: %+v", created.Result.Task)
	}
	if !progressed {
		t.Fatalf("no progress tied to the task among %q", lines)
	}
	if ask.Params.Meta["io.modelcontextprotocol/related-task"].TaskID != id {
		t.Fatalf("elicitation/create not tied to task %s: %q", id, lines)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"` + id + `"}}`)
	if got := c.reply("4"); !strings.Contains(got, `"status":"input_required"`) {
		t.Fatalf("tasks/get while asking: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"` + id + `"}}`)
	got := c.reply("5")
	if !strings.Contains(got, `"text":"done for Ada"`) || !strings.Contains(got, `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
		t.Fatalf("tasks/result: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":6,"method":"tasks/list","params":{}}`)
	if got := c.reply("6"); !strings.Contains(got, `"taskId":"`+id+`","status":"completed"`) {
		t.Fatalf("tasks/list: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tasks/cancel","params":{"taskId":"` + id + `"}}`)
	if got := c.reply("7"); !strings.Contains(got, `"code":-32602`) {
		t.Fatalf("cancel of a completed task: %s, want -32602", got)
	}
	c.send(`{"jsonrpc":"2.0","id":8,"method":"tasks/get","params":{"taskId":"nope"}}`)
	if got := c.reply("8"); !strings.Contains(got, `"code":-32602`) {
		t.Fatalf("tasks/get of an unknown id: %s, want -32602", got)
	}
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tasks/update","params":{"taskId":"` + id + `","inputResponses":{}}}`)
	if got := c.reply("9"); !strings.Contains(got, `"code":-32601`) {
		t.Fatalf("tasks/update in 2025-11-25: %s, want -32601", got)
	}
	// The notification of the task's end comes once its result is
	// stored: before or after the answers above.
	want := `"method":"notifications/tasks/status","params":{"taskId":"` + id + `","status":"completed"`
	done := false
	for _, l := range seenNotes {
		done = done || strings.Contains(l, want)
	}
	if !done {
		c.recvUntil(want) // fails on recv's timeout
	}
	c.finish()
}

// Before 2025-11-25 a client knows no tasks: task tools run as plain calls.
func TestTasksOlderRevisionRunsPlain(t *testing.T) {
	c := startClientWith(t, taskServer(t), runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	if got := c.recv(); strings.Contains(got, `"tasks"`) {
		t.Fatalf("2025-06-18 initialize advertises tasks: %s", got)
	}
	c.send(initDone)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"must","task":{}}}`)
	if got := c.recv(); strings.Contains(got, `"task"`) || strings.Contains(got, `"error"`) {
		t.Fatalf("2025-06-18 call: %s, want a plain result", got)
	}
	c.finish()
}

func TestTasksModern(t *testing.T) {
	c := startClientWith(t, taskServer(t), runtime.Options{})
	const (
		without = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
		with    = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + without + `}}`)
	if got := c.recv(); strings.Contains(got, `"tasks":{`) || !strings.Contains(got, `"io.modelcontextprotocol/tasks":{}`) {
		t.Fatalf("server/discover: %s; want the extension and no tasks capability", got)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"must",` + without + `}}`)
	if got := c.recv(); !strings.Contains(got, `"code":-32021`) || !strings.Contains(got, `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
		t.Fatalf("required tool, extension not declared: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"x",` + without + `}}`)
	if got := c.recv(); !strings.Contains(got, `"code":-32021`) {
		t.Fatalf("tasks/get, extension not declared: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"job",` + with + `}}`)
	got := c.recv()
	var created struct {
		Result struct {
			ResultType string `json:"resultType"`
			TaskID     string `json:"taskId"`
			TTLMs      int64  `json:"ttlMs"`
		} `json:"result"`
	}
	json.Unmarshal([]byte(got), &created)
	id := created.Result.TaskID
	if created.Result.ResultType != "task" || id == "" || created.Result.TTLMs <= 0 {
		t.Fatalf("CreateTaskResult: %s", got)
	}
	var detail struct {
		Result struct {
			Status        string                     `json:"status"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			Result        json.RawMessage            `json:"result"`
		} `json:"result"`
	}
	for i := 0; detail.Result.Status != "input_required"; i++ {
		c.send(`{"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":"` + id + `",` + with + `}}`)
		got = c.recv()
		json.Unmarshal([]byte(got), &detail)
		if i > 10000 {
			t.Fatalf("never input_required: %s", got)
		}
	}
	if _, ok := detail.Result.InputRequests["q1"]; !ok || strings.Contains(got, "notifications/progress") {
		t.Fatalf("input_required: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"taskIds":["` + id + `"]},` + with + `}}`)
	if got := c.recv(); !strings.Contains(got, `"taskIds":["`+id+`"]`) {
		t.Fatalf("listen: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":"l2","method":"subscriptions/listen","params":{"notifications":{"taskIds":["` + id + `"]},` + without + `}}`)
	if got := c.recv(); !strings.Contains(got, `"code":-32021`) {
		t.Fatalf("listen for tasks without the extension: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":6,"method":"tasks/update","params":{"taskId":"` + id + `","inputResponses":{"q1":{"action":"accept","content":{"name":"Bo"}}},` + with + `}}`)
	// The ack and the notification of the task's end, in either order.
	var ack, note string
	for ack == "" || note == "" {
		switch l := c.recv(); {
		case strings.Contains(l, `"id":6,`):
			ack = l
		case strings.Contains(l, `"method":"notifications/tasks"`) && strings.Contains(l, `"status":"completed"`):
			note = l
		}
	}
	if !strings.Contains(ack, `"result":{"resultType":"complete"`) || strings.Contains(ack, "taskId") {
		t.Fatalf("tasks/update ack: %s", ack)
	}
	if !strings.Contains(note, "done for Bo") || !strings.Contains(note, `"io.modelcontextprotocol/subscriptionId":"l"`) {
		t.Fatalf("notifications/tasks on the listen stream: %s", note)
	}
	for i := 0; detail.Result.Status != "completed"; i++ {
		c.send(`{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"` + id + `",` + with + `}}`)
		got = c.reply("7")
		json.Unmarshal([]byte(got), &detail)
		if i > 10000 {
			t.Fatalf("never completed: %s", got)
		}
	}
	if !strings.Contains(string(detail.Result.Result), "done for Bo") {
		t.Fatalf("completed: %s", got)
	}
	for _, m := range []string{"tasks/result", "tasks/list"} {
		c.send(`{"jsonrpc":"2.0","id":8,"method":"` + m + `","params":{"taskId":"` + id + `",` + with + `}}`)
		if got := c.reply("8"); !strings.Contains(got, `"code":-32601`) {
			t.Fatalf("%s in 2026-07-28: %s, want -32601", m, got)
		}
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"l"}}`)
	c.finish()
}

// tasks/result waits for the task's end, however far past the request
// timeout that is: its bound is the task's ttl.
func TestTasksResultOutlivesRequestTimeout(t *testing.T) {
	srv := testServer()
	release := make(chan struct{})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "slow", Execution: json.RawMessage(`{"taskSupport":"required"}`)}},
		func(ctx context.Context, _ *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
			<-release
			return mcp.TextResult("late but here"), nil
		})
	m, err := runtime.StartTasks(nil, srv, runtime.TasksOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	c := startClientWith(t, srv, runtime.Options{Options: session.Options{RequestTimeout: 50 * time.Millisecond}})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	c.recv()
	c.send(initDone)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","task":{}}}`)
	var created struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	json.Unmarshal([]byte(c.reply("1")), &created)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":"` + created.Result.Task.TaskID + `"}}`)
	time.Sleep(200 * time.Millisecond) // four request timeouts
	close(release)
	if got := c.reply("2"); !strings.Contains(got, "late but here") {
		t.Fatalf("tasks/result after the request timeout: %s", got)
	}
	// The task's status notification (completed) comes from the task's
	// actor, the result from the request's: either may be written first.
	c.finishAllowing(`"method":"notifications/tasks/status"`)
}

// A 2026-07-28 listen stream follows only its caller's own tasks, as
// tasks/get finds only them: another caller naming the id (or an unknown
// id) is left out of the acknowledgement and never told of the task,
// though the id is right.
func TestTasksListenFollowsOwnTasksOnly(t *testing.T) {
	release := make(chan struct{})
	srv := testServer()
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "slow", Execution: json.RawMessage(`{"taskSupport":"optional"}`)}},
		func(ctx context.Context, _ *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return mcp.TextResult("secret result"), nil
		})
	m, err := runtime.StartTasks(nil, srv, runtime.TasksOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	p := startPipe(t, srv)
	as := func(sub string) context.Context {
		return handlers.WithCaller(context.Background(), &handlers.Caller{Subject: sub, ClientID: "c"})
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	r := newReplier()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow",`+meta+`}}`, "", r, as("alice"))
	var created struct {
		Result struct {
			TaskID string `json:"taskId"`
		} `json:"result"`
	}
	if resp := r.final(t); json.Unmarshal([]byte(resp.data), &created) != nil || created.Result.TaskID == "" {
		t.Fatalf("CreateTaskResult: %s", resp.data)
	}
	id := created.Result.TaskID
	listen := func(key string, values context.Context, ids ...string) *replier {
		r := newReplier()
		raw, _ := json.Marshal(ids)
		p.send(`{"jsonrpc":"2.0","id":"`+key+`","method":"subscriptions/listen","params":{"notifications":{"taskIds":`+string(raw)+`},`+meta+`}}`, key, r, values)
		return r
	}
	bob, nobody := listen("bob", as("bob"), id), listen("nobody", nil, id)
	alice := listen("alice", as("alice"), id, "unknown-id")
	for name, r := range map[string]*replier{"bob": bob, "nobody": nobody} {
		if got := r.next(t).data; !strings.Contains(got, "notifications/subscriptions/acknowledged") || strings.Contains(got, id) {
			t.Fatalf("%s's ack names alice's task: %s", name, got)
		}
	}
	if got := alice.next(t).data; !strings.Contains(got, `"taskIds":["`+id+`"]`) {
		t.Fatalf("alice's ack: %s, want only her task", got)
	}
	close(release)
	if got := alice.next(t).data; !strings.Contains(got, `"method":"notifications/tasks"`) || !strings.Contains(got, "secret result") {
		t.Fatalf("alice's stream: %s", got)
	}
	// The session tells every listener of a change in one turn: had bob's
	// stream been told, it would be there by now.
	bob.none(t, 100*time.Millisecond)
	nobody.none(t, 0)
	for _, k := range []string{"alice", "bob", "nobody"} {
		p.inbox.Send(sessionactor.Cancel{Key: k})
	}
}

// Blocked tasks/result requests wait apart from the in-flight slots
// (handlers.Method.Waits): with MaxInFlight 2 and four of them waiting, a
// plain call is still answered, and they still wait.
func TestTaskResultsWaitApartFromSlots(t *testing.T) {
	srv := testServer()
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "block", Execution: json.RawMessage(`{"taskSupport":"required"}`)}},
		func(ctx context.Context, _ *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "plain"}}, noopTool)
	m, err := runtime.StartTasks(nil, srv, runtime.TasksOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(context.Background()) })
	c := startClientWith(t, srv, runtime.Options{Options: session.Options{MaxInFlight: 2}})
	// The tasks end (their results with them) before the session is
	// drained: cleanups run last first.
	t.Cleanup(func() { m.Stop(context.Background()) })
	seenNotes = nil
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
	c.recv()
	c.send(initDone)
	var ids []string
	for i := range 4 {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block","task":{}}}`, 10+i))
		var r struct {
			Result struct {
				Task struct {
					TaskID string `json:"taskId"`
				} `json:"task"`
			} `json:"result"`
		}
		line := c.reply(fmt.Sprint(10 + i))
		if json.Unmarshal([]byte(line), &r) != nil || r.Result.Task.TaskID == "" {
			t.Fatalf("task %d: %s", i, line)
		}
		ids = append(ids, r.Result.Task.TaskID)
	}
	for i, id := range ids {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":%q}}`, 20+i, id))
	}
	c.send(`{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"plain"}}`)
	if got := c.reply("30"); !strings.Contains(got, `"result"`) {
		t.Fatalf("plain call behind 4 blocked tasks/result with 2 slots: %s", got)
	}
	for _, n := range seenNotes {
		if strings.Contains(n, `"id":2`) {
			t.Fatalf("a tasks/result answered while its task blocks: %s", n)
		}
	}
}
