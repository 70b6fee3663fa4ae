package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/test/fault"
)

const chaosUsage = `Usage: mcprt chaos [flags] -- CMD ARGS...

Runs a seeded fault-injection campaign against the stdio MCP server that
CMD ARGS start, and prints what it saw. After the handshake in the era -era
names (default legacy, the initialize handshake: a campaign speaks one era
throughout, so -era auto settles it with one extra connect first) it sends
-requests requests: quick echo calls whose answers are checked, and, at
the given rates, calls of a panicking tool,
calls that hang past the server's deadline, short sleeps, sleeps cancelled
with notifications/cancelled, malformed lines (garbage, truncated JSON,
invalid UTF-8, deep nesting, huge lines) and pauses in reading stdout. Then
it ends the server (-end: stdin EOF or SIGTERM with requests in flight, or
closing stdout) and waits for it to exit.

It fails (exit status 1) when any request is answered twice or never, when
stdout carries anything but valid JSON-RPC (or answers to unknown ids), when
cancellation is ignored, or when the server does not exit with status 0.

The tools are found with tools/list ("echo", "sleep" taking {"ms"}, "panic")
unless named with -echo-tool, -slow-tool and -panic-tool; faults needing a
tool the server lacks are skipped. The same -seed gives the same plan.

Flags:
`

func init() {
	register(verb{name: "chaos", summary: "run a seeded fault-injection campaign against an MCP server", run: chaos})
}

func chaos(args []string, s streams) int {
	stderr := s.Stderr
	fs := flags("chaos", chaosUsage, s)
	c := fault.Campaign{Rates: fault.DefaultRates}
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of every choice the campaign makes")
	fs.IntVar(&c.Requests, "requests", 1000, "how many requests to send")
	fs.Float64Var(&c.Rates.Panic, "panic", c.Rates.Panic, "share of requests that call the panic tool")
	fs.Float64Var(&c.Rates.Hang, "hang", c.Rates.Hang, "share of requests that call the slow tool for -hang-for (past the server's deadline)")
	fs.Float64Var(&c.Rates.Slow, "slow", c.Rates.Slow, "share of requests that call the slow tool for up to -slow-for")
	fs.Float64Var(&c.Rates.Cancel, "cancel", c.Rates.Cancel, "share of requests cancelled right after they are sent")
	fs.Float64Var(&c.Rates.Garbage, "garbage", c.Rates.Garbage, "chance of a malformed line before each request")
	fs.Float64Var(&c.Rates.Pause, "pause", c.Rates.Pause, "chance, after each request, that stdout goes unread for -pause-for")
	fs.StringVar(&c.Tools.Echo, "echo-tool", "", "tool that returns its \"text\" argument (default: \"echo\" if listed)")
	fs.StringVar(&c.Tools.Slow, "slow-tool", "", "cancellable tool that sleeps \"ms\" milliseconds (default: \"sleep\" if listed)")
	fs.StringVar(&c.Tools.Panic, "panic-tool", "", "tool that fails on every call (default: \"panic\" if listed)")
	end := fs.String("end", "eof", "how to end the server: eof, sigterm or epipe (close stdout)")
	pf := addProtocolFlags(fs, client.EraLegacy, "2025-06-18 in the legacy era, going on in the revision the server answers; 2026-07-28 in the modern era")
	fs.IntVar(&c.Window, "window", 64, "quick requests awaiting an answer at once")
	fs.DurationVar(&c.HangFor, "hang-for", 0, "sleep asked of hung and cancelled calls (default 10m)")
	fs.DurationVar(&c.SlowFor, "slow-for", 0, "longest sleep of a slow call (default 20ms)")
	fs.DurationVar(&c.PauseFor, "pause-for", 0, "how long a pause leaves stdout unread (default 200ms)")
	fs.IntVar(&c.HugeSize, "huge", 0, "`bytes` of text in a huge line (default 1 MiB)")
	fs.DurationVar(&c.Timeout, "timeout", 0, "bound on the handshake and the sending (default 2m)")
	fs.DurationVar(&c.ExitTimeout, "exit-timeout", 0, "how long to wait for the exit before killing the server (default 30s)")
	verbose := fs.Bool("v", false, "also print the tail of the server's stderr")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runtime.ExitOK
		}
		return runtime.ExitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "mcprt chaos: no server command (give it after --)")
		return runtime.ExitUsage
	}
	c.Command = fs.Args()
	era, pin, err := pf.settle()
	if err != nil {
		fmt.Fprintf(stderr, "mcprt chaos: %v\n", err)
		return runtime.ExitUsage
	}
	if c.Ending, err = fault.ParseEnding(*end); err != nil {
		fmt.Fprintf(stderr, "mcprt chaos: -end: %v\n", err)
		return runtime.ExitUsage
	}
	if c.Requests <= 0 || c.Window <= 0 {
		fmt.Fprintln(stderr, "mcprt chaos: -requests and -window must be positive")
		return runtime.ExitUsage
	}

	// ^C stops the campaign, which still ends the server and reports.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if era == client.EraAuto {
		if era, pin, err = probeEra(ctx, c.Command, nil, cmp.Or(c.Timeout, 30*time.Second)); err != nil {
			fmt.Fprintf(stderr, "mcprt chaos: %v\n", err)
			return runtime.ExitFailure
		}
		c.ProtocolVersion = pin
	} else {
		c.ProtocolVersion, c.RequireVersion = pin, pin != ""
	}
	c.Modern = era == client.EraModern
	rep, err := c.Run(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "mcprt chaos: %v\n", err)
		if errors.Is(err, fault.ErrBadCampaign) {
			return runtime.ExitUsage
		}
		return runtime.ExitFailure
	}
	fmt.Fprintf(stderr, "mcprt chaos: %q, %s era\n%s", c.Command, era, rep)
	if *verbose && rep.StderrTail != "" {
		fmt.Fprintf(stderr, "server stderr (tail):\n%s\n", rep.StderrTail)
	}
	if !rep.OK() {
		return runtime.ExitFailure
	}
	return runtime.ExitOK
}
