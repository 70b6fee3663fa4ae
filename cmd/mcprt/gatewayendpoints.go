package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime/gateway"
	"github.com/mcprt/mcprt/runtime/resourceserver"
	"github.com/mcprt/mcprt/runtime/streamhttp"
	"github.com/mcprt/mcprt/runtime/taskrun"
	"github.com/mcprt/mcprt/supervisor"
)

// gatewayEndpoints serves the gateway's virtual endpoints over HTTP, each
// at <-http-path>/NAME with a streamhttp.Handler of its own over the
// endpoint's server (gateway.Gateway.Endpoint) and, with OAuth, a resource
// server of its own whose resource is <-http-oauth-resource>/NAME, with
// its protected resource metadata at the RFC 9728 path for it
// (/.well-known/oauth-protected-resource<-http-path>/NAME). An endpoint's
// handler is made on its first request, so that one a reload adds is
// served, and one a reload removes gets 404 from then on.
//
// It is a part of the process's tree (after the gateway: stopped before
// the backends close) and drains beside the main endpoint
// (streamhttp.ServeOptions.OnDrain).
type gatewayEndpoints struct {
	g          *gateway.Gateway
	prefix     string // <-http-path>/
	metaPrefix string // /.well-known/oauth-protected-resource<-http-path>/
	ho         streamhttp.Options
	rs         *resourceserver.Options // nil: no OAuth
	drain      time.Duration
	tasks      func() *taskrun.Manager // the gateway's tasks (nil: none), served by each endpoint too

	mu     sync.Mutex
	e      *actor.Engine
	served map[string]*servedEndpoint
	closed bool
	// retiring are the shutdowns of endpoints a reload removed; shutdown
	// waits for them.
	retiring sync.WaitGroup
}

type servedEndpoint struct {
	srv   *handlers.Server
	h     *streamhttp.Handler
	guard *resourceserver.Guard // nil: no OAuth
	serve http.Handler          // h, behind guard
}

// mountEndpoints puts the gateway's endpoints beside l's main one. rs are
// the resource server's options when OAuth is on. With -http-path / there
// is no room beside it: nil.
func mountEndpoints(g *gateway.Gateway, l *httpListener, rs *resourceserver.Options, tasks func() *taskrun.Manager) *gatewayEndpoints {
	base := strings.TrimSuffix(l.so.Path, "/")
	if base == "" {
		return nil
	}
	ge := &gatewayEndpoints{
		g: g, prefix: base + "/", ho: l.so.Options, rs: rs, drain: l.so.ShutdownGrace, tasks: tasks,
		metaPrefix: "/.well-known/oauth-protected-resource" + base + "/",
		served:     map[string]*servedEndpoint{},
	}
	if l.so.Extra == nil {
		l.so.Extra = map[string]http.Handler{}
	}
	l.so.Extra[ge.prefix] = http.HandlerFunc(ge.serveMCP)
	if rs != nil {
		l.so.Extra[ge.metaPrefix] = http.HandlerFunc(ge.serveMetadata)
	}
	l.so.OnDrain = ge.shutdown
	return ge
}

// ChildSpec is the endpoints as a part of the process's tree: they take
// requests while it runs, and are shut down when it stops them (if the
// HTTP server's drain has not already).
func (ge *gatewayEndpoints) ChildSpec(e *actor.Engine, _ *actor.PID) supervisor.ChildSpec {
	return supervisor.ChildSpec{
		ID: "endpoints",
		Start: supervisor.Service(func(func(error)) error {
			ge.mu.Lock()
			ge.e = e
			ge.mu.Unlock()
			return nil
		}, func() {
			ctx, cancel := context.WithTimeout(context.Background(), ge.drain)
			defer cancel()
			ge.shutdown(ctx)
		}),
		Restart:  supervisor.Temporary,
		Shutdown: ge.drain + 5*time.Second,
	}
}

// endpoint is the served endpoint name, made now if need be; nil when the
// gateway has no such endpoint (any more), with the HTTP status to answer.
func (ge *gatewayEndpoints) endpoint(ctx context.Context, name string) (*servedEndpoint, int) {
	if name == "" || strings.Contains(name, "/") {
		return nil, http.StatusNotFound
	}
	srv := ge.g.Endpoint(name)
	ge.mu.Lock()
	defer ge.mu.Unlock()
	if ge.closed || ge.e == nil {
		return nil, http.StatusServiceUnavailable
	}
	se := ge.served[name]
	if se != nil && se.srv == srv {
		return se, 0
	}
	if se != nil { // removed by a reload, or removed and added again
		delete(ge.served, name)
		ge.retiring.Go(func() { se.close(context.Background(), ge.drain) })
	}
	if srv == nil {
		return nil, http.StatusNotFound
	}
	se = &servedEndpoint{srv: srv}
	if m := ge.tasks(); m != nil {
		// The gateway's one manager: a task made here is the gateway's
		// like any other (its owner may read it at the main endpoint
		// too), and its status reaches this endpoint's clients.
		srv.ServeTasks(m, handlers.TasksOptions{})
	}
	ho := ge.ho
	if ge.rs != nil {
		o := *ge.rs
		o.Resource = strings.TrimSuffix(o.Resource, "/") + "/" + name
		gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		guard, err := resourceserver.New(gctx, o)
		cancel()
		if err != nil {
			ge.ho.Logger.Error("mcprt gateway: the endpoint's resource server", "endpoint", name, "err", err)
			return nil, http.StatusServiceUnavailable
		}
		se.guard, ho.ScopeChallenge = guard, guard.ScopeChallenge
	}
	h, err := streamhttp.New(ge.e, srv, ho)
	if err != nil {
		if se.guard != nil {
			se.guard.Close()
		}
		ge.ho.Logger.Error("mcprt gateway: serving an endpoint", "endpoint", name, "err", err)
		return nil, http.StatusServiceUnavailable
	}
	se.h, se.serve = h, h
	if se.guard != nil {
		se.serve = se.guard.Wrap(h)
	}
	ge.served[name] = se
	return se, 0
}

func (ge *gatewayEndpoints) serveMCP(w http.ResponseWriter, r *http.Request) {
	se, status := ge.endpoint(r.Context(), strings.TrimPrefix(r.URL.Path, ge.prefix))
	if se == nil {
		http.Error(w, http.StatusText(status), status)
		return
	}
	se.serve.ServeHTTP(w, r)
}

func (ge *gatewayEndpoints) serveMetadata(w http.ResponseWriter, r *http.Request) {
	se, status := ge.endpoint(r.Context(), strings.TrimPrefix(r.URL.Path, ge.metaPrefix))
	if se == nil {
		http.Error(w, http.StatusText(status), status)
		return
	}
	se.guard.MetadataHandler().ServeHTTP(w, r)
}

// shutdown shuts every served endpoint down, in parallel, within ctx;
// from then on the endpoints answer 503.
func (ge *gatewayEndpoints) shutdown(ctx context.Context) {
	ge.mu.Lock()
	ge.closed = true
	served := ge.served
	ge.served = map[string]*servedEndpoint{}
	ge.mu.Unlock()
	var wg sync.WaitGroup
	for _, se := range served {
		wg.Go(func() { se.close(ctx, 0) })
	}
	wg.Wait()
	ge.retiring.Wait()
}

// close shuts the endpoint's handler down, within ctx (and within d
// when positive), and closes its resource server.
func (se *servedEndpoint) close(ctx context.Context, d time.Duration) {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	_ = se.h.Shutdown(ctx)
	se.srv.ServeTasks(nil, handlers.TasksOptions{}) // no more status reports to it
	if se.guard != nil {
		se.guard.Close()
	}
}
