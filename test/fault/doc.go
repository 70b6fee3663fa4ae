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
//     (GarbageLine, TruncatedLine, InvalidUTF8Line, HugeLine, DeepLine),
//     and, from a Campaign, a client that stops reading stdout for a while
//     (back-pressure) or closes it (EPIPE).
//   - Process faults, at the end of a Campaign: stdin EOF or SIGTERM with
//     requests in flight (Ending).
//
// A Campaign drives any stdio MCP server, a command or a handlers.Server run
// in-process: it spawns it, runs the handshake (initialize, or 2026-07-28's
// server/discover), sends a seeded mix of requests and faults, ends the
// server, and returns a Report. Use it in a server's own tests:
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
