// Command mcpgo is a stdio MCP server on github.com/mark3labs/mcp-go,
// written the way its examples are: NewMCPServer and ServeStdio with the
// default options. It offers the tools `mcprt bench` drives, with the
// reference server's names and arguments: echo {text} and sleep {ms}.
package main

import (
	"context"
	"log"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	s := server.NewMCPServer("bench-mcpgo", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Returns its text argument unchanged."),
		mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text, err := req.RequireString("text")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(text), nil
		})
	s.AddTool(mcp.NewTool("sleep", mcp.WithDescription("Sleeps ms milliseconds (returns early when cancelled)."),
		mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-time.After(time.Duration(req.GetInt("ms", 0)) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return mcp.NewToolResultText("slept"), nil
		})
	if err := server.ServeStdio(s); err != nil {
		log.Fatalf("mcpgo: %v", err)
	}
}
