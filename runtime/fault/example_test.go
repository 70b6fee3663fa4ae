package fault_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mcprt/mcprt/session"
	"log/slog"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/fault"
)

// A server's own test: its tools, one of them wrapped so that it panics,
// hangs or fails on most calls, are run in-process and driven by a seeded
// campaign that also writes garbage, cancels requests, stops reading, and
// ends with stdin EOF while requests are in flight. Nothing may be lost.
// For a server built as a program, set Command instead of Server.
func Example() {
	echo := func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return mcp.TextResult(a.Text), nil
	}
	sleep := func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct{ Ms int }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		select {
		case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			return mcp.TextResult("slept"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	inj := fault.NewInjector(7, fault.HandlerRates{Panic: 0.3, Hang: 0.1, Error: 0.3})

	srv := handlers.NewServer(mcp.Implementation{Name: "example", Version: "1.0.0"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "echo"}}, echo)
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "sleep"}}, sleep)
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "flaky"}}, inj.Wrap(echo))

	rep, err := (&fault.Campaign{
		Server: srv,
		ServerOptions: runtime.Options{
			// hung calls are answered by their deadline
			Logger:  slog.New(slog.DiscardHandler),
			Options: session.Options{RequestTimeout: time.Second},
		},
		Seed:     1,
		Requests: 300,
		Rates:    fault.DefaultRates,
		Tools:    fault.Tools{Panic: "flaky"}, // the tool that fails
		Ending:   fault.EndEOF,
		HugeSize: 64 << 10,
	}).Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sent:", rep.Sent)
	fmt.Println("lost or answered twice:", rep.NeverAnswered+rep.AnsweredTwice)
	fmt.Println("protocol violations:", rep.ViolationCount)
	fmt.Println("exit status:", rep.ExitCode)
	fmt.Println("ok:", rep.OK())
	// Output:
	// sent: 300
	// lost or answered twice: 0
	// protocol violations: 0
	// exit status: 0
	// ok: true
}

// The same over Streamable HTTP: the server is served in-process by
// runtime/streamhttp on a loopback port, and four legacy sessions share
// the requests (Modern: four stateless 2026-07-28 clients). Malformed
// bodies must get the statuses the transport gives them (413 past MaxBody),
// a paused client leaves a large answer unread while the others go on,
// others disconnect mid-answer or DELETE their session with calls in
// flight; the server is ended as by SIGTERM. For a program, set Command
// (it must print its URL) or, for one already running, URL instead.
func Example_http() {
	echo := func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return mcp.TextResult(a.Text), nil
	}
	srv := handlers.NewServer(mcp.Implementation{Name: "example", Version: "1.0.0"}, "")
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "echo"}}, echo)

	rates := fault.DefaultRates
	rates.Garbage, rates.Pause, rates.Disconnect, rates.Delete = 0.05, 0.01, 0.01, 0.01
	rep, err := (&fault.Campaign{
		Server:        srv,
		ServerOptions: runtime.Options{Logger: slog.New(slog.DiscardHandler)},
		HTTP:          true,
		Seed:          1,
		Requests:      300,
		Rates:         rates,
		MaxBody:       256 << 10,
		HugeSize:      300 << 10,
	}).Run(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("lost or answered twice:", rep.NeverAnswered+rep.AnsweredTwice)
	fmt.Println("protocol violations:", rep.ViolationCount)
	fmt.Println("413s:", rep.HTTPStatuses[413] == rep.Faults["huge"])
	fmt.Println("exit status:", rep.ExitCode)
	fmt.Println("ok:", rep.OK())
	// Output:
	// lost or answered twice: 0
	// protocol violations: 0
	// 413s: true
	// exit status: 0
	// ok: true
}
