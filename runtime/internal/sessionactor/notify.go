package sessionactor

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// Log is a server-wide log record for the client: a captured stdout line or
// a forwarded slog record. It is sent as notifications/message only where the
// protocol allows one the client did not ask for: in the legacy era, after
// notifications/initialized and when the client's level (logging/setLevel,
// else Config.DefaultLogLevel) admits it. Before that it waits in a bounded
// buffer; in 2026-07-28 it is never sent (it has gone to stderr already).
type Log struct {
	Level  string // one of mcp.LogLevels
	Logger string
	Data   any
}

// Notify is a server-wide custom notification, under the same rules as Log
// (minus the level). Use Instance.Notify in package runtime.
type Notify struct {
	Method string
	Params any
}

// changed carries a registry change from Server.Watch to the session.
type changed struct{ handlers.Change }

// queued is a notification waiting for notifications/initialized.
type queued struct {
	level string // "" for a Notify: not subject to the level
	b     []byte
}

// defaultLogBuffer is how many notifications may wait for
// notifications/initialized before the oldest are dropped.
const defaultLogBuffer = 1024

func encodeNotification(method string, params any) ([]byte, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return jsonrpc.AppendNotification(nil, method, raw), nil
}

func (s *mcpSession) onLog(m Log) {
	if s.modernOnly() {
		return
	}
	b, err := encodeNotification("notifications/message", struct {
		Level  string `json:"level"`
		Logger string `json:"logger,omitempty"`
		Data   any    `json:"data"`
	}{m.Level, m.Logger, m.Data})
	if err != nil {
		s.cfg.Logger.Error("log record does not marshal", "err", err)
		return
	}
	s.sendOrQueue(queued{level: m.Level, b: b})
}

func (s *mcpSession) onNotify(m Notify) {
	if s.modernOnly() {
		s.cfg.Logger.Debug("notification dropped: 2026-07-28 has no unsolicited notifications", "method", m.Method)
		return
	}
	b, err := encodeNotification(m.Method, m.Params)
	if err != nil {
		s.cfg.Logger.Error("notification params do not marshal", "method", m.Method, "err", err)
		return
	}
	s.sendOrQueue(queued{b: b})
}

// modernOnly reports that the client speaks 2026-07-28 and never sent
// initialize: server-wide messages have nowhere to go.
func (s *mcpSession) modernOnly() bool { return s.legacy == nil && s.sawModern }

func (s *mcpSession) sendOrQueue(q queued) {
	if s.legacy != nil && s.legacy.initialized {
		s.sendQueued(q)
		return
	}
	if len(s.backlog) >= s.cfg.LogBuffer {
		s.backlog[0] = queued{}
		s.backlog = s.backlog[1:]
		s.dropped++
	}
	s.backlog = append(s.backlog, q)
}

func (s *mcpSession) sendQueued(q queued) {
	if q.level != "" && !mcp.LevelAdmits(s.logLevel(), q.level) {
		return
	}
	s.env.out(q.b, nil)
}

// logLevel is the level server-wide logs are admitted at.
func (s *mcpSession) logLevel() string {
	if s.legacy != nil && s.legacy.logLevel != "" {
		return s.legacy.logLevel
	}
	return s.cfg.DefaultLogLevel
}

// replay sends what waited for notifications/initialized, in order, the
// drop notice first, in place of the oldest it replaces.
func (s *mcpSession) replay() {
	if s.dropped > 0 {
		b, _ := encodeNotification("notifications/message", map[string]any{
			"level": "warning", "logger": "mcprt",
			"data": map[string]any{"message": strconv.Itoa(s.dropped) + " messages dropped before initialization", "dropped": s.dropped},
		})
		s.sendQueued(queued{level: "warning", b: b})
		s.dropped = 0
	}
	for _, q := range s.backlog {
		s.sendQueued(q)
	}
	s.backlog = nil
}

// onChanged turns a registry change into list_changed / resources/updated
// notifications: in the legacy era once initialized (and for updates, only
// for subscribed URIs); in 2026-07-28 only on listen streams that asked.
func (s *mcpSession) onChanged(ch handlers.Change) {
	method := changeMethod(ch.Kind)
	if method == "" {
		return
	}
	if l := s.legacy; l != nil && l.initialized && ch.Kind != handlers.TaskStatus {
		if ch.Kind != handlers.ResourceUpdated {
			s.env.out(jsonrpc.AppendNotification(nil, method, nil), nil)
		} else if l.subscribed[ch.URI] {
			b, _ := encodeNotification(method, map[string]string{"uri": ch.URI})
			s.env.out(b, nil)
		}
	}
	for _, ln := range s.listeners {
		if ln.wants(ch) {
			ln.ticket.notify(ln.notification(method, ch))
		}
	}
}

func changeMethod(k handlers.ChangeKind) string {
	switch k {
	case handlers.ToolsChanged:
		return "notifications/tools/list_changed"
	case handlers.ResourcesChanged:
		return "notifications/resources/list_changed"
	case handlers.PromptsChanged:
		return "notifications/prompts/list_changed"
	case handlers.ResourceUpdated:
		return "notifications/resources/updated"
	case handlers.TaskStatus:
		return "notifications/tasks"
	}
	return ""
}

// listener is an open 2026-07-28 subscriptions/listen request.
type listener struct {
	id     json.RawMessage
	ticket ticket
	want   listenSet
	uris   map[string]bool
	tasks  map[string]bool
}

// listenSet is what a listen request asks for and, once filtered by the
// server's capabilities, what it gets.
type listenSet struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs are tasks whose status changes the stream carries
	// (notifications/tasks; the tasks extension).
	TaskIDs []string `json:"taskIds,omitempty"`
}

func (ln *listener) wants(ch handlers.Change) bool {
	switch ch.Kind {
	case handlers.ToolsChanged:
		return ln.want.ToolsListChanged
	case handlers.PromptsChanged:
		return ln.want.PromptsListChanged
	case handlers.ResourcesChanged:
		return ln.want.ResourcesListChanged
	case handlers.ResourceUpdated:
		return ln.uris[ch.URI]
	case handlers.TaskStatus:
		return ln.tasks[ch.TaskID]
	}
	return false
}

func (ln *listener) meta() map[string]json.RawMessage {
	return map[string]json.RawMessage{metaSubscriptionID: ln.id}
}

func (ln *listener) notification(method string, ch handlers.Change) []byte {
	p := map[string]any{"_meta": ln.meta()}
	if ch.Kind == handlers.ResourceUpdated {
		p["uri"] = ch.URI
	}
	if ch.Kind == handlers.TaskStatus {
		var task map[string]json.RawMessage
		_ = json.Unmarshal([]byte(ch.Task), &task)
		for k, v := range task {
			p[k] = v
		}
	}
	b, _ := encodeNotification(method, p)
	return b
}

// listen opens a subscriptions/listen stream: acknowledged at once with the
// subset the server honours, then open until the client cancels it or the
// server drains.
func (s *mcpSession) listen(m *jsonrpc.Message, t ticket) {
	key := t.keyOf(m.ID)
	if s.inUse(key) {
		s.answerError(t, m.ID, errIDInUse(string(m.ID)))
		return
	}
	var p struct {
		Notifications *listenSet `json:"notifications"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Notifications == nil {
		s.answerError(t, m.ID, errInvalidParams("subscriptions/listen needs a notifications object"))
		return
	}
	caps := s.cfg.Server.Capabilities()
	has := func(name string) bool { _, ok := caps[name]; return ok }
	want := *p.Notifications
	want.ToolsListChanged = want.ToolsListChanged && has("tools")
	want.PromptsListChanged = want.PromptsListChanged && has("prompts")
	want.ResourcesListChanged = want.ResourcesListChanged && has("resources")
	if !has("resources") {
		want.ResourceSubscriptions = nil
	}
	if len(want.TaskIDs) > 0 && !declaresTasks(m.Params) {
		s.answerError(t, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeMissingClientCapability,
			Message: "Missing required client capability: the " + mcp.TasksExtension + " extension (taskIds in subscriptions/listen)",
			Data:    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{mcp.TasksExtension: map[string]any{}}}}})
		return
	}
	// A listen stream lasts: it holds a slot, never the reader's unit, and
	// does not wait for one.
	if t.batch == nil {
		if !s.env.takeSlot() {
			s.answerError(t, m.ID, s.sc.errBusy())
			return
		}
		t.hold = holdSlot
		s.env.backlog.Done()
	}
	ln := &listener{id: m.ID, ticket: t, want: want, uris: map[string]bool{}, tasks: map[string]bool{}}
	// Only the caller's own tasks are followed, as tasks/get finds only
	// them: the rest (another caller's, another session's, unknown or
	// expired ids) are left out of the acknowledgement, which the
	// extension defines as the task ids the server agreed to notify for,
	// and never notified. Which of those an id was is not told.
	vals := context.Background()
	if t.in != nil && t.in.Values != nil {
		vals = t.in.Values
	}
	followed := want.TaskIDs[:0:0]
	for _, id := range want.TaskIDs {
		if !ln.tasks[id] && s.cfg.Server.MayFollowTask(vals, id) {
			ln.tasks[id] = true
			followed = append(followed, id)
		}
	}
	want.TaskIDs = followed
	ln.want.TaskIDs = followed
	caller := t.caller()
	for _, u := range want.ResourceSubscriptions {
		// One it may not read is acknowledged and never updated, as
		// one nothing serves.
		if !ln.uris[u] && s.cfg.Server.MayRead(u, caller) {
			ln.uris[u] = true
			s.cfg.Server.Subscription(u, true)
		}
	}
	if s.listeners == nil {
		s.listeners = map[string]*listener{}
	}
	s.listeners[key] = ln
	b, _ := encodeNotification("notifications/subscriptions/acknowledged", map[string]any{
		"notifications": want,
		"_meta":         ln.meta(),
	})
	t.notify(b)
}

// endListeners closes every listen stream from the server's side: a result
// carrying the subscription id, then notifications/cancelled for it.
func (s *mcpSession) endListeners(reason string) {
	for key, ln := range s.listeners {
		raw, _ := json.Marshal(map[string]any{"_meta": ln.meta()})
		ln.ticket.answer(s.env.modernResponse(ln.id, raw, noCache))
		b, _ := encodeNotification("notifications/cancelled", map[string]any{"requestId": ln.id, "reason": reason})
		ln.ticket.notify(b)
		delete(s.listeners, key)
		s.release(ln)
	}
}

// unlisten ends a listen stream the client cancelled: no response.
func (s *mcpSession) unlisten(key string) bool {
	ln, ok := s.listeners[key]
	if !ok {
		return false
	}
	delete(s.listeners, key)
	ln.ticket.none()
	s.release(ln)
	return true
}

// release tells the server's OnSubscription hook that the listen stream
// ln no longer follows its resources.
func (s *mcpSession) release(ln *listener) {
	for u := range ln.uris {
		s.cfg.Server.Subscription(u, false)
	}
	clear(ln.uris)
}

// releaseSubscriptions, as the session stops, tells the OnSubscription
// hook of every resource it still follows that it no longer does.
func (s *mcpSession) releaseSubscriptions() {
	if s.legacy != nil {
		for u := range s.legacy.subscribed {
			s.cfg.Server.Subscription(u, false)
		}
		clear(s.legacy.subscribed)
	}
	for key, ln := range s.listeners {
		s.release(ln)
		delete(s.listeners, key)
	}
}

// declaresTasks reports whether a 2026-07-28 request's params declare the
// tasks extension in _meta's clientCapabilities.
func declaresTasks(params json.RawMessage) bool {
	meta, _ := jsonrpc.Member(params, "_meta")
	caps, _ := jsonrpc.Member(meta, metaClientCapabilities)
	ext, _ := jsonrpc.Member(caps, "extensions")
	v, ok := jsonrpc.Member(ext, mcp.TasksExtension)
	return ok && string(v) != "null"
}
