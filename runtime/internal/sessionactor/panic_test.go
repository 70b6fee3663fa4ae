package sessionactor_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	mcprt "github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session"
)

// panicServer has a tool and a prompt that panic with a value that must not
// reach the client unless the server opts in, and a tool that needs a
// client capability.
func panicServer() *handlers.Server {
	srv := testServer()
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "secret-panic"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		panic("password=hunter2")
	})
	srv.AddPrompt(handlers.Prompt{Prompt: mcp.Prompt{Name: "boom"}}, func(context.Context, *handlers.Request, map[string]string) (*mcp.GetPromptResult, error) {
		panic("password=hunter2")
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "needs-roots"}}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return nil, handlers.RequireCapability("roots")
	})
	return srv
}

// TestToolPanicIsToolError: a tool's panic is a result with isError set
// and a generic text in both eras; the panic value stays out of it. A
// prompt's panic, which no result type can carry, is still -32603.
func TestToolPanicIsToolError(t *testing.T) {
	c := startClientWith(t, panicServer(), mcprt.Options{})
	c.handshake()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"secret-panic"}}`)
	got := c.recv()
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Tool \"secret-panic\" failed with an internal error."}],"isError":true}}`; got != want {
		t.Fatalf("legacy tool panic:\n got %s\nwant %s", got, want)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"secret-panic",` + modernMeta + `}}`)
	got = c.recv()
	if !strings.Contains(got, `"resultType":"complete"`) || !strings.Contains(got, `"isError":true`) || strings.Contains(got, "hunter2") || strings.Contains(got, `"error"`) {
		t.Fatalf("2026-07-28 tool panic: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"boom"}}`)
	if got := c.recv(); got != `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error: the handler failed"}}` {
		t.Fatalf("prompt panic: %s", got)
	}
	// The actor was replaced: the next call works.
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ok"}}}`)
	if got := c.recv(); got != `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"ok"}]}}` {
		t.Fatalf("after the panics: %s", got)
	}
	c.finish()
}

// TestToolPanicDetail: with PanicDetail the value is shown; never the stack.
func TestToolPanicDetail(t *testing.T) {
	c := startClientWith(t, panicServer(), mcprt.Options{Options: session.Options{PanicDetail: true}})
	c.handshake()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"secret-panic"}}`)
	got := c.recv()
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Tool \"secret-panic\" panicked: password=hunter2"}],"isError":true}}`; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	c.finish()
}

// TestMissingClientCapability: in 2026-07-28 a request that needs a
// capability its own _meta did not declare is answered with -32021 and
// data.requiredCapabilities; in the legacy era a tool says so in an isError
// result, as before.
func TestMissingClientCapability(t *testing.T) {
	c := startClientWith(t, panicServer(), mcprt.Options{})
	c.handshake()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"needs-roots",` + modernMeta + `}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Missing required client capability: roots","data":{"requiredCapabilities":{"roots":{}}}}}`; got != want {
		t.Fatalf("2026-07-28:\n got %s\nwant %s", got, want)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"needs-roots"}}`)
	if got := c.recv(); !strings.Contains(got, `"isError":true`) || !strings.Contains(got, `\"roots\" capability`) {
		t.Fatalf("legacy: %s", got)
	}
	c.finish()
}
