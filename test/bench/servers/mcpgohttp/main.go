// Command mcpgohttp is a Streamable HTTP MCP server on
// github.com/mark3labs/mcp-go, written the way its examples are: an
// MCPServer with an echo {text} tool behind server.NewStreamableHTTPServer
// with the default options (which serve both eras on one endpoint, the era
// decided per request), mounted on /mcp.
//
//	mcpgohttp [-addr 127.0.0.1:0]
//
// It prints "mcpgohttp: serving Streamable HTTP on http://ADDR/mcp" on
// stderr once it listens.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()

	s := server.NewMCPServer("bench-mcpgohttp", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Returns its text argument unchanged."),
		mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text, err := req.RequireString("text")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(text), nil
		})
	handler := server.NewStreamableHTTPServer(s)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("mcpgohttp: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	fmt.Fprintf(os.Stderr, "mcpgohttp: serving Streamable HTTP on http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
