package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers"
)

// version is the reference server's version, reported in serverInfo.
var version = "0.1.0"

// referenceServer is the server `mcprt serve` runs: the tools the benchmark
// and fault-injection harnesses drive, each small enough to read at a glance.
func referenceServer() *handlers.Server {
	s := handlers.NewServer(handlers.Implementation{Name: "mcprt-reference", Title: "mcprt reference server", Version: version},
		"Reference server of the mcprt runtime: echo, CPU work, sleep, and tools that misbehave on purpose (panic, print).")
	s.AddTool(handlers.Tool{
		Name:        "echo",
		Description: "Returns its text argument unchanged.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		var a struct{ Text *string }
		if err := json.Unmarshal(args, &a); err != nil || a.Text == nil {
			return nil, fmt.Errorf("echo needs a string argument \"text\"")
		}
		return handlers.TextResult(*a.Text), nil
	})
	s.AddTool(handlers.Tool{
		Name:        "work",
		Description: "Burns about us microseconds of CPU as a fixed amount of work, then returns \"ok\".",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"us":{"type":"integer","minimum":0}},"required":["us"]}`),
	}, func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		var a struct{ Us int }
		if err := json.Unmarshal(args, &a); err != nil || a.Us < 0 {
			return nil, fmt.Errorf("work needs a non-negative integer argument \"us\"")
		}
		burn(a.Us)
		return handlers.TextResult("ok"), nil
	})
	s.AddTool(handlers.Tool{
		Name:        "sleep",
		Description: "Sleeps ms milliseconds (returns early when cancelled), then returns \"slept\".",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0}},"required":["ms"]}`),
	}, func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		var a struct{ Ms int }
		if err := json.Unmarshal(args, &a); err != nil || a.Ms < 0 {
			return nil, fmt.Errorf("sleep needs a non-negative integer argument \"ms\"")
		}
		t := time.NewTimer(time.Duration(a.Ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return handlers.TextResult("slept"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	s.AddTool(handlers.Tool{
		Name:        "panic",
		Description: "Panics, to show that a crashing handler is answered with an error and replaced.",
	}, func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
		panic("the panic tool panicked, as asked")
	})
	s.AddTool(handlers.Tool{
		Name:        "print",
		Description: "Writes its text to stdout with fmt.Println (which mcprt keeps off the protocol stream), then returns \"printed\".",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(ctx context.Context, _ *handlers.Request, args json.RawMessage) (*handlers.CallToolResult, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, fmt.Errorf("print needs a string argument \"text\"")
		}
		fmt.Println(a.Text)
		return handlers.TextResult("printed"), nil
	})
	return s
}

// itersPerMicro matches the benchmark harness's worktool: xorshift rounds
// that take about 1 µs on the reference machine, so every server compared
// does the same work per call.
const itersPerMicro = 680

var burnSink atomic.Uint64

func burn(us int) {
	x := uint64(88172645463325252) + uint64(us)
	for n := us * itersPerMicro; n > 0; n-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	burnSink.Store(x)
}
