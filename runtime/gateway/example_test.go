package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/anthdm/hollywood/actor"

	mcprt "github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/gateway"
)

// A gateway in front of one backend, the reference server (mcprt serve),
// served here over pipes with runtime.Start; a program would serve it on
// its own stdio with runtime.Serve(ctx, g.Server(), runtime.Options{}) and
// call g.Close() after.
func Example() {
	cfg, err := gateway.ParseConfig([]byte(`{"mcpServers": {
		"ref": {"command": "mcprt", "args": ["serve"], "env": {"LOG_LEVEL": "warn"}, "timeout": "10s"}
	}}`), os.LookupEnv)
	if err != nil {
		panic(err)
	}
	g, err := gateway.New(cfg, gateway.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil { // starts the backends, and waits for them
		panic(err)
	}
	defer g.Close() // stops them: stdin EOF, grace, SIGTERM, grace, SIGKILL
	for _, s := range g.Backends() {
		fmt.Println(s.Name, s.State)
	}

	engine, _ := actor.NewEngine(actor.NewEngineConfig())
	serverIn, client := io.Pipe()
	responses, serverOut := io.Pipe()
	inst, err := mcprt.Start(engine, g.Server(), serverIn, serverOut, mcprt.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	io.WriteString(client, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ref__echo","arguments":{"text":"hello through the gateway"}}}
`)
	lines := bufio.NewScanner(responses)
	lines.Scan() // the initialize result
	lines.Scan()
	fmt.Println(lines.Text())
	if err := inst.Stop(ctx); err != nil {
		panic(err)
	}
	// Output:
	// ref up
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hello through the gateway"}]}}
}

// Reload puts a new configuration in place: here a second backend joins
// the first, which goes on untouched; mcprt gateway does this on SIGHUP.
func ExampleGateway_Reload() {
	parse := func(file string) *gateway.Config {
		cfg, err := gateway.ParseConfig([]byte(file), os.LookupEnv)
		if err != nil {
			panic(err)
		}
		return cfg
	}
	g, err := gateway.New(parse(`{"mcpServers": {
		"one": {"command": "mcprt", "args": ["serve"], "env": {"LOG_LEVEL": "warn"}}
	}}`), gateway.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		panic(err)
	}
	defer g.Close()

	changes, err := g.Reload(ctx, parse(`{"mcpServers": {
		"one": {"command": "mcprt", "args": ["serve"], "env": {"LOG_LEVEL": "warn"}},
		"two": {"command": "mcprt", "args": ["serve"], "env": {"LOG_LEVEL": "warn"}}
	}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println("added", changes.Added, "unchanged", changes.Unchanged)
	for _, s := range g.Backends() {
		fmt.Println(s.Name, s.State)
	}
	// Output:
	// added [two] unchanged [one]
	// one up
	// two up
}

// A configuration as VS Code writes it, with an envFile beside it:
// LoadConfig reads the file, and "env" wins over it.
func ExampleConfig_LoadEnvFiles() {
	dir, err := os.MkdirTemp("", "gateway-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	write := func(name, body string) {
		if err := os.WriteFile(dir+"/"+name, []byte(body), 0o600); err != nil {
			panic(err)
		}
	}
	write(".env", "# the server's secrets\nAPI_TOKEN=s3cret\nLOG_LEVEL=debug\n")
	write("mcp.json", `{"servers": {
		"api": {"command": "api-server", "envFile": ".env", "env": {"LOG_LEVEL": "warn"}}
	}}`)
	cfg, err := gateway.LoadConfig(dir + "/mcp.json")
	if err != nil {
		panic(err)
	}
	// The process gets both; of two values for a key, the last.
	fmt.Println(cfg.Backends[0].Env)
	// Output: [API_TOKEN=s3cret LOG_LEVEL=debug LOG_LEVEL=warn]
}
