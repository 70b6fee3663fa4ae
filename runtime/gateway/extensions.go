package gateway

import (
	"bytes"
	"encoding/json"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// Extensions (capabilities.extensions) go both ways through the gateway.
// To its clients it offers every extension one of its backends offers
// (the first backend's settings where two differ), so that a host sees,
// say, that MCP Apps are served. To a backend it says what the client
// declared: on each request to a 2026-07-28 backend, exactly the
// requesting client's extensions; to a legacy backend, which learns a
// client's capabilities once, at initialize, those of the gateway's one
// client (SingleClient) when it has said, and none otherwise: a backend
// shared by many clients must not rely on what only some support.

// extOffers is what the gateway knows of extensions.
type extOffers struct {
	mu      sync.Mutex
	offered map[*backend]map[string]json.RawMessage
	set     map[string]bool // the ids the gateway's server offers now

	// client is the extensions object the one client declared (with
	// SingleClient), once it has.
	client atomic.Pointer[json.RawMessage]
}

// extensionsOf reads a backend's capabilities.extensions.
func extensionsOf(caps map[string]json.RawMessage) map[string]json.RawMessage {
	var ext map[string]json.RawMessage
	if raw, ok := caps["extensions"]; ok {
		_ = json.Unmarshal(raw, &ext)
	}
	for id, settings := range ext {
		if len(settings) == 0 || settings[0] != '{' {
			delete(ext, id) // not a settings object: not an offer
		}
	}
	return ext
}

// offerExtensions records what b offers (nil: nothing) and makes the
// gateway's server offer the extensions of every backend still
// configured, in configuration order.
func (g *Gateway) offerExtensions(b *backend, ext map[string]json.RawMessage) {
	o := &g.ext
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.offered == nil {
		o.offered = map[*backend]map[string]json.RawMessage{}
	}
	if len(ext) == 0 {
		delete(o.offered, b)
	} else {
		o.offered[b] = maps.Clone(ext)
	}
	union := map[string]json.RawMessage{}
	for _, x := range g.all() {
		if x.removed.Load() {
			continue
		}
		for id, settings := range o.offered[x] {
			if id == mcp.TasksExtension {
				// The gateway's tasks are its own (see taskCall): it
				// offers the extension when its server serves them.
				continue
			}
			if _, ok := union[id]; !ok {
				union[id] = settings
			}
		}
	}
	for id := range o.set {
		if _, ok := union[id]; !ok {
			g.eachServer(func(s *handlers.Server) { s.RemoveExtension(id) })
		}
	}
	o.set = map[string]bool{}
	g.extNow.Store(&union)
	for id, settings := range union {
		g.eachServer(func(s *handlers.Server) { s.SetExtension(id, settings) })
		o.set[id] = true
	}
}

// noteClientExtensions records what the one client declared, from its
// capabilities.
func (g *Gateway) noteClientExtensions(caps json.RawMessage) {
	var c struct {
		Extensions json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &c) == nil && len(c.Extensions) > 0 && c.Extensions[0] == '{' {
		g.ext.client.Store(&c.Extensions)
	}
}

// declareExtensions is what a backend connecting now declares as its
// client's extensions (see extOffers): the one client's, once known.
func (g *Gateway) declareExtensions() map[string]json.RawMessage {
	p := g.ext.client.Load()
	if !g.awaitClient || p == nil {
		return nil
	}
	var ext map[string]json.RawMessage
	_ = json.Unmarshal(*p, &ext)
	return ext
}

// extensionsOption is the call option that declares the requesting
// client's extensions to a 2026-07-28 backend (no effect on a legacy
// one); ok is false when it declared none. The backend's client then
// declares its Options' own: none, or, with SingleClient, those of the
// one client, which is the requesting one. (A request without options
// costs a forwarded call one allocation less.)
func extensionsOption(req *handlers.Request) (opt client.CallOption, ok bool) {
	if len(req.ClientCapabilities) == 0 {
		return nil, false
	}
	ext, ok := jsonrpc.Member(req.ClientCapabilities, "extensions")
	if !ok || len(ext) == 0 || ext[0] != '{' {
		return nil, false
	}
	if bytes.Contains(ext, []byte(mcp.TasksExtension)) {
		ext = withoutTasks(ext)
	}
	return client.WithExtensions(ext), true
}

// withoutTasks is an extensions object without the tasks extension: a
// call the gateway forwards plainly must be answered plainly (its tasks
// are the gateway's own, see taskCall), so the backend is not told the
// client would take a task.
func withoutTasks(ext json.RawMessage) json.RawMessage {
	out := []byte{'{'}
	jsonrpc.Members(ext, func(k string, v []byte) bool {
		if k != mcp.TasksExtension {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(append(jsonrpc.AppendString(out, k), ':'), v...)
		}
		return true
	})
	return append(out, '}')
}
