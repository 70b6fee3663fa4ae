package handlers_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/runtime/taskrun"
)

// The cost of a tool call made a task, beside the same call made plainly:
// in memory, and journalled (each task's creation and end appended to a
// file and fsync'd). A task is timed from tools/call to its result being
// stored (Manager.Wait).
//
//	go test -run '^$' -bench 'ToolCall(Plain|Task)' -benchmem ./handlers/

func benchTaskServer(b testing.TB, store tasks.Store) (*handlers.Server, tasks.Manager) {
	srv := handlers.NewServer(mcp.Implementation{Name: "bench", Version: "0"}, "")
	echo := func(_ context.Context, _ *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult("ok"), nil
	}
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "plain"}}, echo)
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "job", Execution: json.RawMessage(`{"taskSupport":"optional"}`)}}, echo)
	e, _ := actor.NewEngine(actor.NewEngineConfig())
	m, err := taskrun.Start(e, taskrun.Config{Store: store, MaxLive: -1, MaxLivePerOwner: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Stop(context.Background()) })
	srv.ServeTasks(m, handlers.TasksOptions{})
	return srv, m
}

func benchRequest(tool string) *handlers.Request {
	return &handlers.Request{Method: "tools/call", Params: json.RawMessage(`{"name":"` + tool + `","arguments":{}}`),
		Version: "2026-07-28", Modern: true, ClientCapabilities: json.RawMessage(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`)}
}

func runCalls(b *testing.B, srv *handlers.Server, m tasks.Manager, tool string) {
	call, _ := srv.Method("tools/call")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := call.Run(ctx, benchRequest(tool))
			if err != nil {
				b.Fatal(err)
			}
			if tool == "plain" {
				continue
			}
			raw, _ := json.Marshal(res)
			var tk struct {
				TaskID string `json:"taskId"`
			}
			json.Unmarshal(raw, &tk)
			if t, err := m.Wait(ctx, "", tk.TaskID); err != nil || t.Status != tasks.Completed {
				b.Fatalf("task %s: %+v %v", tk.TaskID, t, err)
			}
		}
	})
}

func BenchmarkToolCallPlain(b *testing.B) {
	srv, m := benchTaskServer(b, nil)
	runCalls(b, srv, m, "plain")
}

func BenchmarkToolCallTaskMemory(b *testing.B) {
	srv, m := benchTaskServer(b, nil)
	runCalls(b, srv, m, "job")
}

func BenchmarkToolCallTaskJournal(b *testing.B) {
	j, err := tasks.OpenJournal(b.TempDir(), tasks.JournalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	srv, m := benchTaskServer(b, j)
	runCalls(b, srv, m, "job")
}

// BenchmarkToolCallTaskJournalConcurrent is the journal with 64 callers
// per CPU at once: their writes share fsyncs (group commit).
func BenchmarkToolCallTaskJournalConcurrent(b *testing.B) {
	j, err := tasks.OpenJournal(b.TempDir(), tasks.JournalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	srv, m := benchTaskServer(b, j)
	b.SetParallelism(64)
	runCalls(b, srv, m, "job")
}
