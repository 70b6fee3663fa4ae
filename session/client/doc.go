// Package client is the client end of an MCP session: over stdio it starts
// a server process (Connect), over Streamable HTTP it talks to a server's
// endpoint (ConnectURL); it connects in either protocol era and sends
// requests, either from plain Go code (the Client methods) or from actors
// (Producer and ProducerURL, under a supervisor). Everything below but the
// process handling holds for both transports; ConnectURL says what HTTP
// adds (sessions, the GET stream, headers, cancellation by closing a
// stream).
//
// # Connecting
//
// Connect starts the Command with its own pipes and process group and
// settles the era. With EraAuto it follows the 2026-07-28 stdio rules: it
// probes server/discover with the per-request _meta; a DiscoverResult means
// the stateless era, in which every request carries the protocol version,
// the client capabilities and clientInfo in _meta; any error other than
// UnsupportedProtocolVersion, or no answer within ProbeTimeout, means a
// legacy server, which gets initialize and then notifications/initialized.
// Options.Era and Options.Version pin an era or one revision instead.
//
// # Requests
//
// Every request has a deadline (its context, and Options.Timeout or
// WithTimeout). A request that is abandoned is taken back if it was not
// written yet, and otherwise cancelled with notifications/cancelled; its
// late answer is ignored. WithProgress sends a progressToken and reports
// notifications/progress. Server requests of the legacy era (roots/list,
// sampling/createMessage, elicitation/create, ping) are answered by the
// Options handlers on their own goroutines; a handler that is nil is not
// declared as a capability and its requests get -32601. In 2026-07-28 the
// same handlers answer the inputRequests of an input_required result, and
// the request is retried with inputResponses and the requestState echoed
// verbatim. Lists (tools, resources, templates, prompts) are fetched whole,
// cached, and refetched when the server sends list_changed.
//
// # Tasks
//
// CallToolTask asks for a task where the session allows one: in
// 2025-11-25 with params.task, for a tool whose execution.taskSupport
// allows it on a server that declares tasks.requests.tools.call; in
// 2026-07-28 by declaring the io.modelcontextprotocol/tasks extension on
// the request, the server deciding. It returns the Task, or the plain
// result when the server made none. AwaitTask polls it (tasks/get, at the
// server's pollInterval, woken early by a status notification) and
// returns its result; the questions a task asks are answered by the same
// Options handlers as a request's (2025-11-25: its related-task requests,
// sent while tasks/result waits, and answered with the related-task
// _meta; 2026-07-28: inputRequests, answered once each with
// tasks/update). GetTask, TaskResult, CancelTask, UpdateTask and
// ListTasks are the methods one by one; over HTTP in 2026-07-28, Mcp-Name
// carries the task id. A 2025-11-25 task's progress reaches the
// WithProgress func of its CallToolTask for the task's whole life.
//
// # Failure contract
//
// The server's stdout is the protocol; a line on it that is not JSON-RPC is
// logged and skipped, and bytes that are not UTF-8 inside its strings
// become U+FFFD before anything of the line is handed on (results,
// notifications, the server's requests), as encoding/json reads them. Its
// stderr is never an error signal: the first and
// last lines are kept for error messages, and every line is logged through
// a throttle (or handed to Options.OnStderr unthrottled). When the server
// exits or closes its stdout, the session ends: every pending request fails
// at once with an error wrapping an *ExitError (status or signal, and the
// first and last stderr lines), Done is closed, and later requests
// fail the same way. Close closes stdin, waits CloseGrace, sends SIGTERM to
// the process group, waits TermGrace, sends SIGKILL, reaps the process,
// kills what is left in its process group (a wrapper's child that ignores
// stdin EOF) and stops every goroutine the client started; it must be
// called even after the server went away. A server that never completed
// the handshake gets SIGTERM right after its stdin closes, without
// CloseGrace: a failed connect ends as soon as it failed.
//
// # Under a supervisor
//
// Producer wraps a Client in a hollywood actor: Requests in, Responses
// out, notifications forwarded to Subscribers. A crashed server or a failed
// connect ends the actor with the error as an abnormal exit reason, so a
// Transient child is restarted with a fresh process, within the
// supervisor's restart intensity.
package client
