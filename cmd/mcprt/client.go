package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session/client"
)

// The client verbs drive any MCP server over stdio through package client:
// each one starts the server, connects, does one thing, and closes it.
type clientVerb struct {
	name, summary string
	args          string // the positional arguments, for the usage line
	about         string // what it does and prints
	min, max      int    // positional argument count; max -1: unbounded
	output        bool   // takes -o FILE
	task          bool   // takes -task and -task-ttl
	// await: the verb waits on a task, and takes -task-reconnect.
	await bool
	// check, if set, finds what is wrong with the arguments before the
	// server is started ("" when nothing is).
	check func(args []string) string
	do    func(cv *clientRun, args []string) int
}

// clientRun is one invocation of a client verb.
type clientRun struct {
	verb   string
	ctx    context.Context
	c      *client.Client
	stdout io.Writer
	stderr *lockedWriter
	json   bool
	// tty: stdout is a terminal, which binary content would garble.
	tty bool
	// outFile is -o FILE: where the verb's output goes instead of stdout.
	outFile string
	// task is -task: the call is asked to run as a task, kept for
	// taskTTL (-task-ttl; 0: the server's choice).
	task    bool
	taskTTL time.Duration
	// reconnectFor is -task-reconnect: how long a task's poller keeps
	// trying to reach a server it lost (0: until the task's ttl).
	reconnectFor time.Duration
	// connect opens a new session with the same server and options, for a
	// task's poller whose server went away (restarted, killed); setup is
	// what each new session gets (the log subscription).
	connect func(ctx context.Context) (*client.Client, error)
	setup   func(c *client.Client)
}

var clientVerbs = []clientVerb{
	{
		name: "list", summary: "list another server's tools, resources, templates and prompts",
		args: "[tools|resources|templates|prompts]", min: 0, max: 1, check: checkList, do: clientList,
		about: `Lists what the server offers: every kind its capabilities declare, or
the one kind given. All pages are fetched. A tool is shown with its
arguments, from its input schema: greet(who: {name: string, age?:
integer}, loud?: boolean), ? marking the optional ones, an object's
fields one level deep (a deeper one is "object"). -json prints an object
with one array per kind, the whole schemas in it.`,
	},
	{
		name: "call", summary: "call a tool of another server",
		args: "TOOL [JSON-OBJECT | NAME=VALUE...]", min: 1, max: -1, check: checkCall, do: clientCall, task: true, await: true,
		about: `Calls TOOL with the arguments, default none, given as one JSON object
('{"text":"hi"}') or as NAME=VALUE pairs (text=hi), and prints its
content: text as is, other blocks as a one-line summary, or the
structured content when there is no other. A pair's VALUE is sent as a
string when the tool's input schema says the argument is one, and
otherwise as the JSON value it spells (n=3, on=true, tags='["a","b"]'),
or as a string when it spells none. Progress the server reports is
shown on stderr while the call runs. -json prints the whole result. A
result with isError prints its content and exits 1. A tool the server
does not list is named, with the closest name it does list.

-task asks for the call to run as a task, which the server then runs in
the background while mcprt polls it: the task's id, each status it
reports and its progress are shown on stderr as they come (a 2026-07-28
task has no progress notifications: mcprt serve puts it in the status
message), the questions
it asks are refused as a plain call's are, and its result is printed as a
plain call's. Each poll is bounded by -timeout, the whole task by nothing:
a call of an hour does not need -timeout 0. Ctrl-C cancels the task
(tasks/cancel) before mcprt exits. A task outlives its server's process
when the server keeps it (mcprt serve -tasks-dir): when the server goes
away while the task runs (connection refused, the server command
exited), mcprt connects again, backing off, starting the server command
again over stdio, and polls the task by its id, for as long as
-task-reconnect says (by default until the task's ttl ends, or 10m when
the server set none). mcprt task result ID comes back to a task later. A 2025-11-25 server is asked for a
task (params.task) only for a tool whose execution.taskSupport allows
one, -task-ttl asking it to keep the task that long; a 2026-07-28 server
is told the client supports the tasks extension and decides itself.
Either way a call the server answers at once is printed as it is, with a
note on stderr.`,
	},
	{
		name: "read", summary: "read a resource of another server",
		args: "URI", min: 1, max: 1, do: clientRead, output: true,
		about: `Reads the resource URI and writes its contents to stdout: text as is,
ending with a newline; binary (blob) contents decoded into a file or a
pipe, but on a terminal summarised in one line ([URI: image/png, 77
bytes of binary content]). -o FILE writes the contents to FILE instead,
exactly as they are (text, and binary decoded). -json prints the result.`,
	},
	{
		name: "get", summary: "get a prompt of another server",
		args: "PROMPT [NAME=VALUE... | JSON-OBJECT]", min: 1, max: -1, check: checkGet, do: clientGet,
		about: `Gets PROMPT with the arguments, given as NAME=VALUE pairs
(language=Go) or as one JSON object of strings ('{"language":"Go"}'),
and prints its messages, one "role: text" block each. -json prints the
result. A prompt the server does not list is named, with the closest
name it does list.`,
	},
	{
		name: "task", summary: "come back to a task of another server: get, result, cancel, list",
		args: "get ID | result ID | cancel ID | list", min: 1, max: 2, check: checkTask, do: clientTask, await: true,
		about: `Works on a task that mcprt call -task (or any client) started, by the
id that call printed, on a new session with the same server: for a
stdio server command, a new process of it, which knows the task when
the server keeps its tasks on disk (mcprt serve -tasks-dir).

  get ID     prints the task's status (and its message) on stdout
  result ID  waits for the task to end, showing its statuses on stderr,
             and prints its result as mcprt call does (1 when it failed);
             a server that goes away meanwhile is connected to again, as
             for call -task (-task-reconnect)
  cancel ID  asks the server to cancel the task
  list       prints the tasks the server lists, one a line: id, status,
             message (2025-11-25 only: 2026-07-28 has no tasks/list)

-json prints the task (get, cancel), the tasks (list) or the whole result
(result). In 2025-11-25 over HTTP a server may keep each task for the
session that made it, which a new session is not. Over stdio each use
starts the server again, and one that resumes the tasks a process left
(mcprt serve -tasks-dir, for a resumable tool) runs a working task again
each time, then stops: for a task still working, result, which waits for
its end, is the one to use.`,
	},
	{
		name: "ping", summary: "check that another server answers",
		args: "", min: 0, max: 0, do: clientPing,
		about: `Connects, pings (server/discover in 2026-07-28, which has no ping) and
prints the server, the protocol revision and the round trip.`,
	},
}

func init() {
	for _, v := range clientVerbs {
		register(verb{name: v.name, summary: v.summary, run: func(args []string, s streams) int {
			return runClientVerb(v, args, s.Stdout, s.Stderr)
		}})
	}
}

const clientFlagsAbout = `
Common to the client verbs: the server command comes after -- (or
-config FILE -server NAME takes it from an mcpServers file, checking only
that server's entry, or -url names a Streamable HTTP endpoint instead),
and flags may come before or after the arguments of the verb. The
session is opened in the era -era asks for: auto probes server/discover
(2026-07-28) and falls back to initialize; legacy and modern pin one.
-protocol pins one revision (and so its era). -timeout bounds the whole connect (starting the server,
the era probe, the handshake) and then each request. With -v the server's
stderr is shown as it comes, each line prefixed with [its name]; when the
server dies, its first and last stderr lines are in the error.

Exit status: 0 on success; 1 when the server could not be started or
connected, a request failed, or a tool reported an error; 2 for a bad
command line.

Flags:
`

// defaultClientTimeout bounds a client verb's connect and each request:
// long enough for a server that compiles itself (go run, npx) on a warm
// cache, short enough that a server that never answers is given up soon.
const defaultClientTimeout = 10 * time.Second

// headerFlag collects repeated -header "Name: value".
type headerFlag http.Header

func (h headerFlag) String() string { return fmt.Sprint(http.Header(h)) }
func (h *headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	if name = strings.TrimSpace(name); !ok || name == "" || strings.ContainsAny(name, " \t") {
		return fmt.Errorf("want \"Name: value\", got %q", s)
	}
	if *h == nil {
		*h = headerFlag{}
	}
	http.Header(*h).Add(name, strings.TrimSpace(value))
	return nil
}

// envFlag collects repeated -env KEY=value.
type envFlag []string

func (e *envFlag) String() string { return strings.Join(*e, " ") }
func (e *envFlag) Set(s string) error {
	if !strings.Contains(s, "=") {
		return fmt.Errorf("want KEY=value, got %q", s)
	}
	*e = append(*e, s)
	return nil
}

// lockedWriter serialises writes: the client's log, the server's stderr
// (-v), the progress and log notifications (from the client's goroutines)
// and the verb itself all write to stderr. On a terminal it also keeps a
// status line, redrawn in place: another write first erases it, then
// draws it again below what was written.
type lockedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	tty    bool
	status string // the status line as drawn; "" when none is shown
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.status == "" {
		return l.w.Write(p)
	}
	io.WriteString(l.w, eraseLine)
	n, err := l.w.Write(p)
	io.WriteString(l.w, l.status)
	return n, err
}

// setStatus shows msg as the status line, in place of the last one; ""
// erases it. Only on a terminal: elsewhere it does nothing.
func (l *lockedWriter) setStatus(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.tty {
		return
	}
	if msg == "" {
		if l.status != "" {
			io.WriteString(l.w, eraseLine)
		}
		l.status = ""
		return
	}
	l.status = statusLine(msg)
	io.WriteString(l.w, l.status)
}

// eraseLine returns to the start of the line and erases it.
const eraseLine = "\r\x1b[K"

// statusLine is msg drawn over the current line of a terminal: carriage
// return, msg cut to fit 80 columns, erase to the end of the line. A line
// longer than the terminal would wrap, and the next carriage return could
// no longer overwrite it.
func statusLine(msg string) string {
	line := []rune(msg)
	if len(line) > 79 {
		line = append(line[:78], '…')
	}
	return "\r" + string(line) + "\x1b[K"
}

func runClientVerb(v clientVerb, args []string, stdout, stderr io.Writer) int {
	lw := &lockedWriter{w: stderr, tty: isTerminal(stderr)}
	stderr = lw
	fs := flags(v.name, fmt.Sprintf("Usage: mcprt %[1]s [flags] %[2]s -- CMD [ARGS...]\n       mcprt %[1]s [flags] -config FILE [-server NAME] %[2]s\n       mcprt %[1]s [flags] -url URL %[2]s\n\n%[3]s\n%[4]s", v.name, v.args, v.about, clientFlagsAbout), streams{Stdout: stdout, Stderr: stderr})
	pf := addProtocolFlags(fs, client.EraAuto, "the newest both sides speak")
	timeout := fs.Duration("timeout", defaultClientTimeout, "bound on the whole connect (server start, era probe, handshake) and then on each request (0: none)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	verbose := fs.Bool("v", false, "show the server's stderr lines as they come, prefixed with [its name], and the client's diagnostics, on stderr")
	logLevel := fs.String("log-level", "", "ask the server for log messages at this `level` (debug .. emergency) and show them on stderr")
	dir := fs.String("C", "", "run the server in `dir`")
	var env envFlag
	fs.Var(&env, "env", "add `KEY=value` to the server's environment (repeatable)")
	endpoint := fs.String("url", "", "talk to the server at this Streamable HTTP endpoint (http://HOST:PORT/mcp) instead of running CMD")
	var headers headerFlag
	fs.Var(&headers, "header", "with -url, send `Name: value` with every HTTP request, e.g. \"Authorization: Bearer TOKEN\" (repeatable)")
	cf := addConfigFlags(fs)
	var outFile *string
	if v.output {
		outFile = fs.String("o", "", "write the contents to `file`, exactly as they are, instead of stdout")
	}
	var asTask *bool
	var taskTTL *time.Duration
	if v.task {
		asTask = fs.Bool("task", false, "run the call as a task: show its status on stderr, print its result; Ctrl-C cancels it")
		taskTTL = fs.Duration("task-ttl", 0, "with -task, ask a 2025-11-25 server to keep the task this `long` (0: the server's choice)")
	}
	var reconnectFor *time.Duration
	if v.await {
		reconnectFor = fs.Duration("task-reconnect", 0, "while a task runs, keep trying this `long` to reach a server that went away (restarted, killed), starting a server command again (0: until the task's ttl ends, 10m when it has none; negative: give up at once)")
	}

	before, command := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		before, command = args[:i], args[i+1:]
	}
	pos, err := parseInterleaved(fs, before)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runtime.ExitOK
		}
		return runtime.ExitUsage
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "mcprt %s: %s\n(see mcprt %s --help)\n", v.name, fmt.Sprintf(format, a...), v.name)
		return runtime.ExitUsage
	}
	if command, env, *dir, err = cf.apply(command, env, *dir, *endpoint); err != nil {
		return usageErr("%v", err)
	}
	switch {
	case *endpoint == "" && len(command) == 0:
		return usageErr("no server command: give it after --, or give -url URL")
	case *endpoint != "" && len(command) > 0:
		return usageErr("-url and a server command after -- are two servers: give one")
	case *endpoint == "" && len(headers) > 0:
		return usageErr("-header is for -url")
	case *endpoint != "" && (len(env) > 0 || *dir != ""):
		return usageErr("-env and -C are for a server command, not -url")
	}
	if len(pos) < v.min || v.max >= 0 && len(pos) > v.max {
		return usageErr("want %s, got %q", cmp.Or(v.args, "no arguments"), pos)
	}
	if v.check != nil {
		if problem := v.check(pos); problem != "" {
			return usageErr("%s", problem)
		}
	}
	era, pin, err := pf.settle()
	if err != nil {
		return usageErr("%v", err)
	}
	cv := &clientRun{verb: v.name, stdout: stdout, stderr: lw, json: *asJSON, tty: isTerminal(stdout)}
	if outFile != nil {
		cv.outFile = *outFile
	}
	if asTask != nil {
		cv.task, cv.taskTTL = *asTask, *taskTTL
		if !cv.task && cv.taskTTL != 0 {
			return usageErr("-task-ttl is for -task")
		}
	}
	if reconnectFor != nil {
		cv.reconnectFor = *reconnectFor
	}
	if cv.outFile != "" && cv.json {
		return usageErr("-o writes the contents and -json prints the result: give one")
	}
	o := client.Options{Era: era, Version: pin, Timeout: *timeout, LogLevel: *logLevel,
		ClientInfo: mcp.Implementation{Name: "mcprt", Version: version}}
	if *logLevel != "" && !slices.Contains(mcp.LogLevels, *logLevel) {
		return usageErr("-log-level %q: want one of %s", *logLevel, strings.Join(mcp.LogLevels, ", "))
	}
	// Without -v the server's stderr is only kept for the error that
	// explains a failure; with it, every line is shown as written: the
	// client's throttle and log records are for embedders, and someone
	// who asked for -v wants to read the lines.
	o.OnStderr = func(string) {}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	if *verbose && len(command) > 0 {
		prefix := "[" + filepath.Base(command[0]) + "] "
		o.OnStderr = func(line string) { fmt.Fprintf(stderr, "%s%s\n", prefix, line) }
	}
	o.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	o.Header = http.Header(headers)
	if *endpoint != "" && http.Header(headers).Get("Authorization") == "" {
		// The token mcprt login kept for this server, if any.
		o.HTTPClient = storedAuthorizer(*endpoint, o.Logger)
	}
	if *timeout <= 0 {
		o.Timeout = -1
	}

	// Ctrl-C cancels the request in flight (the server is told), then the
	// server is closed as usual.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	connectCtx := ctx
	if *timeout > 0 {
		var cancel context.CancelFunc
		connectCtx, cancel = context.WithTimeoutCause(ctx, *timeout, connectTimeout(*timeout))
		defer cancel()
	}
	cv.connect = func(ctx context.Context) (*client.Client, error) {
		if *endpoint != "" {
			return client.ConnectURL(ctx, *endpoint, &o)
		}
		return client.Connect(ctx, client.Command{Path: command[0], Args: command[1:], Env: env, Dir: *dir}, &o)
	}
	c, err := cv.connect(connectCtx)
	if err != nil {
		printConnectError(stderr, v.name, err)
		if *endpoint != "" && strings.Contains(err.Error(), "HTTP 401") {
			fmt.Fprintf(stderr, "(an OAuth-protected server? mcprt login -url %s signs in)\n", *endpoint)
		}
		return runtime.ExitFailure
	}
	cv.setup = func(c *client.Client) {
		if *logLevel == "" {
			return
		}
		c.Subscribe("notifications/message", func(n client.Notification) {
			var m struct {
				Level  string          `json:"level"`
				Logger string          `json:"logger"`
				Data   json.RawMessage `json:"data"`
			}
			_ = json.Unmarshal(n.Params, &m)
			if m.Logger != "" {
				m.Logger += ": "
			}
			fmt.Fprintf(stderr, "server log [%s] %s%s\n", m.Level, m.Logger, dataText(m.Data))
		})
	}
	cv.setup(c)
	cv.ctx, cv.c = ctx, c
	code := v.do(cv, pos)
	// cv.c, not c: a task's poller may have connected again.
	if err := cv.c.Close(); err != nil && *verbose {
		fmt.Fprintf(stderr, "mcprt %s: closing: %v\n", v.name, err)
	}
	return code
}

// connectTimeout is why a connect that -timeout ended failed. It is a
// context.DeadlineExceeded, but says which bound it was.
type connectTimeout time.Duration

func (d connectTimeout) Error() string {
	return fmt.Sprintf("the server did not complete the handshake within -timeout %v", time.Duration(d))
}

func (connectTimeout) Is(target error) bool { return target == context.DeadlineExceeded }

// printConnectError reports a failed connect. When the server exited
// after writing several stderr lines, they (the first and the last) are
// shown one per line below the message rather than strung together on it:
// they are what says why.
func printConnectError(w io.Writer, verb string, err error) {
	var ee *client.ExitError
	if !errors.As(err, &ee) || len(ee.Stderr) < 2 {
		fmt.Fprintf(w, "mcprt %s: %v\n", verb, err)
		return
	}
	bare := *ee
	bare.Stderr = nil
	fmt.Fprintf(w, "mcprt %s: %s\nserver stderr:\n", verb, strings.Replace(err.Error(), ee.Error(), bare.Error(), 1))
	for _, l := range ee.Stderr {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

// parseInterleaved lets flags and positional arguments mix ("call -json echo
// {} -timeout 5s"), which the flag package alone stops at.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// dataText shows a JSON string as its text and any other value as JSON.
func dataText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// fail reports a failed request: exit status 1.
func (cv *clientRun) fail(err error) int {
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(cv.stderr, "mcprt %s: interrupted\n", cv.verb)
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(cv.stderr, "mcprt %s: %v (raise -timeout, or 0 for no bound)\n", cv.verb, err)
	default:
		fmt.Fprintf(cv.stderr, "mcprt %s: %v\n", cv.verb, err)
	}
	return runtime.ExitFailure
}

func (cv *clientRun) printJSON(v any) int {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return cv.fail(err)
	}
	fmt.Fprintf(cv.stdout, "%s\n", b)
	return runtime.ExitOK
}

var listKinds = []string{"tools", "resources", "templates", "prompts"}

// listKind accepts the singular too.
func listKind(s string) string { return strings.TrimSuffix(s, "s") + "s" }

func checkList(args []string) string {
	if len(args) == 1 && !slices.Contains(listKinds, listKind(args[0])) {
		return fmt.Sprintf("unknown kind %q: want tools, resources, templates or prompts", args[0])
	}
	return ""
}

func clientList(cv *clientRun, args []string) int {
	var kinds []string
	if len(args) == 1 {
		kinds = []string{listKind(args[0])}
	} else {
		caps := cv.c.Capabilities()
		kinds = slices.DeleteFunc(slices.Clone(listKinds), func(k string) bool {
			capName := map[string]string{"tools": "tools", "resources": "resources", "templates": "resources", "prompts": "prompts"}[k]
			_, ok := caps[capName]
			return !ok
		})
	}
	out := map[string]any{}
	var text strings.Builder
	for _, k := range kinds {
		var rows [][2]string
		switch k {
		case "tools":
			ts, err := cv.c.ListTools(cv.ctx)
			if err != nil {
				return cv.fail(err)
			}
			out[k] = ts
			for _, t := range ts {
				rows = append(rows, [2]string{toolSignature(t.Name, t.InputSchema), cmp.Or(t.Description, t.Title)})
			}
		case "resources":
			rs, err := cv.c.ListResources(cv.ctx)
			if err != nil {
				return cv.fail(err)
			}
			out[k] = rs
			for _, r := range rs {
				rows = append(rows, [2]string{r.URI, describe(r.Name, r.Description, r.MimeType)})
			}
		case "templates":
			ts, err := cv.c.ListResourceTemplates(cv.ctx)
			if err != nil {
				return cv.fail(err)
			}
			out[k] = ts
			for _, t := range ts {
				rows = append(rows, [2]string{t.URITemplate, describe(t.Name, t.Description, t.MimeType)})
			}
		case "prompts":
			ps, err := cv.c.ListPrompts(cv.ctx)
			if err != nil {
				return cv.fail(err)
			}
			out[k] = ps
			for _, p := range ps {
				var as []string
				for _, a := range p.Arguments {
					if !a.Required {
						a.Name += "?"
					}
					as = append(as, a.Name)
				}
				rows = append(rows, [2]string{p.Name + "(" + strings.Join(as, ", ") + ")", cmp.Or(p.Description, p.Title)})
			}
		}
		fmt.Fprintf(&text, "%s (%d):\n", k, len(rows))
		// Descriptions line up after the names, but a long signature does
		// not push every description off the screen: it only gets its own
		// two spaces.
		width := 0
		for _, r := range rows {
			if n := utf8.RuneCountInString(r[0]); n <= maxNameColumn {
				width = max(width, n)
			}
		}
		for _, r := range rows {
			pad := max(width-utf8.RuneCountInString(r[0]), 0)
			fmt.Fprintf(&text, "  %s%s  %s\n", r[0], strings.Repeat(" ", pad), firstLine(r[1]))
		}
	}
	if cv.json {
		return cv.printJSON(out)
	}
	if len(kinds) == 0 {
		fmt.Fprintln(cv.stdout, "the server declares no tools, resources or prompts")
		return runtime.ExitOK
	}
	fmt.Fprint(cv.stdout, text.String())
	return runtime.ExitOK
}

// maxNameColumn is the widest name (or signature) that list lines the
// descriptions up after.
const maxNameColumn = 40

// toolSignature shows a tool's arguments from its input schema, in the
// schema's order: add(a: number, b: number, precision?: integer), with ?
// marking the optional ones. A schema without properties gives name().
func toolSignature(name string, schema json.RawMessage) string {
	var s struct {
		Properties orderedProps `json:"properties"`
		Required   []string     `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	args := make([]string, 0, len(s.Properties))
	for _, p := range s.Properties {
		n := p.name
		if !slices.Contains(s.Required, n) {
			n += "?"
		}
		args = append(args, n+": "+schemaType(p.schema))
	}
	return name + "(" + strings.Join(args, ", ") + ")"
}

// orderedProps are a schema's properties in the order the server wrote
// them, which is the order it means them to be read in.
type orderedProps []struct {
	name   string
	schema json.RawMessage
}

func (o *orderedProps) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("properties is not an object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		*o = append(*o, struct {
			name   string
			schema json.RawMessage
		}{t.(string), raw})
	}
	return nil
}

// schemaType names the type of a property schema: its type (several
// joined with |), T[] for an array of T, the values of an enum, or any.
// An object's properties are shown, one level deep ({name: string, age?:
// integer}; deeper objects are "object": -json has the whole schema).
func schemaType(raw json.RawMessage) string { return schemaTypeAt(raw, 0) }

// maxObjectDepth is how many levels of nested objects list shows the
// fields of.
const maxObjectDepth = 1

func schemaTypeAt(raw json.RawMessage, depth int) string {
	var s struct {
		Type       json.RawMessage   `json:"type"`
		Items      json.RawMessage   `json:"items"`
		Enum       []json.RawMessage `json:"enum"`
		Const      json.RawMessage   `json:"const"`
		Properties orderedProps      `json:"properties"`
		Required   []string          `json:"required"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return "any"
	}
	var types []string
	var one string
	if json.Unmarshal(s.Type, &one) == nil {
		types = []string{one}
	} else {
		_ = json.Unmarshal(s.Type, &types)
	}
	if len(types) == 0 {
		switch {
		case len(s.Enum) > 0:
			vals := make([]string, len(s.Enum))
			for i, v := range s.Enum {
				vals[i] = string(v)
			}
			return strings.Join(vals, "|")
		case s.Const != nil:
			return string(s.Const)
		}
		return "any"
	}
	for i, t := range types {
		if t == "object" && len(s.Properties) > 0 && depth < maxObjectDepth {
			fields := make([]string, 0, len(s.Properties))
			for _, p := range s.Properties {
				n := p.name
				if !slices.Contains(s.Required, n) {
					n += "?"
				}
				fields = append(fields, n+": "+schemaTypeAt(p.schema, depth+1))
			}
			types[i] = "{" + strings.Join(fields, ", ") + "}"
		}
		if t == "array" && len(s.Items) > 0 {
			it := schemaTypeAt(s.Items, depth)
			if strings.Contains(it, "|") {
				it = "(" + it + ")"
			}
			types[i] = it + "[]"
		}
	}
	return strings.Join(types, "|")
}

func describe(name, description, mime string) string {
	s := name
	if description != "" {
		s += " — " + description
	}
	if mime != "" {
		s += " [" + mime + "]"
	}
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func checkCall(args []string) string {
	_, problem := parseVerbArgs(args[1:])
	return problem
}

func clientCall(cv *clientRun, args []string) int {
	a, _ := parseVerbArgs(args[1:])
	params := map[string]any{"name": args[0]}
	if len(a.pairs) > 0 {
		// The schema says which pairs are strings; without it (a server
		// that lists no such tool, or fails to list) they are read as JSON
		// where they can be.
		var schema json.RawMessage
		if tools, err := cv.c.ListTools(cv.ctx); err == nil {
			if i := slices.IndexFunc(tools, func(t mcp.Tool) bool { return t.Name == args[0] }); i >= 0 {
				schema = tools[i].InputSchema
			}
		}
		params["arguments"] = a.toolArguments(schema)
	} else if a.object != nil {
		params["arguments"] = a.object
	}
	progress := client.WithProgress(func(p client.Progress) {
		if cv.stderr.tty {
			cv.stderr.setStatus("mcprt call: " + progressText(p))
			return
		}
		fmt.Fprintln(cv.stderr, progressText(p))
	})
	var raw json.RawMessage
	var err error
	if cv.task {
		var started bool
		raw, started, err = cv.callTask(args[0], params["arguments"], progress)
		if err != nil && started {
			// The server made a task of the call: the tool exists,
			// whatever the error.
			cv.stderr.setStatus("")
			return cv.fail(err)
		}
	} else {
		err = cv.c.Call(cv.ctx, "tools/call", params, &raw, progress)
	}
	cv.stderr.setStatus("")
	if err != nil {
		return cv.failUnknown(err, "tool", args[0])
	}
	return cv.printCallResult("tool "+args[0], raw)
}

// printCallResult prints a tools/call result: its content, or with -json
// the whole result; 1 when the tool (what: "tool NAME", "task ID")
// reported an error.
func (cv *clientRun) printCallResult(what string, raw json.RawMessage) int {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return cv.fail(fmt.Errorf("decoding the result: %w", err))
	}
	code := runtime.ExitOK
	if res.IsError {
		fmt.Fprintf(cv.stderr, "mcprt %s: %s reported an error\n", cv.verb, what)
		code = runtime.ExitFailure
	}
	if cv.json {
		if c := cv.printJSON(raw); c != runtime.ExitOK {
			return c
		}
		return code
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		fmt.Fprintf(cv.stdout, "%s\n", res.StructuredContent)
		return code
	}
	for _, c := range res.Content {
		printContent(cv.stdout, c)
	}
	return code
}

// failUnknown reports a failed call or get. When the server answered
// with an error and does not list the tool (or prompt) asked for, that is
// what is said, once, with the name it lists that comes closest; any
// other failure is reported as it is.
func (cv *clientRun) failUnknown(err error, kind, name string) int {
	var re *client.RPCError
	if !errors.As(err, &re) {
		return cv.fail(err)
	}
	if els := elicitationURLs(re); len(els) > 0 {
		// -32042: the server (an "auth": "user" gateway backend) wants
		// the user to visit a URL, a sign-in, before the call can go on;
		// its message says what else to do (a gateway's: confirm the
		// sign-in with the code the page shows).
		for _, e := range els {
			if e.message != "" {
				fmt.Fprintf(cv.stderr, "mcprt %s: the server says: %s\n", cv.verb, e.message)
			}
			fmt.Fprintf(cv.stderr, "mcprt %s: open this URL, do as the server and the page say, then run the command again: %s\n", cv.verb, e.url)
		}
		return runtime.ExitFailure
	}
	var names []string
	var listErr error
	switch kind {
	case "tool":
		var ts []mcp.Tool
		ts, listErr = cv.c.ListTools(cv.ctx)
		for _, t := range ts {
			names = append(names, t.Name)
		}
	case "prompt":
		var ps []mcp.Prompt
		ps, listErr = cv.c.ListPrompts(cv.ctx)
		for _, p := range ps {
			names = append(names, p.Name)
		}
	}
	if listErr != nil || slices.Contains(names, name) {
		return cv.fail(err)
	}
	msg := fmt.Sprintf("mcprt %s: the server has no %s %q", cv.verb, kind, name)
	if c := closest(name, names); c != "" {
		msg += fmt.Sprintf("; did you mean %q?", c)
	}
	fmt.Fprintf(cv.stderr, "%s (mcprt list %ss shows the %ss it has)\n", msg, kind, kind)
	return runtime.ExitFailure
}

// progressText is one notifications/progress: "progress 3/10 message".
func progressText(p client.Progress) string {
	s := fmt.Sprintf("progress %g", p.Progress)
	if p.Total > 0 {
		s += fmt.Sprintf("/%g", p.Total)
	}
	if p.Message != "" {
		s += " " + p.Message
	}
	return s
}

// printContent writes text as is and summarises what is not text.
func printContent(w io.Writer, c mcp.Content) {
	switch c.Type {
	case "text":
		fmt.Fprint(w, c.Text)
		if !strings.HasSuffix(c.Text, "\n") {
			fmt.Fprintln(w)
		}
	case "image", "audio":
		fmt.Fprintf(w, "[%s %s, %d bytes]\n", c.Type, c.MimeType, len(c.Data))
	case "resource_link":
		if c.Link != nil {
			fmt.Fprintf(w, "[resource link %s %s]\n", c.Link.URI, c.Link.Name)
		}
	case "resource":
		var rc mcp.ResourceContents
		if c.Resource != nil {
			rc = *c.Resource
		}
		if rc.Text != "" {
			fmt.Fprint(w, rc.Text)
			if !strings.HasSuffix(rc.Text, "\n") {
				fmt.Fprintln(w)
			}
			return
		}
		fmt.Fprintf(w, "[resource %s %s]\n", rc.URI, rc.MimeType)
	default:
		fmt.Fprintf(w, "[%s content]\n", c.Type)
	}
}

func clientRead(cv *clientRun, args []string) int {
	var raw json.RawMessage
	if err := cv.c.Call(cv.ctx, "resources/read", map[string]string{"uri": args[0]}, &raw); err != nil {
		return cv.fail(err)
	}
	if cv.json {
		return cv.printJSON(raw)
	}
	var res client.ReadResourceResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return cv.fail(fmt.Errorf("decoding the result: %w", err))
	}
	var file bytes.Buffer
	for _, c := range res.Contents {
		if c.Blob == nil {
			if cv.outFile != "" {
				file.WriteString(c.Text)
				continue
			}
			fmt.Fprint(cv.stdout, c.Text)
			if c.Text != "" && !strings.HasSuffix(c.Text, "\n") {
				fmt.Fprintln(cv.stdout)
			}
			continue
		}
		b := c.Blob
		switch {
		case cv.outFile != "":
			file.Write(b)
		case cv.tty:
			// Raw bytes would garble the terminal; a file or a pipe gets them.
			fmt.Fprintf(cv.stdout, "[%s: %s, %d bytes of binary content; -o FILE writes them]\n", c.URI, cmp.Or(c.MimeType, "no MIME type"), len(b))
		default:
			cv.stdout.Write(b)
		}
	}
	if cv.outFile != "" {
		if err := os.WriteFile(cv.outFile, file.Bytes(), 0o666); err != nil {
			return cv.fail(err)
		}
		fmt.Fprintf(cv.stderr, "mcprt read: wrote %d bytes to %s\n", file.Len(), cv.outFile)
	}
	return runtime.ExitOK
}

func checkGet(args []string) string {
	a, problem := parseVerbArgs(args[1:])
	if problem == "" {
		_, problem = a.promptArguments()
	}
	return problem
}

func clientGet(cv *clientRun, args []string) int {
	a, _ := parseVerbArgs(args[1:])
	pargs, _ := a.promptArguments()
	var raw json.RawMessage
	if err := cv.c.Call(cv.ctx, "prompts/get", map[string]any{"name": args[0], "arguments": pargs}, &raw); err != nil {
		return cv.failUnknown(err, "prompt", args[0])
	}
	if cv.json {
		return cv.printJSON(raw)
	}
	var res mcp.GetPromptResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return cv.fail(fmt.Errorf("decoding the result: %w", err))
	}
	for _, m := range res.Messages {
		fmt.Fprintf(cv.stdout, "%s: ", m.Role)
		printContent(cv.stdout, m.Content)
	}
	return runtime.ExitOK
}

func clientPing(cv *clientRun, _ []string) int {
	start := time.Now()
	if err := cv.c.Ping(cv.ctx); err != nil {
		return cv.fail(err)
	}
	rtt := time.Since(start)
	info := cv.c.ServerInfo()
	if cv.json {
		return cv.printJSON(map[string]any{
			"ok": true, "server": info, "protocolVersion": cv.c.ProtocolVersion(),
			"era": cv.c.Era().String(), "roundTripMs": float64(rtt.Microseconds()) / 1000,
		})
	}
	fmt.Fprintf(cv.stdout, "ok: %s %s, protocol %s (%s), round trip %v\n",
		info.Name, info.Version, cv.c.ProtocolVersion(), cv.c.Era(), rtt.Round(time.Microsecond))
	return runtime.ExitOK
}

// elicitationURLs are the URLs of a URL elicitation required error
// (-32042, 2025-11-25): data.elicitations[].url, http(s) ones only.
func elicitationURLs(re *client.RPCError) []urlElicitation {
	if re.Err.Code != -32042 {
		return nil
	}
	raw, err := json.Marshal(re.Err.Data)
	if err != nil {
		return nil
	}
	var data struct {
		Elicitations []struct {
			Mode    string `json:"mode"`
			URL     string `json:"url"`
			Message string `json:"message"`
		} `json:"elicitations"`
	}
	if json.Unmarshal(raw, &data) != nil {
		return nil
	}
	// Shown as text to a terminal: no control characters.
	printable := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				return -1
			}
			return r
		}, s)
	}
	var els []urlElicitation
	for _, e := range data.Elicitations {
		if e.Mode == "url" && (strings.HasPrefix(e.URL, "https://") || strings.HasPrefix(e.URL, "http://")) {
			els = append(els, urlElicitation{url: printable(e.URL), message: printable(e.Message)})
		}
	}
	return els
}

// urlElicitation is one URL a -32042 error asks the user to visit, and
// the server's message about it.
type urlElicitation struct{ url, message string }
