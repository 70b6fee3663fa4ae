// Package gateway puts one MCP server in front of many: a handlers.Server
// whose tools, prompts, resources and resource templates are those of
// supervised backend servers (stdio processes, or remote servers over
// Streamable HTTP), and whose handlers forward
// each request to the backend that offers it. Serve Server() with package
// runtime, or runtime/streamhttp (mcprt gateway does either, over stdio or
// with -http), and the gateway has everything a runtime server has: flow
// control, deadlines, drain, both protocol eras.
//
// # Configuration
//
// The configuration is the "mcpServers" file that MCP clients write (see
// ParseConfig), with a few keys of the gateway's own per backend: prefix,
// timeout, restart policy, pings, lazy start, tools to hide, and who may
// use what ("access", "toolAccess": Backend.Access, Backend.ToolAccess).
//
// # Per caller
//
// Served over HTTP behind runtime/resourceserver (mcprt gateway -http
// -http-oauth-issuer), each request has a handlers.Caller, and the gateway
// shows it only what its access token allows: a backend's Access (scopes,
// claim values) is put on each of its tools, prompts, resources and
// templates, joined for a tool with every ToolAccess entry its name
// matches. A caller lacking a claim does not see the item, and a call of
// it is "Unknown tool"; one lacking only a scope gets 403
// insufficient_scope naming the scopes to ask for. Its token never
// reaches a backend: backends see the gateway, with their own configured
// headers, unless a remote backend's Auth is AuthExchange: then each
// caller's requests reach it as that caller, with a token the gateway
// got by exchanging the caller's (RFC 8693) at the backend's OAuth
// issuer (the caller's token goes there, and nowhere else), kept per
// caller and backend, on a connection of the caller's own (a legacy
// session is bound to one principal). Those connections belong to the
// backend's incarnation, which closes them when it ends; at most
// defaultMaxCallers, the least recently used idle one closed for a new
// caller, and any idle for defaultCallerIdle closed. Each costs ~7 KB
// of heap, and a first call about 0.7 ms more than a known caller's
// (BenchmarkExchangeCaller). With AuthUser the caller's token for the
// backend is instead one the caller got by signing in, in a browser, to
// the backend's own authorization server (Options.UserSignIn,
// Gateway.SignInHandler): the first call before that is answered with
// error -32042 and a link; the sign-in runs an oauth.Authorizer's code
// grant whose user agent waits for the gateway's callback. The link is
// bound to the caller only by being handed to them, and whoever opens it
// signs in with their own account, so the callback does not bind the
// token to the caller: it keeps it in memory (for the sign-in's 10m at
// most) and shows a one-time code, saying which gateway user it would
// connect the account to. The caller binds it by calling the tool
// <prefix>__confirm_sign_in with that code; only then is the token kept
// sealed per (caller, backend). The code entered by another caller ends
// that sign-in, as do three wrong codes (the MCP spec's URL mode
// elicitation: the server checks that the user who completes the flow
// is the one who started it). The caller's connection reads the token
// from the sealed store, and refreshes it.
//
// # Tool overrides
//
// A backend's "tools" (Backend.Tools, ToolOverride) fits its tools to the
// gateway's clients, by the backend's name of each: a new name (the
// prefix still goes before it), title or description, and fixed
// arguments, set on every call and taken out of the offered inputSchema
// (its properties and required; the rest of the schema is kept, so it
// stays valid JSON Schema). A call that sets a fixed argument is refused
// with -32602 naming it, rather than overridden behind the client's back.
// tools/list, tool search and calls all see the tool as overridden; the
// backend's own name is unknown to clients. allowTools, hideTools and
// toolAccess still name the backend's tools as the backend does. An
// override that changes on reload restarts its backend, as any change
// of its entry does.
//
// # Tool search
//
// A client of five servers gets a hundred tool definitions in its model's
// context, most never used. With Options.ToolSearch (mcprt gateway
// -tool-search; the file's top-level "toolSearch": true), tools/list
// offers two tools of the gateway's own instead, plus those
// Options.AlwaysList ("alwaysList") names or matches: search_tools {query,
// limit?} returns the tools the caller may use (Access applies as to
// tools/list: a tool hidden from it is never found), ranked by BM25F
// (package toolsearch) over their names, titles, descriptions and
// arguments, best first, as structuredContent {"tools": [full
// definitions]} and as text; call_tool {name, arguments} makes the call
// through the server's own tools/call, so that it is in every respect a
// direct call of that tool (access, argument checks, progress,
// cancellation, questions to the client, errors naming the backend; a
// 2026-07-28 task). Every tool stays callable by its name, for clients
// that listed it before. The index is rebuilt on the first search after
// the tools change (a backend came, went or sent list_changed); Reload
// applies the keys.
//
// # Virtual endpoints
//
// Config.Endpoints (the file's top-level "endpoints") names endpoints,
// each a subset of what the gateway offers for one team or one agent:
// Endpoint's tools, prompts and resources patterns over the gateway's
// names (and resources' URIs), its own toolSearch, and an access joined to
// each item's. Each is a handlers.Server of its own (Gateway.Endpoint),
// served beside Server over the same backends: every registration of the
// gateway's is copied to the endpoints whose patterns name it, with the
// same handler, so a call there is the gateway's call. What an endpoint
// does not name is not there: not listed, not found by its search_tools,
// and a call of it is "Unknown tool", as for a name no backend offers.
// Its clients get list_changed and resource updates as the gateway's do.
// Reload applies a change of the endpoints without touching a backend.
// Tasks are served on the gateway's own server only (mcprt gateway -http;
// over stdio, -endpoint serves one endpoint, tasks included).
//
// # One view
//
// Every name a backend offers becomes "<prefix>__<name>" (the
// prefix is the backend's name unless configured), with characters a tool
// name cannot hold replaced by '_'. Resource URIs and templates are kept as
// the backend gives them (they are what the client reads, and what tool
// results link to), with prefixed names; when two backends offer the same
// URI or name, the one earlier in the configuration keeps it. Tools are
// registered Unchecked: their schemas are listed as the backend gives them
// and the backend validates. Registration is done under Server.Hold, so a
// backend's new lists cost the client one list_changed per kind.
//
// A tools/call forwards the arguments, reports the backend's progress as
// the client's request's progress, passes the backend's log messages to
// the latest request in flight to it (or the gateway's log), and cancels
// the backend's request when the client cancels its own. A request the
// backend asks about (elicitation, sampling, roots) is asked of the
// client through the request being served: in the legacy revisions a
// request to the client, in 2026-07-28 an input_required answer whose
// retry forwards the call again with the answer at hand. A legacy backend
// asks, and logs, beside its requests, naming none: unless the gateway
// has one client (Options.SingleClient), that goes through a request
// only when it is the one in flight to the backend, so that no client is
// asked, or shown, what another's call caused.
//
// A tools/call holds no handler actor while its backend works on it when
// nothing must be waited for first (the backend is up, a stdio one, and no
// roots are to be asked of the client): its tool's Start (handlers.Tool)
// sends it from the session's goroutine (client.Go), and the backend's
// answer is relayed from the goroutine that reads the backend, a
// text-only result as it came. Other calls, and a 2026-07-28 backend's
// input_required, go to the tool's handler on a handler actor, which
// waits where it must. Either way a call gets one answer.
//
// # Roots
//
// A backend's roots/list is answered through the client's request it
// serves, as above; asked outside any (a legacy server that asks after
// initialize, or after being told the roots changed), it gets the roots a
// client last gave the gateway, or an empty list before any did or when
// the client declared no roots capability. The session cannot ask a
// legacy client anything outside its requests, so the gateway asks it for
// its roots within the first request it forwards, and again within the
// first after the client's notifications/roots/list_changed; whenever
// they differ from what it knew, every legacy backend is sent
// notifications/roots/list_changed. A 2026-07-28 client gives its roots
// only to the requests that ask for them. With many clients (Streamable
// HTTP) the backends see the roots the last one gave.
//
// # Subscriptions
//
// A client's subscription to a resource (resources/subscribe, or a
// 2026-07-28 listen stream's resourceSubscriptions; see
// handlers.Server.OnSubscription) is followed at the backend that offers
// the resource, while any client session follows it: with
// resources/subscribe at a legacy backend, on its listen stream at a
// 2026-07-28 one (opened again with the new set whenever it changes). The
// backend's notifications/resources/updated reach the subscribed clients.
// When a backend starts following a resource (the first subscription, or
// again after a restart) the clients are told it updated: the client's
// subscription is answered before the backend follows it, and a change in
// between, or while the backend was down, would go unseen. A resource that
// no backend offers when a client subscribes is not followed.
//
// # Supervision
//
// Each backend is a supervisor of its own under the gateway's root: one
// permanent child that starts the server and connects (package
// session/client), within the backend's restart intensity (MaxRestarts
// within RestartWindow), after a backoff that doubles with each failure
// in the window. A backend that exits, closes its stdout, fails to connect
// or does not answer a ping while idle is restarted. A remote backend
// (Backend.URL) is connected to instead of started, and its lost
// connection is its going away: restarting it is connecting again. Past its intensity it
// is Failed: it stays down (its tools and prompts say so in their
// descriptions) and the other backends are untouched; a request after the
// cool-down starts it again. One that failed before it ever listed what it
// offers, which no request can reach, is started again once the
// cool-down has passed. Its stderr goes to Options.Stderr, each line
// prefixed with "[name] ", throttled, and its last lines are kept for
// error messages.
//
// # Reload
//
// Reload puts a new configuration in place while the gateway serves, as a
// supervisor's children change: a backend it no longer names is stopped
// (its calls in flight answered with an error) and what it offered
// withdrawn, a new one is started, one whose entry changed is restarted
// with the new entry, and the others go on untouched, calls in flight
// included; the client gets list_changed. A configuration with an error
// is refused whole. mcprt gateway reloads its file on SIGHUP.
//
// # Failures are answers
//
// A request that comes while its backend restarts waits for it, up to
// the backend's RestartWait (within its Timeout), and is forwarded once it
// is up: a restart mostly takes well under a second. A request to a
// backend that is failed or stopping, still restarting after that wait,
// or that does not answer within its Timeout, is answered: a tool result
// with isError, or a -32603 error, naming the backend and why, with its
// last stderr lines. Requests in flight when a backend dies are answered
// at once. A backend's own errors reach the client as it sent them. The
// gateway asks every backend request for progress: each progress the
// backend reports starts the request's Timeout again, up to MaxTimeout, so
// a long call that reports progress is not cut and a silent one is.
//
// # Starting
//
// In a tree (ChildSpec, as mcprt gateway runs it), the gateway answers
// the client at once, while the backends start: the client is told of
// every capability, and its lists (and a call of a tool not listed yet) wait up to Options.ListGrace for the backends to be up
// or to have failed once; one that takes longer joins with list_changed,
// and one that hangs is restarted, then failed, like one that crashes. A
// call of a tool of a backend that has never listed what it offers says
// which backend and why. A backend whose program cannot be started (not
// found, not executable) is failed at once, said once at Error, and tried
// again after its cool-down. Each restart is one Warn line naming the
// backend, the reason and the attempt; giving up is one Error line. With
// one client (SingleClient), backends wait for its initialize (up to the
// list grace) and are told of roots only when it declared roots, so that
// a server that falls back to its own arguments without roots does so.
//
// # No orphans
//
// Close closes every backend in parallel (stdin EOF, a grace, SIGTERM to
// its process group, a grace, SIGKILL, reap, SIGKILL to what is left in
// its group). On Linux each backend is started with Pdeathsig SIGKILL, so
// that it dies with the gateway even when the gateway is killed and no
// Close runs; what it started does not, unless it exits at stdin EOF.
// Options.Guard closes that gap: each backend runs through a guard process
// (mcprt guard) that kills the backend's whole group when the gateway
// dies. A remote backend's session is ended (DELETE, for a legacy one);
// its server is not ours to stop.
//
// # Instructions and _meta
//
// The gateway's instructions are Options.Instructions followed by each
// backend's own, under its name and prefix, once it has been up (clients
// that initialized before keep what they got). The _meta of a client's
// request goes on to the backend, except progressToken (the gateway asks
// for progress with a token of its own) and the keys under prefixes the
// protocol reserves (io.modelcontextprotocol/…), which belong to the
// client's hop: a trace context (traceparent) or an application's keys
// reach the backend as the client sent them. The other way, a backend's
// _meta reaches the client as the backend wrote it: on its tools (with
// their execution and icons), resources, templates and prompts, on its
// results, content blocks and resource contents; only a 2026-07-28
// backend's serverInfo in a result's _meta is replaced by the gateway's.
// An MCP App behind the gateway (a tool's _meta.ui.resourceUri, its ui://
// resource and the contents' _meta.ui) is the backend's app, intact.
//
// # Tasks
//
// A gateway whose server serves tasks (handlers.Server.ServeTasks, as
// mcprt gateway does) passes its backends' tasks through as tasks of its
// own. A backend's tool is listed with its execution.taskSupport; a
// client's call of it asking for a task (params.task in 2025-11-25, the
// io.modelcontextprotocol/tasks extension declared in 2026-07-28) becomes
// a task of the gateway's, whose work calls the tool as a task at the
// backend (client.CallToolTask) and awaits it (client.AwaitTask): its
// result, its JSON-RPC error or its failed tool result become the
// gateway's task's, its progress reaches a 2025-11-25 client, and
// cancelling the gateway's task cancels the backend's. The client is
// given only the gateway's task ids, bound to its caller (or else by the
// id alone, not its HTTP session) as any server's are; a backend's ids stay between the gateway and the
// backend, so none is mapped, guessed or shown to another client. Each
// side speaks its own revision, so the eras are bridged: a 2026-07-28
// client polls (tasks/get) a task a 2025-11-25 backend runs, and a
// 2025-11-25 client waits (tasks/result) for one a 2026-07-28 backend
// runs. With Options.TaskAnyTool every tool may be called as a task: one
// of a backend that knows no tasks is forwarded plainly, and the
// gateway's task waits for its answer past the backend's Timeout.
//
// A remote backend's connection that breaks while a gateway's task awaits
// the backend's task does not fail it: the backend may still hold the task
// (a 2026-07-28 one with a journal keeps it through its own restart), so
// the gateway reconnects and polls the same task id again, within the ttl
// the backend gave it and the gateway's task's own life; a backend that
// no longer knows the id once reconnected fails the gateway's task, saying
// so.
//
// A backend's task lives as long as the gateway's that awaits it: when
// the gateway stops, the tasks it awaits are cancelled at their backends;
// with a journal its own tasks that were running are failed on its next
// start, saying it restarted. Questions a backend's task asks its client
// (2026-07-28 inputRequests; 2025-11-25 related-task requests) go as the
// gateway's own calls' do, through the request in flight, which a task
// awaited in the background may not have: such a task may fail rather
// than ask.
//
// # Extensions
//
// The gateway offers its clients every extension (capabilities.extensions)
// one of its backends offers, with the settings of the first in the
// configuration. It tells each backend what the client declared: a
// 2026-07-28 backend gets the requesting client's extensions on each
// request; a legacy backend, which learns its client's capabilities once,
// at initialize, gets those of the gateway's one client with SingleClient
// (mcprt gateway over stdio), and none when it serves many.
package gateway
