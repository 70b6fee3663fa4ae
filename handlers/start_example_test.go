package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// job is a tool call handed to the goroutine that owns the work (an actor
// of a larger system, a connection to another server): the ToolReply
// goes with it, and whoever finishes the work answers through it.
type job struct {
	text  string
	reply handlers.ToolReply
}

// printer stands in for the session: it prints the answer.
type printer chan struct{}

func (p printer) Reply(res any, err error) {
	out, _ := json.Marshal(res)
	fmt.Println(string(out), err)
	close(p)
}

func (p printer) Fallback() {
	fmt.Println("handed to the handler")
	close(p)
}

// A tool whose calls do not hold a handler actor while they wait: its
// Start, which runs on the session's goroutine and must not block, hands
// each call to the goroutine that owns the work, which answers it later.
// A call Start declines (here, an empty text) goes to the handler, on a
// handler actor, as any tool's call does.
func ExampleToolStarter() {
	jobs, stopped := make(chan job), make(chan struct{})
	go func() { // the owner of the work
		defer close(stopped)
		for j := range jobs {
			j.reply.Done(mcp.TextResult("done: "+j.text), nil)
		}
	}()
	defer func() { close(jobs); <-stopped }()

	s := handlers.NewServer(mcp.Implementation{Name: "relay", Version: "1.0.0"}, "")
	s.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name: "relay",
		},
		Start: func(_ context.Context, _ *handlers.Request, args json.RawMessage, reply handlers.ToolReply) bool {
			var in struct{ Text string }
			if json.Unmarshal(args, &in) != nil || in.Text == "" {
				return false
			}
			jobs <- job{in.Text, reply}
			return true
		},
	}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult("the handler ran"), nil
	})

	m, _ := s.Method("tools/call")
	for _, params := range []string{`{"name":"relay","arguments":{"text":"hi"}}`, `{"name":"relay","arguments":{}}`} {
		req := &handlers.Request{Method: "tools/call", Params: json.RawMessage(params), Version: "2025-11-25"}
		done := make(printer)
		if !m.Start(context.Background(), req, done) {
			// The session would give it to a handler actor; here we run it.
			res, err := m.Run(context.Background(), req)
			done.Reply(res, err)
		}
		<-done
	}
	// Output:
	// {"content":[{"type":"text","text":"done: hi"}]} <nil>
	// {"content":[{"type":"text","text":"the handler ran"}]} <nil>
}
