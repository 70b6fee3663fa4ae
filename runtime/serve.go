package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/anthdm/hollywood/actor"
	"github.com/oklog/run"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime/taskrun"
	"github.com/mcprt/mcprt/stdio"
	"github.com/mcprt/mcprt/supervisor"
)

// Exit statuses of a server process.
const (
	ExitOK      = 0 // stdin EOF, SIGINT/SIGTERM, or the client closed stdout
	ExitFailure = 1 // the root supervisor gave up, or the runtime could not start
	ExitUsage   = 2 // bad command line
)

// ExitCode maps Serve's error to the process's exit status.
func ExitCode(err error) int {
	var sig *run.SignalError
	switch {
	case err == nil, errors.As(err, &sig), errors.Is(err, supervisor.ErrShutdown), errors.Is(err, context.Canceled):
		return ExitOK
	}
	return ExitFailure
}

// LoggerFromEnv returns a logger in the format of the process's own log
// (the one Serve builds): written to w (nil: os.Stderr), at the level
// named by LOG_LEVEL (slog's names or MCP's; default info) unless level is
// set, as text or, when LOG_FORMAT=json, as JSON. A value of either
// variable it cannot use is ignored here; Serve logs it.
func LoggerFromEnv(w io.Writer, level slog.Leveler) *slog.Logger {
	if w == nil {
		w = os.Stderr
	}
	o, _ := logOptionsFromEnv()
	if level != nil {
		o.Level = level
	}
	return slog.New(newLogHandler(w, o))
}

// Serve runs srv as this process's MCP server over stdin and stdout (or,
// with opts.HTTP, over Streamable HTTP: see Options.HTTP) until
// stdin reaches EOF, a SIGINT or SIGTERM arrives, the client closes stdout,
// ctx ends, or the tree gives up. Map its result with ExitCode.
//
// Before anything else it claims the standard streams (see stdio.Claim):
// from then on, nothing but the writer actor can reach the protocol stream.
// Unless opts.Logger is set, it also builds the log pipeline: slog's default
// logger writes to stderr (LOG_LEVEL, LOG_FORMAT) and forwards records to a
// legacy client as notifications/message at the level the client asked for
// (or opts.DefaultLogLevel); and fd 1 is captured, so that whatever the
// process prints (fmt.Println, C code, child processes) reaches stderr and,
// on the same terms, the client. The runtime's own records (panic stacks
// among them) stay on stderr. It tunes the Go runtime's memory for a
// small, long-lived server, a soft limit of DefaultMemoryLimit and
// GOGC=gcPercentUnderLimit, unless the environment or opts.MemoryLimit
// says otherwise (see Options.MemoryLimit). Everything is restored on
// return.
func Serve(ctx context.Context, srv *handlers.Server, opts Options) error {
	if opts.HTTP != "" || opts.Transport != nil {
		return serveTransport(ctx, srv, opts)
	}
	defer memoryPolicy(opts.MemoryLimit, os.Getenv).apply()()

	var pipe *logPipeline
	if opts.Logger == nil {
		lo, lerr := logOptionsFromEnv()
		pipe = newLogPipeline(newLogHandler(os.Stderr, lo))
		slog.SetDefault(pipe.Logger())
		opts.Logger = pipe.Local()
		if lerr != nil {
			opts.Logger.Warn("mcprt: bad logging environment; using defaults", "err", lerr)
		}
		if err := pipe.SetLevel(opts.DefaultLogLevel); err != nil {
			return fmt.Errorf("runtime: DefaultLogLevel: %w", err)
		}
		user := opts.OnLogLevel
		opts.OnLogLevel = func(level string) {
			_ = pipe.SetLevel(level)
			if user != nil {
				user(level)
			}
		}
	}
	// Signals are caught before the tree can answer anything: a client
	// that got a response may signal at once, and must see a graceful exit.
	// Catching them starts the Go runtime's signal thread, a third of a
	// millisecond of a cold start, so that runs beside the rest of the
	// start-up, and the tree waits for it.
	sigs := make(chan os.Signal, 1)
	sigsCaught := make(chan struct{})
	go func() {
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		close(sigsCaught)
	}()
	defer func() {
		<-sigsCaught
		signal.Stop(sigs)
	}()

	claimed, err := stdio.Claim()
	if err != nil {
		return err
	}
	defer claimed.Restore()
	if pipe != nil {
		// After Claim, so that fd 1 returns to stderr (never to the
		// protocol stream) when the capture stops; defers run in reverse.
		capture, err := stdio.CaptureStdout(pipe.Stdout, stdio.CaptureOptions{Dropped: pipe.StdoutDropped})
		if err != nil {
			opts.Logger.Warn("mcprt: stdout capture unavailable; stray prints go to stderr only", "err", err)
		} else {
			defer func() {
				pipe.SetSink(nil)
				if err := capture.Stop(); err != nil {
					opts.Logger.Warn("mcprt: stdout capture", "err", err)
				}
			}()
		}
	}

	engine, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	<-sigsCaught
	parts := opts.Parts
	if opts.Tasks != nil {
		to := *opts.Tasks
		if to.Logger == nil {
			to.Logger = opts.Logger
		}
		m, err := newTasksOrSignal(ctx, sigs, srv, to)
		if err != nil {
			var sig *run.SignalError
			if !errors.As(err, &sig) && !errors.Is(err, context.Canceled) {
				// Said here: the caller may only map it to an exit
				// status, and a stdio server's stderr is all a person
				// launching it from an editor's config gets to see.
				opts.Logger.Error("mcprt: cannot start tasks", "err", err)
			}
			return fmt.Errorf("runtime: tasks: %w", err)
		}
		// After the parts, before the session's tree: the tree stops the
		// tasks once the session has drained (a task outlives its
		// request, not the process; what is still working is failed on
		// the next start), and before the parts they may use.
		parts = append(parts[:len(parts):len(parts)], m)
	}
	inst, err := start(engine, srv, claimed.In, claimed.Out, opts, parts)
	if err != nil {
		if m, ok := lastTasks(parts); ok {
			m.Stop(context.Background())
		}
		return err
	}
	if pipe != nil {
		pipe.SetSink(inst.Log)
	}

	var g run.Group
	g.Add(func() error {
		<-inst.Done()
		return inst.Err()
	}, func(error) {
		// Signals, ctx, or the tree itself: drain either way; the tree's
		// own bounds (DrainTimeout, shutdown timeouts) keep this finite.
		inst.Drain()
	})
	stopWaiting := make(chan struct{})
	g.Add(func() error {
		select {
		case sig := <-sigs:
			return &run.SignalError{Signal: sig}
		case <-ctx.Done():
			return ctx.Err()
		case <-stopWaiting:
			return nil
		}
	}, func(error) { close(stopWaiting) })
	err = g.Run()
	if treeErr := inst.Err(); treeErr != nil && ExitCode(treeErr) != ExitOK {
		err = treeErr
	}
	if ExitCode(err) != ExitOK {
		opts.Logger.Error("mcprt: server failed", "err", err)
	} else {
		opts.Logger.Debug("mcprt: server stopped", "reason", err)
	}
	return err
}

// newTasksOrSignal is newTasks, given up for a signal or ctx: a start on
// a large journal replays and settles it before any request is served,
// and a SIGTERM meanwhile ends the process rather than waiting for it.
// What a start given up leaves is stopped once it is done (the journal's
// writes are whole, so it may also simply end with the process).
func newTasksOrSignal(ctx context.Context, sigs <-chan os.Signal, srv *handlers.Server, to TasksOptions) (*taskrun.Manager, error) {
	type made struct {
		m   *taskrun.Manager
		err error
	}
	done := make(chan made, 1)
	go func() {
		m, err := newTasks(srv, to)
		done <- made{m, err}
	}()
	abandon := func() {
		go func() {
			if s := <-done; s.m != nil {
				s.m.Stop(context.Background())
			}
		}()
	}
	select {
	case s := <-done:
		return s.m, s.err
	case sig := <-sigs:
		abandon()
		return nil, &run.SignalError{Signal: sig}
	case <-ctx.Done():
		abandon()
		return nil, ctx.Err()
	}
}

// lastTasks is the tasks' manager Serve put last in parts, if it did.
func lastTasks(parts []Part) (*taskrun.Manager, bool) {
	if len(parts) == 0 {
		return nil, false
	}
	m, ok := parts[len(parts)-1].(*taskrun.Manager)
	return m, ok
}
