package gateway

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// Endpoint is a virtual endpoint (Config.Endpoints, the file's
// "endpoints"): a server of its own over the gateway's backends that
// offers only what its patterns name, for one team or one agent. What it
// does not name is unknown there, as a name no backend offers is: it is
// not listed, found by search_tools, called, read or completed.
type Endpoint struct {
	// Tools and Prompts are the gateway's names ("fs__read_file"), or
	// path.Match patterns of them ("fs__*"), that the endpoint offers.
	Tools   []string `json:"tools"`
	Prompts []string `json:"prompts"`
	// Resources are the resources and resource templates it offers: by
	// URI (or URI template), or by the gateway's name of them, or
	// path.Match patterns of either ("file:///docs/*").
	Resources []string `json:"resources"`
	// ToolSearch lists search_tools and call_tool there in place of its
	// tools (the top-level "alwaysList" still keeps those it names), as
	// Options.ToolSearch does for the gateway's own endpoint.
	ToolSearch bool `json:"toolSearch"`
	// Access, when set, is joined to the Access of everything the
	// endpoint offers: who may see and use it there (see Backend.Access).
	Access *handlers.Access `json:"access"`
}

// endpointName is what an endpoint's name may be: one path segment.
var endpointName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`)

// parseEndpoints reads the top-level "endpoints": an object of endpoints
// by name.
func parseEndpoints(top map[string]json.RawMessage, cfg *Config) []error {
	raw, ok := top["endpoints"]
	if !ok {
		return nil
	}
	var byName map[string]json.RawMessage
	if err := json.Unmarshal(raw, &byName); err != nil {
		return []error{&ConfigError{Key: "endpoints", Problem: fmt.Sprintf("want an object of endpoints by name, got %s", clip(raw))}}
	}
	var errs []error
	fail := func(name, format string, a ...any) {
		errs = append(errs, &ConfigError{Key: "endpoints", Problem: fmt.Sprintf("%q: ", name) + fmt.Sprintf(format, a...)})
	}
	cfg.Endpoints = map[string]Endpoint{}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		if !endpointName.MatchString(name) {
			fail(name, "an endpoint's name is one path segment: letters, digits, '_', '-' and '.'")
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(byName[name], &fields); err != nil {
			fail(name, "want an object, got %s", clip(byName[name]))
			continue
		}
		bad := false
		for k := range fields {
			switch k {
			case "tools", "prompts", "resources", "toolSearch", "access":
			default:
				fail(name, "unknown key %q (want tools, prompts, resources, toolSearch, access)", k)
				bad = true
			}
		}
		var ep Endpoint
		if err := json.Unmarshal(byName[name], &ep); err != nil {
			fail(name, "%v", err)
			continue
		}
		for _, p := range slices.Concat(ep.Tools, ep.Prompts, ep.Resources) {
			if _, err := path.Match(p, ""); err != nil {
				fail(name, "pattern %q: %v", p, err)
				bad = true
			}
		}
		if !bad {
			cfg.Endpoints[name] = ep
		}
	}
	return errs
}

// matches says whether name is one of patterns, or matches one.
func matches(patterns []string, names ...string) bool {
	for _, p := range patterns {
		for _, n := range names {
			if ok, _ := path.Match(p, n); ok || p == n {
				return true
			}
		}
	}
	return false
}

// endpoint is a virtual endpoint as the gateway serves it: a server of
// its own, to which the gateway's registrations (offered) are copied when
// its patterns name them.
type endpoint struct {
	name      string
	cfg       Endpoint
	srv       *handlers.Server
	search    search
	stopWatch func()

	// cfgNow is cfg for the server's hooks, which run outside g.epMu.
	cfgMu  sync.Mutex
	cfgNow Endpoint
}

// offered is every item the gateway's own server offers, with its
// handler, so that an endpoint made or changed later gets them too.
type offered struct {
	tools     map[string]offeredTool
	prompts   map[string]offeredPrompt
	resources map[string]offeredResource
	templates map[string]offeredTemplate
}

type offeredTool struct {
	t handlers.Tool
	h handlers.ToolHandler
}

type offeredPrompt struct {
	p handlers.Prompt
	h handlers.PromptHandler
}

type offeredResource struct {
	r handlers.Resource
	h handlers.ResourceHandler
}

type offeredTemplate struct {
	t handlers.ResourceTemplate
	h handlers.ResourceHandler
}

// The gateway's registrations: its own server's, copied to the endpoints
// whose patterns name them (and taken from those that no longer do).

func (g *Gateway) addTool(t handlers.Tool, h handlers.ToolHandler) {
	g.srv.AddTool(t, h)
	g.epMu.Lock()
	defer g.epMu.Unlock()
	g.offered.tools[t.Name] = offeredTool{t, h}
	for _, ep := range g.endpoints {
		ep.offerTool(t, h)
	}
}

func (g *Gateway) removeTool(name string) {
	g.srv.RemoveTool(name)
	g.epMu.Lock()
	defer g.epMu.Unlock()
	delete(g.offered.tools, name)
	for _, ep := range g.endpoints {
		ep.srv.RemoveTool(name)
	}
}

func (g *Gateway) addPrompt(p handlers.Prompt, h handlers.PromptHandler) {
	g.srv.AddPrompt(p, h)
	g.epMu.Lock()
	defer g.epMu.Unlock()
	g.offered.prompts[p.Name] = offeredPrompt{p, h}
	for _, ep := range g.endpoints {
		ep.offerPrompt(p, h)
	}
}

func (g *Gateway) removePrompt(name string) {
	g.srv.RemovePrompt(name)
	g.epMu.Lock()
	defer g.epMu.Unlock()
	delete(g.offered.prompts, name)
	for _, ep := range g.endpoints {
		ep.srv.RemovePrompt(name)
	}
}

func (g *Gateway) addResource(r handlers.Resource, h handlers.ResourceHandler) {
	g.srv.AddResource(r, h)
	g.epMu.Lock()
	defer g.epMu.Unlock()
	g.offered.resources[r.URI] = offeredResource{r, h}
	for _, ep := range g.endpoints {
		ep.offerResource(r, h)
	}
}

func (g *Gateway) removeResource(uri string) {
	g.srv.RemoveResource(uri)
	g.epMu.Lock()
	defer g.epMu.Unlock()
	delete(g.offered.resources, uri)
	for _, ep := range g.endpoints {
		ep.srv.RemoveResource(uri)
	}
}

func (g *Gateway) addTemplate(t handlers.ResourceTemplate, h handlers.ResourceHandler) {
	g.srv.AddResourceTemplate(t, h)
	g.epMu.Lock()
	defer g.epMu.Unlock()
	g.offered.templates[t.URITemplate] = offeredTemplate{t, h}
	for _, ep := range g.endpoints {
		ep.offerTemplate(t, h)
	}
}

func (g *Gateway) removeTemplate(uriTemplate string) {
	g.srv.RemoveResourceTemplate(uriTemplate)
	g.epMu.Lock()
	defer g.epMu.Unlock()
	delete(g.offered.templates, uriTemplate)
	for _, ep := range g.endpoints {
		ep.srv.RemoveResourceTemplate(uriTemplate)
	}
}

// hold holds the list_changed notifications of every server of the
// gateway's (its own, its endpoints') until release, so that one
// backend's new lists cost each client one per kind.
func (g *Gateway) hold() (release func()) {
	releases := []func(){g.srv.Hold()}
	g.epMu.Lock()
	for _, ep := range g.endpoints {
		releases = append(releases, ep.srv.Hold())
	}
	g.epMu.Unlock()
	return func() {
		for _, r := range releases {
			r()
		}
	}
}

// eachServer runs fn on the gateway's server and each endpoint's.
func (g *Gateway) eachServer(fn func(*handlers.Server)) {
	fn(g.srv)
	g.epMu.Lock()
	defer g.epMu.Unlock()
	for _, ep := range g.endpoints {
		fn(ep.srv)
	}
}

// notifyResourceUpdated tells the clients subscribed to uri, on every
// endpoint, that it changed.
func (g *Gateway) notifyResourceUpdated(uri string) {
	g.eachServer(func(s *handlers.Server) { s.NotifyResourceUpdated(uri) })
}

// Endpoint is the server of the virtual endpoint name (Config.Endpoints),
// to be served as Server is (mcprt gateway serves it at <http path>/name,
// or alone over stdio with -endpoint name), or nil if there is no such
// endpoint. The server stays the endpoint's across reloads; one that a
// reload removes offers nothing from then on.
func (g *Gateway) Endpoint(name string) *handlers.Server {
	g.epMu.Lock()
	defer g.epMu.Unlock()
	if ep := g.endpoints[name]; ep != nil {
		return ep.srv
	}
	return nil
}

// configureEndpoints puts the endpoints of cfg in place: a new one gets a
// server of its own, one whose patterns changed offers what they name now,
// and one cfg no longer has is emptied and forgotten. The backends are
// not touched.
func (g *Gateway) configureEndpoints(cfg *Config) {
	var want map[string]Endpoint
	if cfg != nil {
		want = cfg.Endpoints
	}
	g.epMu.Lock()
	defer g.epMu.Unlock()
	for name, ep := range g.endpoints {
		if _, ok := want[name]; !ok {
			ep.cfg = Endpoint{}
			ep.sync(g)
			ep.stopWatch()
			delete(g.endpoints, name)
		}
	}
	for name, c := range want {
		ep := g.endpoints[name]
		switch {
		case ep == nil:
			ep = g.newEndpoint(name, c)
			g.endpoints[name] = ep
		case reflect.DeepEqual(ep.cfg, c):
			continue
		default:
			ep.cfg = c
		}
		ep.sync(g)
	}
}

// resyncEndpoints offers again, on every endpoint, what its settings say
// now (the gateway's search pins changed).
func (g *Gateway) resyncEndpoints() {
	g.epMu.Lock()
	defer g.epMu.Unlock()
	for _, ep := range g.endpoints {
		ep.sync(g)
	}
}

// newEndpoint makes an endpoint's server: the gateway's own hooks, so that
// it waits for the backends, follows subscriptions and passes roots as
// the gateway's server does.
func (g *Gateway) newEndpoint(name string, c Endpoint) *endpoint {
	ep := &endpoint{name: name, cfg: c, srv: handlers.NewServer(g.opts.Info, g.srv.Instructions())}
	ep.srv.OfferEverything()
	ep.srv.WaitBeforeListing(g.ready)
	ep.srv.OnUnknownTool(func(name string, caller *handlers.Caller) *mcp.CallToolResult {
		// Why a backend's tool is missing is said only of a name the
		// endpoint offers: any other is unknown there.
		if !matches(ep.patterns().Tools, name) {
			return nil
		}
		return g.unknownTool(name, caller)
	})
	ep.srv.OnClientCapabilities(g.clientCapabilities)
	ep.srv.OnSubscription(g.subscription)
	ep.srv.OnRootsListChanged(g.rootsListChanged)
	ep.search.srv, ep.search.ready = ep.srv, g.ready
	ep.stopWatch = ep.search.watch()
	return ep
}

// patterns is the endpoint's configuration; it changes under g.epMu, and
// the OnUnknownTool hook reads it from a session's goroutine.
func (ep *endpoint) patterns() Endpoint {
	ep.cfgMu.Lock()
	defer ep.cfgMu.Unlock()
	return ep.cfgNow
}

// sync makes the endpoint's server offer what its configuration names of
// what the gateway offers (g.offered), and nothing else, with its tool
// search on or off. The caller holds g.epMu.
func (ep *endpoint) sync(g *Gateway) {
	ep.cfgMu.Lock()
	ep.cfgNow = ep.cfg
	ep.cfgMu.Unlock()
	defer ep.srv.Hold()()
	gs := g.search.settings.Load()
	s := &searchSettings{on: ep.cfg.ToolSearch}
	if gs != nil {
		s.pins = gs.pins
	}
	if old := ep.search.settings.Swap(s); old != nil && old.on && !s.on {
		ep.search.removeTools()
	}
	ep.srv.SetInstructions(g.srv.Instructions())
	if ext := g.extNow.Load(); ext != nil {
		for id, settings := range *ext {
			ep.srv.SetExtension(id, settings)
		}
	}
	// By name, so that an endpoint made by a reload lists in an order
	// that does not change from one run to the next.
	for _, name := range slices.Sorted(maps.Keys(g.offered.tools)) {
		o := g.offered.tools[name]
		if !matches(ep.cfg.Tools, name) || ep.search.reserved(name) {
			ep.srv.RemoveTool(name)
			continue
		}
		ep.offerTool(o.t, o.h)
	}
	for _, name := range slices.Sorted(maps.Keys(g.offered.prompts)) {
		o := g.offered.prompts[name]
		if !matches(ep.cfg.Prompts, name) {
			ep.srv.RemovePrompt(name)
			continue
		}
		ep.offerPrompt(o.p, o.h)
	}
	for _, uri := range slices.Sorted(maps.Keys(g.offered.resources)) {
		o := g.offered.resources[uri]
		if !matches(ep.cfg.Resources, uri, o.r.Name) {
			ep.srv.RemoveResource(uri)
			continue
		}
		ep.offerResource(o.r, o.h)
	}
	for _, tmpl := range slices.Sorted(maps.Keys(g.offered.templates)) {
		o := g.offered.templates[tmpl]
		if !matches(ep.cfg.Resources, tmpl, o.t.Name) {
			ep.srv.RemoveResourceTemplate(tmpl)
			continue
		}
		ep.offerTemplate(o.t, o.h)
	}
	if s.on {
		ep.search.addTools()
	}
}

// offerTool puts a tool of the gateway's on the endpoint when its
// patterns name it, with the endpoint's access joined to its own and
// listed as the endpoint's search says. The caller holds g.epMu.
func (ep *endpoint) offerTool(t handlers.Tool, h handlers.ToolHandler) {
	if !matches(ep.cfg.Tools, t.Name) || ep.search.reserved(t.Name) {
		return
	}
	t.Access = t.Access.Join(ep.cfg.Access)
	t.Unlisted = ep.search.unlisted(t.Name)
	ep.srv.AddTool(t, h)
}

func (ep *endpoint) offerPrompt(p handlers.Prompt, h handlers.PromptHandler) {
	if !matches(ep.cfg.Prompts, p.Name) {
		return
	}
	p.Access = p.Access.Join(ep.cfg.Access)
	ep.srv.AddPrompt(p, h)
}

func (ep *endpoint) offerResource(r handlers.Resource, h handlers.ResourceHandler) {
	if !matches(ep.cfg.Resources, r.URI, r.Name) {
		return
	}
	r.Access = r.Access.Join(ep.cfg.Access)
	ep.srv.AddResource(r, h)
}

func (ep *endpoint) offerTemplate(t handlers.ResourceTemplate, h handlers.ResourceHandler) {
	if !matches(ep.cfg.Resources, t.URITemplate, t.Name) {
		return
	}
	t.Access = t.Access.Join(ep.cfg.Access)
	ep.srv.AddResourceTemplate(t, h)
}

// endpointsState is the gateway's part for its endpoints: them by name,
// and what its own server offers (g.offered), under epMu.
type endpointsState struct {
	epMu      sync.Mutex
	endpoints map[string]*endpoint
	offered   offered
	// extNow are the extensions the gateway's server offers now, for an
	// endpoint that syncs (read without g.ext.mu, which is taken before
	// epMu).
	extNow atomic.Pointer[map[string]json.RawMessage]
}

func newEndpointsState() endpointsState {
	return endpointsState{
		endpoints: map[string]*endpoint{},
		offered: offered{
			tools:     map[string]offeredTool{},
			prompts:   map[string]offeredPrompt{},
			resources: map[string]offeredResource{},
			templates: map[string]offeredTemplate{},
		},
	}
}
