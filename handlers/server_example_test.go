package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// A server offering one of each kind of thing: a tool, a resource and a
// prompt. A transport (runtime.Serve for stdio, runtime/streamhttp for
// HTTP) runs the methods for each client; here they are run directly, as
// a session would for a 2025-11-25 client.
func ExampleNewServer() {
	s := handlers.NewServer(mcp.Implementation{Name: "notes", Version: "1.0.0"},
		"Keeps one note.")
	note := "buy milk"
	s.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name:        "read_note",
			Description: "Returns the note.",
		},
	}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult(note), nil
	})
	s.AddResource(handlers.Resource{Resource: mcp.Resource{URI: "note://current", Name: "note", MimeType: "text/plain"}},
		func(context.Context, *handlers.Request, string, map[string]string) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{{Text: note}}, nil
		})
	s.AddPrompt(handlers.Prompt{
		Prompt: mcp.Prompt{
			Name:      "remind",
			Arguments: []mcp.PromptArgument{{Name: "who", Required: true}},
		},
	}, func(_ context.Context, _ *handlers.Request, args map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
			{Role: "user", Content: mcp.TextContent("Remind " + args["who"] + " to " + note + ".")},
		}}, nil
	})

	run := func(method, params string) {
		m, _ := s.Method(method)
		res, err := m.Run(context.Background(), &handlers.Request{
			Method: method, Params: json.RawMessage(params), Version: mcp.Version20251125,
		})
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		out, _ := json.Marshal(res)
		fmt.Println(string(out))
	}
	run("tools/call", `{"name":"read_note"}`)
	run("resources/read", `{"uri":"note://current"}`)
	run("prompts/get", `{"name":"remind","arguments":{"who":"Ada"}}`)
	run("prompts/get", `{"name":"remind"}`)
	// Output:
	// {"content":[{"type":"text","text":"buy milk"}]}
	// {"contents":[{"uri":"note://current","mimeType":"text/plain","text":"buy milk"}]}
	// {"messages":[{"role":"user","content":{"type":"text","text":"Remind Ada to buy milk."}}]}
	// error: jsonrpc -32602: Invalid params: prompt "remind" needs argument(s) "who"
}
