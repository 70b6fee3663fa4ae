package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/session/client"
	"github.com/mcprt/mcprt/supervisor"
)

// stderrKept is how many of a backend's last stderr lines are kept for
// error messages.
const stderrKept = 10

// backend is one configured server: its state, the client of its current
// incarnation, what it registered in the gateway's server, and the calls
// forwarded to it. Its supervision is a supervisor of its own (one
// permanent child, the conn actor, within the backend's restart
// intensity) under the gateway's root, as a temporary child: when it gives
// up, the backend is failed and nothing else is touched.
type backend struct {
	g    *Gateway
	cfg  Backend
	name string
	// index ranks it among the backends where two offer one name: the
	// lower keeps it. It is its place in the configuration the gateway
	// started with; a backend Reload adds comes after all those, and one
	// it replaces (its configuration changed) keeps the index it had.
	index int
	id    string // the child ID of its supervisor under the root, never reused
	// removed says Reload took it out: it registers nothing any more.
	removed atomic.Bool
	// era is the era an "auto" backend was found to speak (client.Era;
	// 0, EraAuto, until then): its restarts connect in that era at once
	// rather than probing again, because a restarted server slow to
	// start (a loaded machine) let the probe time out and was then spoken
	// to in 2025-11-25 though it speaks 2026-07-28. A connect that fails
	// forgets it, so a server replaced on disk by another is probed anew.
	era atomic.Int32

	settled     chan struct{} // closed once it first was up or first failed
	settledOnce sync.Once
	// listed is closed once it first has its lists, before it waits for
	// the backends before it to register theirs (waitPredecessors).
	listed     chan struct{}
	listedOnce sync.Once
	discovered atomic.Bool // a lazy backend has listed what it offers once

	// auth is a remote backend's OAuth client (Backend.OAuth), made at
	// its first connect and kept across reconnects with its token.
	authOnce sync.Once
	auth     *http.Client
	authErr  error

	mu       sync.Mutex
	callers  *callers // the current incarnation's, for AuthExchange
	state    State
	changed  chan struct{} // closed and replaced at every state change
	running  bool          // its supervisor exists
	cl       *client.Client
	lost     func(error) // ends the incarnation of cl (a remote backend's lost connection)
	inc      int         // incarnation: which conn actor is current
	lastErr  error
	failedAt time.Time
	restarts int
	lastUsed time.Time
	calls    callList
	stopWhy  string      // what a request that finds it Stopped is told, if not shutdown
	retry    *time.Timer // see retryUnseen
	// retrying is set while a backend that has never listed what it
	// offers is being started again after its cool-down, and cleared once
	// it comes up: its failures were said the first time, and are logged
	// again at Debug, so that one that never starts does not fill the log.
	retrying bool
	// follows are the resource URIs the gateway's clients follow through
	// this backend; upstream those the current incarnation has told it
	// follows; resub pokes the current incarnation when follows changes.
	follows  map[string]bool
	upstream map[string]bool
	resub    chan struct{}

	// What the status page and the metrics show of its restarts: when it
	// last came up, why each restart was (the latest restartsKept), how
	// many by cause, and how often its supervisor gave up.
	upSince time.Time
	// rootsSeen is the version of the client's roots (Gateway.knownRoots)
	// this incarnation was last given, or told to ask for.
	rootsSeen  int
	lastCause  string
	restartLog []Restart
	byCause    map[string]int
	gaveUp     int

	stderrMu   sync.Mutex
	stderrTail []string
	thr        client.Throttle

	// Registration: what the current lists put in the gateway's server.
	regMu sync.Mutex
	reg   registered
}

func newBackend(g *Gateway, index, id int, cfg Backend) *backend {
	b := &backend{
		g:       g,
		cfg:     cfg,
		name:    cfg.Name,
		index:   index,
		id:      fmt.Sprintf("b%d", id),
		settled: make(chan struct{}),
		listed:  make(chan struct{}),
		state:   Starting,
		follows: map[string]bool{},
		changed: make(chan struct{}),
		thr:     client.Throttle{Limit: g.opts.StderrLimit, Window: g.opts.StderrWindow},
	}
	if cfg.Lazy {
		b.state = Idle
	}
	return b
}

// setState changes the state and wakes everyone waiting for a change.
// The caller holds b.mu.
func (b *backend) setState(s State) {
	b.state = s
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *backend) settle() { b.settledOnce.Do(func() { close(b.settled) }) }

func (b *backend) setListed() { b.listedOnce.Do(func() { close(b.listed) }) }

// waitPredecessors waits, while the gateway starts, until the backends
// before this one in the configuration have registered what they offer
// (or failed once), so that the client's first lists come in the
// configuration's order whichever backend was quickest. Once the list
// grace has passed (Gateway.orderFree) nobody waits: a backend that hangs
// while it starts holds up the others no longer than that.
func (b *backend) waitPredecessors(ctx context.Context) {
	for _, p := range b.g.all() {
		if p.index >= b.index {
			continue
		}
		select {
		case <-p.settled:
		case <-b.g.orderFree:
			return
		case <-ctx.Done():
			return
		}
	}
}

// start starts the backend's supervisor unless it runs already. It must
// not be called on a supervisor's goroutine.
func (b *backend) start() {
	b.mu.Lock()
	if b.running || b.g.closing.Load() {
		b.mu.Unlock()
		return
	}
	b.running = true
	b.setState(Starting)
	b.mu.Unlock()
	_, err := supervisor.StartChild(b.g.e, b.g.sup, supervisor.ChildSpec{
		ID:       b.id,
		Start:    supervisor.New(b.supervisorSpec()),
		Restart:  supervisor.Temporary,
		Shutdown: b.connShutdown() + time.Second,
	})
	if err != nil {
		b.mu.Lock()
		b.running = false
		b.lastErr = fmt.Errorf("starting its supervisor: %w", err)
		if b.state == Starting {
			b.failedAt = time.Now()
			b.setState(Failed)
		}
		b.mu.Unlock()
		b.settle()
	}
}

// connShutdown bounds a conn actor's stop: Close's graces, and a little
// for the reaping.
func (b *backend) connShutdown() time.Duration {
	return b.g.opts.CloseGrace + b.g.opts.TermGrace + 2*time.Second
}

func (b *backend) supervisorSpec() supervisor.Spec {
	intensity := b.cfg.MaxRestarts
	if intensity == 0 {
		intensity = -1 // Spec: 0 would mean the default
	}
	return supervisor.Spec{
		Name:      "gateway/" + b.name,
		Strategy:  supervisor.OneForOne,
		Intensity: intensity,
		Period:    b.cfg.RestartWindow,
		// The supervisor waits out the backoff, not the conn actor: a
		// restart it delays is one it can cancel, and its window is the
		// one count of failures (supervisor.Window).
		Backoff:   supervisor.Backoff{Initial: b.cfg.Backoff, Max: b.cfg.MaxBackoff},
		Logger:    b.g.quietLog,
		EventHook: b.onEvent,
		Children: []supervisor.ChildSpec{{
			ID:       "conn",
			Start:    func() actor.Receiver { return &conn{b: b} },
			Restart:  supervisor.Permanent,
			Shutdown: b.connShutdown(),
		}},
	}
}

// onEvent runs on the backend supervisor's goroutine.
func (b *backend) onEvent(ev supervisor.Event) {
	switch ev := ev.(type) {
	case supervisor.EventChildRestarted:
		b.mu.Lock()
		b.restarts++
		reason := b.lastErr
		b.noteRestart(time.Now(), b.lastCause, errString(reason))
		b.mu.Unlock()
		b.g.log.Log(context.Background(), b.level(slog.LevelWarn), "gateway: backend went away; restarting it", "backend", b.name, "reason", errString(reason),
			"attempt", fmt.Sprintf("%d of %d within %v", ev.Restarts, b.cfg.MaxRestarts, b.cfg.RestartWindow), "after", ev.Delay)
	case supervisor.EventGaveUp:
		b.mu.Lock()
		if b.state == Stopped || b.state == Idle {
			b.mu.Unlock()
			return
		}
		b.cl = nil
		b.failedAt = time.Now()
		b.gaveUp++
		b.upSince = time.Time{}
		b.setState(Failed)
		reason := b.lastErr
		b.mu.Unlock()
		b.settle()
		if b.retryUnseen() {
			b.g.log.Log(context.Background(), b.level(slog.LevelError), "gateway: backend failed before it listed what it offers: it is started again after the cool-down",
				"backend", b.name, "cooldown", b.cfg.Cooldown, "last", errString(reason))
			return
		}
		b.g.log.Error("gateway: backend failed: it stays down until a request comes after the cool-down",
			"backend", b.name, "cooldown", b.cfg.Cooldown, "last", errString(reason))
		b.markUnavailable()
	}
}

// retryUnseen starts a failed backend again after its cool-down, if it
// never listed what it offers, and reports whether it will: no request
// can reach such a backend to start it again, as one reaches a backend
// whose tools say it is down (a remote server that was down when the
// gateway started, a command that needed something not there yet).
func (b *backend) retryUnseen() bool {
	b.regMu.Lock()
	seen := b.reg.last != nil
	b.regMu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	// Under b.mu, where closing marks it Stopped: once Close has, no
	// timer is added to the gateway's wg.
	if seen || b.state != Failed || b.retry != nil || b.removed.Load() {
		return false
	}
	b.g.wg.Add(1)
	b.retry = time.AfterFunc(b.cfg.Cooldown, func() {
		defer b.g.wg.Done()
		b.mu.Lock()
		b.retry = nil
		failed := b.state == Failed
		b.mu.Unlock()
		if failed && !b.removed.Load() {
			b.g.log.Log(context.Background(), b.level(slog.LevelInfo), "gateway: starting again a backend that failed before it listed what it offers", "backend", b.name)
			b.mu.Lock()
			b.retrying = true
			b.mu.Unlock()
			b.start()
		}
	})
	return true
}

// supervisorExited runs (on the root's goroutine) when the backend's
// supervisor is gone.
func (b *backend) supervisorExited(reason error) {
	b.mu.Lock()
	b.running = false
	b.cl = nil
	if b.state == Starting || b.state == Up || b.state == Restarting {
		// Not a give-up (that is Failed already) nor a stop we asked for:
		// its supervisor could not even start.
		if supervisor.IsAbnormal(reason) && b.lastErr == nil {
			b.lastErr = reason
		}
		b.failedAt = time.Now()
		b.setState(Failed)
	} else {
		b.setState(b.state) // wake waiters: a stopped backend may start again
	}
	b.mu.Unlock()
	b.settle()
	b.retryUnseen()
}

// beginIncarnation makes the calling conn actor the current one, poked on
// resub when the resources to follow change. Its supervisor has already
// waited out the backoff (Spec.Backoff) before starting it.
func (b *backend) beginIncarnation(resub chan struct{}) (inc int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inc++
	b.resub, b.upstream = resub, nil
	return b.inc
}

// up makes the incarnation's client the one requests use; lost ends the
// incarnation.
func (b *backend) up(inc int, cl *client.Client, lost func(error)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if inc != b.inc || b.state == Stopped || b.state == Idle {
		return false
	}
	b.cl, b.lost = cl, lost
	b.lastUsed = time.Now()
	b.upSince = b.lastUsed
	b.retrying = false
	b.setState(Up)
	return true
}

// down records that incarnation inc went away (or failed to connect)
// for reason; the supervisor restarts it or gives up.
func (b *backend) down(inc int, reason error) {
	b.mu.Lock()
	if inc != b.inc || b.state == Stopped || b.state == Idle || b.state == Failed {
		b.mu.Unlock()
		return
	}
	b.lastCause = restartCause(reason, b.state == Up)
	b.cl = nil
	b.lastErr = reason
	b.upSince = time.Time{}
	b.rootsSeen = 0 // the next incarnation asks afresh
	b.setState(Restarting)
	b.mu.Unlock()
	b.settle()
	// Its supervisor restarts it after the backoff (onEvent says so) or
	// gives up.
}

// level is lvl, or Debug while the backend is retrying (see retrying).
func (b *backend) level(lvl slog.Level) slog.Level {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.retrying {
		return slog.LevelDebug
	}
	return lvl
}

// cannotStart fails incarnation inc at once: its program could not be
// started, and restarting it would fail the same way. It is said once, at
// Error; the same failure again, after a cool-down, only at Debug. The
// backend's supervisor is stopped, and the backend started again after
// its cool-down (retryUnseen), as a request after it would.
func (b *backend) cannotStart(inc int, err error) {
	b.mu.Lock()
	if inc != b.inc || b.state == Stopped || b.state == Idle || b.state == Failed {
		b.mu.Unlock()
		return
	}
	again := errString(b.lastErr) == errString(err)
	b.cl = nil
	b.lastErr = err
	b.failedAt = time.Now()
	b.setState(Failed)
	b.mu.Unlock()
	b.settle()
	level := slog.LevelError
	if again {
		level = slog.LevelDebug
	}
	b.g.log.Log(context.Background(), level, "gateway: backend cannot start; serving the others without it",
		"backend", b.name, "err", errString(err), "retry_after", b.cfg.Cooldown)
	b.regMu.Lock()
	seen := b.reg.last != nil
	b.regMu.Unlock()
	if seen {
		b.markUnavailable() // its tools say so, as a failed one's do
	}
	b.g.wg.Go(func() { b.stopSupervisor("that cannot start") })
}

// stopSupervisor stops the backend's supervisor and waits for it; what
// says which backend it is, in the warning when that fails. One already
// gone is no failure.
func (b *backend) stopSupervisor(what string) {
	err := supervisor.TerminateChild(b.g.e, b.g.sup, b.id)
	if err != nil && !errors.Is(err, supervisor.ErrUnknownChild) && !errors.Is(err, supervisor.ErrNotRunning) {
		msg := "gateway: stopping a backend"
		if what != "" {
			msg += " " + what
		}
		b.g.log.Warn(msg, "backend", b.name, "err", err)
	}
}

// follow records that the gateway's clients follow (on) or no longer
// follow the resource uri, which this backend offers, and tells the
// current incarnation, which follows it upstream (see conn.subscriber and
// conn.listen). It does not block.
func (b *backend) follow(uri string, on bool) {
	b.mu.Lock()
	if on {
		b.follows[uri] = true
	} else {
		delete(b.follows, uri)
	}
	ch := b.resub
	b.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// followed lists the URIs to follow, sorted.
func (b *backend) followed() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Sorted(maps.Keys(b.follows))
}

func (b *backend) isFollowed(uri string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.follows[uri]
}

// followedUpstream records what incarnation inc now follows at the
// backend. Each URI it follows anew (the first subscription, or again
// after a restart) is told to the clients as updated: a change while
// nobody followed it upstream would otherwise go unseen, and an update
// too many only makes a client read the resource again.
func (b *backend) followedUpstream(inc int, uris map[string]bool) {
	b.mu.Lock()
	if inc != b.inc {
		b.mu.Unlock()
		return
	}
	var fresh []string
	for u := range uris {
		if !b.upstream[u] && b.follows[u] {
			fresh = append(fresh, u)
		}
	}
	b.mu.Unlock()
	slices.Sort(fresh)
	for _, u := range fresh {
		b.g.notifyResourceUpdated(u)
	}
	b.mu.Lock()
	if inc == b.inc {
		b.upstream = uris
	}
	b.mu.Unlock()
}

// connectionLost ends the incarnation whose client is cl, if it is still
// the current one: a request to a remote backend found the connection
// gone (the client itself ends only when a legacy session is refused).
func (b *backend) connectionLost(cl *client.Client, reason error) {
	b.mu.Lock()
	lost := b.lost
	if b.cl != cl || b.state != Up {
		lost = nil
	}
	b.mu.Unlock()
	if lost != nil {
		lost(reason)
	}
}

// closing marks the backend stopped: requests waiting for it are
// answered, and told why ("": the gateway is shutting down).
func (b *backend) closing(why string) {
	b.mu.Lock()
	if why != "" {
		b.stopWhy = why
	}
	if b.retry != nil && b.retry.Stop() {
		b.g.wg.Done()
	}
	b.retry = nil
	b.cl = nil
	b.setState(Stopped)
	b.mu.Unlock()
	b.settle()
}

// goIdle stops a lazy backend's incarnation inc if it is up and has had
// no request for idleFor; the state is Idle at once, so that a request
// waits for the stop and then starts it again.
func (b *backend) goIdle(inc int, idleFor time.Duration) bool {
	b.mu.Lock()
	if inc != b.inc || b.state != Up || b.calls.n > 0 || time.Since(b.lastUsed) < idleFor {
		b.mu.Unlock()
		return false
	}
	b.cl = nil
	b.setState(Idle)
	b.mu.Unlock()
	b.g.log.Info("gateway: lazy backend idle; stopping it until a request needs it", "backend", b.name)
	b.g.wg.Go(func() { b.stopSupervisor("that is idle") })
	return true
}

// unavailable is the error of a request that finds its backend unable to
// take it. Its text is for the client: which backend, why, and what
// happens next.
type unavailable struct {
	backend string
	state   State
	why     string
	stderr  []string
}

func (u *unavailable) Error() string {
	var s strings.Builder
	fmt.Fprintf(&s, "backend %q %s", u.backend, u.why)
	if len(u.stderr) > 0 {
		fmt.Fprintf(&s, "; its last stderr lines: %s", strings.Join(u.stderr, " | "))
	}
	return s.String()
}

// acquire returns the client of an up backend, starting it if it is idle,
// or failed and past its cool-down, and waiting while it starts (within
// ctx). A backend that is restarting is waited for up to its
// RestartWait (within ctx); one that failed is an *unavailable error at
// once.
func (b *backend) acquire(ctx context.Context) (*client.Client, error) {
	var hold *time.Timer // the RestartWait, from the first time it restarts
	for {
		b.mu.Lock()
		state, ch := b.state, b.changed
		switch state {
		case Up:
			cl := b.cl
			b.lastUsed = time.Now()
			b.mu.Unlock()
			return cl, nil
		case Stopped:
			why := "is stopping: the gateway is shutting down"
			if b.stopWhy != "" {
				why = b.stopWhy
			}
			b.mu.Unlock()
			return nil, &unavailable{backend: b.name, state: state, why: why}
		case Restarting:
			// A restart mostly takes well under a second: the request
			// waits for it, a little, rather than fail for it.
			if hold == nil && b.cfg.RestartWait > 0 {
				hold = time.NewTimer(b.cfg.RestartWait)
				defer hold.Stop()
			}
			last := errString(b.lastErr)
			err := &unavailable{backend: b.name, state: state, why: fmt.Sprintf("is restarting after it went away (%s); try again shortly", last), stderr: b.tailIfUseful(b.lastErr)}
			b.mu.Unlock()
			if hold == nil {
				return nil, err
			}
			select {
			case <-ch:
				continue
			case <-hold.C:
				err.why = fmt.Sprintf("is restarting after it went away (%s), and was not up again within %v (restartWait); try again shortly", last, b.cfg.RestartWait)
			case <-ctx.Done():
			}
			return nil, err
		case Failed:
			wait := b.cfg.Cooldown - time.Since(b.failedAt)
			if wait > 0 || b.running {
				err := &unavailable{backend: b.name, state: state, why: fmt.Sprintf("failed: it went away more than %d times within %v (last: %s); it stays down, and a request after %s starts it again",
					max(b.cfg.MaxRestarts, 0), b.cfg.RestartWindow, errString(b.lastErr), b.failedAt.Add(b.cfg.Cooldown).Format(time.TimeOnly)), stderr: b.tailIfUseful(b.lastErr)}
				b.mu.Unlock()
				return nil, err
			}
			b.mu.Unlock()
			b.g.log.Info("gateway: starting a failed backend again after its cool-down", "backend", b.name)
			b.start()
			continue
		case Idle:
			running := b.running
			b.mu.Unlock()
			if !running {
				b.start()
				continue
			}
		default: // Starting
			b.mu.Unlock()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			why := "did not finish starting in time"
			if b.cfg.Lazy {
				why = "(lazy) did not finish starting in time"
			}
			b.mu.Lock()
			err := &unavailable{backend: b.name, state: b.state, why: why, stderr: b.tail()}
			b.mu.Unlock()
			return nil, err
		}
	}
}

// takeUp returns the client of an up backend and adds c to its calls, or
// returns nil if it is not up: acquire and add without the waiting, for a
// call that must not wait.
func (b *backend) takeUp(c *call) *client.Client {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != Up {
		return nil
	}
	// No lastUsed: the call is in b.calls until remove, which sets it.
	b.calls.push(c)
	return b.cl
}

// tailIfUseful gives the last stderr lines unless the error carries them
// already (a client.ExitError does).
func (b *backend) tailIfUseful(err error) []string {
	var ee *client.ExitError
	if errors.As(err, &ee) {
		return nil
	}
	return b.tail()
}

func errString(err error) string {
	if err == nil {
		return "no reason given"
	}
	return err.Error()
}

// authMode is b's credential mode as Status and Gateway.Auth say it.
func (b *backend) authMode() string {
	if b.cfg.Auth == "" && b.cfg.URL != "" {
		return AuthService
	}
	return b.cfg.Auth
}

func (b *backend) status() Status {
	b.mu.Lock()
	st := Status{Name: b.name, State: b.state, Restarts: b.restarts, LastError: errString(b.lastErr)}
	if b.lastErr == nil {
		st.LastError = ""
	}
	if b.cl != nil && b.state == Up {
		st.PID = b.cl.PID()
		st.Protocol = b.cl.ProtocolVersion()
		st.Since = b.upSince
	}
	st.Subscriptions = len(b.upstream)
	cs := b.callers
	st.InFlight = b.calls.n
	st.GaveUp = b.gaveUp
	// The configuration's 0 (no restarts) is -1 in Backend: 0 here.
	st.MaxRestarts, st.RestartWindow = max(b.cfg.MaxRestarts, 0), b.cfg.RestartWindow
	st.RecentRestarts = slices.Clone(b.restartLog)
	if len(b.byCause) > 0 {
		st.RestartsByCause = maps.Clone(b.byCause)
	}
	b.mu.Unlock()
	st.Auth = b.authMode()
	if cs != nil {
		st.RecentCallers = cs.recent(recentCallersShown)
		st.Callers = len(st.RecentCallers)
		if st.Callers == recentCallersShown {
			st.Callers = cs.count()
		}
	}
	b.regMu.Lock()
	st.Tools, st.Prompts, st.Resources, st.Templates = len(b.reg.tools), len(b.reg.prompts), len(b.reg.resources), len(b.reg.templates)
	b.regMu.Unlock()
	st.Stderr = b.tail()
	return st
}

// restartsKept bounds the restarts a backend remembers for Status, the
// latest kept.
const restartsKept = 32

// noteRestart records a restart decided at t. The caller holds b.mu.
func (b *backend) noteRestart(t time.Time, cause, reason string) {
	if cause == "" {
		cause = causeConnectionLost
	}
	if len(b.restartLog) == restartsKept {
		b.restartLog = append(b.restartLog[:0], b.restartLog[1:]...)
	}
	b.restartLog = append(b.restartLog, Restart{At: t, Cause: cause, Reason: reason})
	if b.byCause == nil {
		b.byCause = map[string]int{}
	}
	b.byCause[cause]++
}

// The causes of a restart, few and fixed: the label values of
// mcprt_gateway_backend_restarts_total.
const (
	// causeExited: its process exited (or was killed).
	causeExited = "exited"
	// causeTimeout: it did not answer in time (its handshake, or a ping).
	causeTimeout = "timeout"
	// causeStartFailed: it went away before it was up (the handshake or
	// the lists failed).
	causeStartFailed = "start_failed"
	// causeConnectionLost: a connection that was up broke otherwise (a
	// remote server's stream, a protocol error).
	causeConnectionLost = "connection_lost"
)

// restartCause classifies why an incarnation went away; wasUp says it had
// come up.
func restartCause(reason error, wasUp bool) string {
	var ee *client.ExitError
	switch {
	case errors.As(reason, &ee):
		return causeExited
	case errors.Is(reason, context.DeadlineExceeded):
		return causeTimeout
	case !wasUp:
		return causeStartFailed
	}
	return causeConnectionLost
}

// call is one request forwarded to the backend, kept while it runs so
// that what the backend sends meanwhile (log messages, requests for the
// client) can be carried by it.
type call struct {
	req    *handlers.Request
	ctx    context.Context    // the client's request: ends when it is answered or cancelled
	cancel context.CancelFunc // abandons the backend's side of it
	// needInput says that the client must answer a question first
	// (2026-07-28's input_required), so the call was abandoned.
	needInput atomic.Bool
	// prev and next link it in its backend's calls; guarded by backend.mu.
	prev, next *call
}

func (b *backend) track(c *call) func() {
	b.add(c)
	return func() { b.remove(c) }
}

func (b *backend) add(c *call) {
	b.mu.Lock()
	b.calls.push(c)
	b.mu.Unlock()
}

func (b *backend) remove(c *call) {
	b.mu.Lock()
	b.calls.remove(c)
	if b.calls.n == 0 { // idle from now: see goIdle
		b.lastUsed = time.Now()
	}
	b.mu.Unlock()
}

// callAsking is the call a legacy backend's question (elicitation,
// sampling, roots) or log message is taken to come from, since nothing in
// it says: the latest call still in flight, when that cannot be another
// client's. With one client (Options.SingleClient) any call in flight is
// that client's; with many, only a call alone in flight is sure to be the
// one that asks, and with several (ambiguous) none is chosen, as any
// choice could show one client what another's call caused.
func (b *backend) callAsking() (c *call, ambiguous bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.calls.n > 1 && !b.g.opts.SingleClient {
		return nil, true
	}
	return b.calls.tail, false
}

// callList is the calls in flight to a backend, oldest first, linked
// through the calls themselves: with hundreds in flight, taking one out of
// a slice was a scan under the backend's lock for every call.
type callList struct {
	head, tail *call
	n          int
}

func (l *callList) push(c *call) {
	c.prev, c.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = c
	} else {
		l.head = c
	}
	l.tail = c
	l.n++
}

func (l *callList) remove(c *call) {
	if c.prev == nil && l.head != c {
		return // not in the list
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.tail = c.prev
	}
	c.prev, c.next = nil, nil
	l.n--
}

// stderrLine takes one line of the backend's stderr: kept for error
// messages, and passed on, prefixed and throttled.
func (b *backend) stderrLine(line string) {
	b.stderrMu.Lock()
	if len(b.stderrTail) == stderrKept {
		b.stderrTail = append(b.stderrTail[:0], b.stderrTail[1:]...)
	}
	b.stderrTail = append(b.stderrTail, line)
	show, dropped := b.thr.Admit()
	b.stderrMu.Unlock()
	prefix := "[" + b.name + "] "
	if dropped > 0 {
		b.g.stderr.line(prefix, fmt.Sprintf("(%d stderr lines dropped)", dropped))
	}
	switch show {
	case client.PassLine:
		b.g.stderr.line(prefix, line)
	case client.SayThrottled:
		b.g.stderr.line(prefix, fmt.Sprintf("(more than %d stderr lines in %v: dropping the rest of them)", b.thr.Limit, b.thr.Window))
	}
}

// tail is the backend's last stderr lines.
func (b *backend) tail() []string {
	b.stderrMu.Lock()
	defer b.stderrMu.Unlock()
	return append([]string(nil), b.stderrTail...)
}
