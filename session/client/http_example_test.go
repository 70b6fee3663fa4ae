package client_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/streamhttp"
	"github.com/mcprt/mcprt/session/client"
)

// Connect to a server over Streamable HTTP (here one served in this
// process), in each era: the probe finds 2026-07-28, and Era pins the
// legacy one, which gets a session of its own.
func ExampleConnectURL() {
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
	h, err := streamhttp.New(engine, srv, streamhttp.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(h)

	ctx := context.Background()
	for _, era := range []client.Era{client.EraAuto, client.EraLegacy} {
		c, err := client.ConnectURL(ctx, ts.URL+"/mcp", &client.Options{Era: era, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			fmt.Println(err)
			return
		}
		res, err := c.CallTool(ctx, "greet", map[string]string{"name": "Ada"})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(c.ServerInfo().Name, c.Era(), c.ProtocolVersion(), fmt.Sprintf("%s", res.StructuredContent))
		fmt.Println(c.Close()) // a legacy session ends with DELETE
	}

	ts.Close()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	fmt.Println(h.Shutdown(sctx))
	// Output:
	// greeter modern 2026-07-28 {"greeting":"Hello, Ada!"}
	// <nil>
	// greeter legacy 2025-11-25 {"greeting":"Hello, Ada!"}
	// <nil>
	// <nil>
}
