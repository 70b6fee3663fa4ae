package streamhttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// An MCP server over Streamable HTTP, mounted in your own mux, and one
// stateless 2026-07-28 call to it.
func Example() {
	srv := handlers.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, "")
	handlers.AddTool(srv, mcp.Tool{Name: "greet", Description: "Greets someone by name."},
		func(_ context.Context, _ *handlers.Request, in struct {
			Name string `json:"name"`
		}) (struct {
			Greeting string `json:"greeting"`
		}, error) {
			return struct {
				Greeting string `json:"greeting"`
			}{"Hello, " + in.Name + "!"}, nil
		})

	engine, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		panic(err)
	}
	h, err := streamhttp.New(engine, srv, streamhttp.Options{})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux) // in production: an http.Server with timeouts
	defer ts.Close()

	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "greet")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.Contains(string(body), `"structuredContent":{"greeting":"Hello, Ada!"}`))

	// Shutdown answers what is in flight, then stops the sessions.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Println(h.Shutdown(ctx))
	// Output:
	// 200 true
	// <nil>
}
