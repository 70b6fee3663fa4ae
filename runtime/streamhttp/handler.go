package streamhttp

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/runtime/internal/sessionactor"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/supervisor"
)

// Defaults for Options' zero values.
const (
	defaultMaxSessions  = 1000
	defaultSessionIdle  = 10 * time.Minute
	defaultMaxBodyBytes = 16 << 20
)

// Options configure a Handler. The zero value is ready to use and safe for
// a local server: only loopback origins, no authentication.
type Options struct {
	// Logger receives the transport's and the sessions' logs (nil:
	// slog.Default()).
	Logger *slog.Logger
	// MaxSessions bounds the legacy sessions open at once (0:
	// 1000). An initialize past it closes the session idle
	// the longest (no request in flight, no open stream), whose next
	// request gets 404 so that its client initializes again; only when
	// every session is in use does it get 503.
	MaxSessions int
	// SessionIdle ends a legacy session that has had no request and no
	// open stream for this long (0: 10m; negative: never).
	SessionIdle time.Duration
	// MaxBodyBytes bounds one request body (0: 16 MiB); a
	// larger one gets 413.
	MaxBodyBytes int64
	// Options are each session's bounds, deadlines, crash policy and
	// logging, the same struct runtime.Options embeds, so that HTTP
	// sessions are configured as stdio's are (see session.Options).
	// DefaultLogLevel and OnLogLevel are per session here: each client
	// sets its own level.
	session.Options
	// AllowedOrigins are the Origin header values accepted besides
	// loopback ones (http(s)://localhost, 127.0.0.1, [::1], any port). A
	// request with any other Origin gets 403: the DNS-rebinding rule.
	// Requests without an Origin (not from a browser) are accepted.
	// The 403 names the origin; refusals are logged at debug level, at
	// most one line every 10 seconds.
	AllowedOrigins []string
	// AllowOriginHint names, in the 403's message, how this server's
	// operator allows an origin: a command-line flag, say
	// ("-http-allow-origin"). Empty: "the server as allowed origins".
	AllowOriginHint string
	// Authorize, when set, vets every request before anything else; an
	// error is answered with 401 and a WWW-Authenticate: Bearer challenge
	// (see BearerToken).
	Authorize func(*http.Request) error
	// Principal, when set, names who sent a request (the subject of its
	// access token: resourceserver.Principal). A legacy session then
	// belongs to whoever initialized it: another principal presenting its
	// Mcp-Session-Id gets 404, as for a session that never existed.
	Principal func(*http.Request) string
	// ScopeChallenge, when set, writes the WWW-Authenticate challenge of
	// a 403 insufficient_scope naming scope (space-separated: the scopes
	// to ask for) into h: resourceserver.Guard.ScopeChallenge. A request
	// refused with jsonrpc.CodeInsufficientScope (a handlers.Access the
	// caller's token lacks a scope of), answered as one JSON body, then
	// gets 403 and that challenge, in both eras, so that its client can
	// ask its authorization server for more (the MCP authorization
	// specification's step-up).
	ScopeChallenge func(h http.Header, scope string)
	// StateKey signs 2026-07-28 requestState (nil: random per process).
	// Replicas behind one load balancer must share it, or a retry that
	// lands on another replica is refused.
	StateKey []byte
	// SessionTag prefixes every session id ("tag.<sealed>"), so that a
	// proxy can route a legacy session's requests to the replica that made
	// it. The rest of the id is sealed with a key derived from StateKey:
	// an id a client forged or altered (its tag included) is answered 404.
	SessionTag string
	// EventHook observes every supervision event of the tree.
	EventHook func(supervisor.Event)
}

// Handler is the http.Handler of one MCP endpoint. Build it with New, mount
// it at the endpoint's path, and call Shutdown when done.
type Handler struct {
	e    *actor.Engine
	srv  *handlers.Server
	opts Options
	log  *slog.Logger

	root        *supervisor.Root
	name        string
	sessionsPID *actor.PID
	handlersPID *actor.PID
	runners     *supervisor.Runners // every session's handler actors' goroutines

	mu        sync.Mutex
	sessions  map[string]*hsession // legacy sessions, by Mcp-Session-Id
	byChild   map[string]*hsession // every session, by child ID
	stateless *hsession
	closing   bool
	starting  int // legacy sessions given a place under MaxSessions, not yet in sessions

	idle      idleList // the legacy sessions idle, the longest first
	evicted   atomic.Uint64
	evictLog  logLimit
	refused   atomic.Uint64 // requests refused for their Origin
	full      atomic.Uint64 // initializes refused: every session in use
	originLog logLimit

	ids      *sessionIDs  // mints and checks legacy session ids
	nextID   atomic.Int64 // 2026-07-28 request keys inside (sessionactor.In.Key)
	nextSess atomic.Int64

	stopSweep chan struct{}
	swept     chan struct{}
}

var instances atomic.Int64

// New starts the handler's supervision tree on e, as a root of its own.
// (A Server puts the same tree in a caller's: see Server.ChildSpec.)
func New(e *actor.Engine, srv *handlers.Server, opts Options) (*Handler, error) {
	if e == nil || srv == nil {
		return nil, errors.New("streamhttp: nil engine or server")
	}
	h := newHandler(e, srv, opts)
	root, err := supervisor.Start(e, h.name, h.spec(supervisor.RootPID(e, h.name)))
	if err != nil {
		return nil, err
	}
	h.root = root
	if err := h.begin(); err != nil {
		_ = root.Stop(context.Background())
		return nil, err
	}
	return h, nil
}

// newHandler fills in opts' defaults; nothing runs yet.
func newHandler(e *actor.Engine, srv *handlers.Server, opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = defaultMaxSessions
	}
	if opts.SessionIdle == 0 {
		opts.SessionIdle = defaultSessionIdle
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = defaultMaxBodyBytes
	}
	if opts.StateKey == nil {
		opts.StateKey = make([]byte, 32)
		_, _ = rand.Read(opts.StateKey)
	}
	return &Handler{
		e: e, srv: srv, opts: opts, log: opts.Logger,
		ids:       newSessionIDs(opts.StateKey, opts.SessionTag),
		runners:   supervisor.NewRunners(),
		name:      fmt.Sprintf("mcprt-http-%d", instances.Add(1)),
		sessions:  map[string]*hsession{},
		byChild:   map[string]*hsession{},
		stopSweep: make(chan struct{}),
		swept:     make(chan struct{}),
		evictLog:  logLimit{every: time.Minute},
		originLog: logLimit{every: 10 * time.Second},
	}
}

// spec is the handler's supervisor's, to run as self: the handler
// supervisor every session's workers run under, the sessions' supervisor,
// then more (a Server's service, stopped first).
func (h *Handler) spec(self *actor.PID, more ...supervisor.ChildSpec) supervisor.Spec {
	opts := h.opts
	h.handlersPID = supervisor.ChildPID(self, "handlers")
	h.sessionsPID = supervisor.ChildPID(self, "sessions")
	var handlersStarts atomic.Int64
	rootHook := func(ev supervisor.Event) {
		if s, ok := ev.(supervisor.EventChildStarted); ok && s.Supervisor == h.name && s.Child == "handlers" && handlersStarts.Add(1) > 1 {
			h.each(func(hs *hsession) { hs.in.Send(sessionactor.WorkersLost{}) })
		}
		if opts.EventHook != nil {
			opts.EventHook(ev)
		}
	}
	sessionsName := h.name + "/sessions"
	sessionsHook := func(ev supervisor.Event) {
		if x, ok := ev.(supervisor.EventChildExited); ok && x.Supervisor == sessionsName {
			h.ended(x.Child, x.Reason)
		}
		if opts.EventHook != nil {
			opts.EventHook(ev)
		}
	}
	return supervisor.Spec{
		Name:      h.name,
		Strategy:  supervisor.OneForOne,
		EventHook: rootHook,
		Logger:    h.log,
		Children: append([]supervisor.ChildSpec{
			// One pool of goroutines for every session's calls, so that
			// an idle legacy session holds no stack (see
			// supervisor.Runners); stopped after the handler actors.
			{ID: "runners", Start: h.runners.Actor(), Restart: supervisor.Permanent, Shutdown: 2 * time.Second},
			{ID: "handlers", Start: supervisor.New(supervisor.Spec{
				Name: h.name + "/handlers", Strategy: supervisor.OneForOne, EventHook: opts.EventHook, Logger: h.log,
			}), Restart: supervisor.Permanent, Shutdown: 2 * time.Second},
			{ID: "sessions", Start: supervisor.New(supervisor.Spec{
				Name: sessionsName, Strategy: supervisor.OneForOne, EventHook: sessionsHook, Logger: h.log,
				// Legacy sessions are temporary; only the stateless one
				// is restarted after a crash, and a crash loop of it is
				// what this bounds.
				Intensity: 10, Period: 10 * time.Second,
			}), Restart: supervisor.Permanent, Shutdown: 30 * time.Second},
		}, more...),
	}
}

// begin starts the stateless session and the idle sweep, once the tree
// runs; not on the sessions' supervisor's goroutine.
func (h *Handler) begin() error {
	st, err := h.startSession("", "", supervisor.Transient)
	if err != nil {
		return err
	}
	h.stateless = st
	go h.sweep() // owned: drain waits for it
	return nil
}

// Done is closed once the tree New started has stopped. A Server's handler
// is in its caller's tree, which says when it stopped: its Done is never
// closed.
func (h *Handler) Done() <-chan struct{} {
	if h.root == nil {
		return nil
	}
	return h.root.Done()
}

// Shutdown stops taking requests (503 from then on), lets every session
// answer what is in flight (bounded by each session's DrainTimeout), then
// stops the tree. It returns ctx's error if ctx ends first; the tree is then
// stopped without waiting. Shut the http.Server down first, or with it:
// open streams end when their sessions do.
func (h *Handler) Shutdown(ctx context.Context) error {
	err := h.drain(ctx)
	stopCtx := ctx
	if err != nil {
		stopCtx = context.Background()
	}
	if h.root == nil { // a Server's: its caller's tree stops it
		return err
	}
	if serr := h.root.Stop(stopCtx); err == nil {
		err = serr
	}
	return err
}

// drain is Shutdown but for the tree: 503 from now on, and every session
// drained and ended, or ctx's error.
func (h *Handler) drain(ctx context.Context) error {
	h.mu.Lock()
	first := !h.closing
	h.closing = true
	all := make([]*hsession, 0, len(h.byChild))
	for _, hs := range h.byChild {
		all = append(all, hs)
	}
	h.mu.Unlock()
	if first {
		close(h.stopSweep)
	}
	<-h.swept
	for _, hs := range all {
		hs.in.Send(sessionactor.Drain{})
	}
	var err error
	for _, hs := range all {
		select {
		case <-hs.gone:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			break
		}
	}
	return err
}

func (h *Handler) each(fn func(*hsession)) {
	h.mu.Lock()
	all := make([]*hsession, 0, len(h.byChild))
	for _, hs := range h.byChild {
		all = append(all, hs)
	}
	h.mu.Unlock()
	for _, hs := range all {
		fn(hs)
	}
}

// startSession starts a session actor as a child of the sessions
// supervisor. It has no writer: what it sends for a request is handed, on
// the sending goroutine, to the exchange waiting for it (the request's
// sessionactor.Replier), and the rest to a GET stream (hsession.route).
func (h *Handler) startSession(id, owner string, restart supervisor.Restart) (*hsession, error) {
	child := "stateless"
	if id != "" {
		child = "s-" + strconv.FormatInt(h.nextSess.Add(1), 10)
	}
	hs := newSession(h, id, child)
	hs.owner = owner
	cfg := sessionactor.Config{Options: h.opts.Options}
	cfg.Server, cfg.Deliver, cfg.Inbox, cfg.Handlers, cfg.Runners = h.srv, hs.route, hs.in, h.handlersPID, h.runners
	cfg.LoopOnRunners = true // hundreds of sessions, mostly idle: no stack each
	cfg.StateKey, cfg.WorkerPrefix, cfg.Logger = h.opts.StateKey, child+"-", h.log.With("session", child)
	cfg.SessionID = id // the spans' mcp.session.id ("" for the stateless one)
	start := sessionactor.New(cfg)
	h.mu.Lock()
	h.byChild[child] = hs
	if id != "" {
		h.sessions[id] = hs
		h.starting-- // its place, taken by reserve
	}
	h.mu.Unlock()
	if _, err := supervisor.StartChild(h.e, h.sessionsPID, supervisor.ChildSpec{
		ID: child, Start: start, Restart: restart, Shutdown: 5 * time.Second,
		// The session's work comes through its own Inbox; hollywood's
		// carries only its start and stop, and its default ring of 1024
		// slots (24 KiB) would be most of an idle session's memory.
		Options: []actor.OptFunc{actor.WithInboxSize(16)},
	}); err != nil {
		h.ended(child, nil)
		return nil, err
	}
	return hs, nil
}

// ended forgets a session whose subtree has exited. The stateless one is
// restarted after a crash (it is transient) and is over only when it exits
// normally, which it does when drained.
func (h *Handler) ended(child string, reason error) {
	if child == "stateless" && supervisor.IsAbnormal(reason) {
		h.stateless.lost()
		return
	}
	h.mu.Lock()
	hs := h.byChild[child]
	if hs != nil {
		delete(h.byChild, child)
		if h.sessions[hs.id] == hs {
			delete(h.sessions, hs.id)
		}
	}
	h.mu.Unlock()
	if hs != nil {
		hs.end()
	}
}

// newSessionID is 128 random bits sealed (sessionIDs), after the replica
// tag if there is one.
func (h *Handler) newSessionID() string { return h.ids.mint() }

// sweep ends legacy sessions that have been idle for SessionIdle.
func (h *Handler) sweep() {
	defer close(h.swept)
	if h.opts.SessionIdle < 0 {
		<-h.stopSweep
		return
	}
	t := time.NewTicker(max(h.opts.SessionIdle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-h.stopSweep:
			return
		case <-t.C:
		}
		now := time.Now().UnixNano()
		h.mu.Lock()
		var idle []*hsession
		for _, hs := range h.sessions {
			if hs.idleSince(now) >= h.opts.SessionIdle {
				idle = append(idle, hs)
			}
		}
		h.mu.Unlock()
		for _, hs := range idle {
			if h.closeIfIdle(hs, false) {
				h.log.Debug("legacy session idle: ending it", "session", hs.child, "idle", h.opts.SessionIdle)
			}
		}
	}
}

// closeIfIdle closes hs if it still has no request in flight and no open
// stream: a request that finds it first is refused with 404 as one that
// comes after, it is forgotten, and drained. It reports whether it closed
// hs; a session in use is never closed here. With reserve, its place
// under MaxSessions is given to a new session at once.
func (h *Handler) closeIfIdle(hs *hsession, reserve bool) bool {
	hs.mu.Lock()
	if !hs.inIdle {
		hs.mu.Unlock()
		return false
	}
	h.idle.remove(hs)
	hs.closed, hs.ended = true, true
	hs.mu.Unlock()
	h.mu.Lock()
	if h.sessions[hs.id] == hs {
		delete(h.sessions, hs.id)
	}
	if reserve {
		h.starting++
	}
	h.mu.Unlock()
	hs.in.Send(sessionactor.Drain{})
	return true
}

// reserve gives a new legacy session a place under MaxSessions, closing the
// session idle the longest when there is none; false when every session
// is in use. O(1): the idle list's front, unless it is taken into use
// meanwhile. The place is taken when the session is started.
func (h *Handler) reserve() bool {
	for {
		h.mu.Lock()
		if len(h.sessions)+h.starting < h.opts.MaxSessions {
			h.starting++
			h.mu.Unlock()
			return true
		}
		h.mu.Unlock()
		hs := h.idle.first()
		if hs == nil {
			return false
		}
		idle := time.Duration(time.Now().UnixNano() - hs.last.Load())
		if !h.closeIfIdle(hs, true) {
			continue // taken into use, or closed, since: it left the list
		}
		n := h.evicted.Add(1)
		if ok, _ := h.evictLog.allow(); ok {
			h.log.Warn("the cap on sessions is reached: the session idle the longest is closed for each new one (its client must initialize again)",
				"max_sessions", h.opts.MaxSessions, "session", hs.child, "idle", idle.Round(time.Millisecond), "evicted_total", n)
		}
		return true
	}
}

// Stats are the handler's counts, for metrics.
type Stats struct {
	// Sessions is the number of legacy sessions open.
	Sessions int
	// Evicted counts the idle legacy sessions closed to make room for new
	// ones at MaxSessions.
	Evicted uint64
	// OriginRefused counts the requests refused (403) for their Origin.
	OriginRefused uint64
	// Full counts the initializes refused (503) because every one of
	// MaxSessions was in use.
	Full uint64
	// Mailbox is how many messages wait in the sessions' mailboxes
	// (supervisor.Inbox: requests, answers and notifications not yet
	// taken by the session's loop, and news posted for its next wake-up),
	// summed over every session, the stateless one included; MailboxMax
	// is the deepest one's. A depth that grows is a session falling
	// behind.
	Mailbox, MailboxMax int
}

// Stats returns the handler's counts now.
func (h *Handler) Stats() Stats {
	st := Stats{Evicted: h.evicted.Load(), OriginRefused: h.refused.Load(), Full: h.full.Load()}
	h.mu.Lock()
	st.Sessions = len(h.sessions)
	for _, hs := range h.byChild {
		n := hs.in.Len()
		st.Mailbox += n
		st.MailboxMax = max(st.MailboxMax, n)
	}
	h.mu.Unlock()
	return st
}

// forget makes a legacy session unknown to new requests (they get 404).
func (h *Handler) forget(hs *hsession) {
	hs.mu.Lock()
	hs.closed = true
	h.idle.remove(hs)
	hs.mu.Unlock()
	h.mu.Lock()
	if h.sessions[hs.id] == hs {
		delete(h.sessions, hs.id)
	}
	h.mu.Unlock()
}
