package main

import (
	"context"
	"encoding/json"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// wedgedServer is `mcprt serve -fixture wedged`: a server that completes
// the handshake and answers pings, and never its lists (each waits until
// the request's deadline). mcprt chaos -behind-gateway puts one beside the
// server under test, as the wedged backend a gateway must not wait for.
func wedgedServer() *handlers.Server {
	s := handlers.NewServer(mcp.Implementation{Name: "mcprt-wedged", Version: version},
		"A server that never answers its lists: for testing what stands in front of it.")
	s.AddTool(handlers.Tool{Name: "echo", Description: "Never listed."},
		func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
			return handlers.TextResult("wedged"), nil
		})
	s.WaitBeforeListing(make(chan struct{})) // never ready
	return s
}
