// Package fault injects faults into MCP servers, deterministically from a
// seed, and checks that nothing is lost: every request answered exactly
// once (none for a cancelled one), nothing but valid JSON-RPC on stdout,
// and a clean exit at the end.
//
// Three kinds of fault:
//
//   - Handler faults, inside a server: an Injector wraps a
//     handlers.ToolHandler so that, call by call, it panics, hangs until its
//     context ends, answers slowly or returns an error, at given rates.
//     CrashLoop is a handler that panics every time.
//   - Transport faults, on the way in: lines no client should send
//     (garbage, truncated, invalid UTF-8, huge, nested too deep),
//     and, from a Campaign, a client that stops reading stdout for a while
//     (back-pressure) or closes it (EPIPE).
//   - Process faults, at the end of a Campaign: stdin EOF or SIGTERM with
//     requests in flight (Ending).
//
// (Over HTTP the transport faults are the ones the transport has; see
// below.)
//
// A Campaign drives any stdio MCP server, a command or a handlers.Server run
// in-process: it spawns it, runs the handshake (initialize, or 2026-07-28's
// server/discover), sends a seeded mix of requests and faults, ends the
// server, and returns a Report.
//
// It drives Streamable HTTP servers too, in both eras: one it starts
// (Campaign.HTTP; a command prints its URL, as `mcprt serve -http
// 127.0.0.1:0` does) and ends with SIGTERM, or one already running
// (Campaign.URL). The plan is the same, shared out among several clients
// (legacy sessions with their GET streams open, or stateless 2026-07-28
// clients using the same ids at once), and so are the checks, as the
// transport words them: exactly one JSON-RPC response per request, as the
// JSON body or the last SSE event, none once cancelled (legacy:
// notifications/cancelled, with the stream open or closed first;
// 2026-07-28: closing the stream); nothing but JSON-RPC and well-formed
// SSE on the wire; 202, 400, 404, 413 and 415 where the transport says.
// Malformed bodies replace malformed lines, with bodies of the wrong media
// type, past the server's bound, without a session or with an unknown one,
// with headers that disagree with them. Back-pressure becomes a client
// that leaves a large answer unread while the others must still be
// answered; EPIPE a client that disconnects mid-answer; and legacy
// sessions are DELETEd with calls in flight (answered, or their streams
// end; the session's id then gets 404). Resumable streams (Last-Event-ID)
// are not followed: a stream that ends before its response has lost it.
//
// Use it in a server's own tests:
//
//	rep, err := (&fault.Campaign{
//		Command: []string{"./myserver"},
//		Seed:    1,
//		Rates:   fault.DefaultRates,
//	}).Run(ctx)
//	if err != nil {
//		t.Fatal(err)
//	}
//	if !rep.OK() {
//		t.Errorf("chaos campaign failed:\n%s", rep)
//	}
//
// The same seed gives the same plan of requests and faults; what the server
// does with them may still depend on timing, which is the point.
// `mcprt chaos` runs a campaign from the command line.
package fault
