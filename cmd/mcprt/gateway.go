package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/gateway"
	"github.com/mcprt/mcprt/runtime/resourceserver"
	"github.com/mcprt/mcprt/runtime/taskrun"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/session/client/oauth"
	"github.com/mcprt/mcprt/stdio"
)

const gatewayUsage = `Usage: mcprt gateway [-config FILE] [flags]

Runs one MCP server on stdin/stdout in front of the servers FILE names:
their tools, prompts, resources and resource templates, each named
"<prefix>__<name>" (the prefix is the server's name unless it sets one),
every request forwarded to the server that offers it. It serves as mcprt
serve does (the same flow control, drain on stdin EOF or SIGTERM, exit
statuses), and then closes every backend: stdin EOF, -close-grace,
SIGTERM, -term-grace, SIGKILL. On Linux a backend is killed with the gateway even when the
gateway is killed with SIGKILL.

Without -config, FILE is the first that exists of the MCP client
configurations the user has already: the project's ./.mcp.json (Claude
Code) and ./.vscode/mcp.json (VS Code, its "servers"), then Cursor's
~/.cursor/mcp.json and Claude Desktop's claude_desktop_config.json (in
~/.config/Claude on Linux, ~/Library/Application Support/Claude on
macOS, %APPDATA%\Claude on Windows); stderr says which. A server in FILE
that runs this gateway on the same FILE (mcprt gateway, as the client's
own entry for it) is left out, with a warning: it would start itself.

The client is answered at once, while the backends start: its first
lists wait up to -list-grace (5s) for them, and a backend that comes up
later joins with list_changed. One that hangs while it starts is
restarted, then failed, like one that crashes; a call of a tool of a
backend that never came up says which backend and why.

With -http ADDR it serves Streamable HTTP instead, as mcprt serve -http
does (the same -http-* flags): many clients at once, each its own
session. On SIGINT or SIGTERM it stops accepting, lets requests in flight
finish (-http-shutdown-grace), ends every session, and then closes the
backends as above.

Tasks pass through (-tasks, on by default): a client's call asking for a
task, of a backend's tool whose execution.taskSupport allows one, becomes
a task of the gateway's (bound to the client's caller, or else by its id
alone, never to an HTTP session: see mcprt serve --help) that runs the
call as a task at the backend and awaits it, each side in its own
revision, so a 2026-07-28 client can poll a 2025-11-25 backend's task and
the reverse; cancelling it cancels the backend's. A remote backend whose
connection breaks meanwhile is reconnected and its task polled again,
within the task's ttl: a backend with a journal still holds it. With
-tasks-dir DIR the gateway's tasks are journalled, and every tool may be
called as a task: a long call to a backend that knows no tasks then
outlasts the backend's timeout.

On SIGHUP it reads FILE again and puts it in place: a server that is no
longer in it is stopped (its calls in flight are answered with an error)
and what it offered is withdrawn, a new one is started, one whose entry
changed is restarted with the new entry, and the others go on untouched;
the client gets list_changed. A file with an error is refused, logged,
and the gateway goes on as it was. With -watch 2s it also looks at FILE
every 2s and does the same when its contents changed. A request forwarded
to a backend has that backend's "timeout", also for a backend a reload
added.

Each backend runs under a supervisor of its own: when it exits, closes its
stdout or stops answering pings it is restarted, after a backoff that
doubles; past "maxRestarts" within "restartWindow" it is failed and stays
down (its tools say so) until a request comes after "cooldown"; one that
failed before it ever listed its tools is started again after "cooldown",
as no request can reach it (a remote server down when the gateway
started, say). A request that comes while its backend restarts waits for
it up to "restartWait" (-restart-wait, 3s; within its "timeout"), and
is forwarded once
it is up. A request to a backend that is down, still restarting after
that, or past its "timeout" is answered: a tool result with isError, or
an error, naming the backend and why, with its last stderr lines; those
in flight when their backend went away are answered at once. Backends' stderr is shown on the gateway's,
each line prefixed with [name], throttled.

FILE is the JSON an MCP client writes (Claude Desktop, Cursor, VS Code's
"servers" with comments, .mcp.json):

  {"mcpServers": {
     "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
     "ref":   {"command": "mcprt", "args": ["serve"], "env": {"LOG_LEVEL": "warn"}, "cwd": "/tmp",
               "prefix": "r", "timeout": "30s", "hideTools": ["panic", "slow-*"]}
  }}

A remote server is given by its Streamable HTTP endpoint instead, with
"type": "http" (or "streamable-http") or no "type" at all, and optional
headers for every request:

  "docs": {"type": "http", "url": "https://mcp.example.com/mcp",
           "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}

The gateway connects to it rather than starting it, and supervises it the
same way: a connection that is lost (refused, broken, a 5xx, a legacy
session the server forgot) is a backend that went away, and restarting it
is connecting again, with the same backoff and limits (a 2026-07-28
notification stream that breaks is first opened again: proxies cut long
streams). The deprecated
HTTP+SSE transport ("type": "sse") is not supported. A server protected
by OAuth takes an "oauth" block instead of an Authorization header: the
gateway gets its tokens by the client credentials grant from "issuer",
the authorization server that issued the credentials, and renews them:

  "oauth": {"issuer": "https://login.example.com", "clientId": "gw",
            "clientSecret": "${GW_SECRET}", "scopes": ["mcp:tools"]}

("keyFile": a PEM private key for private_key_jwt, instead of the secret).
The credentials go to that issuer alone: a server whose 401 names another
authorization server gets an error, not the secret. The server must be
https (http on loopback only), and so must its authorization server. What
the server points the gateway at is fetched only from the server's own
origin ("metadataOrigins": ["https://…"] adds others), without redirects,
never from a link-local address, and from a private or loopback one only
when the server is on one too ("allowPrivate": true allows them).

"auth" says whom the server's requests are made as:

  service   (the default) the gateway itself, with its headers or "oauth"
            client credentials: every caller reaches the server as the
            gateway. For a server of the team's own, or one with no users.
  exchange  each caller, by OAuth 2.0 token exchange (RFC 8693): for a
            caller who came with an access token (-http with
            -http-oauth-issuer), the gateway presents that token to the
            "oauth" issuer, authenticated with the "oauth" credentials,
            and gets one whose resource is this server (the scopes its
            401 names), which it sends to this server alone and keeps for
            that caller until shortly before it expires. The server sees
            each user, and applies its own permissions and audit. The
            caller's token must be from that issuer (it is shown to no
            other), and the server must name that issuer. Each caller
            gets a connection of their own (1000 at most; unused for 5m,
            closed); what the gateway lists and follows of the server it
            asks as itself, with the "oauth" client credentials. A caller
            without a token (stdio; -http without OAuth) is told it
            cannot use the server. A refused exchange says so, and why.

  "issues": {"url": "https://issues.example.com/mcp", "auth": "exchange",
             "oauth": {"issuer": "https://login.example.com", "clientId": "gw",
                       "clientSecret": "${GW_SECRET}"}}

  user      each caller, signed in once, in a browser, to the server's own
            authorization server (a third party's): for a server whose
            users have accounts there, not at the gateway's issuer.
            Needs -http with -http-oauth-issuer (who the caller is),
            -user-token-dir and -user-token-key. A call of one of its
            tools by a caller not signed in is answered with error -32042
            (URL elicitation required, 2025-11-25) whose URL,
            <-http-oauth-resource>/signin/NAME?state=…, single use, valid
            10m, sends the browser to the authorization server (code
            grant, PKCE S256, discovered from the server's protected
            resource metadata, bound to the "oauth" issuer) as the "oauth"
            client, whose redirect URI there must be
            <-http-oauth-resource>/oauth/callback; the callback keeps the
            token in memory only and shows a one-time code, naming the
            gateway user the account would be connected to: the caller
            calls the tool NAME__confirm_sign_in {"code": "…"} with it (a
            link passed on and completed by someone else binds nothing;
            the code entered by another caller, or 3 wrong codes, end the
            sign-in); then the token is kept sealed for that caller and
            server, the client calls again, and the call goes as the
            user. Tokens are refreshed before they expire when a refresh
            token came.
            The tool NAME__sign_out forgets the caller's token (the next
            call asks again). Listing: the gateway lists the server's
            tools as itself (the "oauth" client credentials), so every
            caller sees them; only calls go as the caller.

  "saas": {"url": "https://mcp.saas.example/mcp", "auth": "user",
           "oauth": {"issuer": "https://auth.saas.example", "clientId": "gw",
                     "clientSecret": "${SAAS_SECRET}"}}

"envFile" (as VS Code writes it) names a file of KEY=value lines added to
the server's environment ("env" wins); a relative path is taken from
FILE's folder. "${VAR}" and "${VAR:-default}" in command, args, env,
envFile, cwd, url, headers and oauth are taken from the environment. The
gateway's own keys, per server, all optional:

  prefix         namespace of its names ("" for none); default: its name
  timeout        bound on each request forwarded to it, connect included,
                 while it reports no progress (30s)
  maxTimeout     bound on a request whose progress keeps extending its
                 timeout (10m)
  maxRestarts    restarts allowed within restartWindow before it is failed (5; 0: none)
  restartWindow  (60s)
  backoff        first wait before a restart; doubles up to maxBackoff (250ms, 30s)
  maxBackoff
  cooldown       how long a failed backend stays down before a request may start it (60s)
  restartWait    how long a request waits for a restarting backend to be up (3s; 0: not at all)
  pingInterval   how often it is pinged while no request is in flight (30s; 0: never)
  pingTimeout    an unanswered ping restarts it (10s)
  lazy           true: started to learn what it offers, then stopped; started
                 again by a request, stopped after idleTimeout without one (10m)
  idleTimeout
  allowTools     the only tool names, or patterns ("read_*"), to offer
  hideTools      tool names, or patterns ("delete_*"), not to offer
  access         who may see and use its tools, prompts and resources, by the
                 caller's OAuth access token (-http -http-oauth-issuer):
                 {"scopes": ["notes:read"], "claims": {"groups": ["ops"]}}
                 (every scope, and one value of each claim); others do not
                 see them, and a call with too few scopes gets 403
                 insufficient_scope (step-up). Without OAuth nobody meets it.
  toolAccess     the same per tool name or pattern, besides access:
                 {"delete_*": {"scopes": ["notes:admin"]}}
  protocol       how to connect: auto (probe server/discover, fall back to
                 initialize), legacy, modern, or one revision ("2025-06-18")
  tools          overrides per tool, by the backend's name of it:
                 {"search_code": {"name": "find", "title": "Find code",
                 "description": "…", "fixed": {"repo": "acme/app"}}}: a new
                 name (the prefix still goes before it), title or description;
                 fixed arguments are set on every call and left out of the
                 offered inputSchema, and a call that sets one is refused
                 (-32602 naming it)
  disabled       true: leave it out

Tool search, against a catalog that fills a model's context: with
-tool-search, or "toolSearch": true beside "mcpServers", tools/list offers
search_tools {query, limit?} (the tools the caller may use, ranked by BM25
over names, titles, descriptions and arguments, best first, with their full
definitions) and call_tool {name, arguments} (a call of any of them, as a
direct call would be) instead of every backend's tools; "alwaysList":
["fs__read_*"] keeps those gateway tool names, or patterns, listed too. A
direct tools/call of any tool still works. A reload applies both keys.

Virtual endpoints, each a subset of the tools, prompts and resources for
one team or agent: "endpoints" beside "mcpServers",

  "endpoints": {"dev": {"tools": ["fs__read_*", "mem__*"], "prompts": [],
                        "resources": ["file:///docs/*"], "toolSearch": true,
                        "access": {"claims": {"groups": ["dev"]}}}}

(gateway names, or patterns; resources by URI or name; "toolSearch" as
above, there only; "access" as a backend's, for all it offers there).
With -http each is served at <-http-path>/NAME (/mcp/dev), with OAuth as
a resource of its own (<-http-oauth-resource>/NAME, its metadata at
/.well-known/oauth-protected-resource/mcp/dev); -endpoint NAME serves one
over stdio. An endpoint lists, finds and calls only what it names: the
rest is an unknown tool there. Tasks are the gateway's (one store): a
task made at an endpoint is awaited there, or read by its id at the main
one. A reload applies "endpoints" without restarting a backend.

Durations are strings ("30s", "1m") or numbers of seconds. Other keys are
ignored with a warning. A file with any error is refused (exit status 2),
every error naming the server and the key; -check reads it, finds each
command as the gateway would start it (on PATH, or relative to "cwd"),
prints what each server runs, and exits 2 if anything is wrong.

Logs go to stderr; LOG_LEVEL (debug, info, warn, error) sets the level and
LOG_FORMAT=json switches to JSON lines.

The Go runtime gets a soft memory limit, -memory-limit, as mcprt serve's
(default 20MiB; GOMEMLIMIT, when set, is used instead of the default),
with the collector paced at GOGC=400 under it unless GOGC is set.
GOMAXPROCS=1 trades latency for CPU: one thread hands messages between
the client and the backends with a fifth less CPU per call, but a call
made alone takes about 15 µs longer than with Go's default.

` + telemetryUsage + `
Flags:
`

func init() {
	register(verb{name: "gateway", summary: "serve many MCP servers (an mcpServers file) as one, supervised", run: runGateway})
}

func runGateway(args []string, s streams) int {
	stderr := s.Stderr
	fs := flags("gateway", gatewayUsage, s)
	file := fs.String("config", "", "the mcpServers `file` (JSON) naming the backends")
	check := fs.Bool("check", false, "read the configuration, find each backend's command, print what each runs, and exit (0, or 2 when anything is wrong)")
	watch := fs.Duration("watch", 0, "check FILE this often and reload it when its contents change, as SIGHUP does (0: only on SIGHUP)")
	startTimeout := fs.Duration("start-timeout", 30*time.Second, "how long a reload waits for the backends it starts before it reports them")
	restartWait := fs.Duration("restart-wait", gateway.DefaultRestartWait, "how long a request that comes while its backend restarts waits for it to be up, for the backends whose entry sets no \"restartWait\" (0: not at all, answered at once)")
	listGrace := fs.Duration("list-grace", gateway.DefaultListGrace, "how long a client's first lists wait for backends still starting; one not up by then joins later (the client gets list_changed)")
	var o runtime.Options
	fs.IntVar(&o.MaxLineBytes, "max-line", stdio.DefaultMaxLine, "largest input line in `bytes`; a longer one is answered with an error and skipped")
	fs.IntVar(&o.MaxInFlight, "max-in-flight", session.DefaultMaxInFlight, "requests in progress at once; past it requests wait (see -max-queued)")
	fs.IntVar(&o.MaxQueued, "max-queued", session.DefaultMaxQueued, "requests waiting for one in progress to finish; past it a request is refused at once with error -32000 (server busy)")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", 0, "deadline of each request the gateway answers itself (one it forwards has its backend's timeout, plus a little); 0: the longest backend timeout, plus a little")
	fs.DurationVar(&o.DrainTimeout, "drain-timeout", 5e9, "how long in-flight requests may still run after stdin EOF or a signal, before the backends are closed")
	closeGrace := fs.Duration("close-grace", time.Second, "how long a backend may take to exit after its stdin is closed, before it gets SIGTERM")
	termGrace := fs.Duration("term-grace", time.Second, "how long a backend may take to exit after SIGTERM, before it gets SIGKILL")
	userTokenDir := fs.String("user-token-dir", "", "keep the tokens of callers signed in to \"auth\": \"user\" servers in `dir`, a file per caller and server, sealed (AES-256-GCM) with -user-token-key")
	userTokenKey := fs.String("user-token-key", "", "the `file` of -user-token-dir's key: 32 bytes as 64 hex digits or base64 (openssl rand -base64 32); or the environment variable MCPRT_USER_TOKEN_KEY. A key other than the one the folder was sealed with is refused at start")
	endpointName := fs.String("endpoint", "", "serve only the virtual endpoint `name` of FILE's \"endpoints\" over stdio (over HTTP each is served at <-http-path>/name)")
	toolSearch := fs.Bool("tool-search", false, "list search_tools and call_tool instead of the backends' tools (as \"toolSearch\": true in FILE does); every tool stays callable by name")
	logCalls := fs.Bool("log-calls", false, "log each tool call forwarded (backend, tool, time taken, outcome) to stderr, whatever LOG_LEVEL says")
	useGuard := fs.Bool("guard", true, "run each stdio backend through mcprt guard, so that all it started dies with the gateway, even a killed one (not on Windows)")
	fs.StringVar(&o.DefaultLogLevel, "client-log-level", "", "lowest level of the gateway's logs sent to a legacy client that has not sent logging/setLevel (\"\": none)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `file` (for go tool pprof)")
	memLimit := fs.String("memory-limit", fmt.Sprintf("%dMiB", gatewayMemoryLimit>>20), "soft limit on the Go runtime's memory: a `size` in bytes, or with a unit (KiB, MiB, GiB), or off; GOMEMLIMIT, when set, overrides the default")
	hf := addHTTPFlags(fs)
	tf := addTelemetryFlags(fs)
	tasksOn := fs.Bool("tasks", true, "serve tasks (2025-11-25 tasks; the 2026-07-28 extension io.modelcontextprotocol/tasks): a call of a backend's tool that declares execution.taskSupport, from a client asking for a task, becomes a task of the gateway's that runs the call as a task at the backend, in whichever revision each side speaks; kept in memory unless -tasks-dir is given")
	var to runtime.TasksOptions
	fs.StringVar(&to.Dir, "tasks-dir", "", "keep the gateway's tasks in a journal in `dir` (as mcprt serve -tasks-dir): a completed task's result outlives a restart of the gateway; one that was running is failed, saying the gateway restarted. Every tool is then offered as one a client may call as a task (taskSupport optional): a call of a backend that knows no tasks becomes a task of the gateway's that waits for the backend's answer without its timeout")
	etcdFlags := addTasksEtcdFlags(fs, &to)
	fs.IntVar(&to.MaxLive, "tasks-max", 0, "tasks in progress at once on the gateway; past it a new task is refused with error -32000 (0: 10000)")
	fs.IntVar(&to.MaxLivePerOwner, "tasks-max-per-client", 0, "tasks in progress at once per client (the caller with OAuth; else the address the connection comes from, an IPv6 one by its /64, so anonymous clients do not share one budget, though behind a proxy they share the proxy's; stdio: its one client; at a backend the gateway is one client); past it a new task is refused with error -32000 (0: 1000)")
	fs.IntVar(&to.MaxEndedPerClient, "tasks-max-ended-per-client", 0, "ended tasks (completed, failed, cancelled) kept per client, as -tasks-max-per-client counts clients, within their ttl: when one more ends, the client's task that ended first is deleted (its id then reads as unknown); new tasks are never refused for it (0: 10000; negative: no bound)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runtime.ExitOK
		}
		return runtime.ExitUsage
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "mcprt gateway: %s\n(see mcprt gateway --help)\n", fmt.Sprintf(format, a...))
		return runtime.ExitUsage
	}
	if err := etcdFlags(); err != nil {
		return usageErr("%v", err)
	}
	switch {
	case fs.NArg() > 0:
		return usageErr("unexpected argument %q", fs.Arg(0))
	case o.DefaultLogLevel != "" && !slices.Contains(mcp.LogLevels, o.DefaultLogLevel):
		return usageErr("-client-log-level must be one of %v", mcp.LogLevels)
	case *endpointName != "" && hf.addr != "":
		return usageErr("-endpoint serves one endpoint over stdio; over HTTP each is served at %s/NAME", strings.TrimSuffix(hf.path, "/"))
	}
	if *restartWait == 0 {
		*restartWait = -1 // a Backend's 0 is the default
	}
	if *file == "" {
		found, who, notFound := findConfig()
		if found == "" {
			fmt.Fprintf(stderr, "mcprt gateway: %s\n", notFound)
			return runtime.ExitUsage
		}
		*file = found
		fmt.Fprintf(stderr, "mcprt gateway: no -config: serving the servers of %s (%s)\n", found, who)
	}
	loaded, err := os.ReadFile(*file) // and what -watch compares with
	var cfg *gateway.Config
	if err == nil {
		cfg, err = parseConfig(*file, loaded, *restartWait, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcprt gateway: %v\n", err)
		return runtime.ExitUsage
	}
	// The callers' tokens are what the gateway exchanges for a backend
	// with "auth": "exchange" (one a reload adds, too); only that code
	// reads them, and sends them to their own issuer alone.
	hf.oauth.passToken = true
	for _, b := range cfg.Backends {
		if b.Auth == gateway.AuthExchange {
			if hf.addr == "" || hf.oauth.issuer == "" {
				fmt.Fprintf(stderr, "mcprt gateway: backend %q: \"auth\": \"exchange\" acts as each caller with an OAuth access token (-http with -http-oauth-issuer); here nobody has one, and its tools will refuse every call\n", b.Name)
			}
		}
	}
	signIn, err := userSignIn(cfg, *userTokenDir, *userTokenKey, hf)
	if err != nil {
		fmt.Fprintf(stderr, "mcprt gateway: %v\n", err)
		return runtime.ExitUsage
	}
	if hf.addr == "" || hf.oauth.issuer == "" {
		// Access rules are met only by callers an authorization server
		// vouched for: say so, or the tools they guard seem to vanish.
		for _, b := range cfg.Backends {
			if b.Access != nil || len(b.ToolAccess) > 0 {
				fmt.Fprintf(stderr, "mcprt gateway: backend %q: \"access\" and \"toolAccess\" are met only by callers with an OAuth access token (-http with -http-oauth-issuer); what they guard is offered to no one here\n", b.Name)
			}
		}
	}
	if _, ok := cfg.Endpoints[*endpointName]; *endpointName != "" && !ok {
		return usageErr("-endpoint %q: %s has no such endpoint (its \"endpoints\": %v)", *endpointName, *file, slices.Sorted(maps.Keys(cfg.Endpoints)))
	}
	if *check {
		status := runtime.ExitOK
		for _, b := range cfg.Backends {
			if b.URL != "" {
				fmt.Fprintf(s.Stdout, "%s: %s (Streamable HTTP)\n", b.Name, b.URL)
				continue
			}
			path, err := commandPath(b)
			if err != nil {
				fmt.Fprintf(stderr, "mcprt gateway: config: backend %q: key \"command\": %v\n", b.Name, err)
				status = runtime.ExitUsage
				continue
			}
			fmt.Fprintf(s.Stdout, "%s: %s %q\n", b.Name, path, b.Args)
		}
		return status
	}
	// Unless given, the limit is the gateway's default, which GOMEMLIMIT
	// overrides.
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "memory-limit" })
	switch {
	case explicit:
		limit, err := parseSize(*memLimit)
		if err != nil {
			return usageErr("-memory-limit: %v", err)
		}
		o.MemoryLimit = limit
	case os.Getenv("GOMEMLIMIT") == "":
		o.MemoryLimit = gatewayMemoryLimit
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = gateway.DefaultTimeout
		for _, b := range cfg.Backends {
			o.RequestTimeout = max(o.RequestTimeout, b.Timeout)
		}
		o.RequestTimeout += 5 * time.Second
	}

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "mcprt gateway: %v\n", err)
			return runtime.ExitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "mcprt gateway: %v\n", err)
			return runtime.ExitUsage
		}
		defer pprof.StopCPUProfile()
	}

	// The gateway's logs go wherever slog's default logger goes: stderr
	// until the runtime serves, then also to the client at the level it
	// asked for.
	slog.SetDefault(runtime.LoggerFromEnv(nil, nil))
	endpoint := "stdio"
	if hf.addr != "" {
		endpoint = hf.path
	}
	tel, err := startTelemetry(tf, "mcprt-gateway", hf.addr == "", hf.addr != "" && hf.metrics != "", endpoint, s.Stdout, gatewayBackend)
	if err != nil {
		return usageErr("%v", err)
	}
	defer tel.close()
	// The same Tracer for the gateway's server spans (the session's) and
	// its client spans (the backends'): one trace through it.
	o.Tracer, o.TraceResourceURI = tel.tracer, tf.uri
	hf.moreMetrics = append(hf.moreMetrics, tel.writeMetrics)
	if tel.audit != nil {
		defer onHUP(tel.reopen)()
	}
	var calls *callStats
	if hf.addr != "" && (hf.metrics != "" || hf.status != "") {
		calls = &callStats{}
	}
	g, err := gateway.New(cfg, gateway.Options{
		Info:       mcp.Implementation{Name: "mcprt-gateway", Title: "mcprt gateway", Version: version},
		Logger:     slog.New(defaultHandler{}),
		Stderr:     stderr,
		CloseGrace: *closeGrace,
		TermGrace:  *termGrace,
		Guard:      guardCommand(*useGuard),
		OnCall:     onCall(callLogger(*logCalls, stderr), calls),
		// Over stdio the gateway has one client; over HTTP, many.
		SingleClient: hf.addr == "",
		ListGrace:    *listGrace,
		// With a journal the gateway's tasks are durable: any call may
		// be made one, even of a backend that knows no tasks.
		TaskAnyTool: to.Dir != "" || to.Etcd != nil,
		ToolSearch:  *toolSearch,
		Tracer:      tel.tracer,
		UserSignIn:  signIn,
	})
	if err != nil {
		fmt.Fprintf(stderr, "mcprt gateway: %v\n", err)
		return runtime.ExitUsage
	}
	// The tasks' manager, once made: the virtual endpoints serve it too.
	var tasksMade atomic.Pointer[taskrun.Manager]
	if *tasksOn || to.Dir != "" || to.Etcd != nil {
		to.Tag = hf.tag
		to.Made = tasksMade.Store
		o.Tasks = &to
	}
	// The backends are the first part of the process's one tree: launched
	// before the tasks and the transport start, closed after they stop.
	o.Parts = []runtime.Part{g}
	var hl *httpListener
	if hf.addr != "" {
		var status int
		if hl, status = listenHTTP("mcprt gateway", o, hf, stderr); hl == nil {
			return status
		}
		// The virtual endpoints, beside the gateway's own, each with a
		// resource server of its own when OAuth is on.
		var rs *resourceserver.Options
		if hl.guard != nil {
			opts, _, err := hf.oauth.options(hf.tokenFile, hl.so.Logger)
			if err != nil { // it made hl.guard: not now
				hl.close()
				fmt.Fprintf(stderr, "mcprt gateway: %v\n", err)
				return runtime.ExitUsage
			}
			rs = &opts
		}
		if h := g.SignInHandler(); h != nil {
			// Unguarded: a browser brings no token; the state binds it.
			base := strings.TrimSuffix(hf.path, "/")
			if hl.so.Extra == nil {
				hl.so.Extra = map[string]http.Handler{}
			}
			hl.so.Extra[base+"/signin/"] = h
			hl.so.Extra[base+"/oauth/callback"] = h
		}
		if ge := mountEndpoints(g, hl, rs, tasksMade.Load); ge != nil {
			o.Parts = append(o.Parts, ge)
		} else if len(cfg.Endpoints) > 0 {
			fmt.Fprintf(stderr, "mcprt gateway: \"endpoints\" are served at <-http-path>/NAME: with -http-path / they are not served\n")
		}
	}
	// SIGHUP reloads the file (its default would end the gateway).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// A client that has closed our stdin may signal us while the
	// backends close (-close-grace, -term-grace): we are exiting already,
	// and dying by the signal would leave them to Pdeathsig's SIGKILL.
	closing := make(chan os.Signal, 1)
	signal.Notify(closing, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(closing)
	stopReloads := reloadOn(hup, *watch, loaded, g, *file, *startTimeout, *restartWait, stderr)
	closeBackends := func() {
		// The tree closed the backends already (Close is idempotent);
		// this closes them if it never started. Close first: it ends a
		// reload's wait for the backends it started, and one that comes
		// after is refused.
		if cerr := g.Close(); cerr != nil {
			slog.Warn("mcprt gateway: closing the backends", "err", cerr)
		}
		stopReloads()
	}
	if hl != nil {
		// One tree: the backends, the tasks, then the endpoint; the client
		// is served at once, the backends starting in the background, and
		// its first lists wait -list-grace for them. Stopped in reverse:
		// HTTP drains, the tasks stop (cancelling the backends' tasks they
		// await), then the backends close.
		status := hl.serve(g.Server(), o, gatewayHealth(g), gatewayMetrics(g, calls, time.Now()), gatewayBackends(g, calls))
		closeBackends()
		return status
	}
	if isTerminalInput(os.Stdin) {
		fmt.Fprintln(stderr, gatewayTerminalHint) // see serveTerminalHint
	}
	srv := g.Server()
	if *endpointName != "" {
		srv = g.Endpoint(*endpointName)
	}
	err = runtime.Serve(context.Background(), srv, o)
	closeBackends()
	return runtime.ExitCode(err)
}

// gatewayTerminalHint is what gateway says, on stderr, when its stdin is
// a terminal.
const gatewayTerminalHint = "mcprt gateway: waiting for an MCP client on stdin (JSON-RPC, one message a line); it is meant to be started by one: to try it, run mcprt list -- mcprt gateway -config FILE"

// commandPath is the program a stdio backend's command starts, found as
// os/exec finds it: on PATH when it is a bare name, else relative to the
// backend's cwd.
func commandPath(b gateway.Backend) (string, error) {
	c := b.Command
	if strings.ContainsRune(c, '/') || strings.ContainsRune(c, filepath.Separator) {
		if !filepath.IsAbs(c) && b.Dir != "" {
			c = filepath.Join(b.Dir, c)
		}
	}
	return exec.LookPath(c)
}

// reloadOn reloads the configuration file into g each time hup fires
// (SIGHUP) and, when watch is not 0, when a look every watch finds its
// contents differ from the last seen (loaded, at first), until the
// returned stop is called, which waits for a reload under way.
func reloadOn(hup <-chan os.Signal, watch time.Duration, loaded []byte, g *gateway.Gateway, file string, startTimeout, restartWait time.Duration, stderr io.Writer) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var tick <-chan time.Time
		if watch > 0 {
			t := time.NewTicker(watch)
			defer t.Stop()
			tick = t.C
		}
		for {
			watched := false
			select {
			case <-done:
				return
			case <-hup:
			case <-tick:
				watched = true
			}
			data, err := os.ReadFile(file)
			if watched && (err != nil || bytes.Equal(data, loaded)) {
				continue
			}
			loaded = data
			if err == nil {
				err = reloadFile(g, file, data, startTimeout, restartWait, stderr)
			}
			if err != nil {
				// An editor that writes in place may be caught halfway:
				// that file is refused, and the next look sees it whole.
				slog.Error("mcprt gateway: reload refused; the backends stay as they were", "err", err)
			}
		}
	})
	return sync.OnceFunc(func() {
		close(done)
		wg.Wait()
	})
}

// parseConfig reads data, the contents of the configuration file, and
// says on stderr what it ignores.
// Servers that would run this gateway again on file are left out; those
// that set no "restartWait" get restartWait (-restart-wait; 0: the
// gateway's default).
func parseConfig(file string, data []byte, restartWait time.Duration, stderr io.Writer) (*gateway.Config, error) {
	cfg, err := gateway.ParseConfig(data, configLookup(file))
	if cfg != nil {
		for _, w := range cfg.Warnings {
			fmt.Fprintf(stderr, "mcprt gateway: %s\n", w)
		}
	}
	if err == nil {
		err = cfg.LoadEnvFiles(filepath.Dir(file))
	}
	if err == nil && restartWait != 0 {
		for i := range cfg.Backends {
			if cfg.Backends[i].RestartWait == 0 {
				cfg.Backends[i].RestartWait = restartWait
			}
		}
	}
	if err == nil {
		n := len(cfg.Backends)
		dropSelf(cfg, file, func(w string) { fmt.Fprintf(stderr, "mcprt gateway: %s: %s\n", file, w) })
		if n > 0 && len(cfg.Backends) == 0 {
			err = errors.New("no server to serve: each one it lists is this gateway")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return cfg, nil
}

// configLookup is how variables in file are expanded: from the
// environment, and ${workspaceFolder}, which VS Code sets, as the folder
// of a .vscode/mcp.json's project when the environment has none.
func configLookup(file string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := os.LookupEnv(name)
		if !ok && name == "workspaceFolder" {
			if dir := filepath.Dir(file); filepath.Base(dir) == ".vscode" {
				if abs, err := filepath.Abs(filepath.Dir(dir)); err == nil {
					return abs, true
				}
			}
		}
		return v, ok
	}
}

// reloadFile puts data, the configuration file's contents, in place in g
// (Gateway.Reload), waiting at most startTimeout for the backends it
// starts. A configuration with an error changes nothing.
func reloadFile(g *gateway.Gateway, file string, data []byte, startTimeout, restartWait time.Duration, stderr io.Writer) error {
	cfg, err := parseConfig(file, data, restartWait, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	ch, err := g.Reload(ctx, cfg)
	if err != nil {
		return err
	}
	slog.Info("mcprt gateway: reloaded "+file, "added", ch.Added, "removed", ch.Removed, "restarted", ch.Restarted, "unchanged", len(ch.Unchanged))
	return nil
}

// defaultHandler sends each record to slog's default logger of the
// moment: runtime.Serve replaces it when it starts serving.
type defaultHandler struct {
	attrs []slog.Attr
}

func (h defaultHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return slog.Default().Handler().Enabled(ctx, l)
}

func (h defaultHandler) Handle(ctx context.Context, r slog.Record) error {
	return slog.Default().Handler().WithAttrs(h.attrs).Handle(ctx, r)
}

func (h defaultHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return defaultHandler{attrs: append(slices.Clone(h.attrs), as...)}
}

func (h defaultHandler) WithGroup(string) slog.Handler { return h }

// gatewayMemoryLimit is the gateway's default -memory-limit. At mcprt
// serve's 14MiB the collector runs more often than the gateway's heap
// needs: with 256 calls in flight through one backend, 20MiB gave 5% more
// throughput at 2.8-2.9 µs of the gateway's CPU per call against 3.0-3.1,
// for 25.1-25.4 MiB of peak RSS instead of 19.6-19.7 (two runs of each,
// alternating, once tool calls no longer took a handler actor; before,
// when each held a stack, it was 7.2-7.5 µs per call against 10.6-20).
const gatewayMemoryLimit = 20 << 20

// onCall is the gateway's Options.OnCall: the -log-calls logger, the
// -http-metrics counts, both or neither.
func onCall(log func(gateway.CallRecord), calls *callStats) func(gateway.CallRecord) {
	switch {
	case calls == nil:
		return log
	case log == nil:
		return calls.record
	}
	return func(r gateway.CallRecord) {
		log(r)
		calls.record(r)
	}
}

// callLogger is the gateway's Options.OnCall for -log-calls: one line per
// call on stderr, in LOG_FORMAT, whatever LOG_LEVEL says, and only there
// (the default logger also tells the client).
func callLogger(on bool, stderr io.Writer) func(gateway.CallRecord) {
	if !on {
		return nil
	}
	log := runtime.LoggerFromEnv(stderr, slog.LevelInfo) // a bad LOG_FORMAT is said at start
	return func(r gateway.CallRecord) {
		attrs := []any{"backend", r.Backend, "tool", r.Tool, "took", r.Took.Round(time.Microsecond), "outcome", r.Outcome()}
		if r.Err != nil {
			attrs = append(attrs, "err", r.Err)
		}
		log.Info("gateway: call", attrs...)
	}
}

// guardCommand is the gateway's Options.Guard: this very binary's guard
// verb, where it has one to offer.
func guardCommand(use bool) []string {
	if !use || goruntime.GOOS == "windows" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe, "guard", "--"}
}

// userSignIn opens the sealed token folder of the "auth": "user" backends
// (nil when there are none and no folder is given). A missing or wrong
// key is refused here, at start, not at a user's first call.
func userSignIn(cfg *gateway.Config, dir, keyFile string, hf *httpFlags) (*gateway.UserSignIn, error) {
	var users []string
	for _, b := range cfg.Backends {
		if b.Auth == gateway.AuthUser {
			users = append(users, b.Name)
		}
	}
	if len(users) == 0 && dir == "" {
		return nil, nil
	}
	if dir == "" {
		return nil, fmt.Errorf("backend %q: \"auth\": \"user\" keeps each caller's token: give -user-token-dir and -user-token-key (or MCPRT_USER_TOKEN_KEY)", users[0])
	}
	var text string
	switch {
	case keyFile != "":
		data, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, fmt.Errorf("-user-token-key: %w", err)
		}
		text = string(data)
	case os.Getenv("MCPRT_USER_TOKEN_KEY") != "":
		text = os.Getenv("MCPRT_USER_TOKEN_KEY")
	default:
		return nil, errors.New("-user-token-dir needs its key: -user-token-key FILE or MCPRT_USER_TOKEN_KEY")
	}
	key, err := oauth.ParseSealKey(text)
	if err != nil {
		return nil, fmt.Errorf("-user-token-key: %w", err)
	}
	store, err := oauth.NewSealedStore(dir, key)
	if err != nil {
		return nil, fmt.Errorf("-user-token-dir: %w", err)
	}
	if len(users) > 0 && (hf.addr == "" || hf.oauth.issuer == "" || hf.oauth.resource == "") {
		return nil, fmt.Errorf("backend %q: \"auth\": \"user\" signs in each caller over HTTP: give -http with -http-oauth-issuer and -http-oauth-resource (sign-in over stdio is not supported yet)", users[0])
	}
	return &gateway.UserSignIn{Tokens: store, Base: hf.oauth.resource}, nil
}
