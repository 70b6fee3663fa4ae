// Package sessionactor is one MCP session, whatever carries it: an actor that
// takes the client's JSON-RPC messages (decoded by its transport, as In, or
// undecoded, as Raw: the stdio reader's lines, which it decodes itself), runs the MCP
// lifecycle in both protocol eras, and hands each request to a handler
// actor. What it sends goes to its sink (the stdio writer, or
// Config.Deliver) or, for a request that came with one, to the request's
// Replier: seam.go has the whole seam.
//
// It is the one place that knows which requests are outstanding, so it is
// the one place that guarantees every request exactly one response, or none
// when the client cancelled it. Each request's outcome is settled by a single
// compare-and-swap: whichever of the handler's reply, the deadline, a
// cancellation or the shutdown drain comes first wins, and the others are
// dropped. The handler writes its own response straight to the writer (no hop
// through the session on the hot path) and then tells the session it is idle.
//
// Two halves share that goroutine: the session type is the protocol (decode,
// validate, the lifecycle, routing, listen streams, crash-loop policy), and
// the scheduler (scheduler.go) decides when and where each call runs (the
// slots and their queue, the waiting pool, the handler actors, deadlines,
// the answers a crash calls for); the scheduler asks the session for two
// things only (host).
//
// The session runs on a goroutine of its own (supervisor.OwnGoroutine), or,
// over Streamable HTTP where sessions are many and mostly idle, on one
// borrowed from the tree's supervisor.Runners while it has messages
// (Config.LoopOnRunners); its handler actors borrow one from the same pool
// for each call. It is fed through its supervisor.Inbox by the reader, the
// workers and the timers. A worker's "I am idle" is posted without waking the session unless
// a call or a drain is waiting for it, and one timer serves every request's
// deadline: on the hot path a request costs the session no thread wake-up of
// its own making beyond the line that brought it.
//
// Eras. An initialize request selects legacy semantics (2024-11-05,
// 2025-03-26, 2025-06-18, 2025-11-25) for the process; a request carrying
// _meta["io.modelcontextprotocol/protocolVersion"] is served statelessly as
// 2026-07-28. Both may be used in one process, as the specification allows
// dual-era servers to do.
//
// # Where it sits
//
// Inside runtime, whose transports (the stdio tree, runtime/streamhttp)
// are its only users, and above handlers, which says what the server
// offers; what a user chooses for a session is package session's
// (Options, Overload, CrashPolicy), which Config embeds.
// It imports handlers, supervisor, stdio/wire and handlers/jsonrpc (no
// transport: each transport translates what it reads), and runs the
// handler actors itself (worker.go): handlers stays plain values and
// functions, and a request does not leave this package on its way to the
// handler and back. session/client, the client end, imports nothing of it.
package sessionactor
