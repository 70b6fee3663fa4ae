package sessionactor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/trace"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/stdio/wire"
	"github.com/mcprt/mcprt/supervisor"
)

// Defaults for Config's zero values.
const (
	defaultRequestTimeout = 60 * time.Second
	defaultDrainTimeout   = 5 * time.Second
	defaultMaxWaiting     = 1024
)

// Config wires a session to the rest of the tree.
type Config struct {
	Server *handlers.Server
	// Writer is the stdio writer actor's inbox; Handlers is the supervisor
	// under which the session starts its handler actors.
	Writer *supervisor.Inbox
	// Deliver, when set, takes every outgoing message in place of Writer
	// (but those of a request that came with a Replier: see In),
	// on the goroutine that sends it (the session's, a handler's, a
	// timer's), in the order each goroutine sends. It is for transports
	// that hand each message to whoever waits for it (Streamable HTTP)
	// rather than write one stream: they need no writer actor, and a
	// response costs no hand-off. It must not block, and it calls each
	// message's Done once it has taken the message.
	Deliver  func(wire.Out)
	Handlers *actor.PID
	// Runners lends the handler actors goroutines for their calls: one
	// pool for every session under one handler supervisor, owned by the
	// tree (supervisor.Runners.Actor). Nil: the session makes its own and
	// closes it when it stops.
	Runners *supervisor.Runners
	// LoopOnRunners runs the session itself on Runners while it has
	// messages, rather than on a goroutine of its own
	// (supervisor.OnRunners): for transports with many sessions, most of
	// them idle between requests (Streamable HTTP's legacy sessions),
	// where a stack per session is most of what an idle one costs.
	LoopOnRunners bool
	// Inbox is the session's own: a transport sends it what the client
	// sent (*In, *Raw, *Oversized, Closed: see In), and anything may
	// send it messages (Drain, Cancel, Log, Notify, WorkersLost) from any
	// goroutine. Nil: New makes one, reachable through the PID only.
	Inbox *supervisor.Inbox
	// Backlog, when set, is the reader's: each message (In, Raw,
	// Oversized) it hands on carries one unit, which the session gives back
	// once the message is dealt with or passes on to its answer (see
	// wire.Backlog). Nil: no reader waits (Streamable HTTP), and the
	// session counts on one of its own that nobody waits on.
	Backlog *wire.Backlog
	// Options are what the session's user chose (package session): its
	// bounds, deadlines, crash policy, logging and tracing, one value the
	// transports pass on whole (New gives the zero ones their defaults).
	// MaxInFlight past, a request waits in arrival order for a slot, still
	// under its deadline and cancellable; MaxQueued past, it is answered at
	// once with CodeServerBusy. Nothing else waits: notifications and the
	// client's answers to the server's requests are taken as they arrive.
	session.Options
	// MaxWaiting bounds the requests of methods that wait on something
	// else for long (handlers.Method.Waits: tasks/result, which blocks
	// until its task ends) in progress at once, apart from MaxInFlight
	// (0: 1024): a client waiting for the results of its
	// many tasks must not take the slots its plain calls need, or those
	// calls wait for tasks to end. Past it such a request takes a slot
	// as any other does.
	MaxWaiting int
	// WorkerPrefix starts the child IDs of the handler actors this session
	// starts, so that sessions sharing one handler supervisor (Streamable
	// HTTP) do not collide ("": "w1", "w2", …).
	WorkerPrefix string
	// StateKey signs the requestState of 2026-07-28 input_required
	// results (nil: 32 random bytes per session). Servers that must accept
	// a retry on another session or replica share one key, 32 bytes or
	// more, kept secret.
	StateKey []byte
	Logger   *slog.Logger
	// SessionID is the transport's id of this session (a legacy
	// Mcp-Session-Id), the spans' mcp.session.id ("": none).
	SessionID string
}

// Drain asks the session to stop taking requests, let in-flight ones finish
// (bounded by DrainTimeout) and exit normally, as on stdin EOF. The runtime
// sends it on SIGTERM and SIGINT.
type Drain struct{}

// WorkersLost tells the session that its handler actors are gone (their
// supervisor was restarted), so it starts new ones for the next requests.
// Requests already running are still answered: by their handler if it
// returns, or by their deadline.
type WorkersLost struct{}

type drainExpired struct{}

// retryWorkers asks the session to start the workers it could not start
// while the handler supervisor was being restarted.
type retryWorkers struct{}

// legacy is the state an initialize request creates.
type legacy struct {
	version     string
	clientCaps  json.RawMessage
	initialized bool // notifications/initialized received
	logLevel    string
	subscribed  map[string]bool // resources/subscribe URIs
	since       time.Time       // when initialize opened the session
	ended       bool            // its duration recorded (Config.Tracer)
}

// mcpSession is the session actor. Build it with New.
type mcpSession struct {
	cfg        Config
	env        *env
	ownRunners bool // cfg.Runners was made by start, for this incarnation only
	lc         *supervisor.LoopContext

	legacy    *legacy
	sawModern bool // a 2026-07-28 request arrived

	backlog   []queued // notifications waiting for notifications/initialized
	dropped   int      // ... and how many of the oldest were dropped
	listeners map[string]*listener
	stopWatch func()
	crashes   map[string]*supervisor.Window
	// suspendedUntil holds the tools suspended for crash-looping (Suspend).
	suspendedUntil map[string]time.Time

	// sc is the scheduling half: the calls in flight, the slots' queue,
	// the worker pool, the deadlines (scheduler.go).
	sc *scheduler

	draining   bool
	exiting    bool
	drainTimer *time.Timer
}

// New returns a Producer for the session actor.
func New(cfg Config) actor.Producer {
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = defaultRequestTimeout
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = defaultDrainTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LogBuffer <= 0 {
		cfg.LogBuffer = defaultLogBuffer
	}
	if cfg.CrashIntensity <= 0 {
		cfg.CrashIntensity = defaultCrashIntensity
	}
	if cfg.CrashPeriod <= 0 {
		cfg.CrashPeriod = defaultCrashPeriod
	}
	if cfg.Inbox == nil {
		cfg.Inbox = supervisor.NewInbox()
	}
	if cfg.Backlog == nil {
		cfg.Backlog = wire.NewBacklog(1 << 30) // nobody waits on it
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = session.DefaultMaxInFlight
	}
	if cfg.MaxQueued <= 0 {
		cfg.MaxQueued = session.DefaultMaxQueued
	}
	if cfg.MaxWaiting <= 0 {
		cfg.MaxWaiting = defaultMaxWaiting
	}
	newLoop := func() supervisor.Loop { return &mcpSession{cfg: cfg} }
	if cfg.LoopOnRunners && cfg.Runners != nil {
		return supervisor.OnRunners(cfg.Inbox, cfg.Runners, newLoop)
	}
	// The session owns its goroutine: every line and every finished call
	// reaches it, and hollywood would start a goroutine for each message
	// that finds it idle (see supervisor.Inbox).
	return supervisor.OwnGoroutine(cfg.Inbox, newLoop)
}

// Receive implements supervisor.Loop.
func (s *mcpSession) Receive(lc *supervisor.LoopContext, msg any) {
	switch m := msg.(type) {
	case actor.Started:
		s.start(lc)
	case *In:
		s.in(m)
	case *Raw:
		s.line(m.Data, s.single())
	case *Oversized:
		s.oversized(m)
	case Closed:
		if m.Err != nil {
			s.cfg.Logger.Error("reading the input failed; draining", "err", m.Err)
		} else {
			s.cfg.Logger.Debug("input closed; draining", "in_flight", s.sc.pendingCount())
		}
		s.drain()
	case Drain:
		s.drain()
	case Cancel:
		if !s.unlisten(m.Key) {
			s.cancel(m.Key)
		}
	case deferredDone:
		s.sc.forget(m.cl)
		s.checkDrain()
	case fallback:
		s.sc.fallback(m.cl)
	case workerIdle:
		s.sc.workerIdle(m.w)
	case workerCrashed:
		s.sc.workerCrashed(m.w, m.value)
	case WorkersLost:
		s.sc.workersLost()
	case retryWorkers:
		s.sc.retryWorkers()
	case Log:
		s.onLog(m)
	case Notify:
		s.onNotify(m)
	case changed:
		s.onChanged(m.Change)
	case slotFreed:
		s.sc.slotFreed()
		s.checkDrain()
	case settled:
		s.checkDrain()
	case deadlineTick:
		if m.dl.expire() > 0 {
			s.checkDrain()
		}
	case drainExpired:
		s.expireDrain()
	case actor.Stopped:
		s.stop()
	}
}

func (s *mcpSession) start(lc *supervisor.LoopContext) {
	s.lc = lc
	// The inbox outlives incarnations: start from what a new scheduler's
	// wakeOnIdle says.
	lc.Inbox().WakeOnPost(false)
	info, _ := json.Marshal(s.cfg.Server.Info())
	s.env = &env{
		engine:     lc.Engine(),
		writer:     s.cfg.Writer,
		deliver:    s.cfg.Deliver,
		inbox:      lc.Inbox(),
		backlog:    s.cfg.Backlog,
		logger:     s.cfg.Logger,
		serverInfo: info,
		cacheTTL:   s.cfg.CacheTTL.Milliseconds(),
		stateKey:   s.cfg.StateKey,
		tracer:     s.cfg.Tracer,
		load:       s.cfg.Overload,
	}
	if s.env.stateKey == nil {
		s.env.stateKey = newStateKey()
	}
	s.env.slots.max = int32(s.cfg.MaxInFlight)
	s.env.waits.max = int32(s.cfg.MaxWaiting)
	s.env.written = s.env.backlog.Done
	if s.cfg.Runners == nil {
		s.cfg.Runners = supervisor.NewRunners()
		s.ownRunners = true
	}
	s.sc = newScheduler(s, s.env, &s.cfg)
	s.crashes = map[string]*supervisor.Window{}
	s.suspendedUntil = map[string]time.Time{}
	post := s.env.post
	s.stopWatch = s.cfg.Server.Watch(func(ch handlers.Change) { post(changed{ch}) })
}

// EndBatch implements supervisor.BatchEnder.
func (s *mcpSession) EndBatch(lc *supervisor.LoopContext) {
	s.sc.endBatch(lc.Inbox(), s.draining)
}

// stop runs when the session actor stops, for whatever reason: handlers
// are cancelled and requests nobody will answer get an error now.
func (s *mcpSession) stop() {
	if s.env == nil {
		return
	}
	if s.stopWatch != nil {
		s.stopWatch()
	}
	s.releaseSubscriptions()
	if s.drainTimer != nil {
		s.drainTimer.Stop()
	}
	s.sc.stop(errShuttingDown)
	if s.ownRunners {
		// After the calls were cancelled: Close waits for the running ones.
		s.cfg.Runners.Close() // the next incarnation, with its own copy of the Config, makes its own
	}
	s.endSession()
}

// endSession records the session's duration (Config.Tracer): only a
// legacy session is one, opened by initialize and ended with its actor
// (stdin's EOF over stdio; over HTTP a DELETE, eviction or shutdown). A
// 2026-07-28 request belongs to no session and records none.
func (s *mcpSession) endSession() {
	l := s.legacy
	if l == nil || l.ended || s.cfg.Tracer == nil {
		return
	}
	l.ended = true
	transport := "pipe"
	if s.cfg.SessionID != "" { // only HTTP names its sessions
		transport = "tcp"
	}
	s.cfg.Tracer.EndSession(trace.SessionEnd{Start: l.since, End: time.Now(), ProtocolVersion: l.version, Transport: transport})
}

var errShuttingDown = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Server is shutting down"}

func (s *mcpSession) single() ticket { return ticket{env: s.env} }

// in takes a message from a transport that decodes its own (see In).
func (s *mcpSession) in(m *In) {
	t := ticket{env: s.env, in: m}
	if m.Batch != nil {
		s.batch(m.Batch, t)
		return
	}
	s.message(&m.Msg, t)
}

// line takes an undecoded message (Raw): the same path as In, once
// decoded here.
func (s *mcpSession) line(data []byte, t ticket) {
	if jsonrpc.IsBatch(data) {
		s.batch(data, t)
		return
	}
	var m jsonrpc.Message
	id, jerr := jsonrpc.Decode(data, &m)
	if jerr != nil {
		t.answerError(id, jerr)
		return
	}
	s.message(&m, t)
}

func (s *mcpSession) oversized(m *Oversized) {
	e := &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("Invalid Request: message of %d bytes exceeds the %d-byte line limit", m.Size, m.Max),
		Data:    map[string]int{"size": m.Size, "limit": m.Max},
	}
	s.single().answerError(idFromHead(m.Head), e)
}

// idFromHead finds a top-level "id" in the first bytes of a line that was
// too long to keep, so the client can still match the error to its request.
func idFromHead(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return jsonrpc.NullID
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return jsonrpc.NullID
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return jsonrpc.NullID
		}
		if k == "id" {
			var m jsonrpc.Message
			if _, jerr := jsonrpc.Decode(append([]byte(`{"jsonrpc":"2.0","method":"x","id":`), append(v, '}')...), &m); jerr == nil {
				return v
			}
			return jsonrpc.NullID
		}
	}
	return jsonrpc.NullID
}

// batch handles a JSON array line. Batches exist only in 2025-03-26; in
// every other revision they are rejected whole.
// whole is the ticket of the batch's message (its Replier, values); its
// parts are keyed by their own ids.
func (s *mcpSession) batch(data []byte, whole ticket) {
	if s.legacy == nil || s.legacy.version != mcp.Version20250326 {
		whole.answerError(nil, &jsonrpc.Error{
			Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: JSON-RPC batches are only accepted in protocol version 2025-03-26",
		})
		return
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(data, &parts); err != nil {
		whole.answerError(nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error"})
		return
	}
	if len(parts) == 0 {
		whole.answerError(nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: empty batch"})
		return
	}
	b := &batch{env: s.env, to: whole.to(), left: len(parts)}
	t := ticket{env: s.env, batch: b, in: whole.in}
	for _, p := range parts {
		var m jsonrpc.Message
		id, jerr := jsonrpc.Decode(p, &m)
		switch {
		case jsonrpc.IsBatch(p):
			t.answerError(nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: nested batch"})
		case jerr != nil:
			t.answerError(id, jerr)
		case m.Kind == jsonrpc.KindRequest && m.Method == "initialize":
			t.answerError(m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: initialize must not be part of a batch"})
		default:
			s.message(&m, t)
		}
	}
}

func (s *mcpSession) message(m *jsonrpc.Message, t ticket) {
	switch m.Kind {
	case jsonrpc.KindRequest:
		s.request(m, t)
	case jsonrpc.KindNotification:
		s.notification(m)
		t.none()
	default:
		// A response to one of our requests to the client (legacy era);
		// responses with unknown ids are ignored.
		s.env.asks.deliver(m)
		t.none()
	}
}

func (s *mcpSession) notification(m *jsonrpc.Message) {
	switch m.Method {
	case "notifications/initialized":
		if s.legacy != nil && !s.legacy.initialized {
			s.legacy.initialized = true
			s.replay()
		}
	case "notifications/roots/list_changed":
		s.env.asks.forgetRoots()
		s.cfg.Server.RootsListChanged()
	case "notifications/cancelled":
		var p cancelledParams
		if m.Params == nil || json.Unmarshal(m.Params, &p) != nil || p.RequestID == nil {
			return // invalid cancellations SHOULD be ignored
		}
		if !s.unlisten(string(p.RequestID)) {
			s.cancel(string(p.RequestID))
		}
	}
}

// cancel settles an in-flight call with no response at all.
func (s *mcpSession) cancel(key string) {
	if s.sc.cancel(key) {
		s.checkDrain()
	}
}

func errInvalidParams(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + msg}
}

func (s *mcpSession) answerError(t ticket, id json.RawMessage, e *jsonrpc.Error) {
	t.answerError(id, e)
}

func (s *mcpSession) request(m *jsonrpc.Message, t ticket) {
	if s.draining {
		s.answerError(t, m.ID, errShuttingDown)
		return
	}
	var rp requestParams
	if e := rp.parse(m.Params); e != nil {
		// In a request its transport knows to be of 2026-07-28, this is
		// malformed: a 400 over HTTP.
		if t.modern() {
			t.refuse(m.ID, e)
		} else {
			s.answerError(t, m.ID, e)
		}
		return
	}
	modern := rp.version != nil || t.modern()
	switch {
	case m.Method == "initialize" && !modern:
		// An initialize that carries a 2026-07-28 _meta version is a
		// request of that revision, which has no initialize: it is
		// answered -32601 below, as ping is, and starts no legacy state.
		s.initialize(m, t)
	case modern || m.Method == "server/discover":
		s.modernRequest(m, &rp, t)
	case s.legacy != nil:
		s.legacyRequest(m, &rp, t)
	case m.Method == "ping":
		t.answer(jsonrpc.AppendResult(nil, m.ID, []byte("{}")))
	default:
		s.answerError(t, m.ID, errInvalidParams(
			`no protocol version: send initialize first, or give _meta["`+metaProtocolVersion+`"] (2026-07-28) on every request`))
	}
}

func (s *mcpSession) initialize(m *jsonrpc.Message, t ticket) {
	if s.legacy != nil {
		s.answerError(t, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: initialize was already received"})
		return
	}
	var p initializeParams
	if m.Params == nil || json.Unmarshal(m.Params, &p) != nil || p.ProtocolVersion == nil {
		s.answerError(t, m.ID, errInvalidParams("initialize needs protocolVersion (a string), capabilities and clientInfo"))
		return
	}
	if p.Capabilities != nil && p.Capabilities[0] != '{' {
		s.answerError(t, m.ID, errInvalidParams("capabilities must be an object"))
		return
	}
	version := *p.ProtocolVersion
	if !slices.Contains(mcp.LegacyVersions, version) {
		// Not an error: the client decides whether it can use our offer.
		version = mcp.LegacyVersions[0]
	}
	caps := p.Capabilities
	if caps == nil {
		caps = json.RawMessage("{}")
	}
	s.legacy = &legacy{version: version, clientCaps: caps, subscribed: map[string]bool{}, since: time.Now()}
	s.cfg.Server.ClientCapabilities(caps)
	info := s.cfg.Server.Info()
	if version < mcp.Version20250618 {
		info.Title = "" // title arrived in 2025-06-18
	}
	res := struct {
		ProtocolVersion string             `json:"protocolVersion"`
		Capabilities    map[string]any     `json:"capabilities"`
		ServerInfo      mcp.Implementation `json:"serverInfo"`
		Instructions    string             `json:"instructions,omitempty"`
	}{version, s.capabilities(version), info, s.cfg.Server.Instructions()}
	raw, _ := json.Marshal(res)
	t.answerAs(jsonrpc.AppendResult(nil, m.ID, raw), Outcome{Version: version})
}

// capabilities are the server's, as the given revision knows them.
func (s *mcpSession) capabilities(version string) map[string]any {
	caps := s.cfg.Server.Capabilities()
	// Handlers can always log (Request.Log), and setLevel is served here.
	caps["logging"] = map[string]any{}
	if version == mcp.Version20241105 {
		delete(caps, "completions") // declared from 2025-03-26 on
	}
	if version != mcp.Version20251125 {
		// Tasks as a capability are 2025-11-25's alone: 2026-07-28 has
		// the extension io.modelcontextprotocol/tasks in their place.
		delete(caps, "tasks")
	}
	return caps
}

func (s *mcpSession) legacyRequest(m *jsonrpc.Message, rp *requestParams, t ticket) {
	switch m.Method {
	case "ping":
		t.answer(jsonrpc.AppendResult(nil, m.ID, []byte("{}")))
		return
	case "logging/setLevel":
		s.setLevel(m, t)
		return
	case "resources/subscribe", "resources/unsubscribe":
		s.subscribe(m, t)
		return
	}
	method, ok := s.cfg.Server.Method(m.Method)
	if !ok {
		s.answerError(t, m.ID, methodNotFound(m.Method))
		return
	}
	cl := &call{}
	cl.req = handlers.Request{
		Method:             m.Method,
		Params:             paramsOrEmpty(m.Params),
		Version:            s.legacy.version,
		ClientCapabilities: s.legacy.clientCaps,
		ProgressToken:      rp.progressToken,
		LogLevel:           s.legacy.logLevel,
		Caller:             t.caller(),
	}
	s.dispatch(m, t, method, cl, rp)
}

func (s *mcpSession) setLevel(m *jsonrpc.Message, t ticket) {
	var p struct {
		Level string `json:"level"`
	}
	if m.Params == nil || json.Unmarshal(m.Params, &p) != nil || !slices.Contains(logLevels, p.Level) {
		s.answerError(t, m.ID, errInvalidParams("level must be one of "+fmt.Sprint(logLevels)))
		return
	}
	s.legacy.logLevel = p.Level
	if s.cfg.OnLogLevel != nil {
		s.cfg.OnLogLevel(p.Level)
	}
	t.answer(jsonrpc.AppendResult(nil, m.ID, []byte("{}")))
}

func (s *mcpSession) subscribe(m *jsonrpc.Message, t ticket) {
	if _, ok := s.cfg.Server.Capabilities()["resources"]; !ok {
		s.answerError(t, m.ID, methodNotFound(m.Method))
		return
	}
	var p struct {
		URI *string `json:"uri"`
	}
	if m.Params == nil || json.Unmarshal(m.Params, &p) != nil || p.URI == nil {
		s.answerError(t, m.ID, errInvalidParams(m.Method+" needs a uri (a string)"))
		return
	}
	on, was := m.Method == "resources/subscribe", s.legacy.subscribed[*p.URI]
	if on && !s.cfg.Server.MayRead(*p.URI, t.caller()) {
		// Answered as a subscription to a URI nothing serves: it hears
		// of no update, as it may not read the resource.
		t.answer(jsonrpc.AppendResult(nil, m.ID, []byte("{}")))
		return
	}
	if on {
		s.legacy.subscribed[*p.URI] = true
	} else {
		delete(s.legacy.subscribed, *p.URI)
	}
	if on != was {
		s.cfg.Server.Subscription(*p.URI, on)
	}
	t.answer(jsonrpc.AppendResult(nil, m.ID, []byte("{}")))
}

func methodNotFound(name string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + strconv.Quote(name)}
}

func paramsOrEmpty(p json.RawMessage) json.RawMessage {
	if p == nil {
		return json.RawMessage("{}")
	}
	return p
}

// modernRequest serves a 2026-07-28 request: everything it needs is in its
// own _meta, and nothing is inferred from earlier requests.
func (s *mcpSession) modernRequest(m *jsonrpc.Message, rp *requestParams, t ticket) {
	if !s.sawModern {
		s.sawModern = true
		if s.legacy == nil {
			s.backlog, s.dropped = nil, 0 // nobody will ever ask for these
		}
	}
	if e := rp.malformed(); e != nil {
		t.refuse(m.ID, e)
		return
	}
	if t.in != nil && t.in.Refuse != nil && t.batch == nil {
		// Well formed, but its transport found fault with it (headers that
		// contradict the body): that answer, now that it is the first due.
		t.refuse(m.ID, t.in.Refuse)
		return
	}
	version, ok := stringIn(rp.version, mcp.ModernVersions)
	if !ok {
		s.answerError(t, m.ID, errInvalidParams(`_meta["`+metaProtocolVersion+`"] must be a string`))
		return
	}
	if !slices.Contains(mcp.ModernVersions, version) {
		s.answerError(t, m.ID, &jsonrpc.Error{
			Code:    jsonrpc.CodeUnsupportedProtocolVersion,
			Message: "Unsupported protocol version",
			Data:    map[string]any{"supported": supportedVersions, "requested": version},
		})
		return
	}
	caps := rp.clientCaps
	s.cfg.Server.ClientCapabilities(caps)
	var level string
	if lv := rp.logLevel; lv != nil {
		if level, ok = stringIn(lv, logLevels); !ok || !slices.Contains(logLevels, level) {
			s.answerError(t, m.ID, errInvalidParams(`_meta["`+metaLogLevel+`"] must be one of `+fmt.Sprint(logLevels)))
			return
		}
	}
	switch m.Method {
	case "server/discover":
		res := struct {
			SupportedVersions []string       `json:"supportedVersions"`
			Capabilities      map[string]any `json:"capabilities"`
			Instructions      string         `json:"instructions,omitempty"`
		}{supportedVersions, s.capabilities(version), s.cfg.Server.Instructions()}
		raw, _ := json.Marshal(res)
		t.answer(s.env.modernResponse(m.ID, raw, cachePublic))
		return
	case "ping", "initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		// Gone in 2026-07-28 (ping) or legacy-only.
		s.answerError(t, m.ID, methodNotFound(m.Method))
		return
	case "subscriptions/listen":
		s.listen(m, t)
		return
	}
	method, ok := s.cfg.Server.Method(m.Method)
	if !ok {
		s.answerError(t, m.ID, methodNotFound(m.Method))
		return
	}
	caller := t.caller()
	inputs, jerr := s.inputRound(m, rp, caller)
	if jerr != nil {
		s.answerError(t, m.ID, jerr)
		return
	}
	cl := &call{}
	cl.req = handlers.Request{
		Method:             m.Method,
		Params:             paramsOrEmpty(m.Params),
		InputResponses:     inputs,
		Version:            version,
		Modern:             true,
		ClientCapabilities: caps,
		ProgressToken:      rp.progressToken,
		LogLevel:           level,
		Caller:             caller,
	}
	s.dispatch(m, t, method, cl, rp)
}

// stringIn reads raw, a JSON string (or null, which reads as "", as
// json.Unmarshal into a string has it), as one of known when it is: the
// string known holds, not a copy, so that the values every 2026-07-28
// request carries (its version, its log level) cost no allocation. ok is
// false when raw is neither a string nor null.
func stringIn(raw []byte, known []string) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		lit := raw[1 : len(raw)-1]
		for _, k := range known {
			if string(lit) == k {
				return k, true
			}
		}
	}
	if string(raw) == "null" {
		return "", true
	}
	return jsonrpc.Unquote(raw)
}

// dispatch hands a request to a handler actor. The caller has filled in
// cl.req: the request and the worker's message live in the call, so one
// allocation serves the three.
func (s *mcpSession) dispatch(m *jsonrpc.Message, t ticket, method handlers.Method, cl *call, rp *requestParams) {
	key := t.keyOf(m.ID)
	if s.inUse(key) {
		s.answerError(t, m.ID, errIDInUse(string(m.ID)))
		return
	}
	if e := s.suspended(m); e != nil {
		s.answerError(t, m.ID, e)
		return
	}
	park, busy := s.sc.admit(&t, method.Waits)
	if busy != nil {
		s.answerError(t, m.ID, busy)
		return
	}
	cl.key, cl.id, cl.env, cl.ticket = key, m.ID, s.env, t
	cl.cx.in = t.in
	cl.large = len(m.Params) >= largeRequest || (t.in != nil && len(t.in.Batch) >= largeRequest)
	cl.modern, cl.cache, cl.method = cl.req.Modern, cacheOf(method.Cacheable, cl.req.Caller != nil), m.Method
	cl.start = method.Start
	cl.req.Peer = cl
	cl.req.LocalLog = s.cfg.Logger
	cl.run = method.Run
	if s.cfg.Tracer != nil {
		s.startSpan(cl, m, rp, t)
	}
	s.sc.enter(cl, park)
}

// inUse reports whether an id belongs to a request still open: a call
// still pending (scheduler.inUse), or a listen stream.
func (s *mcpSession) inUse(key string) bool {
	if s.sc.inUse(key) {
		return true
	}
	_, listen := s.listeners[key]
	return listen
}

func errIDInUse(key string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: id " + key + " is already in use by a request in flight"}
}

func (s *mcpSession) drain() {
	if s.draining {
		return
	}
	s.draining = true
	s.endListeners("server shutting down")
	if s.checkDrain() {
		return
	}
	post := s.env.post
	s.drainTimer = time.AfterFunc(s.cfg.DrainTimeout, func() { post(drainExpired{}) })
}

// checkDrain ends a drain once every request has been answered and its
// answer queued at the writer. It reports whether the session is exiting.
func (s *mcpSession) checkDrain() bool {
	if !s.draining || s.exiting {
		return s.exiting
	}
	if s.sc.pendingCount() > 0 {
		return false
	}
	s.exit()
	return true
}

func (s *mcpSession) expireDrain() {
	if s.exiting {
		return
	}
	if n := s.sc.failAll(errShuttingDown); n > 0 {
		s.cfg.Logger.Warn("drain timeout: answered in-flight requests with an error", "requests", n, "timeout", s.cfg.DrainTimeout)
	}
	// A call another goroutine has claimed but not yet queued is a matter of
	// microseconds; give it that, without blocking the actor.
	if s.sc.pendingCount() > 0 {
		post := s.env.post
		time.AfterFunc(time.Millisecond, func() { post(drainExpired{}) })
		return
	}
	s.exit()
}

func (s *mcpSession) exit() {
	s.exiting = true
	if s.drainTimer != nil {
		s.drainTimer.Stop()
	}
	s.sc.cancelAll()
	s.lc.Exit(nil)
}

// startSpan opens the request's mcp.server span (Config.Tracer), a child
// of the caller's, whose context the handler's context carries.
func (s *mcpSession) startSpan(cl *call, m *jsonrpc.Message, rp *requestParams, t ticket) {
	parent := trace.FromMeta(rp.traceparent, rp.tracestate, rp.baggage)
	sp := s.cfg.Tracer.Start(parent, true, m.Method, trace.KindServer, time.Now())
	trace.Describe(sp, m.Method, m.ID, m.Params, s.cfg.TraceResourceURI)
	transport := "pipe"
	if t.in != nil {
		transport = "tcp"
	}
	sp.Attrs = append(sp.Attrs, trace.String(trace.AttrProtocolVersion, cl.req.Version), trace.String(trace.AttrTransport, transport))
	if id := s.cfg.SessionID; id != "" {
		sp.Attrs = append(sp.Attrs, trace.String(trace.AttrSessionID, id))
	}
	if c := cl.req.Caller; c != nil {
		sp.Principal, sp.ClientID = c.Subject, c.ClientID
	}
	cl.cx.span = sp
}
