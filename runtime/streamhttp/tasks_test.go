package streamhttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// A legacy session's tasks are its own: another session asking for one by
// its id is told there is no such task, while the session that made it
// finds it, on whatever connection. Task ids carry the replica's tag. A
// 2026-07-28 tasks/get must name its task in Mcp-Name.
func TestTasksBoundToLegacySession(t *testing.T) {
	srv := testServer(nil)
	srv.AddTool(handlers.Tool{Name: "job", Execution: json.RawMessage(`{"taskSupport":"optional"}`)},
		func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
			return handlers.TextResult("done"), nil
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
	if r := f.do("POST", get, b); errCode(r.last()) != -32602 {
		t.Fatalf("another session's tasks/result: %v; want -32602 (no such task)", r.msgs)
	}
	if r := f.do("POST", get, a); !strings.Contains(string(r.last()["result"]), `"text":"done"`) {
		t.Fatalf("own session's tasks/result: %v", r.msgs)
	}

	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	r = f.do("POST", `{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"x",`+meta+`}}`, modernHeaders("tasks/get", "y"))
	if r.status != http.StatusBadRequest || errCode(r.last()) != -32020 {
		t.Fatalf("tasks/get with Mcp-Name not its taskId: %d %v; want 400 and -32020", r.status, r.msgs)
	}
}
