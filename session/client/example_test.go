//go:build unix

package client_test

import (
	"context"
	"encoding/json"
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

// answerChan hands each answer to whoever waits on it.
type answerChan chan string

func (a answerChan) Answer(result json.RawMessage, err error) {
	if err != nil {
		a <- err.Error()
		return
	}
	a <- string(result)
}

// Go sends requests without a goroutine waiting on each: the answers come
// to an Answerer, on the goroutine that reads the server. A request given
// up on with Abandon is answered with context.Canceled, and the server is
// told.
func ExampleClient_Go() {
	ctx := context.Background()
	c, err := client.Connect(ctx, client.Command{Path: mcprtPath, Args: []string{"serve"}},
		&client.Options{Logger: slog.New(slog.DiscardHandler), Era: client.EraLegacy})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	answers := make(answerChan, 2)
	if _, err := c.Go("tools/call", json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`), answers); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(<-answers)
	id, err := c.Go("tools/call", json.RawMessage(`{"name":"sleep","arguments":{"ms":60000}}`), answers)
	if err != nil {
		fmt.Println(err)
		return
	}
	c.Abandon(id, "not needed any more")
	fmt.Println(<-answers)
	// Output:
	// {"content":[{"type":"text","text":"hi"}]}
	// client: tools/call: context canceled
}
