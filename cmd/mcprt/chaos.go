package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/fault"
	"github.com/mcprt/mcprt/session/client"
)

const chaosUsage = `Usage: mcprt chaos [flags] -- CMD ARGS...
       mcprt chaos [flags] -http -- CMD ARGS...
       mcprt chaos [flags] -url URL

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

Over Streamable HTTP the same plan is shared out among -clients clients
(legacy sessions, each with its GET stream open, or stateless 2026-07-28
clients), each request its own POST. With -http, CMD ARGS start a server
that prints its endpoint's URL (the first http:// URL on a line of its
stdout or stderr, as "mcprt serve -http 127.0.0.1:0" does), ended with
SIGTERM (-end sigterm, the only ending there: stdin EOF and a closed stdout
mean nothing to an HTTP server); with -url the server is already running
and is not ended (-end none): legacy sessions are DELETEd at the end. Every
request must get exactly one JSON-RPC response, as the JSON body or the
last event of its SSE stream, none once cancelled (legacy:
notifications/cancelled by its id, with its stream open or closed first;
2026-07-28: closing the stream); nothing but JSON-RPC and well-formed SSE
on the wire; 202 for notifications, 400 for malformed bodies and missing
sessions or headers, 404 for unknown or deleted sessions, 413 past
-max-body, 415 for a body that is not application/json. Instead of pauses
on stdout, clients leave a large response unread (the others' calls must
still be answered) or disconnect in the middle of one (-disconnect), and
-delete starts sessions that are DELETEd with calls in flight, and -flood N
sends N legacy handshakes that are never used again (a new client must
still be served after them, and no session in use closed). -era auto
asks server/discover first, and speaks 2026-07-28 if it is answered.

With -tasks N the campaign is one of tasks instead, over stdio (or with
-http over Streamable HTTP, the server restarted on a new port; or with
-url through servers someone else runs, such as replicas behind a proxy
that are killed and restarted meanwhile): N calls
made as tasks (mcprt call -task's way, in the era -era names: 2025-11-25
in the legacy one), at most -task-concurrency running at once, polled
until they end; -task-cancel of them cancelled at a seeded poll; and
-task-kills times the server killed with SIGKILL while tasks run and
started again, after which every task is asked for again. It fails when a
task ends in two terminal states (or is working again after one), a
completed task's result changes, tasks/cancel is not answered as the era
says, or a task never ends. A server whose command has -tasks-dir (or
with -task-durable) must still know every task after a restart; any other
may forget them, which the report counts as lost. The tool is the
conformance fixture's slow_compute (mcprt serve -fixture conformance),
the reference server's sleep (mcprt serve -tasks or -tasks-dir) or
server-everything's simulate-research-query, whichever is listed first
(behind a gateway, with its "<prefix>__"), or -task-tool with -task-args.
With -behind-gateway the campaign runs against mcprt gateway in front of
CMD, and it is the gateway that is killed and started again; when CMD has
-tasks-dir the gateway gets a journal of its own (and must keep its tasks).
With -url the campaign kills nothing: a session the server ends (404,
its replica lost) or a request that fails on the way (a proxy's 502) is
sent again on a new connection, and the report counts both; give
-task-durable when the servers share a store (-tasks-etcd) and every
task must still be known.

The tools are found with tools/list ("echo", "sleep" taking {"ms"},
"panic"; behind a gateway, their prefixed names, "ref__echo" and so on,
of the prefix that has the most of them) unless named with -echo-tool,
-slow-tool and -panic-tool; faults needing a tool the server lacks are
skipped, and the report's "tools:" line says which tools were called. A
tool named that the server does not list is an error naming those it
does (exit status 2): with -behind-gateway the server's tools are named
"target__<name>" (-panic-tool target__panic).
The same -seed gives the same plan. The same campaign, as a Go package for
a test of your own: github.com/mcprt/mcprt/runtime/fault.

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
	fs.Float64Var(&c.Rates.Pause, "pause", c.Rates.Pause, "chance, after each request, that stdout goes unread for -pause-for (over HTTP: a client leaves a large response unread)")
	fs.Float64Var(&c.Rates.Disconnect, "disconnect", c.Rates.Disconnect, "over HTTP, chance after each request of a client that disconnects in the middle of a response")
	fs.Float64Var(&c.Rates.Delete, "delete", c.Rates.Delete, "over HTTP (legacy), chance after each request of a session DELETEd with calls in flight")
	fs.IntVar(&c.Flood, "flood", 0, "over HTTP (legacy), `N` initialize handshakes abandoned after the requests, past the server's cap on sessions (mcprt serve: -http-max-sessions, 1000): a new client must still be served")
	fs.StringVar(&c.Tools.Echo, "echo-tool", "", "tool that returns its \"text\" argument, as the server lists it (-behind-gateway: target__NAME) (default: \"echo\" if listed)")
	fs.StringVar(&c.Tools.Slow, "slow-tool", "", "cancellable tool that sleeps \"ms\" milliseconds, as the server lists it (-behind-gateway: target__NAME) (default: \"sleep\" if listed)")
	fs.StringVar(&c.Tools.Panic, "panic-tool", "", "tool that fails on every call, as the server lists it (-behind-gateway: target__NAME); one it does not list is an error (default: \"panic\" if listed)")
	end := fs.String("end", "", "how to end the server: eof, sigterm or epipe (close stdout) over stdio (default eof); sigterm with -http; none with -url")
	fs.StringVar(&c.URL, "url", "", "drive the Streamable HTTP server at this endpoint, already running, instead of starting CMD")
	fs.BoolVar(&c.HTTP, "http", false, "CMD starts a Streamable HTTP server that prints its URL; drive it over HTTP")
	fs.IntVar(&c.Clients, "clients", 4, "over HTTP, how many clients share the requests (sessions, or stateless clients)")
	fs.Int64Var(&c.MaxBody, "max-body", 0, "over HTTP, the server's bound on a request body in `bytes`, if known: larger ones must get 413 (mcprt serve: -http-max-body, 16 MiB by default)")
	fs.IntVar(&c.PauseSize, "pause-size", 0, "over HTTP, `bytes` of the response a paused client leaves unread (default 8 MiB, below -max-body)")
	var headers headerFlag
	fs.Var(&headers, "header", "over HTTP, send `Name: value` with every request (repeatable)")
	pf := addProtocolFlags(fs, client.EraLegacy, "2025-06-18 in the legacy era, going on in the revision the server answers; 2026-07-28 in the modern era")
	fs.IntVar(&c.Window, "window", 64, "quick requests awaiting an answer at once")
	fs.DurationVar(&c.HangFor, "hang-for", 0, "sleep asked of hung and cancelled calls (default 10m)")
	fs.DurationVar(&c.SlowFor, "slow-for", 0, "longest sleep of a slow call (default 20ms)")
	fs.DurationVar(&c.PauseFor, "pause-for", 0, "how long a pause leaves stdout unread (default 200ms)")
	fs.IntVar(&c.HugeSize, "huge", 0, "`bytes` of text in a huge line (default 1 MiB)")
	fs.DurationVar(&c.Timeout, "timeout", 0, "bound on the handshake and the sending (default 2m)")
	fs.DurationVar(&c.ExitTimeout, "exit-timeout", 0, "how long to wait for the exit before killing the server (default 30s)")
	behind := fs.Bool("behind-gateway", false, "run CMD behind mcprt gateway, beside a wedged backend (one that never answers its lists): the campaign checks that one hung backend takes nothing from the others (CMD's tools are named target__NAME there: -panic-tool target__panic)")
	verbose := fs.Bool("v", false, "also print the tail of the server's stderr")
	tc := taskCampaign{out: stderr}
	fs.IntVar(&tc.tasks, "tasks", 0, "run the task campaign instead, of `N` tasks (see above)")
	fs.IntVar(&tc.kills, "task-kills", 1, "task campaign: how many times the server is killed (SIGKILL) and started again with tasks running")
	fs.Float64Var(&tc.cancelRate, "task-cancel", 0.3, "task campaign: share of tasks cancelled while they run")
	fs.IntVar(&tc.concurrency, "task-concurrency", 8, "task campaign: tasks running at once, at most")
	fs.StringVar(&tc.tool, "task-tool", "", "task campaign: the tool to call as a task (default: slow_compute, sleep or simulate-research-query, whichever is listed first)")
	taskArgs := fs.String("task-args", "{}", "task campaign: the arguments of -task-tool, a JSON object")
	fs.BoolVar(&tc.durable, "task-durable", false, "task campaign: the server keeps its tasks across a restart, which it must then still know (implied by -tasks-dir in CMD)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runtime.ExitOK
		}
		return runtime.ExitUsage
	}
	switch {
	case c.URL != "" && fs.NArg() > 0:
		fmt.Fprintln(stderr, "mcprt chaos: -url and a server command after -- are two servers: give one")
		return runtime.ExitUsage
	case c.URL != "" && c.HTTP:
		fmt.Fprintln(stderr, "mcprt chaos: -http is for a server command; -url is already HTTP")
		return runtime.ExitUsage
	case c.URL == "" && fs.NArg() == 0:
		fmt.Fprintln(stderr, "mcprt chaos: no server command (give it after --, or give -url URL)")
		return runtime.ExitUsage
	case c.URL == "" && !c.HTTP && (len(headers) > 0 || c.MaxBody != 0 || c.PauseSize != 0):
		fmt.Fprintln(stderr, "mcprt chaos: -header, -max-body and -pause-size are for HTTP (-http or -url)")
		return runtime.ExitUsage
	}
	if tc.tasks > 0 {
		if c.URL != "" {
			// Servers someone else runs (replicas behind a proxy, killed
			// and restarted by whoever runs them): the campaign kills
			// nothing itself.
			killsSet := false
			fs.Visit(func(f *flag.Flag) { killsSet = killsSet || f.Name == "task-kills" })
			if killsSet && tc.kills != 0 || *behind {
				fmt.Fprintln(stderr, "mcprt chaos: with -url the campaign kills no server (-task-kills, -behind-gateway): whoever runs the servers kills them")
				return runtime.ExitUsage
			}
			tc.url, tc.kills, tc.header = c.URL, 0, http.Header(headers)
		}
		return chaosTasks(&tc, fs, pf, c.Seed, c.HTTP, *behind, *taskArgs, stderr)
	}
	c.Command = fs.Args()
	if *behind {
		if c.URL != "" {
			fmt.Fprintln(stderr, "mcprt chaos: -behind-gateway needs a server command, not -url")
			return runtime.ExitUsage
		}
		cmd, _, cleanup, err := behindGateway(c.Command, c.HTTP)
		if err != nil {
			fmt.Fprintf(stderr, "mcprt chaos: -behind-gateway: %v\n", err)
			return runtime.ExitFailure
		}
		defer cleanup()
		c.Command = cmd
	}
	c.Header = http.Header(headers)
	overHTTP := c.URL != "" || c.HTTP
	era, pin, err := pf.settle()
	if err != nil {
		fmt.Fprintf(stderr, "mcprt chaos: %v\n", err)
		return runtime.ExitUsage
	}
	switch {
	case *end == "" && c.URL != "":
		c.Ending = fault.EndNone
	case *end == "" && c.HTTP:
		c.Ending = fault.EndSIGTERM
	case *end == "":
		c.Ending = fault.EndEOF
	default:
		if c.Ending, err = fault.ParseEnding(*end); err != nil {
			fmt.Fprintf(stderr, "mcprt chaos: -end: %v\n", err)
			return runtime.ExitUsage
		}
		want := map[bool]fault.Ending{true: fault.EndNone, false: fault.EndSIGTERM}[c.URL != ""]
		if overHTTP && c.Ending != want {
			fmt.Fprintf(stderr, "mcprt chaos: -end %s: over HTTP the ending is %s (stdin EOF and a closed stdout mean nothing to an HTTP server)\n", c.Ending, want)
			return runtime.ExitUsage
		}
		if !overHTTP && c.Ending == fault.EndNone {
			fmt.Fprintln(stderr, "mcprt chaos: -end none is for -url")
			return runtime.ExitUsage
		}
	}
	if c.Requests <= 0 || c.Window <= 0 || c.Clients <= 0 || c.MaxBody < 0 || c.PauseSize < 0 {
		fmt.Fprintln(stderr, "mcprt chaos: -requests, -window and -clients must be positive, -max-body and -pause-size not negative")
		return runtime.ExitUsage
	}

	// ^C stops the campaign, which still ends the server and reports.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch {
	case era == client.EraAuto && overHTTP:
		c.AutoEra = true // the campaign asks server/discover first
		c.ProtocolVersion = pin
	case era == client.EraAuto:
		if era, pin, err = probeEra(ctx, c.Command, nil, cmp.Or(c.Timeout, 30*time.Second)); err != nil {
			fmt.Fprintf(stderr, "mcprt chaos: %v\n", err)
			return runtime.ExitFailure
		}
		c.ProtocolVersion = pin
	default:
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
	target := fmt.Sprintf("%q", c.Command)
	if c.URL != "" {
		target = c.URL
	} else if c.HTTP {
		target += " over HTTP"
	}
	fmt.Fprintf(stderr, "mcprt chaos: %s, %s era\n%s", target, rep.Era, rep)
	if *verbose && rep.StderrTail != "" {
		fmt.Fprintf(stderr, "server stderr (tail):\n%s\n", rep.StderrTail)
	}
	if !rep.OK() {
		return runtime.ExitFailure
	}
	return runtime.ExitOK
}

// behindGateway is the command that runs cmd behind mcprt gateway (over
// Streamable HTTP when overHTTP), beside a wedged backend, from a
// configuration file in dir, which cleanup removes.
func behindGateway(cmd []string, overHTTP bool) (gw []string, dir string, cleanup func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", nil, err
	}
	dir, err = os.MkdirTemp("", "mcprt-chaos-")
	if err != nil {
		return nil, "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"target": map[string]any{"command": cmd[0], "args": cmd[1:]},
		"wedged": map[string]any{"command": self, "args": []string{"serve", "-fixture", "wedged"}, "env": map[string]string{"LOG_LEVEL": "error"}},
	}})
	file := filepath.Join(dir, "gateway.json")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		cleanup()
		return nil, "", nil, err
	}
	gw = []string{self, "gateway", "-config", file}
	if overHTTP {
		gw = append(gw, "-http", "127.0.0.1:0")
	}
	return gw, dir, cleanup, nil
}
