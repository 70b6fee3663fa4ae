package runtime

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime/streamhttp"
)

// serveHTTP is Serve with opts.HTTP set: srv over Streamable HTTP on that
// address until a signal or ctx, then the same drain as stdio's. It
// claims no standard stream and sets no memory limit: an HTTP server's
// live memory grows with its sessions, so a limit sized for one stdio
// client would only make the collector run hot.
func serveHTTP(ctx context.Context, srv *handlers.Server, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = LoggerFromEnv()
	}
	parent := ctx
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", opts.HTTP)
	if err != nil {
		return fmt.Errorf("runtime: HTTP: %w", err)
	}
	// One engine for the process: the sessions' tree and the tasks'.
	engine, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		ln.Close()
		return fmt.Errorf("runtime: %w", err)
	}
	if opts.Tasks != nil {
		to := *opts.Tasks
		if to.Logger == nil {
			to.Logger = log
		}
		m, err := StartTasks(engine, srv, to)
		if err != nil {
			ln.Close()
			return fmt.Errorf("runtime: tasks: %w", err)
		}
		// After the sessions have drained: a task outlives its request,
		// not the process.
		defer m.Stop(context.Background())
	}
	so := streamhttp.ServeOptions{
		Engine: engine,
		Options: streamhttp.Options{
			Logger:    log,
			Options:   opts.Options,
			EventHook: opts.EventHook,
		},
		OnServing: func() {
			log.Info("mcprt: serving Streamable HTTP", "url", "http://"+ln.Addr().String()+streamhttp.DefaultPath)
		},
	}
	err = streamhttp.Serve(ctx, ln, srv, so)
	if err == nil {
		// Serve returns nil once ctx ended: a signal is a clean stop (nil),
		// the caller's ctx says so itself, as on stdio.
		err = parent.Err()
	}
	if ExitCode(err) != ExitOK {
		log.Error("mcprt: server failed", "err", err)
	}
	return err
}
