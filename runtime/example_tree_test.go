package runtime_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	mcprt "github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/streamhttp"
	"github.com/mcprt/mcprt/supervisor"
)

// pool is a piece of a program of its own (a connection pool, say) that
// belongs in the process's tree: a supervisor.Service, started before the
// tasks and the transport, closed after them.
type pool struct{}

func (pool) ChildSpec(*actor.Engine, *actor.PID) supervisor.ChildSpec {
	return supervisor.ChildSpec{ID: "pool", Start: supervisor.Service(
		func(func(error)) error { fmt.Println("pool open"); return nil },
		func() { fmt.Println("pool closed") },
	)}
}

// One tree on one engine for the whole process: the program's own part,
// the tasks, then a Streamable HTTP endpoint with options of its own, as
// Serve's Parts, Tasks and Transport. The tree starts them in that order
// and, when ctx ends (or SIGINT, SIGTERM), stops them in reverse: the
// endpoint drains first, the pool closes last.
func ExampleServe_oneTree() {
	srv := handlers.NewServer(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, "")
	handlers.AddTool(srv, mcp.Tool{Name: "greet", Description: "Greets someone by name."},
		func(_ context.Context, _ *handlers.Request, in GreetIn) (GreetOut, error) {
			return GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	serving := make(chan struct{})
	endpoint, err := streamhttp.NewServer(ln, srv, streamhttp.ServeOptions{
		HealthPath: "/healthz",
		OnServing:  func() { fmt.Println("serving"); close(serving) },
	})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- mcprt.Serve(ctx, srv, mcprt.Options{
			Logger:    slog.New(slog.DiscardHandler),
			Parts:     []mcprt.Part{pool{}},
			Tasks:     &mcprt.TasksOptions{},
			Transport: endpoint,
		})
	}()
	<-serving

	resp, err := http.Get("http://" + ln.Addr().String() + "/healthz")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, strings.TrimSpace(string(body)))

	stop()
	fmt.Println("exit status", mcprt.ExitCode(<-served))
	// Output:
	// pool open
	// serving
	// 200 {"status":"ok"}
	// pool closed
	// exit status 0
}
