package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// Server is the registry of what a server offers: tools, resources,
// resource templates, prompts and completions. Its methods are safe for
// concurrent use, and everything may be added or removed while the server
// runs; Watch reports each change.
//
// Lists come in registration order; an item replaced under the same name
// (or URI) keeps its place.
type Server struct {
	info         mcp.Implementation
	instructions atomic.Pointer[string]

	mu        sync.RWMutex
	tools     catalog[*tool]
	resources catalog[*resource]
	templates catalog[*template]
	prompts   catalog[*prompt]
	pageSize  int
	// offered has a bit per capability, set when the first item of its
	// kind is registered and never cleared: a client told of a capability
	// keeps finding its methods, even when the last item is removed.
	offered atomic.Uint32

	watch watchers
	// subscription and rootsChanged are the OnSubscription and
	// OnRootsListChanged hooks.
	subscription atomic.Pointer[func(uri string, on bool)]
	rootsChanged atomic.Pointer[func()]
	// listsReady and unknownTool are the WaitBeforeListing and
	// OnUnknownTool hooks.
	clientCaps  atomic.Pointer[func(json.RawMessage)]
	listsReady  atomic.Pointer[<-chan struct{}]
	unknownTool atomic.Pointer[func(name string, caller *Caller) *mcp.CallToolResult]

	// bound holds the method implementations as func values, made once: a
	// method value made in Method would be an allocation per request.
	bound struct {
		listTools, callTool, listResources, listResourceTemplates, readResource,
		listPrompts, getPrompt, complete MethodFunc
		startTool StartFunc
	}
	// extensions are the extensions the server offers, by identifier,
	// each with its settings object (SetExtension), and methods the
	// methods they add (AddMethod).
	extensions map[string]json.RawMessage
	methods    map[string]Method
	// starters is set once a tool with a Start is registered, and never
	// cleared: until then tools/call has no Start, and a request costs the
	// session no second look at its params.
	starters atomic.Bool
	// guarded is set once an item with an Access is registered, and never
	// cleared: until then no list looks at who asks.
	guarded atomic.Bool
	// tasks is set by ServeTasks.
	tasks atomic.Pointer[taskServe]
}

// guard notes that an item with access a is being registered.
func (s *Server) guard(a *Access) {
	if a != nil {
		s.guarded.Store(true)
	}
}

const (
	offerTools uint32 = 1 << iota
	offerResources
	offerPrompts
	offerCompletions
)

// offer marks a capability as offered. The caller holds s.mu.
func (s *Server) offer(bit uint32) { s.offered.Or(bit) }

// NewServer returns an empty server with the given identity. instructions
// are given to clients at initialize and server/discover ("" for none).
func NewServer(info mcp.Implementation, instructions string) *Server {
	s := &Server{info: info, pageSize: defaultPageSize}
	s.instructions.Store(&instructions)
	b := &s.bound
	b.listTools, b.callTool = s.listTools, s.callTool
	b.listResources, b.listResourceTemplates, b.readResource = s.listResources, s.listResourceTemplates, s.readResource
	b.listPrompts, b.getPrompt, b.complete = s.listPrompts, s.getPrompt, s.complete
	b.startTool = s.startTool
	return s
}

// OfferEverything advertises tools (and resources, prompts and
// completions) before anything of their kind is registered, for a server
// whose offers arrive after its first clients: a gateway whose backends
// are still starting answers a client's initialize at once, and the
// client must be told of what will come. Until it comes, lists are empty.
func (s *Server) OfferEverything() {
	s.offered.Or(offerTools | offerResources | offerPrompts | offerCompletions)
}

// WaitBeforeListing makes tools/list, prompts/list, resources/list and
// resources/templates/list wait until ready is closed (or the request
// ends), and a tools/call of a tool not registered yet wait for it too:
// for a server whose offers arrive shortly after it starts, so that a
// client that lists once and never listens for list_changed still sees
// them. A nil ready waits for nothing.
func (s *Server) WaitBeforeListing(ready <-chan struct{}) {
	if ready == nil {
		s.listsReady.Store(nil)
		return
	}
	s.listsReady.Store(&ready)
}

// awaitLists waits as WaitBeforeListing says, and reports whether it had
// to: false when nothing was to be waited for.
func (s *Server) awaitLists(ctx context.Context) bool {
	p := s.listsReady.Load()
	if p == nil {
		return false
	}
	select {
	case <-*p:
		s.listsReady.CompareAndSwap(p, nil) // later requests need not look
		return false
	default:
	}
	select {
	case <-*p:
	case <-ctx.Done():
	}
	return true
}

// OnUnknownTool sets what a tools/call of a name no tool has is answered
// with: fn's result, or the protocol's "Unknown tool" error when fn
// returns nil. A gateway says why a backend's tool is not there (the
// backend never started, and its error). caller is the request's
// (Request.Caller, nil without one): what fn says must not tell a caller
// of something its Access would hide. fn must not block.
func (s *Server) OnUnknownTool(fn func(name string, caller *Caller) *mcp.CallToolResult) {
	s.unknownTool.Store(&fn)
}

// Info returns the server's identity.
func (s *Server) Info() mcp.Implementation { return s.info }

// Instructions returns the guidance given to clients at initialize and server/discover.
func (s *Server) Instructions() string {
	if p := s.instructions.Load(); p != nil {
		return *p
	}
	return ""
}

// SetInstructions replaces the instructions. Clients that have initialized
// keep what they were given (the protocol has no notification for it);
// those that initialize, or send server/discover, later get the new ones.
// A gateway sets them as its backends come up.
func (s *Server) SetInstructions(instructions string) { s.instructions.Store(&instructions) }

// SetPageSize sets how many items tools/list, resources/list,
// resources/templates/list and prompts/list return per page; n <= 0
// restores 100.
func (s *Server) SetPageSize(n int) {
	if n <= 0 {
		n = defaultPageSize
	}
	s.mu.Lock()
	s.pageSize = n
	s.mu.Unlock()
}

// Capabilities returns the server capabilities to advertise, derived from
// what has been registered: tools, resources (with subscribe) and prompts,
// each with listChanged, and completions when a prompt argument or a
// template variable has a CompletionHandler. The session adds logging and
// anything else it implements itself.
func (s *Server) Capabilities() map[string]any {
	caps := map[string]any{}
	offered := s.offered.Load()
	if offered&offerTools != 0 {
		caps["tools"] = map[string]any{"listChanged": true}
	}
	if offered&offerResources != 0 {
		caps["resources"] = map[string]any{"subscribe": true, "listChanged": true}
	}
	if offered&offerPrompts != 0 {
		caps["prompts"] = map[string]any{"listChanged": true}
	}
	if offered&offerCompletions != 0 {
		caps["completions"] = map[string]any{}
	}
	if s.tasksOn() {
		// 2025-11-25's capability; the session leaves it out for other
		// revisions (2026-07-28 has the extension instead).
		caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
			"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	}
	s.mu.RLock()
	if len(s.extensions) > 0 {
		caps["extensions"] = maps.Clone(s.extensions)
	}
	s.mu.RUnlock()
	return caps
}

// SetExtension offers the extension id ("io.modelcontextprotocol/ui"),
// with its settings object (nil: {}), in capabilities.extensions: at
// initialize and in server/discover. Clients that connect from then on
// see it (the protocol has no notification for a change of capabilities).
// Whether a client supports an extension is its own declaration, which a
// handler reads with Request.ClientExtension. SetExtension panics if
// settings is not a JSON object.
func (s *Server) SetExtension(id string, settings json.RawMessage) {
	settings = nullIsNone(settings)
	if settings == nil {
		settings = json.RawMessage("{}")
	}
	mustBeObject("extension", id, "settings", settings)
	s.mu.Lock()
	if s.extensions == nil {
		s.extensions = map[string]json.RawMessage{}
	}
	s.extensions[id] = settings
	s.mu.Unlock()
}

// AddMethod serves a method an extension adds (skills/list, say), which
// the session dispatches as it does the core ones: on a handler actor,
// with a Request, in both eras; a 2026-07-28 result of a cacheable method
// carries ttlMs and cacheScope (unless run's result has its own). The
// core methods are not replaced: AddMethod panics for one of them, or
// without run.
func (s *Server) AddMethod(name string, run MethodFunc, cacheable bool) {
	if run == nil || name == "" {
		panic("handlers: AddMethod needs a name and a func")
	}
	if coreMethods[name] {
		panic(fmt.Sprintf("handlers: AddMethod cannot replace the core method %q", name))
	}
	s.mu.Lock()
	if s.methods == nil {
		s.methods = map[string]Method{}
	}
	s.methods[name] = Method{Run: run, Cacheable: cacheable}
	s.mu.Unlock()
}

// addWaitingMethod is AddMethod for a method whose requests wait for long
// (Method.Waits).
func (s *Server) addWaitingMethod(name string, run MethodFunc) {
	s.AddMethod(name, run, false)
	s.mu.Lock()
	m := s.methods[name]
	m.Waits = true
	s.methods[name] = m
	s.mu.Unlock()
}

// coreMethods are the protocol's own: Method's switch, and those the
// session answers itself.
var coreMethods = map[string]bool{
	"tools/list": true, "tools/call": true, "resources/list": true, "resources/templates/list": true,
	"resources/read": true, "prompts/list": true, "prompts/get": true, "completion/complete": true,
	"initialize": true, "ping": true, "server/discover": true, "logging/setLevel": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "subscriptions/listen": true,
}

// RemoveExtension stops offering the extension id; it reports whether it
// was offered.
func (s *Server) RemoveExtension(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.extensions[id]
	delete(s.extensions, id)
	return ok
}

// Method is one server method as the session dispatches it.
type Method struct {
	Run MethodFunc
	// Start, when set, is offered the request first (see StartFunc); Run
	// runs it when Start does not take it.
	Start StartFunc
	// Cacheable marks results that carry ttlMs and cacheScope in 2026-07-28.
	Cacheable bool
	// Waits marks a method whose requests wait on something else for
	// long, not compute (tasks/result, which blocks until its task
	// ends): the session bounds them apart from the other requests
	// (session.Config.MaxWaiting), so that many of them do not take the
	// slots plain requests need.
	Waits bool
}

// MethodFunc runs one request and returns its result (marshalled with
// encoding/json, it must be a JSON object) or an error (a *jsonrpc.Error is
// sent as is; any other error becomes -32603 with a generic message).
type MethodFunc func(ctx context.Context, req *Request) (any, error)

// StartFunc starts a request without holding a handler actor while it
// runs: for requests that wait on something else (another process, an
// actor) rather than compute. It runs on the session's goroutine, so it
// must not block. It returns false to leave the request to the method's
// Run, on a handler actor; or true once it has taken the request, which it
// must then settle exactly once, from any goroutine, through d: with its
// answer, or by handing it to Run after all (Deferred.Fallback). ctx is
// the request's, cancelled as Run's would be.
type StartFunc func(ctx context.Context, req *Request, d Deferred) bool

// Deferred is a request a StartFunc took.
type Deferred interface {
	// Reply answers the request, as Run's return would.
	Reply(result any, err error)
	// Fallback hands the request to the method's Run, on a handler actor,
	// as if the StartFunc had not taken it.
	Fallback()
}

// Method returns the implementation of a server method, if the server
// offers it. Methods of capabilities the server does not have are absent.
//
// resources/subscribe and resources/unsubscribe are not among them: which
// client follows which resource is the session's state (see Watch; a
// server that must know is told through OnSubscription).
func (s *Server) Method(name string) (Method, bool) {
	var (
		run       MethodFunc
		start     StartFunc
		need      uint32
		cacheable bool
	)
	b := &s.bound
	switch name {
	case "tools/list":
		run, need, cacheable = b.listTools, offerTools, true
	case "tools/call":
		run, need = b.callTool, offerTools
		if s.starters.Load() {
			start = b.startTool
		}
	case "resources/list":
		run, need, cacheable = b.listResources, offerResources, true
	case "resources/templates/list":
		run, need, cacheable = b.listResourceTemplates, offerResources, true
	case "resources/read":
		// 2026-07-28 makes every resources/read result cacheable (ttlMs 0
		// says "do not cache").
		run, need, cacheable = b.readResource, offerResources, true
	case "prompts/list":
		run, need, cacheable = b.listPrompts, offerPrompts, true
	case "prompts/get":
		run, need = b.getPrompt, offerPrompts
	case "completion/complete":
		run, need = b.complete, offerCompletions
	default:
		s.mu.RLock()
		m, ok := s.methods[name]
		s.mu.RUnlock()
		return m, ok
	}
	if s.offered.Load()&need == 0 {
		return Method{}, false
	}
	return Method{Run: run, Start: start, Cacheable: cacheable}, true
}
