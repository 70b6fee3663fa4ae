// Package runtime assembles an mcprt server: the supervision tree, the stdin
// reader, and the process lifecycle. Its name is the standard library's
// runtime's too, so a program imports it under another (mcprt, in the
// README's example).
//
// The tree, under one root supervisor (one_for_one), in start order:
//
//	root
//	 ├─ writer    stdio.NewWriter: the only writer of the output (transient, significant)
//	 ├─ runners   the goroutines the handler actors borrow for each call (permanent)
//	 ├─ handlers  supervisor of the handler actors, started on demand (permanent)
//	 └─ session   the single implicit session (transient, significant)
//
// Beside it, outside the actor system, runs the reader goroutine: the only
// reader of the input. It counts each line it hands on in a wire.Backlog,
// with the answers not yet written, and stops reading while that count is
// at MaxInFlight: the client feels back-pressure when it does not read.
// Work is bounded by the session, not by the reader: past MaxInFlight
// requests wait for a slot, past MaxQueued they are refused, and the
// client's notifications and answers are taken at once, so cancelling or
// answering an elicitation always gets through.
//
// The writer and the session run on goroutines of their own
// (supervisor.OwnGoroutine), and the reader, the handler actors and the
// goroutines that answer requests send to their supervisor.Inbox directly:
// every request passes through both, and an ordinary hollywood actor pays a
// goroutine start for each message that finds it idle.
//
// Both significant children end the tree when they exit without being
// restarted: the session exits normally after stdin EOF (or Drain) once
// every in-flight request has been answered; the writer exits with
// supervisor.Shutdown(stdio.ErrClientGone) when the client closed the
// stream. Shutdown goes in reverse start order, so the writer stops last and
// writes every answer queued before it.
//
// Serve runs this over the process's own stdin and stdout, in an oklog/run
// group with SIGINT/SIGTERM handling, with the log pipeline (logPipeline:
// slog to stderr, forwarded to the client at the level it asked for) and
// the stdout capture; Start runs it inside a caller's hollywood engine over
// any reader and writer, touching no file descriptor and no global state.
//
// # One tree per process
//
// Serve builds one tree on one engine for the whole process. With
// Options.Parts (a gateway's backends, a program's own pieces: see Part),
// Options.Tasks, or a transport other than stdio (Options.HTTP,
// Options.Transport), they are children of one root, in this start
// order, each significant (its end ends the process) and never restarted
// by the root:
//
//	root
//	 ├─ Parts…    in the order given (mcprt gateway: "gateway", its backends)
//	 ├─ tasks     taskrun.Manager.ChildSpec: store, runs, sweep
//	 └─ stdio     the tree above; or "http": streamhttp.Server.ChildSpec
//
// Stopping goes in reverse: the transport drains (requests in flight are
// answered), then the tasks are cancelled and waited for, then the parts
// close; no caller orders it by hand. Why: a tree per piece, each on an
// engine of its own, was three engines and a shutdown written out for
// mcprt gateway -http -tasks, and a piece that failed went unnoticed.
//
// # Failures, by design
//
// The flags named are mcprt serve's; an embedding server sets the same in
// Options.
//
//   - A tool whose handler panics gets a tool error: a result with isError
//     and a generic text, which the model can read (SDK-based clients treat
//     a JSON-RPC error as a failure of the host application). -panic-detail
//     adds the panic value to that text; the stack never leaves stderr. A
//     prompt, resource or completion handler that panics gets -32603, as
//     no result of theirs can carry an error. Either way the actor is
//     replaced, and one failed request spends no restart budget.
//   - A handler that needs a client capability the request did not declare
//     returns handlers.RequireCapability("elicitation") (Ask does so
//     itself): in 2026-07-28 the client gets -32021 with
//     data.requiredCapabilities.
//   - A tool that keeps panicking (more than -crash-intensity times within
//     -crash-period) is suspended for one period: its calls fail fast with
//     retryAfterMs. With -crash-loop escalate the handler supervisor fails
//     instead and is restarted (requests running in it are answered at
//     once); past the root's -intensity within -period the process exits 1.
//   - A handler past its deadline (-request-timeout, or Tool.Timeout) has
//     its context cancelled and the client gets an error at once. A request
//     the client cancels (notifications/cancelled) has its context
//     cancelled and gets no answer.
//   - Overload: past -max-in-flight requests wait in arrival order, past
//     -max-queued they are refused at once with -32000 (server busy). The
//     client's notifications and answers are never held back, so a
//     saturated server can always be told to drop work. The reader stops
//     only while the client does not read its answers.
//   - stdin EOF, SIGINT, SIGTERM: no new requests; in-flight ones are
//     answered (bounded by -drain-timeout); listen streams end; exit 0. A
//     client that closes stdout: exit 0 at once, quietly.
//
// Exit statuses: 0 after stdin EOF, SIGINT or SIGTERM, or a client that
// closed stdout (in-flight requests answered first); 1 when the root
// supervisor gave up (a restart intensity was exceeded; one line on stderr
// says which child and why) or the runtime could not start; 2 for a bad
// command line (ExitCode).
//
// # Stdout and logs
//
// stdout is the protocol: the writer holds a private duplicate of fd 1, and
// fd 1 becomes a pipe the runtime reads (stdio.Claim). Whatever is printed
// there (fmt.Println, a library, C code, a child process) is logged to
// stderr and sent to a legacy client as notifications/message when its
// level admits it (logging/setLevel, default -client-log-level info; before
// notifications/initialized it waits in a bounded -log-buffer). slog's
// default logger writes to stderr (LOG_LEVEL, LOG_FORMAT=json) and is
// forwarded the same way. In 2026-07-28 nothing is sent unasked. On
// Windows there is no capture: stray prints go to stderr.
//
// # Where it sits
//
// mcprt's packages are a stack, cmd → runtime → session → handlers, with
// stdio and supervisor beneath and handlers/jsonrpc a leaf every floor may
// use; test/layers writes it out whole and fails on any import against it.
// runtime and runtime/streamhttp are the floor under the command: they
// import session (the options a user chooses), handlers, stdio and
// supervisor, and run the session actor, runtime/internal/sessionactor,
// theirs alone; only the command and the test harnesses import them. runtime/resourceserver, on the same
// floor, puts an HTTP endpoint behind OAuth 2.1 access tokens; it imports
// only handlers/jsonrpc, and streamhttp does not import it (the command
// puts one around the other). runtime/gateway (a server whose offers are
// other servers') and runtime/fault (the campaigns of mcprt chaos) are on
// the same floor, above session/client, which both speak through.
package runtime
