package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/supervisor"
)

// conn is one incarnation of a backend: the actor its supervisor restarts.
// It waits out the backoff, starts the server and connects, lists what it
// offers, and then watches it: a server that exits, closes its stdout,
// fails to connect or does not answer a ping makes the actor exit with
// that reason, which the supervisor counts against the backend's restart
// intensity. Stopping the actor closes the client (stdin EOF, grace,
// SIGTERM, grace, SIGKILL, reap) and waits for every goroutine it started.
//
// Hollywood cannot interrupt a Receive, so all waiting happens on the
// actor's goroutines, which report back by message.
type conn struct {
	b   *backend
	inc int

	ctx    context.Context // ends when the actor stops
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	stopped bool
	cl      *client.Client

	refresh chan struct{} // capacity 1: a list changed
	resub   chan struct{} // capacity 1: the resources to follow changed

	// listening is closed once the first 2026-07-28 listen stream is
	// acknowledged (or refused, or ended): only then are the lists fetched,
	// so that no change falls between the lists and the stream.
	listening  chan struct{}
	listenOnce sync.Once

	reported bool // the end of this incarnation was told to the backend

	callers *callers // AuthExchange: each caller's connection
}

// connFailed is how the actor's goroutines tell it that the incarnation
// is over.
type connFailed struct{ err error }

func (c *conn) Receive(ac *actor.Context) {
	switch m := ac.Message().(type) {
	case actor.Started:
		c.start(ac.Engine(), ac.PID())
	case connFailed:
		c.reported = true
		c.b.down(c.inc, m.err)
		supervisor.Exit(ac, m.err)
	case actor.Stopped:
		c.stop()
	}
}

func (c *conn) start(e *actor.Engine, self *actor.PID) {
	b := c.b
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.refresh = make(chan struct{}, 1)
	c.listening = make(chan struct{})
	c.resub = make(chan struct{}, 1)
	c.inc = b.beginIncarnation(c.resub)
	if b.perCaller() {
		c.callers = newCallers(b)
		b.setCallers(c.inc, c.callers)
	}
	fail := func(err error) {
		if c.ctx.Err() == nil {
			e.Send(self, connFailed{err})
		}
	}
	c.wg.Go(func() {
		cl, err := c.connect()
		if err != nil && cannotStart(err) {
			// Restarting will not find the program: the backend is
			// failed at once, and started again after its cool-down.
			if c.ctx.Err() == nil {
				b.cannotStart(c.inc, err)
			}
			return
		}
		if err != nil {
			fail(err)
			return
		}
		if !c.keep(cl) {
			return
		}
		cl.Subscribe("", c.notification)
		if cl.Era() == client.EraModern {
			// 2026-07-28 sends nothing unasked: list changes come on a
			// listen stream, open for the incarnation's life.
			c.wg.Go(func() { c.listen(cl, fail) })
			// A change made before the backend has taken the stream is
			// told to no one: the lists wait for its acknowledgement.
			select {
			case <-c.listening:
			case <-c.ctx.Done():
				return
			case <-time.After(listenAckWait):
				b.g.log.Debug("gateway: the backend did not acknowledge subscriptions/listen; listing it anyway", "backend", b.name)
			}
		}
		l, err := fetchLists(c.ctx, cl)
		if err != nil {
			fail(fmt.Errorf("listing what it offers: %w", err))
			return
		}
		b.setListed()
		b.waitPredecessors(c.ctx)
		b.register(l)
		if !b.up(c.inc, cl, fail) {
			return
		}
		_, roots := b.g.knownRoots()
		b.catchUpRoots(roots)
		b.g.learnInstructions(b, cl.Instructions())
		b.settle()
		where := []any{"pid", cl.PID()}
		if b.cfg.URL != "" {
			where = []any{"url", redacted(b.cfg.URL)}
		}
		b.g.log.Info("gateway: backend up", append(append([]any{"backend", b.name}, where...), "protocol", cl.ProtocolVersion(),
			"tools", len(l.tools), "prompts", len(l.prompts), "resources", len(l.resources), "templates", len(l.templates))...)
		c.wg.Go(func() {
			select {
			case <-cl.Done():
				fail(cl.Err())
			case <-c.ctx.Done():
			}
		})
		c.wg.Go(func() { c.refresher(cl, fail) })
		if cl.Era() == client.EraLegacy {
			c.wg.Go(func() { c.subscriber(cl) })
		}
		if b.cfg.PingInterval > 0 {
			c.wg.Go(func() { c.pinger(cl, fail) })
		}
		if b.cfg.Lazy {
			c.wg.Go(c.idleWatch)
		}
	})
}

func (c *conn) connect() (*client.Client, error) {
	b, g := c.b, c.b.g
	roots := b.roots
	if !g.declareRoots(c.ctx) { // before the connect's Timeout starts
		roots = nil
	}
	ctx, cancel := context.WithTimeoutCause(c.ctx, b.cfg.Timeout, fmt.Errorf("not connected within %v", b.cfg.Timeout))
	defer cancel()
	era, version, err := protocolOf(b.cfg.Protocol)
	if err != nil {
		return nil, err
	}
	auto, learned := era == client.EraAuto, false
	if auto {
		if found := client.Era(b.era.Load()); found != client.EraAuto {
			era, learned = found, true
		}
	}
	o := &client.Options{
		ClientInfo:  mcp.Implementation{Name: g.opts.Info.Name, Version: g.opts.Info.Version},
		Era:         era,
		Version:     version,
		Timeout:     b.cfg.Timeout,
		MaxTimeout:  b.cfg.MaxTimeout,
		CloseGrace:  g.opts.CloseGrace,
		TermGrace:   g.opts.TermGrace,
		Logger:      g.log.With("backend", b.name),
		LogLevel:    "debug",
		Sampling:    b.askHandler("sampling/createMessage"),
		Elicitation: b.askHandler("elicitation/create"),
		Roots:       roots,
		Extensions:  g.declareExtensions(),
		// The client's roots change: the gateway tells (see roots.go).
		RootsListChanged: roots != nil,
		// Each forwarded request is an mcp.client span, a child of the
		// client's request's mcp.server span (see Options.Tracer).
		Tracer: g.opts.Tracer,
	}
	var cl *client.Client
	if b.cfg.URL != "" {
		o.Header = http.Header{}
		for k, v := range b.cfg.Headers {
			o.Header.Set(k, v)
		}
		if b.cfg.OAuth != nil {
			if o.HTTPClient, err = b.oauthClient(); err != nil {
				return nil, err
			}
		}
		cl, err = client.ConnectURL(ctx, b.cfg.URL, o)
	} else {
		cmd := client.Command{Path: b.cfg.Command, Args: b.cfg.Args, Env: b.cfg.Env, Dir: b.cfg.Dir}
		o.OnStderr, o.SysProcAttr = b.stderrLine, dieWithParent
		if gc, ok := guarded(g.opts.Guard, cmd); ok {
			cmd, o.SysProcAttr = gc, guardDiesWithParent
		}
		cl, err = client.Connect(ctx, cmd, o)
	}
	switch {
	case err == nil && auto:
		b.era.Store(int32(cl.Era()))
	case err != nil && learned:
		b.era.Store(int32(client.EraAuto))
	}
	if err != nil && context.Cause(ctx) != nil && c.ctx.Err() == nil {
		err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
	}
	return cl, err
}

// keep hands a connected client to the actor, which closes it when it
// stops; false (and the client closed) if it has stopped already.
func (c *conn) keep(cl *client.Client) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		c.mu.Unlock()
		cl.Close() // on this goroutine, which stop waits for
		c.mu.Lock()
		return false
	}
	c.cl = cl
	return true
}

func (c *conn) stop() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	c.mu.Lock()
	c.stopped = true
	cl := c.cl
	c.mu.Unlock()
	if !c.reported {
		c.reported = true
		c.b.down(c.inc, errors.New("stopped"))
	}
	if c.callers != nil {
		c.callers.close()
	}
	if cl != nil {
		if err := cl.Close(); err != nil {
			c.b.g.log.Debug("gateway: backend closed", "backend", c.b.name, "exit", err)
		}
	}
	c.wg.Wait()
}

// notification takes what the backend sends unasked. It runs on the
// client's reading goroutine and must not block.
func (c *conn) notification(n client.Notification) {
	switch n.Method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		select {
		case c.refresh <- struct{}{}:
		default:
		}
	case "notifications/message":
		c.b.logMessage(n.Params)
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(n.Params, &p) == nil && c.b.isFollowed(p.URI) {
			c.b.g.notifyResourceUpdated(p.URI)
		}
	case "notifications/subscriptions/acknowledged":
		c.listenReady()
		// What a 2026-07-28 listen stream follows (the latest one's ack
		// is the last to come).
		var p struct {
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		}
		if json.Unmarshal(n.Params, &p) == nil {
			up := map[string]bool{}
			for _, u := range p.Notifications.ResourceSubscriptions {
				up[u] = true
			}
			c.b.followedUpstream(c.inc, up)
		}
	}
}

// listen keeps a 2026-07-28 subscriptions/listen request open, asking for
// the list changes and for the resources the gateway's clients follow
// through this backend; they come as notifications (see notification).
// When the resources to follow change, a new stream is opened and the old
// one then cancelled. A remote backend's stream that ends, but not by
// refusing it, is opened again, and its lists fetched again for the
// changes it may have missed: proxies cut long streams, and a replica
// behind a balancer may go while the others serve. Only when streams keep
// ending within listenQuick of opening (maxQuickBreaks in a row) has the
// backend gone away (a stdio one's exit tells of that).
func (c *conn) listen(cl *client.Client, fail func(error)) {
	defer c.listenReady() // refused or ended: nothing to wait for
	type stream struct {
		cancel context.CancelFunc
		done   chan error
		uris   []string
		opened time.Time
	}
	open := func(uris []string) *stream {
		ctx, cancel := context.WithCancel(c.ctx)
		st := &stream{cancel: cancel, done: make(chan error, 1), uris: uris, opened: time.Now()}
		n := map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}
		if len(uris) > 0 {
			n["resourceSubscriptions"] = uris
		}
		c.wg.Go(func() {
			st.done <- cl.Call(ctx, "subscriptions/listen", map[string]any{"notifications": n}, nil, client.WithTimeout(-1))
		})
		return st
	}
	cur := open(c.b.followed())
	defer func() { cur.cancel() }()
	quick := 0 // streams in a row that ended within listenQuick
	for {
		var err error
		select {
		case <-c.ctx.Done():
			return
		case <-c.resub:
			uris := c.b.followed()
			if slices.Equal(uris, cur.uris) {
				continue
			}
			next := open(uris)
			cur.cancel()
			<-cur.done
			cur = next
			continue
		case err = <-cur.done:
			c.listenReady()
		}
		if c.ctx.Err() != nil || cl.Err() != nil {
			return
		}
		var re *client.RPCError
		if errors.As(err, &re) || err != nil && c.b.cfg.URL == "" {
			c.b.g.log.Warn("gateway: the backend refused subscriptions/listen; changes of its lists will not be seen", "backend", c.b.name, "err", err)
			return
		}
		if c.b.cfg.URL == "" {
			return
		}
		if time.Since(cur.opened) < listenQuick {
			quick++
		} else {
			quick = 0
		}
		if quick >= maxQuickBreaks {
			if err != nil {
				fail(fmt.Errorf("its subscriptions/listen stream broke: %w", err))
			} else {
				fail(errors.New("it ended its subscriptions/listen stream"))
			}
			return
		}
		c.b.g.log.Info("gateway: a backend's subscriptions/listen stream ended; opening it again", "backend", c.b.name, "err", err)
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(time.Duration(quick) * listenQuick / 10):
		}
		cur = open(c.b.followed())
		select {
		case c.refresh <- struct{}{}: // what changed while no stream was open
		default:
		}
	}
}

// listenReady says the first listen stream needs no more waiting for.
func (c *conn) listenReady() { c.listenOnce.Do(func() { close(c.listening) }) }

// listenAckWait bounds the wait for a listen stream's acknowledgement,
// which 2026-07-28 requires first on the stream: a backend that never
// sends it is listed after this anyway.
const listenAckWait = 5 * time.Second

// listenQuick and maxQuickBreaks: a listen stream that ends this soon
// after opening, so many times in a row, means the backend is gone.
const (
	listenQuick    = time.Second
	maxQuickBreaks = 3
)

// subscriber follows, at a legacy backend, the resources the gateway's
// clients follow through it (resources/subscribe, resources/unsubscribe),
// from the incarnation's start and whenever they change. A backend that
// does not offer subscriptions is told nothing (and that is logged once).
func (c *conn) subscriber(cl *client.Client) {
	b := c.b
	var caps struct {
		Subscribe bool `json:"subscribe"`
	}
	_ = json.Unmarshal(cl.Capabilities()["resources"], &caps)
	have := map[string]bool{}
	warned := false
	for {
		want := b.followed()
		switch {
		case !caps.Subscribe:
			if len(want) > 0 && !warned {
				warned = true
				b.g.log.Warn("gateway: the backend does not offer resources/subscribe; its resources' updates will not be seen", "backend", b.name)
			}
		default:
			for _, u := range want {
				if have[u] {
					continue
				}
				err := cl.Call(c.ctx, "resources/subscribe", map[string]string{"uri": u}, nil, client.WithTimeout(b.cfg.Timeout))
				if c.ctx.Err() != nil {
					return
				}
				if err != nil {
					b.g.log.Warn("gateway: the backend refused resources/subscribe", "backend", b.name, "uri", u, "err", err)
					continue
				}
				have[u] = true
			}
			for _, u := range slices.Sorted(maps.Keys(have)) {
				if slices.Contains(want, u) {
					continue
				}
				err := cl.Call(c.ctx, "resources/unsubscribe", map[string]string{"uri": u}, nil, client.WithTimeout(b.cfg.Timeout))
				if c.ctx.Err() != nil {
					return
				}
				if err != nil {
					b.g.log.Debug("gateway: the backend refused resources/unsubscribe", "backend", b.name, "uri", u, "err", err)
				}
				delete(have, u)
			}
			b.followedUpstream(c.inc, maps.Clone(have))
		}
		select {
		case <-c.ctx.Done():
			return
		case <-c.resub:
		}
	}
}

// refresher lists everything again when the backend says a list changed;
// notifications that arrive meanwhile make one more round.
func (c *conn) refresher(cl *client.Client, fail func(error)) {
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-c.refresh:
		}
		l, err := fetchLists(c.ctx, cl)
		if err != nil {
			if c.ctx.Err() == nil && cl.Err() == nil {
				c.b.g.log.Warn("gateway: listing a backend's changed lists", "backend", c.b.name, "err", err)
			}
			continue
		}
		c.b.register(l)
	}
}

// pinger pings the backend when no request is in flight to it; one that
// does not answer within PingTimeout ends the incarnation. An error
// answer is an answer: the backend is alive, if without ping.
func (c *conn) pinger(cl *client.Client, fail func(error)) {
	b := c.b
	t := time.NewTicker(b.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		b.mu.Lock()
		busy := b.calls.n > 0
		b.mu.Unlock()
		if busy {
			continue
		}
		err := cl.Ping(c.ctx, client.WithTimeout(b.cfg.PingTimeout))
		var re *client.RPCError
		switch {
		case err == nil, errors.As(err, &re), c.ctx.Err() != nil:
		case cl.Err() != nil:
			return // the session ended: the monitor reports it
		default:
			fail(fmt.Errorf("did not answer a ping within %v", b.cfg.PingTimeout))
			return
		}
	}
}

// idleWatch stops a lazy backend that has had no request for IdleTimeout
// (at once after the first start, which only learnt what it offers).
func (c *conn) idleWatch() {
	b := c.b
	first := !b.discovered.Swap(true)
	if first {
		b.goIdle(c.inc, 0)
		return
	}
	tick := max(b.cfg.IdleTimeout/4, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		if b.goIdle(c.inc, b.cfg.IdleTimeout) {
			return
		}
	}
}

// logMessage carries a backend's notifications/message to the client, by
// the request callAsking finds (when the client asked for that level),
// else to the gateway's log.
func (b *backend) logMessage(params json.RawMessage) {
	var m struct {
		Level  string          `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	if json.Unmarshal(params, &m) != nil || m.Level == "" {
		return
	}
	logger := b.name
	if m.Logger != "" {
		logger += "/" + m.Logger
	}
	if c, _ := b.callAsking(); c != nil && c.req.Log(m.Level, logger, m.Data) {
		return
	}
	b.g.log.Log(context.Background(), handlers.SlogLevel(m.Level), "backend log message",
		"backend", b.name, "logger", m.Logger, "data", string(m.Data))
}

// redacted is a URL without its password, for logs.
func redacted(u string) string {
	if pu, err := url.Parse(u); err == nil {
		return pu.Redacted()
	}
	return u
}

// guarded is cmd run through guard (Options.Guard). The command is looked
// up on PATH here, as it would be without the guard; one that cannot be
// found is started without it, to fail with the error it would give.
func guarded(guard []string, cmd client.Command) (client.Command, bool) {
	if len(guard) == 0 {
		return cmd, false
	}
	path := cmd.Path
	if !strings.ContainsRune(path, '/') && !strings.ContainsRune(path, filepath.Separator) {
		p, err := exec.LookPath(path)
		if err != nil {
			return cmd, false
		}
		path = p
	} else {
		// One that cannot be run is started unguarded, so that the
		// backend fails as its program is not found (cannotStart), not
		// as a guard that exited 127.
		check := path
		if !filepath.IsAbs(check) && cmd.Dir != "" {
			check = filepath.Join(cmd.Dir, check)
		}
		if _, err := exec.LookPath(check); err != nil {
			return cmd, false
		}
	}
	args := append(append(slices.Clip(guard[1:]), path), cmd.Args...)
	return client.Command{Path: guard[0], Args: args, Env: cmd.Env, Dir: cmd.Dir}, true
}

// cannotStart says whether a backend's connect failed because its program
// could not be started at all (not found, not executable, no such cwd):
// no restart will change that, as one might a crash.
func cannotStart(err error) bool {
	return errors.Is(err, exec.ErrNotFound) || errors.Is(err, exec.ErrDot) ||
		errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)
}
