//go:build unix

package client_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mcprt/mcprt/session/client"
)

// Connect to the reference server (`mcprt serve`), call a tool, and close.
// The probe finds that the server speaks 2026-07-28.
func Example() {
	ctx := context.Background()
	c, err := client.Connect(ctx, client.Command{Path: mcprtPath, Args: []string{"serve"}},
		&client.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	fmt.Println(c.ServerInfo().Name, c.Era(), c.ProtocolVersion())

	res, err := c.CallTool(ctx, "echo", map[string]string{"text": "hello"},
		client.WithProgress(func(p client.Progress) { fmt.Println("progress", p.Progress) }))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].Text)
	// Output:
	// mcprt-reference modern 2026-07-28
	// hello
}

// A server that dies while connecting: the error carries its exit status
// and the first and last lines it wrote to stderr.
func ExampleConnect_serverExits() {
	_, err := client.Connect(context.Background(),
		client.Command{Path: "sh", Args: []string{"-c", "echo 'error: DATABASE_URL is not set' >&2; exit 2"}},
		&client.Options{Logger: slog.New(slog.DiscardHandler)})
	var exit *client.ExitError
	if errors.As(err, &exit) {
		fmt.Println("status:", exit.Code)
		fmt.Println("stderr:", exit.Stderr)
	}
	fmt.Println(err)
	// Output:
	// status: 2
	// stderr: [error: DATABASE_URL is not set]
	// client: connecting to sh -c echo 'error: DATABASE_URL is not set' >&2; exit 2: server/discover: server exited with status 2: error: DATABASE_URL is not set
}
