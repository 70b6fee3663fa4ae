// Command gosdkhttp is a Streamable HTTP MCP server on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), written the way the SDK's own
// examples are: one mcp.Server with a typed echo {text} tool, served by
// mcp.NewStreamableHTTPHandler with default options on /mcp.
//
//	gosdkhttp [-addr 127.0.0.1:0] [-stateless]
//
// The SDK serves the legacy revisions with sessions (the default) and
// 2026-07-28 only in stateless mode (StreamableHTTPOptions.Stateless, which
// issues no session ids): the comparison runs it without -stateless for the
// legacy era and with it for 2026-07-28.
//
// It prints "gosdkhttp: serving Streamable HTTP on http://ADDR/mcp" on
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

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	stateless := flag.Bool("stateless", false, "serve statelessly (StreamableHTTPOptions.Stateless): needed for 2026-07-28")
	flag.Parse()

	s := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdkhttp", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text argument unchanged."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: *stateless})

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("gosdkhttp: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	fmt.Fprintf(os.Stderr, "gosdkhttp: serving Streamable HTTP on http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}
