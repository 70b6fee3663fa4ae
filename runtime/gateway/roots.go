package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// The client's roots, for the backends.
//
// A backend asks roots/list through the request of the client it is
// serving, when there is one (askHandler). Asked outside any request in
// flight to it (a legacy backend that asks after initialize, or after it
// was told the roots changed), it gets the roots the client last gave the
// gateway, or an empty list when none are known yet or the client
// declared no roots capability: the session has no way to ask a legacy
// client outside its requests. So that what the gateway knows is current,
// it asks a legacy client for its roots itself, within the client's first
// request it forwards, and again within the first one after the client
// said its roots changed (notifications/roots/list_changed); whenever the
// roots it learns differ from what it knew, it tells every legacy backend
// (notifications/roots/list_changed), which then asks again. With many
// clients (Streamable HTTP) the backends see one set of roots: the last
// a client gave.

// rootsAskTimeout bounds the gateway's own roots/list to the client: a
// client that declares roots but does not answer delays one request by
// it, not every one.
const rootsAskTimeout = 10 * time.Second

// roots answers a backend's roots/list (Options.Roots of its client).
func (b *backend) roots(ctx context.Context) ([]mcp.Root, error) {
	c, _ := ctx.Value(callKey{}).(*call)
	if c == nil {
		c, _ = b.callAsking()
	}
	if c == nil { // none in flight, or which client's is not known
		r, v := b.g.knownRoots()
		b.sawRoots(v)
		return r, nil
	}
	if !declares(c.req, "roots") {
		b.sawRoots(b.g.learnRoots([]mcp.Root{}))
		return []mcp.Root{}, nil
	}
	res, err := b.askHandler("roots/list")(ctx, nil)
	if err != nil {
		return nil, err
	}
	r, err := decodeRoots(res.(json.RawMessage))
	if err != nil {
		return nil, err
	}
	b.sawRoots(b.g.learnRoots(r))
	return r, nil
}

// sawRoots notes that the backend has the roots of version v (or has
// been told to ask for them).
func (b *backend) sawRoots(v int) {
	b.mu.Lock()
	b.rootsSeen = max(b.rootsSeen, v)
	b.mu.Unlock()
}

// catchUpRoots tells a legacy backend that is up that the client's roots
// changed, when it has seen an older version than v. learnRoots calls it
// for every backend at each change, and conn for a backend just up: one
// that asked while starting (before it was up) would otherwise never hear
// of roots learnt between its question and its being up.
func (b *backend) catchUpRoots(v int) {
	b.mu.Lock()
	cl := b.cl
	tell := cl != nil && cl.Era() == client.EraLegacy && b.rootsSeen < v
	if tell {
		b.rootsSeen = v
	}
	b.mu.Unlock()
	switch {
	case !tell:
	case b.cfg.URL != "":
		// Over HTTP the notification is a POST: not on the caller's
		// goroutine, which may be a client's request. It ends with the
		// client's Close at the latest.
		go cl.RootsListChanged()
	default:
		cl.RootsListChanged() // queued for its stdin
	}
}

func decodeRoots(raw json.RawMessage) ([]mcp.Root, error) {
	var r struct {
		Roots []mcp.Root `json:"roots"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("roots/list: the client's answer: %w", err)
	}
	if r.Roots == nil {
		r.Roots = []mcp.Root{}
	}
	return r.Roots, nil
}

// declares reports whether the client of req declared a capability.
func declares(req *handlers.Request, capability string) bool {
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(req.ClientCapabilities, &caps)
	_, ok := caps[capability]
	return ok
}

// knownRoots are the roots as last learnt ([] if none), and their
// version (counted up at each change).
func (g *Gateway) knownRoots() ([]mcp.Root, int) {
	g.rootsMu.Lock()
	defer g.rootsMu.Unlock()
	return append([]mcp.Root{}, g.roots...), g.rootsVersion
}

// rootsListChanged is the server's OnRootsListChanged hook: the next
// legacy request asks the client for its roots again (refreshRoots).
func (g *Gateway) rootsListChanged() {
	g.rootsMu.Lock()
	g.rootsKnown = false
	g.rootsSettled()
	g.rootsMu.Unlock()
}

// rootsSettled mirrors in rootsDueNow whether refreshRoots would ask;
// g.rootsMu is held.
func (g *Gateway) rootsSettled() { g.rootsDueNow.Store(!g.rootsKnown && !g.rootsFetching) }

// learnRoots records the client's roots; if they differ from what the
// gateway knew, every legacy backend is told they changed.
func (g *Gateway) learnRoots(r []mcp.Root) (version int) {
	g.rootsMu.Lock()
	changed := !slices.Equal(g.roots, r)
	g.roots, g.rootsKnown = slices.Clone(r), true
	if changed {
		g.rootsVersion++
	}
	v := g.rootsVersion
	g.rootsSettled()
	g.rootsMu.Unlock()
	if !changed || g.closing.Load() {
		return v
	}
	g.log.Debug("gateway: the client's roots changed; telling the backends", "roots", len(r))
	for _, b := range g.all() {
		b.catchUpRoots(v)
	}
	return v
}

// refreshRoots asks a legacy client for its roots, within its request req,
// unless the gateway knows them (see the top of this file). It does not
// fail req: a client that does not answer leaves the roots as they were.
// rootsDue reports whether refreshRoots would ask req's client for its
// roots.
func (g *Gateway) rootsDue(req *handlers.Request) bool {
	if req.Modern || req.Peer == nil {
		return false
	}
	return g.rootsDueNow.Load()
}

func (g *Gateway) refreshRoots(ctx context.Context, req *handlers.Request) {
	if req.Modern || req.Peer == nil {
		return // 2026-07-28 clients give roots only when a request asks
	}
	g.rootsMu.Lock()
	if g.rootsKnown || g.rootsFetching {
		g.rootsMu.Unlock()
		return
	}
	g.rootsFetching = true
	g.rootsSettled()
	old := slices.Clone(g.roots)
	g.rootsMu.Unlock()
	roots, learnt := []mcp.Root{}, true
	if declares(req, "roots") {
		actx, cancel := context.WithTimeout(ctx, rootsAskTimeout)
		raw, err := req.Ask(actx, "roots/list", nil)
		cancel()
		if err == nil {
			roots, err = decodeRoots(raw)
		}
		var ce *handlers.CapabilityError
		switch {
		case err == nil, errors.As(err, &ce):
		case ctx.Err() != nil:
			learnt = false // the request ended: the next one asks
		default:
			g.log.Warn("gateway: asking the client for its roots", "err", err)
			roots = old
		}
	}
	g.rootsMu.Lock()
	g.rootsFetching = false
	g.rootsSettled()
	g.rootsMu.Unlock()
	if learnt {
		g.learnRoots(roots)
	}
}
