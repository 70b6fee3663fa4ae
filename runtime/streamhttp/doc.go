// Package streamhttp serves an mcprt server over Streamable HTTP: an
// http.Handler for one MCP endpoint, in both eras of the protocol.
//
// Every client session is a session actor, the same one the stdio transport
// runs, fed by HTTP requests instead of a reader goroutine, and a temporary
// child of one sessions supervisor, so a session that crashes takes only
// itself down. All sessions share the server's handler supervisor. A
// session has no writer actor: what it sends is handed, on the goroutine
// that sends it, to the HTTP request waiting for it (session.Config.Deliver),
// so a response costs no extra hand-off.
//
//	root (one_for_one)
//	 ├─ handlers   supervisor of the handler actors (permanent)
//	 └─ sessions   supervisor of the sessions (permanent)
//	     ├─ stateless   the 2026-07-28 session (transient: restarted after a crash)
//	     └─ s-…         one per legacy session (temporary)
//
// Legacy revisions (2025-03-26 … 2025-11-25; batches in 2025-03-26 only): initialize creates a session
// and its Mcp-Session-Id (from crypto/rand, optionally prefixed with a
// replica tag); later requests must carry it (404 once it has ended, so
// the client initializes again); DELETE ends it; at Options.MaxSessions an
// initialize closes the session idle the longest (no request in flight, no
// open stream; O(1), from a list kept in the order sessions went idle) and
// is refused (503) only when every session is in use, so that abandoned
// sessions cannot lock new clients out; GET opens the stream for
// messages unrelated to a request (list_changed, resource updates,
// server-to-client requests sent outside a call). A request is answered
// with a JSON body, or with an SSE stream when notifications or requests
// for it come first; the response ends the stream.
//
// 2026-07-28: no session. Every request is served statelessly, its
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers checked against
// its body (400 and -32020 when they disagree); closing the response
// stream cancels the request; subscriptions/listen is a long-lived SSE
// response. input_required and its signed requestState work as on stdio:
// replicas that share Options.StateKey accept each other's retries.
//
// Serve is the whole server, as runtime.Serve is for stdio: it serves a
// listener until a context ends, with the HTTP server's timeouts and
// optional health and metrics endpoints, and then drains as mcprt serve
// -http does on SIGTERM (a request already sent but not yet read is let
// in, requests in flight are answered, every session ends). New and the
// Handler are for mounting the endpoint in a server of your own.
//
// Request ids are the client's own only on the wire: inside, each request
// gets a fresh id, so that many clients of the one stateless session (or a
// client reusing an id) never collide, and the client's id is put back on
// everything sent for the request.
//
// Flow control is the session's: past MaxInFlight requests of a session
// wait, past MaxQueued they are refused (503 and -32000). Responses and
// notifications from the client are never held back. Each request's stream
// keeps at most a bounded number of undelivered notifications, so a client
// that does not read cannot grow the server's memory without bound.
package streamhttp
