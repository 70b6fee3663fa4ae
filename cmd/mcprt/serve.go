package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/stdio"
)

const serveUsage = `Usage: mcprt serve [flags]

Runs the reference MCP server on stdin/stdout until stdin is closed, a
SIGINT or SIGTERM arrives, or the client closes stdout. In-flight requests
are answered before it exits (bounded by -drain-timeout).

Tools: echo {text}, work {us}, sleep {ms}, panic {}, print {text}.

Logs go to stderr; LOG_LEVEL (debug, info, warn, error) sets the level and
LOG_FORMAT=json switches to JSON lines.

Memory is the Go runtime's to manage: GOGC and GOMEMLIMIT apply. No limit
is set by default. Under load most of the server's memory is live (the
lines and results in flight, a goroutine per running handler), and a
limit close to it keeps the collector running (GOMEMLIMIT=12MiB: a quarter
of the throughput at 256 requests in flight, four times the CPU per
request); set one when memory matters more than throughput.

Flags:
`

func init() {
	register(verb{name: "serve", summary: "run the reference MCP server on stdin/stdout", run: serve})
}

func serve(args []string, stderr io.Writer) int {
	fs := flags("serve", serveUsage, stderr)
	var o runtime.Options
	fs.IntVar(&o.MaxLineBytes, "max-line", stdio.DefaultMaxLine, "largest input line in `bytes`; a longer one is answered with an error and skipped")
	fs.IntVar(&o.MaxInFlight, "max-in-flight", runtime.DefaultMaxInFlight, "requests in progress at once; past it the server stops reading stdin (back-pressure)")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", 60e9, "deadline of each request; when it passes the handler is cancelled and the client gets an error (negative: none)")
	fs.DurationVar(&o.DrainTimeout, "drain-timeout", 5e9, "how long in-flight requests may still run after stdin EOF or a signal")
	fs.DurationVar(&o.CacheTTL, "cache-ttl", 0, "ttlMs advertised on cacheable 2026-07-28 results")
	fs.IntVar(&o.Intensity, "intensity", 3, "restarts the root supervisor allows within -period before it gives up (exit status 1)")
	fs.DurationVar(&o.Period, "period", 5e9, "the root supervisor's intensity window")
	crash := fs.String("crash-loop", "suspend", "what happens to a tool that panics more than -crash-intensity times within -crash-period: `suspend` it for a period, or escalate to the supervisors")
	fs.IntVar(&o.CrashIntensity, "crash-intensity", 10, "panics of one tool tolerated within -crash-period")
	fs.DurationVar(&o.CrashPeriod, "crash-period", 5e9, "the crash-loop window, and how long a crash-looping tool stays suspended")
	fs.StringVar(&o.DefaultLogLevel, "client-log-level", "info", "lowest level of server logs and captured stdout sent to a legacy client that has not sent logging/setLevel (\"\": none)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `file` (for go tool pprof)")
	fs.IntVar(&o.LogBuffer, "log-buffer", 1024, "notifications kept for a client until it sends notifications/initialized; past it the oldest are dropped and counted")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runtime.ExitOK
		}
		return runtime.ExitUsage
	}
	switch *crash {
	case "suspend":
		o.CrashPolicy = session.Suspend
	case "escalate":
		o.CrashPolicy = session.Escalate
	default:
		fmt.Fprintf(stderr, "mcprt serve: -crash-loop must be suspend or escalate, not %q\n", *crash)
		return runtime.ExitUsage
	}
	if o.DefaultLogLevel != "" && !slices.Contains(handlers.LogLevels, o.DefaultLogLevel) {
		fmt.Fprintf(stderr, "mcprt serve: -client-log-level must be one of %v\n", handlers.LogLevels)
		return runtime.ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcprt serve: unexpected argument %q\n", fs.Arg(0))
		return runtime.ExitUsage
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "mcprt serve: %v\n", err)
			return runtime.ExitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "mcprt serve: %v\n", err)
			return runtime.ExitUsage
		}
		defer pprof.StopCPUProfile()
	}
	return runtime.ExitCode(runtime.Serve(context.Background(), referenceServer(), o))
}
