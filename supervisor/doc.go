// Package supervisor gives hollywood actors Erlang/OTP-style supervision:
// a supervisor starts its children in order, restarts them by policy when
// they exit, stops them in reverse order, and gives up (escalating to its
// own parent) when they fail too often.
//
// # Why not hollywood's own restarts
//
// Hollywood v1.0.5 restarts a panicking actor by itself, but its restart
// counter never decays, and reaching the limit crashes the whole process
// (a nil cancel func in cleanup). A panic in Started propagates out of
// Spawn. Parents are never told that a child stopped, and a parent's stop
// waits for its children forever, in random order. So in this package no
// panic ever reaches hollywood, and all supervision is ours: every child runs
// inside a wrapper receiver that recovers panics in every message
// (Initialized, Started and Stopped included, and in the Producer), turns
// them into exit reasons, and reports the exit to its supervisor by message.
// Children are spawned with Engine.Spawn, not SpawnChild, so hollywood's
// stop cascade never runs.
//
// # Exit reasons
//
// An exit reason is an error. nil is a normal exit. ErrShutdown (or any
// error wrapping it, see Shutdown) means the child was told to stop. Anything
// else is abnormal (IsAbnormal): an error passed to Exit, a *PanicError for a
// panic, a *GaveUpError for a supervisor whose children failed too often. A
// child ends its own life with Exit(c, reason) from inside Receive; a child
// stopped by anyone else (its supervisor, or a stray Poison) exits with
// ErrShutdown. Messages that arrive after the reason is decided are dropped.
//
// # Restarts
//
// Whether a child that exited is started again depends on its Restart type:
// Permanent always, Transient only after an abnormal exit, Temporary never.
// A child that is not restarted is removed from the supervisor. If it was
// Significant, the supervisor then stops its other children and exits with
// that child's reason (OTP's auto_shutdown = any_significant), which is how
// "the session ended, so the server ends" is expressed.
//
// Which siblings restart with it depends on the Strategy: OneForOne restarts
// only the child; OneForAll stops all others (reverse start order) and
// restarts all in start order; RestForOne does the same for the children
// started after it. Temporary siblings stopped by a strategy are removed, not
// restarted. A restart is a fresh receiver from the ChildSpec's Producer
// under the same PID ("<supervisor PID ID>/<child ID>"), so ChildPID stays
// valid across restarts; messages sent while the child is down are dead
// letters.
//
// # Intensity
//
// A supervisor allows at most Intensity restarts within any sliding window of
// Period. The restart that would exceed it is not made: the supervisor emits
// EventGaveUp, stops all its children in reverse order and exits with a
// *GaveUpError, which its own supervisor sees as an abnormal exit of a child.
// A crash loop therefore climbs the tree until some supervisor can absorb it,
// or the root exits and the program can end.
//
// With Spec.Backoff, a restart waits first: Backoff.Initial for the first
// within the window, doubling for each one after, up to Backoff.Max. The
// supervisor keeps answering meanwhile; a later exit supersedes the pending
// restart, and a stop cancels it. EventChildRestarted carries the attempt
// (Restarts) and the Delay it waited. The same "at most Max within Period"
// rule is a Window of its own, driven by the caller's clock, for anything
// else that counts failures (mcprt's crash-loop suspension of a tool, the
// gateway's restarts of a backend).
//
// # Stopping
//
// A supervisor stops a child by asking it (never by poisoning it twice) and
// waits at most the child's Shutdown time, without blocking its own inbox.
// A child that does not stop in time (hollywood cannot interrupt a Receive)
// is abandoned with EventStopTimeout; its ID stays taken until it returns,
// so restarting it fails, which counts as another failure. A supervisor that
// is itself told to stop stops its children in reverse start order, each
// bounded by its Shutdown time, and then exits with ErrShutdown; give
// supervisor children a Shutdown larger than the sum of their children's.
//
// # Defaults
//
//   - Spec.Intensity 0: 3; negative: no restart allowed.
//   - Spec.Period 0: 5s.
//   - Spec.Backoff zero: restarts at once.
//   - Spec.Logger nil: slog.Default(). Starts are logged at Debug, restarts at
//     Info, normal exits and shutdowns at Debug, abnormal exits and giving up at
//     Error (with the panic stack), stop timeouts at Warn.
//   - ChildSpec.Restart: Permanent (its zero value).
//   - ChildSpec.Shutdown 0: 5s.
//
// # Using it
//
// Start runs a root tree on an engine and returns a *Root whose Done, Err and
// Stop fit an oklog/run actor. New nests a supervisor as another
// supervisor's child. StartChild and TerminateChild add and remove children
// at run time from any goroutine, except the supervisor's own (a child's
// Initialized or Started, or an EventHook), where they return an error
// rather than deadlock.
//
// # Where it sits
//
// Near the bottom of mcprt's stack (test/layers): supervisor imports only
// hollywood and the standard library, and knows nothing of MCP.
package supervisor
