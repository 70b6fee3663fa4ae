package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/trace"
	"github.com/mcprt/mcprt/handlers/uritemplate"
	"github.com/mcprt/mcprt/supervisor"
)

// Options configure a Gateway. The zero value is usable.
type Options struct {
	// Info is the gateway's serverInfo; default {Name: "mcprt-gateway",
	// Version: "0.1.0"}.
	Info mcp.Implementation
	// Instructions are given to clients at initialize and server/discover,
	// followed by each backend's own, under its name and prefix, in the
	// configuration's order, once it has been up.
	Instructions string
	// Logger receives the gateway's own diagnostics, and the log messages
	// a backend sends when no request of the client is in flight to carry
	// them (nil: slog.Default()).
	Logger *slog.Logger
	// Stderr receives the backends' stderr, each line prefixed with
	// "[name] ", at most StderrLimit lines per backend per StderrWindow
	// (then one line says how many were dropped). Defaults: os.Stderr,
	// 20 lines, 5s.
	Stderr       io.Writer
	StderrLimit  int
	StderrWindow time.Duration
	// CloseGrace and TermGrace are how long closing a backend waits for
	// it to exit after its stdin is closed, and then after SIGTERM, before
	// it is killed (defaults 2s each).
	CloseGrace time.Duration
	TermGrace  time.Duration
	// Engine runs the backends' supervision tree (nil: an engine of the
	// gateway's own).
	Engine *actor.Engine
	// SingleClient says the gateway's Server serves one client (over
	// stdio, as mcprt gateway does without -http). A legacy backend's
	// question (elicitation, sampling, roots) or log message says nothing
	// of the request it comes from: it goes through the latest request in
	// flight to that backend. With many clients (the default) that is done
	// only when one request is in flight to it; with several, the question
	// is refused (an error to the backend naming the reason), roots are
	// the last known, and the log message goes to Logger, so that no
	// client is shown what another's call caused.
	SingleClient bool
	// TaskAnyTool offers every backend tool as one a client may call as a
	// task (execution.taskSupport "optional" where the backend gave none,
	// or "forbidden"), for a gateway whose server serves tasks
	// (handlers.Server.ServeTasks): a call of a tool the backend cannot
	// run as a task becomes a task of the gateway's that waits for the
	// backend's plain answer, its Timeout not applying (the task's ttl
	// and a cancel end it). mcprt gateway -tasks-dir sets it.
	TaskAnyTool bool
	// OnCall, when set, is told of each tool call the gateway forwarded,
	// once it is answered (or given up: the client cancelled it), on the
	// goroutine that answers it: it must be quick. mcprt gateway's
	// -log-calls logs them; an embedder may count them.
	OnCall func(CallRecord)
	// Guard, when set, is a command line that runs a stdio backend (its
	// command's path and arguments appended) so that the backend's whole
	// process group dies with the gateway, even when the gateway is
	// killed and no Close runs: mcprt gateway sets {mcprt, "guard", "--"}
	// (see mcprt guard). Without it, on Linux, only the backend's own
	// process is sure to (Pdeathsig): a wrapper's child that ignores
	// stdin EOF (npx's node, a shell's job) would outlive a killed gateway.
	Guard []string
	// ListGrace is how long, after the gateway starts in a tree (ChildSpec), a client's list requests (and
	// a call of a tool not listed yet) wait for the backends still
	// starting before they are answered with what is up (default
	// DefaultListGrace; negative: no wait). A backend that comes up later
	// joins with list_changed.
	ListGrace time.Duration
	// ToolSearch lists search_tools and call_tool in place of the
	// backends' tools (but those AlwaysList names, by name or path.Match
	// pattern), which stay callable by name (mcprt gateway -tool-search;
	// the configuration's "toolSearch" and "alwaysList" do the same; see
	// the package doc).
	ToolSearch bool
	AlwaysList []string
	// Tracer, when set, traces each request forwarded to a backend as an
	// mcp.client span and puts its context in the request's _meta, so a
	// client's trace runs through the gateway to the backend unbroken
	// (see handlers/trace). The runtime that serves the gateway's Server
	// should be given the same Tracer (session.Options.Tracer) for the
	// gateway's own mcp.server spans, the client spans' parents.
	Tracer *trace.Tracer
	// UserSignIn keeps the sign-ins of callers to AuthUser backends (nil:
	// such a backend refuses every call, saying why).
	UserSignIn *UserSignIn
}

// DefaultListGrace is Options.ListGrace's default: enough for most
// servers to start, short of any client's handshake limit.
const DefaultListGrace = 5 * time.Second

// CallRecord is one tool call the gateway forwarded (Options.OnCall).
type CallRecord struct {
	Backend string        // the backend's name in the configuration
	Tool    string        // the tool's name at the backend
	Took    time.Duration // from the call's start at the gateway to its answer
	// IsError is a result with isError, the backend's or the gateway's
	// own (a backend down, restarting, past its timeout); Err is an
	// error answer instead of a result (mcp.ErrInputRequired for a
	// 2026-07-28 client's question, the context's error for a call its
	// client ended).
	IsError bool
	Err     error
}

// Outcome names how the call ended: "ok", "is_error" or "error".
func (r CallRecord) Outcome() string {
	switch {
	case r.Err != nil:
		return "error"
	case r.IsError:
		return "is_error"
	}
	return "ok"
}

// Gateway is one MCP server in front of many backend servers: Server is
// what a runtime serves, Start starts the backends and Close stops them.
type Gateway struct {
	opts    Options
	signins *signins // nil without Options.UserSignIn
	log     *slog.Logger
	// quietLog is log at Debug, for the supervisors': a backend's restart
	// or failure is the gateway's to tell, once (see backend.down).
	quietLog *slog.Logger
	srv      *handlers.Server
	e        *actor.Engine
	stderr   *lineWriter

	// backends are the backends in configuration order (see all). Reload
	// puts a new slice in place, never changes one, and holds reloadMu,
	// as Close does, so that the two do not cross. nextIndex and nextID
	// number the backends Reload adds (see backend.index and backend.id).
	backends  atomic.Pointer[[]*backend]
	reloadMu  sync.Mutex
	nextIndex int
	nextID    int

	rootName string
	// sup is the backends' supervisor: under the caller's tree (ChildSpec),
	// or root's when the gateway runs a tree of its own (Start).
	sup       *actor.PID
	root      *supervisor.Root
	started   atomic.Bool
	startDone chan struct{} // closed when startInBackground (or Start) returns
	// ready is closed once every backend has been up or failed once, or
	// ListGrace has passed since startInBackground, or Start returned: the server's
	// lists wait for it (handlers.Server.WaitBeforeListing), and so do
	// backends that register after those before them (waitPredecessors).
	ready     chan struct{}
	readyOnce sync.Once
	// orderFree is closed when the list grace has passed (or with ready):
	// from then on a backend registers what it offers without waiting for
	// those before it in the configuration (waitPredecessors).
	orderFree chan struct{}
	// With SingleClient, after startInBackground, backends connect once the client
	// has said what it declares (clientKnown), or the list grace passed:
	// roots are declared to them only when the client has roots
	// (clientRoots), so that a server that falls back to its own
	// arguments without them does so.
	awaitClient bool
	clientKnown chan struct{}
	clientOnce  sync.Once
	clientRoots atomic.Bool
	closing     atomic.Bool
	ext         extOffers // extensions, offered and declared (extensions.go)
	search      search    // tool search (toolsearch.go)

	endpointsState // virtual endpoints (endpoints.go)

	// owners say which backend registered each name (tools, prompts) or
	// URI (resources, templates), so that the first keeps one two offer.
	mu     sync.Mutex
	owners map[string]*backend // key: kind byte + name

	// subs counts the client sessions that follow each resource URI
	// (resources/subscribe, listen streams), and subVia says which
	// backend follows it for them.
	subMu  sync.Mutex
	subs   map[string]int
	subVia map[string]*backend

	// roots are the client's roots as the gateway last learnt them (see
	// roots.go); rootsKnown says they were learnt since the client last
	// said they changed.
	rootsMu       sync.Mutex
	roots         []mcp.Root
	rootsKnown    bool
	rootsVersion  int // counted up at each change of roots
	rootsFetching bool
	rootsDueNow   atomic.Bool // see rootsSettled

	// instructions are the backends' own, by backend, as they last gave
	// them.
	instrMu      sync.Mutex
	instructions map[*backend]string

	wg        sync.WaitGroup // timers and other goroutines of the gateway's own
	closeOnce sync.Once
	closeErr  error
}

// learnInstructions records the instructions backend b gave when it came
// up, and gives the gateway's clients, from their next initialize or
// server/discover on, the gateway's own followed by every backend's.
func (g *Gateway) learnInstructions(b *backend, text string) {
	text = strings.TrimSpace(text)
	g.instrMu.Lock()
	defer g.instrMu.Unlock()
	if g.instructions[b] == text {
		return
	}
	if g.instructions == nil {
		g.instructions = map[*backend]string{}
	}
	g.instructions[b] = text
	g.setInstructions()
}

// forgetInstructions drops the instructions of a backend Reload removed.
func (g *Gateway) forgetInstructions(b *backend) {
	g.instrMu.Lock()
	defer g.instrMu.Unlock()
	if _, ok := g.instructions[b]; ok {
		delete(g.instructions, b)
		g.setInstructions()
	}
}

// setInstructions gives the server the gateway's instructions followed by
// those of each backend in the configuration. The caller holds instrMu.
func (g *Gateway) setInstructions() {
	var all strings.Builder
	all.WriteString(strings.TrimSpace(g.opts.Instructions))
	for _, b := range g.all() {
		t := g.instructions[b]
		if t == "" {
			continue
		}
		if all.Len() > 0 {
			all.WriteString("\n\n")
		}
		fmt.Fprintf(&all, "## %s", b.name)
		if !b.cfg.NoPrefix {
			fmt.Fprintf(&all, " (its tools and prompts are named %s)", b.external("…"))
		}
		all.WriteString("\n\n")
		all.WriteString(t)
	}
	g.eachServer(func(s *handlers.Server) { s.SetInstructions(all.String()) })
}

// all is the backends, in configuration order.
func (g *Gateway) all() []*backend {
	if l := g.backends.Load(); l != nil {
		return *l
	}
	return nil
}

var gateways atomic.Int64

// checkBackends checks the backends of cfg as New and Reload take them,
// and returns them with their defaults.
func checkBackends(cfg *Config) ([]Backend, error) {
	if cfg == nil || len(cfg.Backends) == 0 {
		return nil, errors.New("gateway: no backends")
	}
	seen := map[string]bool{}
	out := make([]Backend, 0, len(cfg.Backends))
	for i, bc := range cfg.Backends {
		if bc.Name == "" || (bc.Command == "") == (bc.URL == "") {
			return nil, fmt.Errorf("gateway: backend %d needs a name, and a command or a URL (not both)", i)
		}
		if seen[bc.Name] {
			return nil, fmt.Errorf("gateway: two backends are named %q", bc.Name)
		}
		if _, _, err := protocolOf(bc.Protocol); err != nil {
			return nil, fmt.Errorf("gateway: backend %q: protocol %w", bc.Name, err)
		}
		seen[bc.Name] = true
		out = append(out, bc.withDefaults())
	}
	return out, nil
}

// New returns a gateway for cfg. Nothing is started until Start.
func New(cfg *Config, opts Options) (*Gateway, error) {
	bcs, err := checkBackends(cfg)
	if err != nil {
		return nil, err
	}
	if opts.Info.Name == "" {
		opts.Info = mcp.Implementation{Name: "mcprt-gateway", Version: "0.1.0"}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Stderr == nil {
		opts.Stderr = os.Stderr
	}
	if opts.StderrLimit <= 0 {
		opts.StderrLimit = 20
	}
	if opts.StderrWindow <= 0 {
		opts.StderrWindow = 5 * time.Second
	}
	if opts.CloseGrace <= 0 {
		opts.CloseGrace = 2 * time.Second
	}
	if opts.TermGrace <= 0 {
		opts.TermGrace = 2 * time.Second
	}
	if opts.ListGrace == 0 {
		opts.ListGrace = DefaultListGrace
	}
	g := &Gateway{
		opts:        opts,
		signins:     newSignins(opts.UserSignIn),
		log:         opts.Logger,
		quietLog:    slog.New(atDebug{opts.Logger.Handler()}),
		srv:         handlers.NewServer(opts.Info, opts.Instructions),
		e:           opts.Engine,
		stderr:      &lineWriter{w: opts.Stderr},
		owners:      map[string]*backend{},
		subs:        map[string]int{},
		subVia:      map[string]*backend{},
		startDone:   make(chan struct{}),
		ready:       make(chan struct{}),
		orderFree:   make(chan struct{}),
		clientKnown: make(chan struct{}),
		rootName:    fmt.Sprintf("mcprt-gateway-%d", gateways.Add(1)),
	}
	g.endpointsState = newEndpointsState()
	list := make([]*backend, len(bcs))
	for i, bc := range bcs {
		list[i] = newBackend(g, i, i, bc)
	}
	g.backends.Store(&list)
	g.nextIndex, g.nextID = len(list), len(list)
	// The client is answered before the backends are up: it is told of
	// every capability, its lists wait a little for them, and a call of a
	// tool of a backend that never came up says why.
	g.srv.OfferEverything()
	g.srv.WaitBeforeListing(g.ready)
	g.srv.OnUnknownTool(g.unknownTool)
	g.srv.OnClientCapabilities(g.clientCapabilities)
	g.srv.OnSubscription(g.subscription)
	g.srv.OnRootsListChanged(g.rootsListChanged)
	g.rootsDueNow.Store(true) // nothing known yet
	g.search.srv, g.search.ready = g.srv, g.ready
	g.search.watch()
	g.configureSearch(cfg)
	g.configureEndpoints(cfg)
	return g, nil
}

// subscription is the server's OnSubscription hook: the first client
// session that follows a URI makes the backend that offers it follow it
// (see backend.follow), the last one to stop makes it stop. It runs on a
// session's goroutine and does not block.
func (g *Gateway) subscription(uri string, on bool) {
	g.subMu.Lock()
	defer g.subMu.Unlock()
	if on {
		if g.subs[uri]++; g.subs[uri] > 1 {
			return
		}
		b := g.resourceOwner(uri)
		if b == nil {
			g.log.Debug("gateway: a client subscribed to a resource no backend offers", "uri", uri)
			return
		}
		g.subVia[uri] = b
		b.follow(uri, true)
		return
	}
	if g.subs[uri] == 0 {
		return
	}
	if g.subs[uri]--; g.subs[uri] > 0 {
		return
	}
	delete(g.subs, uri)
	if b := g.subVia[uri]; b != nil {
		delete(g.subVia, uri)
		b.follow(uri, false)
	}
}

// adoptSubscriptions makes the backend that now offers a resource follow
// it for the clients that subscribed to it while no backend did (it was
// not up yet, or did not list it then).
func (g *Gateway) adoptSubscriptions() {
	g.subMu.Lock()
	defer g.subMu.Unlock()
	for uri := range g.subs {
		if g.subVia[uri] != nil {
			continue
		}
		if b := g.resourceOwner(uri); b != nil {
			g.subVia[uri] = b
			b.follow(uri, true)
		}
	}
}

// resourceOwner is the backend that offers uri: as a resource, or else
// by the first template that matches it, in configuration order.
func (g *Gateway) resourceOwner(uri string) *backend {
	g.mu.Lock()
	if o := g.owners["r"+uri]; o != nil {
		g.mu.Unlock()
		return o
	}
	type tmpl struct {
		t string
		b *backend
	}
	var ts []tmpl
	for k, o := range g.owners {
		if t, ok := strings.CutPrefix(k, "u"); ok {
			ts = append(ts, tmpl{t, o})
		}
	}
	g.mu.Unlock()
	slices.SortFunc(ts, func(a, b tmpl) int { return cmp.Or(a.b.index-b.b.index, strings.Compare(a.t, b.t)) })
	for _, t := range ts {
		if p, err := uritemplate.Parse(t.t); err == nil {
			if _, ok := p.Match(uri); ok {
				return t.b
			}
		}
	}
	return nil
}

// Server is the gateway as the runtime serves it (runtime.Serve or
// runtime.Start): the backends' tools, prompts, resources and templates,
// named "<prefix>__<name>", each forwarding to its backend. It changes as
// the backends come, go and change their lists, and the runtime tells the
// client (list_changed).
func (g *Gateway) Server() *handlers.Server { return g.srv }

// Start starts the supervision tree and every backend, and waits until
// each has either connected and listed what it offers or failed at least
// once, or ctx ends: a client served after Start sees the backends that
// could start. A failed backend goes on restarting in the background (see
// Backend). A Lazy backend is started too, to learn what it offers, and
// stopped once it has told; a request routed to it starts it again.
//
// Start returns an error only if the tree cannot start; the gateway then
// needs no Close. Start must be called once, and not with ChildSpec.
func (g *Gateway) Start(ctx context.Context) error {
	if err := g.launch(); err != nil {
		return err
	}
	waitSettled(ctx, g.all())
	g.setReady()
	return nil
}

// startInBackground is Start without the wait: it returns once the supervision tree
// runs, with the backends starting in the background, so that the
// gateway's clients are answered at once (mcprt gateway launches). Their
// list requests wait, up to Options.ListGrace, for the backends to be up
// or to have failed once; a backend that takes longer joins with
// list_changed, and one that hangs is restarted, then failed, by its
// supervisor, as one that crashes is.
func (g *Gateway) startInBackground() error {
	g.awaitClient = g.opts.SingleClient
	if err := g.launch(); err != nil {
		return err
	}
	grace := g.opts.ListGrace
	if grace < 0 {
		g.setReady()
		return nil
	}
	bs := g.all()
	g.wg.Go(func() {
		t := time.NewTimer(grace)
		defer t.Stop()
		for _, b := range bs {
			select {
			case <-b.settled:
			case <-t.C:
				g.graceOver(bs, grace)
				return
			case <-g.ready:
				return
			}
		}
		g.setReady()
	})
	return nil
}

// unsettled names the backends of bs that have been neither up nor failed.
func (g *Gateway) unsettled(bs []*backend) []string {
	var names []string
	for _, b := range bs {
		select {
		case <-b.settled:
		default:
			names = append(names, b.name)
		}
	}
	return names
}

func (g *Gateway) setReady() {
	g.readyOnce.Do(func() {
		close(g.orderFree)
		close(g.ready)
	})
}

// graceOver ends the list grace: the backends that have their lists
// register them, whatever those before them do, and the lists are
// answered once they have (a registration is quick; a backend still
// listing, or still connecting, joins later with list_changed).
func (g *Gateway) graceOver(bs []*backend, grace time.Duration) {
	g.readyOnce.Do(func() {
		close(g.orderFree)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		for _, b := range bs {
			select {
			case <-b.listed:
			default:
				continue
			}
			select {
			case <-b.settled:
			case <-ctx.Done():
			}
		}
		g.log.Warn("gateway: answering lists without the backends still starting; they join with list_changed",
			"grace", grace, "starting", g.unsettled(bs))
		close(g.ready)
	})
}

func (g *Gateway) launch() error {
	if !g.started.CompareAndSwap(false, true) {
		return errors.New("gateway: Start called twice")
	}
	defer close(g.startDone)
	if g.sup == nil {
		// No tree holds the gateway: it runs one of its own.
		if g.e == nil {
			e, err := actor.NewEngine(actor.NewEngineConfig())
			if err != nil {
				g.setReady()
				return fmt.Errorf("gateway: %w", err)
			}
			g.e = e
		}
		root, err := supervisor.Start(g.e, g.rootName, g.backendsSpec())
		if err != nil {
			g.setReady()
			return fmt.Errorf("gateway: %w", err)
		}
		g.root, g.sup = root, root.PID()
	}
	for _, b := range g.all() {
		b.start()
	}
	return nil
}

// backendsSpec is the backends' supervisor's: one child per backend, each
// a supervisor of its own (backend.start).
func (g *Gateway) backendsSpec() supervisor.Spec {
	return supervisor.Spec{
		Name:      "gateway",
		Strategy:  supervisor.OneForOne,
		Logger:    g.quietLog,
		EventHook: g.onRootEvent,
	}
}

// ChildSpec is the gateway as a child of parent, a supervisor on e, for a
// program whose one tree holds it (runtime.Options.Parts), in place of
// Start: a supervisor ("gateway") of the backends' supervisor and of a
// service that launches the backends (without Start's wait) when the tree
// starts it and closes them (Close) when the tree stops it, all at once,
// each with its graces, before their supervisor is stopped. Put before
// the tasks and the transports, the backends are up before a client is
// served, and closed after the last request and task that used them. It
// is significant: if the gateway cannot launch, its parent fails. Call it
// once; Close still works, and the tree then finds the backends closed.
func (g *Gateway) ChildSpec(e *actor.Engine, parent *actor.PID) supervisor.ChildSpec {
	self := supervisor.ChildPID(parent, "gateway")
	g.e, g.sup = e, supervisor.ChildPID(self, "backends")
	closing := g.opts.CloseGrace + g.opts.TermGrace + 3*time.Second
	return supervisor.ChildSpec{
		ID: "gateway",
		Start: supervisor.New(supervisor.Spec{
			Name:     "gateway/tree",
			Strategy: supervisor.OneForOne,
			Logger:   g.quietLog,
			Children: []supervisor.ChildSpec{
				{ID: "backends", Start: supervisor.New(g.backendsSpec()), Shutdown: closing},
				{ID: "launch", Start: supervisor.Service(
					func(func(error)) error { return g.startInBackground() },
					func() { _ = g.Close() },
				), Restart: supervisor.Temporary, Significant: true, Shutdown: closing},
			},
		}),
		Restart:     supervisor.Transient,
		Significant: true,
		Shutdown:    2*closing + 2*time.Second,
	}
}

// waitSettled waits until each of bs has been up or failed once, or ctx
// ends.
func waitSettled(ctx context.Context, bs []*backend) {
	for _, b := range bs {
		select {
		case <-b.settled:
		case <-ctx.Done():
			return
		}
	}
}

// onRootEvent learns that a backend's supervisor is gone (it gave up, or
// was stopped), so that the backend may be started again.
func (g *Gateway) onRootEvent(ev supervisor.Event) {
	if ex, ok := ev.(supervisor.EventChildExited); ok {
		for _, b := range g.all() {
			if b.id == ex.Child {
				b.supervisorExited(ex.Reason)
			}
		}
	}
}

// Close stops every backend, in parallel (each as client.Client.Close
// does: stdin EOF, CloseGrace, SIGTERM, TermGrace, SIGKILL, reap), then
// the tree, and waits for all of it. Requests still waiting for a backend
// are answered with an error. Close may be called more than once.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() { g.closeErr = g.close() })
	return g.closeErr
}

func (g *Gateway) close() error {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	g.closing.Store(true)
	g.setReady()
	for _, b := range g.all() {
		b.closing("")
	}
	if !g.started.Load() || g.sup == nil { // never launched, or failed to
		g.signins.close()
		g.wg.Wait()
		return nil
	}
	g.stopBackends(g.all())
	g.signins.close()
	var err error
	if g.root != nil { // a tree of its own; a caller's stops its part itself
		err = g.root.Stop(context.Background())
	}
	g.wg.Wait()
	return err
}

// State is where a backend is in its life.
type State string

// The states of a backend.
const (
	// Starting: connecting (or waiting out the backoff before it), for the
	// first time or again after a cool-down; requests wait for it.
	Starting State = "starting"
	// Up: connected; requests are forwarded.
	Up State = "up"
	// Restarting: it went away and is being restarted; requests wait
	// for it up to its RestartWait, then are answered with an error.
	Restarting State = "restarting"
	// Failed: it went away more often than its restart policy allows and
	// stays down; a request after the cool-down starts it again.
	Failed State = "failed"
	// Idle: a lazy backend that is not running; a request starts it.
	Idle State = "idle"
	// Stopped: the gateway is closing.
	Stopped State = "stopped"
)

// Status is a backend's state as Backends reports it.
type Status struct {
	Name  string
	State State
	// PID is the server process's id while it is up, else 0.
	PID int
	// Restarts counts every restart since the gateway started.
	Restarts int
	// LastError is why it last went away or failed to start ("" if never).
	LastError string
	// Tools, Prompts, Resources and Templates count what it offers through
	// the gateway.
	Tools, Prompts, Resources, Templates int
	// Subscriptions counts the resources it follows for the gateway's
	// clients, as it acknowledged them (resources/subscribe answered, or
	// a 2026-07-28 listen stream acknowledged).
	Subscriptions int
	// Auth is whom its requests are made as (Backend.Auth: AuthService,
	// AuthExchange or AuthUser), and Callers, for the last two, how many
	// callers have a connection of their own to it now. No token, ever.
	Auth    string
	Callers int
	// RecentCallers are, for the last two, the callers with a connection
	// of their own now, most recently active first (up to
	// recentCallersShown): who reached the backend as themselves.
	RecentCallers []CallerStatus
	// Protocol is the revision it speaks and Since when it came up, while
	// it is up.
	Protocol string
	Since    time.Time
	// InFlight counts the requests forwarded to it and not yet answered.
	InFlight int
	// RecentRestarts are its latest restarts (up to 32), oldest first;
	// RestartsByCause counts all of them by Restart.Cause; GaveUp counts
	// the times it restarted more than MaxRestarts times within
	// RestartWindow (its configuration's) and was failed.
	RecentRestarts  []Restart
	RestartsByCause map[string]int
	GaveUp          int
	MaxRestarts     int
	RestartWindow   time.Duration
	// Stderr is its last lines of stderr (up to 10), as it wrote them.
	Stderr []string
}

// Restart is one restart of a backend: when it was decided, its cause
// ("exited", "timeout", "start_failed" or "connection_lost", the label
// values of mcprt_gateway_backend_restarts_total) and
// the reason in words.
type Restart struct {
	At            time.Time
	Cause, Reason string
}

// RestartsWithin counts the restarts of RecentRestarts since now minus
// the restart window: how much of the restart intensity is used.
func (s Status) RestartsWithin(now time.Time) int {
	n := 0
	for _, r := range s.RecentRestarts {
		if now.Sub(r.At) < s.RestartWindow {
			n++
		}
	}
	return n
}

// CallerStatus is one caller's connection to an AuthExchange or AuthUser
// backend: the caller's principal ("sub:…", "client:…", "local" over
// stdio; never a token), when it last made a request on it, and how many
// it has in flight.
type CallerStatus struct {
	Principal string
	LastUsed  time.Time
	InFlight  int
}

// Auth is whom the named backend's requests are made as: AuthService,
// AuthExchange or AuthUser; "" for a local backend (a process of the
// gateway's) or no backend of that name. For the audit log: which
// credential a call used, never the credential.
func (g *Gateway) Auth(backend string) string {
	for _, b := range g.all() {
		if b.name == backend {
			return b.authMode()
		}
	}
	return ""
}

// Backends reports the state of every backend, in configuration order.
func (g *Gateway) Backends() []Status {
	bs := g.all()
	out := make([]Status, len(bs))
	for i, b := range bs {
		out[i] = b.status()
	}
	return out
}

// put registers an item of a kind ('t' tools, 'p' prompts, 'r' resources,
// 'u' templates) under name for b, by add, and reports whether b has it:
// when two backends offer the same name, the one earlier in the
// configuration keeps it, whichever registered first. Ownership and the
// registration change together, under g.mu, so that two backends racing
// for a name leave the server with the owner's handler.
func (g *Gateway) put(kind byte, name string, b *backend, add func() error) (bool, error) {
	key := string(kind) + name
	g.mu.Lock()
	defer g.mu.Unlock()
	if o, ok := g.owners[key]; ok && o != b && o.index < b.index {
		return false, nil
	}
	if err := add(); err != nil {
		return false, err
	}
	g.owners[key] = b
	return true, nil
}

// drop unregisters an item of b's, by remove, unless another backend
// owns the name now.
func (g *Gateway) drop(kind byte, name string, b *backend, remove func()) {
	key := string(kind) + name
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.owners[key] == b {
		delete(g.owners, key)
		remove()
	}
}

func (g *Gateway) owner(kind byte, name string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if o := g.owners[string(kind)+name]; o != nil {
		return o.name
	}
	return ""
}

// lineWriter serialises the backends' stderr lines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) line(prefix, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, prefix+text+"\n")
}

// unknownTool is the server's OnUnknownTool hook: a call of a tool named
// with the prefix of a backend that has never listed what it offers (it
// is starting, or could not start) is answered with why, rather than
// "Unknown tool". Any other unknown name gets the protocol's error, and so
// does a caller that the tool's access would not show it to: the reason
// names the backend.
func (g *Gateway) unknownTool(name string, caller *handlers.Caller) *mcp.CallToolResult {
	prefix, tool, ok := strings.Cut(name, separator)
	if !ok {
		return nil
	}
	for _, b := range g.all() {
		if b.cfg.NoPrefix || b.cfg.Prefix != prefix {
			continue
		}
		if !b.cfg.toolAccess(tool).Allows(caller) {
			return nil
		}
		b.regMu.Lock()
		seen := b.reg.last != nil
		b.regMu.Unlock()
		if seen {
			return nil // up, or known down: the tool is not one of its
		}
		st := b.status()
		// Starting, without an error: its process may well run, but it
		// has not said what it offers.
		why := "is still starting (it has not listed its tools yet; try again shortly)"
		switch {
		case st.State == Starting && st.LastError == "":
		case st.State == Starting, st.State == Restarting, st.State == Failed:
			why = "could not start: " + st.LastError
		default:
			why = fmt.Sprintf("is %s", st.State)
		}
		u := &unavailable{backend: b.name, why: fmt.Sprintf("%s, so its tool %q is not offered", why, name), stderr: b.tail()}
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(u.Error())}, IsError: true}
	}
	return nil
}

// atDebug is a slog.Handler that passes every record on at Debug.
type atDebug struct{ h slog.Handler }

func (d atDebug) Enabled(ctx context.Context, _ slog.Level) bool {
	return d.h.Enabled(ctx, slog.LevelDebug)
}

func (d atDebug) Handle(ctx context.Context, r slog.Record) error {
	r.Level = slog.LevelDebug
	return d.h.Handle(ctx, r)
}

func (d atDebug) WithAttrs(as []slog.Attr) slog.Handler { return atDebug{d.h.WithAttrs(as)} }
func (d atDebug) WithGroup(name string) slog.Handler    { return atDebug{d.h.WithGroup(name)} }

// clientCapabilities is the server's OnClientCapabilities hook: the first
// client's capabilities say whether the backends are told of roots (see
// awaitClient). It runs on the session's goroutine, for every 2026-07-28
// request: after the first, it returns at once.
func (g *Gateway) clientCapabilities(caps json.RawMessage) {
	select {
	case <-g.clientKnown:
		return
	default:
	}
	g.clientOnce.Do(func() {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(caps, &m)
		_, roots := m["roots"]
		g.clientRoots.Store(roots)
		g.noteClientExtensions(caps)
		close(g.clientKnown)
	})
}

// declareRoots says whether a backend connecting now is told of roots:
// with many clients, yes (they are the last a client gave); with one,
// once it has initialized, only when it declared roots, waiting for it up
// to the list grace (then no).
func (g *Gateway) declareRoots(ctx context.Context) bool {
	if !g.awaitClient {
		return true
	}
	grace := g.opts.ListGrace
	if grace < 0 { // no wait for the lists; the client still gets its moment
		grace = DefaultListGrace
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-g.clientKnown:
		return g.clientRoots.Load()
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}
