// Package runtime assembles an mcprt server: the supervision tree, the stdin
// reader, and the process lifecycle.
//
// The tree, under one root supervisor (one_for_one), in start order:
//
//	root
//	 ├─ writer    stdio.Writer: the only writer of the output (transient, significant)
//	 ├─ handlers  supervisor of the handler actors, started on demand (permanent)
//	 └─ session   the single implicit session (transient, significant)
//
// Beside it, outside the actor system, runs the reader goroutine: the only
// reader of the input. It counts each line it hands on in a stdio.Backlog,
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
// group with SIGINT/SIGTERM handling, with the log pipeline (LogPipeline:
// slog to stderr, forwarded to the client at the level it asked for) and
// the stdout capture; Start runs it inside a caller's hollywood engine over
// any reader and writer, touching no file descriptor and no global state.
package runtime
