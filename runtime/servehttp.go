package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime/streamhttp"
	"github.com/mcprt/mcprt/supervisor"
)

// serveTransport is Serve with opts.HTTP or opts.Transport set: srv over
// that transport until a signal or ctx, then the tree stops, the
// transport first (its drain answers what is in flight), then the tasks,
// then the parts. It claims no standard stream and sets no memory limit:
// an HTTP server's live memory grows with its sessions, so a limit sized
// for one stdio client would only make the collector run hot.
func serveTransport(ctx context.Context, srv *handlers.Server, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = LoggerFromEnv(nil, nil)
	}
	parent := ctx
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	transport := opts.Transport
	// What the transport holds (its listener) is closed by its drain, or
	// here if the tree never got to start it.
	ln, _ := transport.(io.Closer)
	if transport == nil {
		l, err := net.Listen("tcp", opts.HTTP)
		if err != nil {
			return fmt.Errorf("runtime: HTTP: %w", err)
		}
		s, err := streamhttp.NewServer(l, srv, streamhttp.ServeOptions{
			Options: streamhttp.Options{Logger: log, Options: opts.Options, EventHook: opts.EventHook},
			OnServing: func() {
				log.Info("mcprt: serving Streamable HTTP", "url", "http://"+l.Addr().String()+streamhttp.DefaultPath)
			},
		})
		if err != nil {
			return fmt.Errorf("runtime: HTTP: %w", err)
		}
		transport, ln = s, s
	}
	fail := func(err error) error {
		if ln != nil {
			ln.Close()
		}
		log.Error("mcprt: server failed", "err", err)
		return err
	}
	// The one engine of the process: every part, the tasks and the
	// transport run on it.
	engine, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		return fail(fmt.Errorf("runtime: %w", err))
	}
	parts := opts.Parts
	if opts.Tasks != nil {
		to := *opts.Tasks
		if to.Logger == nil {
			to.Logger = log
		}
		m, err := newTasks(srv, to)
		if err != nil {
			return fail(fmt.Errorf("runtime: tasks: %w", err))
		}
		parts = append(parts[:len(parts):len(parts)], m)
	}
	name := processName()
	spec := processSpec(engine, name, parts, func(p *actor.PID) supervisor.ChildSpec { return transport.ChildSpec(engine, p) }, log, opts.EventHook)
	root, err := supervisor.Start(engine, name, spec)
	if err != nil {
		if m, ok := lastTasks(parts); ok {
			m.Stop(context.Background())
		}
		return fail(err)
	}
	select {
	case <-ctx.Done():
		log.Debug("mcprt: stopping: the transport drains first, then the tasks stop, then the other parts", "reason", context.Cause(ctx))
		err = root.Stop(context.Background())
		if err == nil {
			// A signal is a clean stop (nil); the caller's ctx says so
			// itself, as on stdio.
			err = parent.Err()
		}
	case <-root.Done():
		err = root.Err()
		var gaveUp *supervisor.GaveUpError
		if errors.As(err, &gaveUp) {
			err = fmt.Errorf("runtime: the server's supervision tree gave up: %w", err)
		}
	}
	if ln != nil {
		ln.Close() // closed by the drain already, unless never served
	}
	if ExitCode(err) != ExitOK {
		log.Error("mcprt: server failed", "err", err)
	} else {
		log.Debug("mcprt: server stopped", "reason", err)
	}
	return err
}
