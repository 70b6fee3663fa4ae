package runtime_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	mcprt "github.com/mcprt/mcprt/runtime"
)

type GreetIn struct {
	Name string `json:"name" description:"who to greet"`
}

type GreetOut struct {
	Greeting string `json:"greeting"`
}

// A complete MCP server program: one typed tool, served on stdin and
// stdout until stdin is closed, a SIGINT or SIGTERM arrives or the client
// closes stdout. (Not run here: Serve takes over the process's stdio.)
func ExampleServe() {
	srv := handlers.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, "")
	handlers.AddTool(srv, mcp.Tool{Name: "greet", Description: "Greets someone by name."},
		func(_ context.Context, _ *handlers.Request, in GreetIn) (GreetOut, error) {
			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	err := mcprt.Serve(context.Background(), srv, mcprt.Options{})
	os.Exit(mcprt.ExitCode(err))
}

// A server embedded in your own hollywood engine, over any reader and
// writer: here a pipe each way, with a client's lines written by hand.
func ExampleStart() {
	srv := handlers.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, "")
	handlers.AddTool(srv, mcp.Tool{Name: "greet", Description: "Greets someone by name."},
		func(_ context.Context, _ *handlers.Request, in GreetIn) (GreetOut, error) {
			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})

	engine, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		panic(err)
	}
	serverIn, client := io.Pipe()     // the client writes requests
	responses, serverOut := io.Pipe() // and reads responses
	inst, err := mcprt.Start(engine, srv, serverIn, serverOut, mcprt.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}

	io.WriteString(client, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}
`)
	lines := bufio.NewScanner(responses)
	lines.Scan() // the initialize result
	lines.Scan()
	fmt.Println(lines.Text())

	// Stop answers what is in flight, then ends the server's actors.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := inst.Stop(ctx); err != nil {
		panic(err)
	}
	fmt.Println("stopped")
	// Output:
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"greeting\":\"Hello, Ada!\"}"}],"structuredContent":{"greeting":"Hello, Ada!"}}}
	// stopped
}
