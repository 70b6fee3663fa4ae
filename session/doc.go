// Package session is what a user chooses for each MCP session a server
// runs, whatever carries it (stdio or Streamable HTTP): Options (bounds,
// deadlines, the crash policy, logging, tracing), embedded in
// runtime.Options and streamhttp.Options; the Overload counters a
// process's metrics read; and CrashLoopError, the exit reason of a handler
// supervisor whose tool crash-looped under Escalate.
//
// The session itself, the actor that runs the MCP lifecycle in both
// protocol eras and guarantees every request exactly one response, is the
// runtime's plumbing (runtime/internal/sessionactor). session/client is
// the client end; session/sse reads Server-Sent Events for it.
package session
