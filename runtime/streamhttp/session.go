package streamhttp

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/runtime/internal/sessionactor"
	"github.com/mcprt/mcprt/stdio/wire"
	"github.com/mcprt/mcprt/supervisor"
)

// hsession is the transport's side of one session actor: the inboxes of the
// session and of its router, and the requests waiting for answers.
type hsession struct {
	h        *Handler
	id       string // Mcp-Session-Id; "" for the stateless session
	child    string // its child ID under the sessions supervisor
	owner    string // legacy: Options.Principal of its initialize
	in       *supervisor.Inbox
	gone     chan struct{}
	goneOnce sync.Once
	last     atomic.Int64 // UnixNano of the last request
	version  atomic.Pointer[string]

	mu    sync.Mutex
	ex    map[string]*exchange // by the request's key inside (sessionactor.In.Key; legacy: the client's id)
	gets  []*exchange          // legacy: the open GET streams, oldest first
	ended bool
	// closed: forgotten (DELETEd, idle, evicted, failed to initialize) or
	// ended; such a session never enters the idle list again.
	closed bool

	// Its place in Handler.idle (see idleList).
	inIdle             bool
	prevIdle, nextIdle *hsession
}

func newSession(h *Handler, id, child string) *hsession {
	hs := &hsession{
		h: h, id: id, child: child,
		in:   supervisor.NewInbox(),
		gone: make(chan struct{}),
		ex:   map[string]*exchange{},
	}
	hs.touch()
	return hs
}

func (hs *hsession) touch() { hs.last.Store(time.Now().UnixNano()) }

// versionOrEmpty is the legacy session's protocol version ("" when hs is
// nil or not initialized yet).
func (hs *hsession) versionOrEmpty() string {
	if hs == nil {
		return ""
	}
	if v := hs.version.Load(); v != nil {
		return *v
	}
	return ""
}

// idleSince reports how long the session has had nothing open.
func (hs *hsession) idleSince(now int64) time.Duration {
	hs.mu.Lock()
	busy := len(hs.ex) > 0 || len(hs.gets) > 0
	hs.mu.Unlock()
	if busy {
		return 0
	}
	return time.Duration(now - hs.last.Load())
}

// register makes x the receiver of everything sent for its request (for
// each of them, for a batch). It fails when the session has ended, or when
// a legacy client's id is already in use by a request in flight.
func (hs *hsession) register(x *exchange) error {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.ended {
		return errEnded
	}
	// A legacy request is keyed by its client's id, which names it (for
	// notifications/cancelled) until it is answered, even once its client
	// has closed the stream; a 2026-07-28 one by a key of its own.
	dup := ""
	x.each(func(key string) {
		if _, ok := hs.ex[key]; ok {
			dup = key
		}
	})
	if dup != "" {
		return &dupError{id: dup}
	}
	x.each(func(key string) { hs.ex[key] = x })
	hs.h.idle.remove(hs) // in use
	return nil
}

var errEnded = errors.New("Not Found: the session has ended; send initialize again")

type dupError struct{ id string }

func (e *dupError) Error() string {
	return "Invalid Request: id " + e.id + " is already in use by a request in flight"
}

// unregister forgets x's requests; hs.mu is held.
func (hs *hsession) unregister(x *exchange) {
	x.each(func(key string) {
		if hs.ex[key] == x {
			delete(hs.ex, key)
		}
	})
	hs.settle()
}

// settle puts a legacy session left with no request in flight and no open
// stream at the back of the idle list, idle from now; hs.mu is held.
func (hs *hsession) settle() {
	if hs.id == "" || hs.closed || hs.ended || len(hs.ex) > 0 || len(hs.gets) > 0 {
		return
	}
	hs.touch()
	hs.h.idle.pushBack(hs)
}

// heard notes a message from the client that is not a request (a
// notification, a response): an idle session goes to the back of the idle
// list, as recently used.
func (hs *hsession) heard() {
	hs.mu.Lock()
	if hs.inIdle {
		hs.h.idle.pushBack(hs)
	}
	hs.mu.Unlock()
}

// abandon forgets an exchange whose client went away before its answer.
func (hs *hsession) abandon(x *exchange) {
	hs.mu.Lock()
	hs.unregister(x)
	hs.mu.Unlock()
	hs.touch()
}

// orphan marks a legacy exchange whose client closed the stream: the
// request runs on (only notifications/cancelled cancels it) and its client
// id keeps naming it until it is answered; what is sent for it goes to a
// GET stream, and its response nowhere.
func (hs *hsession) orphan(x *exchange) {
	hs.mu.Lock()
	x.orphaned = true
	hs.mu.Unlock()
	hs.touch()
}

// cancelled forgets a request the client cancelled: no response will come.
func (hs *hsession) cancelled(key string) {
	hs.mu.Lock()
	if x := hs.ex[key]; x != nil {
		hs.unregister(x)
		if !x.orphaned {
			x.mu.Lock()
			x.aborted, x.cancelled = true, true // the client still waits on the stream: end it
			x.mu.Unlock()
			x.signal()
		}
	}
	hs.mu.Unlock()
}

func (hs *hsession) openGet(x *exchange) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.ended {
		return false
	}
	hs.gets = append(hs.gets, x)
	hs.h.idle.remove(hs) // in use
	return true
}

func (hs *hsession) closeGet(x *exchange) {
	hs.mu.Lock()
	hs.gets = slices.DeleteFunc(hs.gets, func(g *exchange) bool { return g == x })
	hs.settle()
	hs.mu.Unlock()
	hs.touch()
}

// stream is where a message that belongs to no open request goes: in a
// legacy session the oldest open GET stream (each message on one stream
// only), otherwise nowhere; hs.mu is held.
func (hs *hsession) stream() *exchange {
	if hs.id == "" || len(hs.gets) == 0 {
		return nil
	}
	return hs.gets[0]
}

// end runs once the session's subtree has exited: whatever still waits is
// told so.
func (hs *hsession) end() {
	hs.goneOnce.Do(func() {
		hs.mu.Lock()
		hs.ended, hs.closed = true, true
		hs.h.idle.remove(hs)
		waiting := make([]*exchange, 0, len(hs.ex)+1)
		for _, x := range hs.ex {
			waiting = append(waiting, x)
		}
		waiting = append(waiting, hs.gets...)
		clear(hs.ex)
		hs.mu.Unlock()
		close(hs.gone)
		for _, x := range waiting {
			x.abort()
		}
	})
}

// lost runs when the stateless session crashed and is being restarted: its
// calls were answered by the session as it stopped.
func (hs *hsession) lost() {
	hs.h.log.Warn("the stateless session crashed; it is being restarted")
}

// maxPending bounds the notifications an exchange keeps for a client that
// does not read them; past it they are dropped (never the response).
const maxPending = 1024

// exchange is one request (or a batch of them) waiting for what the
// session sends for it, or a legacy GET stream. It is the request's
// sessionactor.Replier.
type exchange struct {
	hs  *hsession
	key string // the request's key inside (sessionactor.In.Key, or its id)
	id  []byte // the client's id, for the errors the transport answers itself
	// keys (a 2025-03-26 batch): the ids of its requests, key the first.
	keys []string

	orphaned bool // legacy: the client closed the stream (hsession.mu)

	mu        sync.Mutex
	q         [][]byte
	final     bool
	outcome   sessionactor.Outcome // what the session says of the response
	aborted   bool
	cancelled bool // by the client: no response will come
	dropped   int
	wake      chan struct{}
}

func newExchange(hs *hsession, key string, id []byte) *exchange {
	return &exchange{hs: hs, key: key, id: id, wake: make(chan struct{}, 1)}
}

// each calls fn for the key of every request of the exchange.
func (x *exchange) each(fn func(key string)) {
	if x.keys == nil {
		fn(x.key)
		return
	}
	for _, k := range x.keys {
		fn(k)
	}
}

// Notify implements sessionactor.Replier: a message for the request goes on its
// stream while the request is open and its client reads; otherwise it is
// one that belongs to no open request (see hsession.stream).
func (x *exchange) Notify(m wire.Out) {
	data := m.Bytes()
	hs := x.hs
	hs.mu.Lock()
	to := x
	if hs.ex[x.key] != x || x.orphaned {
		to = hs.stream()
	}
	hs.mu.Unlock()
	if to != nil {
		to.push(data)
	}
	if m.Done != nil {
		m.Done()
	}
}

// Respond implements sessionactor.Replier: the response ends the exchange. One
// whose client left (cancelled, closed the stream) goes nowhere.
func (x *exchange) Respond(m wire.Out, o sessionactor.Outcome) {
	data := m.Bytes()
	hs := x.hs
	hs.mu.Lock()
	open := hs.ex[x.key] == x
	if open {
		hs.unregister(x)
	}
	orphaned := x.orphaned
	hs.mu.Unlock()
	if open && !orphaned {
		x.finish(data, o)
	}
	if m.Done != nil {
		m.Done()
	}
}

// finish queues the response, which ends the exchange.
func (x *exchange) finish(b []byte, o sessionactor.Outcome) {
	x.mu.Lock()
	x.final, x.outcome = true, o
	x.q = append(x.q, b)
	x.mu.Unlock()
	x.signal()
}

// push queues a message sent for the request, or drops it past maxPending.
func (x *exchange) push(b []byte) {
	x.mu.Lock()
	switch {
	case len(x.q) < maxPending:
		x.q = append(x.q, b)
	default:
		x.dropped++
	}
	x.mu.Unlock()
	x.signal()
}

// response is the Outcome Respond was given.
func (x *exchange) response() sessionactor.Outcome {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.outcome
}

func (x *exchange) abort() {
	x.mu.Lock()
	x.aborted = true
	x.mu.Unlock()
	x.signal()
}

func (x *exchange) signal() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// next waits for messages, the response, an abort or ctx.
func (x *exchange) next(ctx context.Context, keepAlive <-chan time.Time) (msgs [][]byte, final, aborted bool, err error) {
	for {
		x.mu.Lock()
		msgs, final, aborted = x.q, x.final, x.aborted
		x.q = nil
		x.mu.Unlock()
		if len(msgs) > 0 || final || aborted {
			return msgs, final, aborted, nil
		}
		select {
		case <-x.wake:
		case <-keepAlive:
			return nil, false, false, nil
		case <-ctx.Done():
			return nil, false, false, ctx.Err()
		}
	}
}

// route takes one of the session's outgoing messages that belongs to no
// request's Replier (sessionactor.Config.Deliver), on the goroutine that sends
// it: list_changed, logs, the errors of a batch of notifications.
func (hs *hsession) route(m wire.Out) {
	data := m.Bytes()
	hs.mu.Lock()
	to := hs.stream()
	hs.mu.Unlock()
	if to != nil {
		to.push(data)
	}
	if m.Done != nil {
		m.Done()
	}
}

// feed hands the session one message. It takes no unit of backlog (the
// session's Config.Backlog is left unset): HTTP requests are bounded by the
// session's slots and each exchange's queue, and no reader waits.
func (hs *hsession) feed(in *sessionactor.In) { hs.in.Send(in) }
