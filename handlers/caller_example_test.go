package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// A tool's handler reads who calls it from Request.Caller, which the
// session fills from what the transport vouched for: over Streamable HTTP
// behind runtime/resourceserver, the verified access token (never the
// token itself); over stdio, nobody (nil). Access on a tool (or prompt,
// resource, template) says which callers see it in their lists and may
// use it. Here the requests are made by hand, as a session would.
func ExampleCaller() {
	s := handlers.NewServer(mcp.Implementation{Name: "notes", Version: "1"}, "")
	s.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "whoami"}}, func(ctx context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		if req.Caller == nil {
			return mcp.TextResult("nobody in particular (stdio)"), nil
		}
		return mcp.TextResult(req.Caller.Subject + " via " + req.Caller.ClientID), nil
	})
	s.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name: "purge",
		},
		Access: &handlers.Access{Scopes: []string{"notes:admin"}, Claims: map[string][]string{"groups": {"ops"}}},
	}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult("purged"), nil
	})

	ada := &handlers.Caller{Subject: "ada", ClientID: "desktop", Scopes: []string{"notes:admin"},
		Claims: map[string]any{"groups": []any{"ops"}}}
	bo := &handlers.Caller{Subject: "bo", ClientID: "cli", Scopes: []string{"notes:read"},
		Claims: map[string]any{"groups": []any{"ops"}}}
	do := func(c *handlers.Caller, method, params string) {
		m, _ := s.Method(method)
		res, err := m.Run(context.Background(), &handlers.Request{Method: method, Params: json.RawMessage(params), Version: "2025-11-25", Caller: c})
		if err != nil {
			fmt.Println(" ", err)
			return
		}
		out, _ := json.Marshal(res)
		fmt.Println(" ", string(out))
	}
	for _, c := range []*handlers.Caller{nil, ada, bo} {
		fmt.Printf("%q:\n", c.Principal())
		do(c, "tools/call", `{"name":"whoami"}`)
		do(c, "tools/list", `{}`)
		do(c, "tools/call", `{"name":"purge"}`)
	}
	// Output:
	// "":
	//   {"content":[{"type":"text","text":"nobody in particular (stdio)"}]}
	//   {"tools":[{"name":"whoami","inputSchema":{"type":"object"}}]}
	//   jsonrpc -32602: Unknown tool: "purge"
	// "sub:ada":
	//   {"content":[{"type":"text","text":"ada via desktop"}]}
	//   {"tools":[{"name":"whoami","inputSchema":{"type":"object"}},{"name":"purge","inputSchema":{"type":"object"}}]}
	//   {"content":[{"type":"text","text":"purged"}]}
	// "sub:bo":
	//   {"content":[{"type":"text","text":"bo via cli"}]}
	//   {"tools":[{"name":"whoami","inputSchema":{"type":"object"}}]}
	//   jsonrpc 403: Insufficient scope: tool "purge" needs scope "notes:admin"
}
