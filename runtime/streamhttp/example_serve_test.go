package streamhttp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// Serve runs a server over Streamable HTTP until its context ends, then
// drains it as mcprt serve -http does on SIGTERM: requests in flight are
// answered and every session ends before it returns.
func ExampleServe() {
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

	ln, err := net.Listen("tcp", "127.0.0.1:0") // in production: the address to serve
	if err != nil {
		panic(err)
	}
	// In production: signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM).
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- streamhttp.Serve(ctx, ln, srv, streamhttp.ServeOptions{HealthPath: "/healthz"})
	}()

	base := "http://" + ln.Addr().String()
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},`+
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

	resp, err = http.Get(base + "/healthz")
	if err != nil {
		panic(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.StatusCode, " ", string(body))

	stop()
	fmt.Println(<-served)
	// Output:
	// 200 true
	// 200 {"status":"ok"}
	// <nil>
}
