package handlers

import (
	"encoding/json"
	"sync"
)

// ChangeKind says what changed in a Server.
type ChangeKind int

const (
	// ToolsChanged: a tool was added, replaced or removed.
	ToolsChanged ChangeKind = iota + 1
	// ResourcesChanged: a resource or a resource template was added,
	// replaced or removed.
	ResourcesChanged
	// PromptsChanged: a prompt was added, replaced or removed.
	PromptsChanged
	// ResourceUpdated: the content of the resource Change.URI changed
	// (see Server.NotifyResourceUpdated).
	ResourceUpdated
	// TaskStatus: the 2026-07-28 task Change.TaskID changed status (see
	// Server.ServeTasks); a subscriptions/listen stream that named it in
	// notifications.taskIds is told, with Change.Task.
	TaskStatus
)

// String returns the kind's name, for logs.
func (k ChangeKind) String() string {
	switch k {
	case ToolsChanged:
		return "ToolsChanged"
	case ResourcesChanged:
		return "ResourcesChanged"
	case PromptsChanged:
		return "PromptsChanged"
	case ResourceUpdated:
		return "ResourceUpdated"
	case TaskStatus:
		return "TaskStatus"
	}
	return "ChangeKind(?)"
}

// Change is one change of a Server, as Watch reports it.
type Change struct {
	Kind ChangeKind
	// URI is the updated resource's URI; set only for ResourceUpdated.
	URI string
	// TaskID and Task are, for TaskStatus, the task's id and its
	// notifications/tasks params (a JSON object: the task as tasks/get
	// shows it).
	TaskID, Task string
}

// watchers holds the Watch callbacks. It has its own lock so that callbacks
// run without the registry lock held: a callback may read the Server (and
// the session's does, to build notifications).
type watchers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(Change)
	// holds counts the Hold calls not yet released; while it is above
	// zero, changes wait in held, each once (see Hold).
	holds int
	held  []Change
}

// Watch registers fn to be told of every change to the server: each add,
// replacement or removal of a tool, resource, resource template or prompt,
// and each NotifyResourceUpdated. fn runs synchronously on the goroutine
// that made the change, after the server's lock is released, so it may call
// the Server but should not block. stop unregisters fn; calling it more than
// once is harmless.
//
// The session turns changes into notifications/tools/list_changed,
// notifications/resources/list_changed, notifications/prompts/list_changed
// and notifications/resources/updated.
func (s *Server) Watch(fn func(Change)) (stop func()) {
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fns == nil {
		w.fns = map[int]func(Change){}
	}
	id := w.next
	w.next++
	w.fns[id] = fn
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.fns, id)
	}
}

// NotifyResourceUpdated tells watchers that the content of the resource uri
// changed, so that subscribed clients get notifications/resources/updated.
// The server keeps no subscription state: the session filters by
// subscription.
func (s *Server) NotifyResourceUpdated(uri string) {
	s.changed(Change{Kind: ResourceUpdated, URI: uri})
}

// changed calls the watchers. The caller must not hold s.mu.
func (s *Server) changed(c Change) {
	w := &s.watch
	w.mu.Lock()
	if w.holds > 0 {
		w.hold(c)
		w.mu.Unlock()
		return
	}
	fns := make([]func(Change), 0, len(w.fns))
	for _, fn := range w.fns {
		fns = append(fns, fn)
	}
	w.mu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
}

// OnSubscription sets fn to be told when a client starts (on) or stops
// following the content of the resource uri: on at resources/subscribe
// (legacy revisions), or when a 2026-07-28 subscriptions/listen stream
// names uri in its resourceSubscriptions; off at resources/unsubscribe,
// when that stream ends, and when the session ends with uri still
// followed. Each session tells of one uri once (subscribing twice is one
// subscription), and every on is balanced by an off, so that fn may count
// the sessions that follow a uri. The sessions answer without waiting for
// fn, and filter notifications/resources/updated by subscription
// themselves: fn is only for a server whose resources live elsewhere (a
// gateway), which must follow them upstream while some client does.
//
// fn runs on the session's goroutine and must not block. nil (the
// default) tells nobody; a later call replaces an earlier fn.
func (s *Server) OnSubscription(fn func(uri string, on bool)) {
	if fn == nil {
		s.subscription.Store(nil)
		return
	}
	s.subscription.Store(&fn)
}

// Subscription tells the OnSubscription hook, if any, that a session
// started (on) or stopped following uri. Package session calls it; a
// transport with sessions of its own would too.
func (s *Server) Subscription(uri string, on bool) {
	if fn := s.subscription.Load(); fn != nil {
		(*fn)(uri, on)
	}
}

// OnRootsListChanged sets fn to be called when a client says its roots
// changed (notifications/roots/list_changed); the session has then
// forgotten the roots it cached for Request.Roots, and the next one asks
// the client again. fn is for a server that passes the client's roots on
// (a gateway, whose backends must hear of the change). It runs on the
// session's goroutine and must not block. nil (the default) calls
// nothing; a later call replaces an earlier fn.
func (s *Server) OnRootsListChanged(fn func()) {
	if fn == nil {
		s.rootsChanged.Store(nil)
		return
	}
	s.rootsChanged.Store(&fn)
}

// OnClientCapabilities sets fn to be told the capabilities a client
// declares: at its initialize (legacy revisions), or with each request
// (2026-07-28, where they travel in _meta). A gateway learns from it what
// to declare to its backends (roots only when the client has them). fn
// runs on the session's goroutine and must be quick; nil removes it.
func (s *Server) OnClientCapabilities(fn func(capabilities json.RawMessage)) {
	if fn == nil {
		s.clientCaps.Store(nil)
		return
	}
	s.clientCaps.Store(&fn)
}

// ClientCapabilities calls the OnClientCapabilities hook, if any. Package
// session calls it.
func (s *Server) ClientCapabilities(capabilities json.RawMessage) {
	if fn := s.clientCaps.Load(); fn != nil {
		(*fn)(capabilities)
	}
}

// RootsListChanged calls the OnRootsListChanged hook, if any. Package
// session calls it.
func (s *Server) RootsListChanged() {
	if fn := s.rootsChanged.Load(); fn != nil {
		(*fn)()
	}
}
