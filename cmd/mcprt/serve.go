package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/fixture"
	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/stdio"
)

// serveUsageFormat is serve's usage, with what srv offers in the middle.
const serveUsageFormat = `Usage: mcprt serve [flags]

Runs the reference MCP server on stdin/stdout until stdin is closed, a
SIGINT or SIGTERM arrives, or the client closes stdout. In-flight requests
are answered before it exits (bounded by -drain-timeout). It is meant to
be started by an MCP client (mcprt list -- mcprt serve); started in a
terminal, it says so on stderr and waits for JSON-RPC lines on stdin.

%s
With -tasks or -tasks-dir, calls of tools that declare
execution.taskSupport may be made tasks. A task is bound to its caller
when the transport vouched for one (-http with OAuth): only the same
subject finds it, from any session, after any restart. Without a caller
a task is bound by its id alone, 128 random bits, as the MCP specification
allows where there is no authorization context: whoever holds the id may
get, wait for or cancel it, so keep ids out of shared logs, or use OAuth.
Over -http a 2025-11-25 task is not tied to its Mcp-Session-Id, which ends
(DELETE, -http-session-idle, a restart) while its client still holds the
id: a client that initializes again, after a restart with -tasks-dir say,
gets its tasks back by id (tasks/get, tasks/result). tasks/list lists the
caller's tasks, or without one those made in the session asking (a new
session lists none of the old ones: listing every anonymous task would
hand each client the others' ids). A DELETE of a session cancels the tasks
it made that still run; those that ended stay until their ttl. Bounds
count per client (the caller, else the connection's address):
-tasks-max-per-client tasks in progress, and -tasks-max-ended-per-client
ended ones (the oldest deleted first). A blocked tasks/result does not
take one of the -max-in-flight slots plain requests need (up to 1024 of
them per session wait apart).

Logs go to stderr; LOG_LEVEL (debug, info, warn, error) sets the level and
LOG_FORMAT=json switches to JSON lines.

The Go runtime gets a soft memory limit, -memory-limit (default 14MiB;
GOMEMLIMIT, when set, is used instead of the default). Near it the
collector runs sooner and freed memory goes back to the system sooner, so
the memory of one burst is not kept into the next. A server whose live
memory exceeds it still works, with more CPU spent collecting (an echo of
48 MiB takes twice as long); raise it, or turn it off, for such loads.
Under the limit the collector is paced at GOGC=400 (the limit already
bounds memory), unless GOGC is set.

` + telemetryUsage + `
Flags:
`

// serveUsage is serve's usage, listing what srv offers as its own list
// methods show it.
func serveUsage(srv *handlers.Server) string {
	text, err := fixture.Catalog(srv)
	if err != nil {
		text += fmt.Sprintf("(listing the rest failed: %v)\n", err)
	}
	return fmt.Sprintf(serveUsageFormat, text)
}

func init() {
	register(verb{name: "serve", summary: "run the reference MCP server on stdin/stdout", run: serve})
}

func serve(args []string, s streams) int {
	stderr := s.Stderr
	srv := fixture.Reference(version)
	fs := flagsFunc("serve", func() string { return serveUsage(srv) }, s)
	var o runtime.Options
	fs.IntVar(&o.MaxLineBytes, "max-line", stdio.DefaultMaxLine, "largest input line in `bytes`; a longer one is answered with an error and skipped")
	fs.IntVar(&o.MaxInFlight, "max-in-flight", session.DefaultMaxInFlight, "requests in progress at once; past it requests wait (see -max-queued); also the bound on unwritten answers past which the server stops reading stdin (back-pressure)")
	fs.IntVar(&o.MaxQueued, "max-queued", session.DefaultMaxQueued, "requests waiting for one in progress to finish; past it a request is refused at once with error -32000 (server busy)")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", 60e9, "deadline of each request; when it passes the handler is cancelled and the client gets an error (negative: none)")
	fs.DurationVar(&o.DrainTimeout, "drain-timeout", 5e9, "how long in-flight requests may still run after stdin EOF or a signal")
	fs.DurationVar(&o.CacheTTL, "cache-ttl", 0, "ttlMs advertised on cacheable 2026-07-28 results")
	fs.IntVar(&o.Intensity, "intensity", 3, "restarts the root supervisor allows within -period before it gives up (exit status 1)")
	fs.DurationVar(&o.Period, "period", 5e9, "the root supervisor's intensity window")
	crash := fs.String("crash-loop", "suspend", "what happens to a tool that panics more than -crash-intensity times within -crash-period: `suspend` it for a period, or escalate to the supervisors")
	fs.BoolVar(&o.PanicDetail, "panic-detail", false, "show a panicking tool's panic value to the client in its isError result (the stack never leaves the log)")
	fs.IntVar(&o.CrashIntensity, "crash-intensity", 10, "panics of one tool tolerated within -crash-period")
	fs.DurationVar(&o.CrashPeriod, "crash-period", 5e9, "the crash-loop window, and how long a crash-looping tool stays suspended")
	fs.StringVar(&o.DefaultLogLevel, "client-log-level", "info", "lowest level of server logs and captured stdout sent to a legacy client that has not sent logging/setLevel (\"\": none)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `file` (for go tool pprof)")
	fs.IntVar(&o.LogBuffer, "log-buffer", 1024, "notifications kept for a client until it sends notifications/initialized; past it the oldest are dropped and counted")
	memLimit := fs.String("memory-limit", defaultMemoryLimit, "soft limit on the Go runtime's memory: a `size` in bytes, or with a unit (KiB, MiB, GiB), or off; GOMEMLIMIT, when set, overrides the default")
	hf := addHTTPFlags(fs)
	tf := addTelemetryFlags(fs)
	tasksOn := fs.Bool("tasks", false, "serve calls of tools that declare execution.taskSupport as tasks (2025-11-25 tasks; the 2026-07-28 extension io.modelcontextprotocol/tasks), kept in memory only: a restart forgets every task, finished or not, and a client polling one gets \"unknown task\"")
	var to runtime.TasksOptions
	fs.StringVar(&to.Dir, "tasks-dir", "", "serve tasks as -tasks does, durably: every change of a task is appended to a journal in `dir` and fsync'd, so after a crash or a redeploy a completed task's result is still served and one that was running is failed with a message saying the server restarted (or, for a tool that declares itself resumable, such as the reference server's sleep, run again once); one server per dir: it is locked, and a second server on it is refused")
	etcdFlags := addTasksEtcdFlags(fs, &to)
	fs.IntVar(&to.MaxLive, "tasks-max", 0, "tasks in progress at once on the server; past it a new task is refused with error -32000 (0: 10000)")
	fs.IntVar(&to.MaxLivePerOwner, "tasks-max-per-client", 0, "tasks in progress at once per client (the caller with OAuth; else the address the connection comes from, an IPv6 one by its /64, so anonymous clients do not share one budget, though behind a proxy they share the proxy's; stdio: its one client); past it a new task is refused with error -32000 (0: 1000)")
	fs.IntVar(&to.MaxEndedPerClient, "tasks-max-ended-per-client", 0, "ended tasks (completed, failed, cancelled) kept per client, as -tasks-max-per-client counts clients, within their ttl: when one more ends, the client's task that ended first is deleted (its id then reads as unknown); new tasks are never refused for it (0: 10000; negative: no bound)")
	fixtureName := fs.String("fixture", "reference", "which built-in server to run: `name` is reference (the one listed above) or conformance (the tools, resources and prompts the official MCP conformance suite's server scenarios call; see test/conformance) or wedged (answers the handshake and pings, never its lists: a hung backend for mcprt chaos -behind-gateway)")
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
	if o.DefaultLogLevel != "" && !slices.Contains(mcp.LogLevels, o.DefaultLogLevel) {
		fmt.Fprintf(stderr, "mcprt serve: -client-log-level must be one of %v\n", mcp.LogLevels)
		return runtime.ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcprt serve: unexpected argument %q\n", fs.Arg(0))
		return runtime.ExitUsage
	}
	switch *fixtureName {
	case "reference":
	case "conformance":
		srv = fixture.Conformance(version)
	case "wedged":
		srv = fixture.Wedged(version)
	default:
		fmt.Fprintf(stderr, "mcprt serve: -fixture must be reference, conformance or wedged, not %q\n", *fixtureName)
		return runtime.ExitUsage
	}
	if *fixtureName == "reference" && hf.oauth.issuer != "" {
		fixture.AddWhoami(srv)
	}
	if err := etcdFlags(); err != nil {
		fmt.Fprintf(stderr, "mcprt serve: %v\n", err)
		return runtime.ExitUsage
	}
	if *tasksOn || to.Dir != "" || to.Etcd != nil || *fixtureName == "conformance" {
		// The conformance fixture serves the suite's tasks-* scenarios.
		to.Tag = hf.tag
		o.Tasks = &to
	}
	// Unless given, the limit is the runtime's default, which GOMEMLIMIT
	// overrides.
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "memory-limit" })
	if explicit {
		limit, err := parseSize(*memLimit)
		if err != nil {
			fmt.Fprintf(stderr, "mcprt serve: -memory-limit: %v\n", err)
			return runtime.ExitUsage
		}
		o.MemoryLimit = limit
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
	endpoint := "stdio"
	if hf.addr != "" {
		endpoint = hf.path
	}
	tel, err := startTelemetry(tf, "mcprt", hf.addr == "", hf.addr != "" && hf.metrics != "", endpoint, s.Stdout, nil)
	if err != nil {
		fmt.Fprintf(stderr, "mcprt serve: %v\n", err)
		return runtime.ExitUsage
	}
	defer tel.close()
	o.Tracer, o.TraceResourceURI = tel.tracer, tf.uri
	hf.moreMetrics = append(hf.moreMetrics, tel.writeMetrics)
	if tel.audit != nil {
		defer onHUP(tel.reopen)()
	}
	if hf.addr != "" {
		return serveHTTP("mcprt serve", srv, o, hf, stderr)
	}
	if isTerminalInput(os.Stdin) {
		// A person typed mcprt serve, and it would sit there silent,
		// looking hung: it waits for a client that is not coming.
		fmt.Fprintln(stderr, serveTerminalHint)
	}
	return runtime.ExitCode(runtime.Serve(context.Background(), srv, o))
}

// serveTerminalHint is what serve says, on stderr, when its stdin is a
// terminal.
const serveTerminalHint = "mcprt serve: waiting for an MCP client on stdin (JSON-RPC, one message a line); it is meant to be started by one: to try it, run mcprt list -- mcprt serve"

// isTerminalInput reports whether f is a terminal: a character device
// that is not the null device (mcprt serve </dev/null is no person).
func isTerminalInput(f *os.File) bool {
	if !isTerminal(f) {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(st, null)
}

// defaultMemoryLimit is runtime.DefaultMemoryLimit as -memory-limit
// spells it.
var defaultMemoryLimit = fmt.Sprintf("%dMiB", runtime.DefaultMemoryLimit>>20)

// parseSize reads a size as GOMEMLIMIT spells it: bytes, or a number with
// B, KiB, MiB, GiB or TiB; "off" (or 0) means no limit.
func parseSize(s string) (int64, error) {
	if s == "off" {
		return math.MaxInt64, nil
	}
	num, mult := s, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"B", 1}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with KiB, MiB or GiB, or off)", s)
	}
	if n == 0 {
		return math.MaxInt64, nil
	}
	return n * mult, nil
}
