// Package stdio turns a byte stream into protocol lines and back.
//
// Four pieces, each with one owner:
//
//   - readLines is the only reader of the input. It splits on '\n' (a
//     trailing '\r' is dropped), skips blank lines, and has no fixed token
//     limit: lines grow up to a configurable cap, and a line over the cap is
//     discarded up to its newline and reported as LineTooLong, after which
//     reading goes on. It never parses JSON. ScanLines is the same reader
//     with callbacks instead of messages: session/client reads a server's
//     stdout with it, so both ends of a pipe split lines alike.
//   - The writer (NewWriter) is the actor that owns the output. Every
//     message it is given is written whole, followed by '\n', in one Write
//     call; when several are queued they are coalesced into one write, but
//     a message is never split.
//   - Claim takes the process's file descriptors when mcprt runs as a real
//     process: the writer gets a private duplicate of fd 1, fd 1 is pointed
//     at stderr (so a stray print can never reach the protocol stream), stdin
//     becomes a private, pollable descriptor (so reading can be interrupted)
//     and fd 0 reads /dev/null, and SIGPIPE is ignored (a gone client is an
//     EPIPE error, not death). Restore undoes all of it, SIGPIPE included,
//     so an embedder can start and stop servers in one process.
//   - CaptureStdout goes one step further: fd 1 becomes a pipe read line by
//     line by one owned goroutine, so whatever the process prints
//     (fmt.Println, C code, a child that inherited fd 1) is delivered as
//     lines (the runtime logs them to stderr and forwards them to the
//     client), partial lines after an idle time, long output in chunks,
//     everything flushed on Stop.
//
// Backlog (wire.Backlog, in the leaf stdio/wire with Out, so that the
// session and other transports share them without importing stdio) gives
// the reader back-pressure from the client alone: the reader
// waits while the lines it handed on and the answers not yet written are
// too many, which happens only when the client stops reading.
//
// In the stack (test/layers) stdio is under session and handlers and over
// supervisor: it knows lines, not JSON-RPC or MCP.
package stdio
