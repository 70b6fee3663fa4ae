package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/supervisor"
)

// Defaults for ServeOptions' zero values.
const (
	DefaultPath              = "/mcp"
	defaultReadHeaderTimeout = 10 * time.Second
	defaultIdleTimeout       = 2 * time.Minute
	defaultShutdownGrace     = 10 * time.Second
)

// settleFor is how long, at shutdown, a request already sent on a
// connection the server has not read yet is given to be read.
const settleFor = time.Second

// ServeOptions configure Serve: the Handler's Options, and the HTTP server
// around it. The zero value serves DefaultPath with the defaults above.
type ServeOptions struct {
	Options
	// Path is the MCP endpoint's path (default DefaultPath).
	Path string
	// ReadHeaderTimeout bounds how long a client may take to send a
	// request's headers; IdleTimeout how long an idle keep-alive
	// connection is kept (0: the defaults above).
	ReadHeaderTimeout, IdleTimeout time.Duration
	// ShutdownGrace bounds how long, once ctx ends, requests in flight may
	// still run before the connections are closed (0:
	// 10s).
	ShutdownGrace time.Duration
	// HealthPath, when set, answers GET and HEAD there with Health's
	// status code and JSON body (nil Health: 200 and {"status":"ok"}),
	// for probes and load balancers: no authentication, and a request
	// with an Origin header (a page in a browser) gets 403.
	HealthPath string
	Health     func() (status int, body any)
	// MetricsPath, when set, answers GET and HEAD there, on the same
	// terms, with Prometheus's text format: what Metrics writes (the
	// process's, the application's; nil: nothing), then the handler's own
	// (Handler.WriteMetrics).
	MetricsPath string
	Metrics     func(w io.Writer)
	// OnServing, when set, is called once requests are taken: the
	// handler's tree is up and the listener accepts.
	OnServing func()
	// Wrap, when set, is put around the endpoint's handler: a layer that
	// authorizes requests, such as runtime/resourceserver's Guard.Wrap.
	Wrap func(http.Handler) http.Handler
	// Extra are more handlers served beside the endpoint, by path (such
	// as the Guard's metadata documents), on the same terms as the
	// endpoint: no path of Path, HealthPath or MetricsPath.
	Extra map[string]http.Handler
	// OnDrain, when set, is called as the server drains, beside the
	// endpoint's own drain and bounded by the same grace (ctx): where
	// MCP endpoints of its own among Extra (more Handlers) shut down, so
	// that their open streams end with their sessions, as the endpoint's
	// do, rather than at the end of the grace.
	OnDrain func(ctx context.Context)
	// Engine, when set, is the actor engine the sessions' tree runs on,
	// so that a process keeps one engine for all its trees (nil: an
	// engine of Serve's own).
	Engine *actor.Engine
}

// Serve serves srv over Streamable HTTP on ln, at o.Path, until ctx ends,
// and then drains: a request already sent on a connection not yet read is
// let in (up to a second), the listener is closed, requests in flight are
// answered while every session drains and ends (within ShutdownGrace; the
// connections still open after it are closed). It returns nil when ctx
// ended it, otherwise the error that did, after the same drain: the HTTP
// server failed, or the handler's supervision tree gave up. It runs the
// Server's tree as a root of its own on o.Engine (nil: an engine of its
// own); a program with a tree of its own puts the Server's ChildSpec in
// it instead (runtime.Options.Transport).
func Serve(ctx context.Context, ln net.Listener, srv *handlers.Server, o ServeOptions) error {
	s, err := NewServer(ln, srv, o)
	if err != nil {
		return err
	}
	engine := o.Engine
	if engine == nil {
		if engine, err = actor.NewEngine(actor.NewEngineConfig()); err != nil {
			ln.Close()
			return fmt.Errorf("streamhttp: %w", err)
		}
	}
	name := fmt.Sprintf("mcprt-serve-%d", serves.Add(1))
	root, err := supervisor.Start(engine, name, supervisor.Spec{
		Name: name, Strategy: supervisor.OneForOne, Logger: s.o.Logger,
		Children: []supervisor.ChildSpec{s.ChildSpec(engine, supervisor.RootPID(engine, name))},
	})
	if err != nil {
		ln.Close()
		return err
	}
	select {
	case <-ctx.Done():
		return root.Stop(context.Background())
	case <-root.Done():
	}
	return treeFailure(root.Err())
}

var serves atomic.Int64

// treeFailure says why a Server's tree ended on its own.
func treeFailure(err error) error {
	var gaveUp *supervisor.GaveUpError
	switch {
	case err == nil || errors.Is(err, supervisor.ErrShutdown):
		return nil
	case errors.As(err, &gaveUp):
		return fmt.Errorf("streamhttp: the server's supervision tree gave up: %w", err)
	}
	return err
}

// Server is Serve's endpoint as a part of a caller's supervision tree, so
// that a process keeps one tree on one engine, whose order starts it after
// what it serves (tasks, a gateway's backends) and stops it before them.
type Server struct {
	ln  net.Listener
	srv *handlers.Server
	o   ServeOptions
	mux *http.ServeMux

	h      *Handler
	hs     *http.Server
	quiet  quietConns
	served chan error
}

// NewServer checks o's paths and returns a Server for ln; nothing runs
// until its ChildSpec is started. On an error, ln is closed.
func NewServer(ln net.Listener, srv *handlers.Server, o ServeOptions) (*Server, error) {
	if srv == nil {
		ln.Close()
		return nil, errors.New("streamhttp: nil server")
	}
	mux, err := o.endpoints()
	if err != nil {
		ln.Close()
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Server{ln: ln, srv: srv, o: o, mux: mux}, nil
}

// Stats are the handler's counts (Handler.Stats); zero until its tree is
// made (ChildSpec). For a page served beside the endpoint (Extra).
func (s *Server) Stats() Stats {
	if s.h == nil {
		return Stats{}
	}
	return s.h.Stats()
}

// Close gives the listener back without serving, for a Server whose tree
// never started (once it has, the tree closes it).
func (s *Server) Close() error { return s.ln.Close() }

// ChildSpec is the Server as a child of parent, a supervisor on e: the
// handler's tree ("http": its handler supervisor, its sessions' supervisor)
// and last a service that serves ln when the tree starts it and, when the
// tree stops it, drains as Serve says before the sessions' supervisor is
// stopped. The service is significant, and so is "http": if the HTTP
// server fails, so does the parent, with that reason. Call it once.
func (s *Server) ChildSpec(e *actor.Engine, parent *actor.PID) supervisor.ChildSpec {
	s.h = newHandler(e, s.srv, s.o.Options)
	serving := s.o.ShutdownGrace + settleFor + 5*time.Second
	spec := s.h.spec(supervisor.ChildPID(parent, "http"), supervisor.ChildSpec{
		ID: "serve", Start: supervisor.Service(s.start, s.stop),
		Restart: supervisor.Temporary, Significant: true, Shutdown: serving,
	})
	return supervisor.ChildSpec{
		ID: "http", Start: supervisor.New(spec),
		Restart: supervisor.Transient, Significant: true,
		// the service's drain, then the sessions' supervisor's bound
		Shutdown: serving + 35*time.Second,
	}
}

// start mounts the endpoints and serves: the service's start.
func (s *Server) start(exit func(error)) error {
	h, o := s.h, s.o
	if err := h.begin(); err != nil {
		s.ln.Close() // stop will not run
		return err
	}
	if o.Wrap != nil {
		s.mux.Handle(o.Path, o.Wrap(h))
	} else {
		s.mux.Handle(o.Path, h)
	}
	for p, eh := range o.Extra {
		s.mux.Handle(p, eh)
	}
	if o.HealthPath != "" {
		s.mux.Handle(o.HealthPath, healthHandler(o.Health))
	}
	if o.MetricsPath != "" {
		extra := o.Metrics
		s.mux.Handle(o.MetricsPath, metricsHandler(func(w io.Writer) {
			if extra != nil {
				extra(w)
			}
			h.WriteMetrics(w)
		}))
	}
	ln := s.quiet.listen(s.ln)
	s.hs = &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnState:         s.quiet.track,
	}
	s.served = make(chan error, 1)
	go func() { // owned: stop waits for it
		err := s.hs.Serve(ln)
		if !errors.Is(err, http.ErrServerClosed) {
			exit(fmt.Errorf("streamhttp: the HTTP server failed: %w", err))
		}
		s.served <- err
	}()
	if o.OnServing != nil {
		o.OnServing()
	}
	return nil
}

// stop is the service's stop: the drain Serve describes.
func (s *Server) stop() {
	grace, cancel := context.WithTimeout(context.Background(), s.o.ShutdownGrace)
	defer cancel()
	// Requests that reached the socket but not yet a handler are let in
	// first: Shutdown would close their connections as idle, leaving
	// their clients with no response at all.
	s.quiet.settle(settleFor)
	// Stop accepting and let requests in flight finish, while the sessions
	// drain and answer them.
	shut := make(chan error, 1)
	go func() { shut <- s.hs.Shutdown(grace) }()
	s.h.log.Debug("streamhttp: draining: no new requests; those in flight are answered")
	var others sync.WaitGroup
	if s.o.OnDrain != nil {
		others.Go(func() { s.o.OnDrain(grace) })
	}
	if err := s.h.drain(grace); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		s.h.log.Warn("streamhttp: sessions did not all end cleanly", "err", err)
	}
	others.Wait()
	if err := <-shut; err != nil {
		s.hs.Close() // streams still open past the grace
	}
	<-s.served
	s.h.log.Debug("streamhttp: drained")
}

// endpoints fills in o's defaults, checks its paths, and returns the mux
// they go on.
func (o *ServeOptions) endpoints() (*http.ServeMux, error) {
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = defaultReadHeaderTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = defaultIdleTimeout
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = defaultShutdownGrace
	}
	if o.Health == nil {
		o.Health = serving
	}
	if !strings.HasPrefix(o.Path, "/") {
		return nil, fmt.Errorf("streamhttp: Path %q is not a path", o.Path)
	}
	if o.HealthPath != "" && (o.HealthPath == o.Path || !strings.HasPrefix(o.HealthPath, "/")) {
		return nil, fmt.Errorf("streamhttp: HealthPath %q wants a path of its own, such as /healthz", o.HealthPath)
	}
	if o.MetricsPath != "" && (o.MetricsPath == o.Path || o.MetricsPath == o.HealthPath || !strings.HasPrefix(o.MetricsPath, "/")) {
		return nil, fmt.Errorf("streamhttp: MetricsPath %q wants a path of its own, such as /metrics", o.MetricsPath)
	}
	for p := range o.Extra {
		if p == o.Path || p == o.HealthPath || p == o.MetricsPath || !strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("streamhttp: Extra path %q is taken, or not a path", p)
		}
	}
	return http.NewServeMux(), nil
}
