package handlers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// TestToolHeaderParams: a tool's x-mcp-header annotations are read when it
// is added; invalid ones make AddTool panic (HTTP clients would have to
// leave the tool out), unless the tool is passed through Unchecked.
func TestToolHeaderParams(t *testing.T) {
	srv := handlers.NewServer(mcp.Implementation{Name: "h", Version: "1"}, "")
	noop := func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return nil, nil
	}
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"o":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}}}`)}}, noop)
	p := srv.ToolHeaderParams("t")
	if len(p) != 1 || p[0].Name != "Region" || strings.Join(p[0].Path, ".") != "o.r" {
		t.Fatalf("ToolHeaderParams = %+v", p)
	}
	if srv.ToolHeaderParams("nosuch") != nil {
		t.Fatal("an unknown tool has header params")
	}
	bad := json.RawMessage(`{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AddTool accepted an invalid x-mcp-header")
			}
		}()
		srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "bad", InputSchema: bad}}, noop)
	}()
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "passed", InputSchema: bad}, Unchecked: true}, noop)
	if srv.ToolHeaderParams("passed") != nil {
		t.Error("an unchecked tool with invalid annotations has header params")
	}
}
