package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/anthdm/hollywood/actor"
	"github.com/oklog/run"

	"github.com/mcprt/mcprt/handlers"
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

// LoggerFromEnv returns a slog logger writing to stderr, at the level named
// by LOG_LEVEL (debug, info, warn, error; default info), as text or, when
// LOG_FORMAT=json, as JSON.
func LoggerFromEnv() *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(os.Getenv("LOG_LEVEL"))); err != nil {
		level = slog.LevelInfo
	}
	o := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(os.Getenv("LOG_FORMAT"), "json") {
		return slog.New(slog.NewJSONHandler(os.Stderr, o))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, o))
}

// Serve runs srv as this process's MCP server over stdin and stdout until
// stdin reaches EOF, a SIGINT or SIGTERM arrives, the client closes stdout,
// ctx ends, or the tree gives up. Map its result with ExitCode.
//
// Before anything else it points slog's default logger at stderr (the
// actor library logs only through it) unless opts.Logger is set, and claims
// the standard streams (see stdio.Claim): from then on, nothing but the
// writer actor can reach the protocol stream. They are restored on return.
func Serve(ctx context.Context, srv *handlers.Server, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = LoggerFromEnv()
		slog.SetDefault(opts.Logger)
	}
	// Signals are caught before the tree can answer anything: a client
	// that got a response may signal at once, and must see a graceful exit.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	claimed, err := stdio.Claim()
	if err != nil {
		return err
	}
	defer claimed.Restore()

	engine, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		return fmt.Errorf("runtime: %w", err)
	}
	inst, err := Start(engine, srv, claimed.In, claimed.Out, opts)
	if err != nil {
		return err
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
