package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
)

// Defaults for ServeOptions' zero values.
const (
	DefaultPath              = "/mcp"
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultShutdownGrace     = 10 * time.Second
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
	// DefaultShutdownGrace).
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
// server failed, or the handler's supervision tree gave up. Serve has an
// actor engine of its own.
func Serve(ctx context.Context, ln net.Listener, srv *handlers.Server, o ServeOptions) error {
	mux, err := o.endpoints()
	if err != nil {
		ln.Close()
		return err
	}
	engine := o.Engine
	if engine == nil {
		if engine, err = actor.NewEngine(actor.NewEngineConfig()); err != nil {
			ln.Close()
			return fmt.Errorf("streamhttp: %w", err)
		}
	}
	h, err := New(engine, srv, o.Options)
	if err != nil {
		ln.Close()
		return err
	}
	if o.Wrap != nil {
		mux.Handle(o.Path, o.Wrap(h))
	} else {
		mux.Handle(o.Path, h)
	}
	for p, eh := range o.Extra {
		mux.Handle(p, eh)
	}
	if o.HealthPath != "" {
		mux.Handle(o.HealthPath, healthHandler(o.Health))
	}
	if o.MetricsPath != "" {
		extra := o.Metrics
		mux.Handle(o.MetricsPath, metricsHandler(func(w io.Writer) {
			if extra != nil {
				extra(w)
			}
			h.WriteMetrics(w)
		}))
	}
	var quiet quietConns
	ln = quiet.listen(ln)
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnState:         quiet.track,
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	if o.OnServing != nil {
		o.OnServing()
	}
	var failure error
	select {
	case <-ctx.Done():
	case err := <-served:
		failure = fmt.Errorf("streamhttp: the HTTP server failed: %w", err)
	case <-h.Done():
		failure = errors.New("streamhttp: the server's supervision tree gave up")
	}
	grace, cancel := context.WithTimeout(context.Background(), o.ShutdownGrace)
	defer cancel()
	// Requests that reached the socket but not yet a handler are let in
	// first: Shutdown would close their connections as idle, leaving
	// their clients with no response at all.
	quiet.settle(settleFor)
	// Stop accepting and let requests in flight finish, while the sessions
	// drain and answer them.
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(grace) }()
	if err := h.Shutdown(grace); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		h.log.Warn("streamhttp: sessions did not all end cleanly", "err", err)
	}
	if err := <-shut; err != nil {
		hs.Close() // streams still open past the grace
	}
	if failure == nil {
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			failure = fmt.Errorf("streamhttp: the HTTP server failed: %w", err)
		}
	}
	return failure
}

// endpoints fills in o's defaults, checks its paths, and returns the mux
// they go on.
func (o *ServeOptions) endpoints() (*http.ServeMux, error) {
	if o.Path == "" {
		o.Path = DefaultPath
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = DefaultShutdownGrace
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
