//go:build unix

package client_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mcprt/mcprt/session/client"
)

// The reference server's prompts, resource templates and completions, as
// a client reads them: GetPrompt fills in a prompt, ReadResource reads a
// URI that matches a template, Complete suggests values for an argument.
func ExampleClient_GetPrompt() {
	ctx := context.Background()
	c, err := client.Connect(ctx, client.Command{Path: mcprtPath, Args: []string{"serve"}},
		&client.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	p, err := c.GetPrompt(ctx, "review", map[string]string{"code": "x := 1", "language": "Go"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %s %q\n", p.Description, p.Messages[0].Role, p.Messages[0].Content.Text)

	r, err := c.ReadResource(ctx, "mcprt://reference/greeting/Ada")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Contents[0].Text)

	done, err := c.Complete(ctx, client.CompleteParams{
		Ref:      client.CompletionRef{Type: "ref/prompt", Name: "review"},
		Argument: client.CompleteArgument{Name: "language", Value: "ja"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(done.Values)
	// Output:
	// Review of this Go code: user "Please review this Go code. Point out bugs first, then style.\n\nx := 1"
	// Hello, Ada!
	// [Java JavaScript]
}
