package streamhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/stdio"
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
	backlog  *stdio.Backlog
	gone     chan struct{}
	goneOnce sync.Once
	last     atomic.Int64 // UnixNano of the last request
	version  atomic.Pointer[string]

	mu       sync.Mutex
	ex       map[string]*exchange // by the id used inside
	byClient map[string]string    // legacy: the client's id → the id used inside
	gets     []*exchange          // legacy: the open GET streams, oldest first
	ended    bool
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
		in: supervisor.NewInbox(),
		// Nobody waits on it: HTTP requests are bounded by the session's
		// slots and each exchange's queue, not by a reader.
		backlog:  stdio.NewBacklog(1 << 30),
		gone:     make(chan struct{}),
		ex:       map[string]*exchange{},
		byClient: map[string]string{},
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
	if hs.id != "" {
		var dup []byte
		x.each(func(_ string, clientID []byte) {
			if _, ok := hs.byClient[string(clientID)]; ok {
				dup = clientID
			}
		})
		if dup != nil {
			return &dupError{id: dup}
		}
	}
	x.each(func(key string, clientID []byte) {
		hs.ex[key] = x
		if hs.id != "" {
			hs.byClient[string(clientID)] = key
		}
	})
	hs.h.idle.remove(hs) // in use
	return nil
}

var errEnded = errors.New("Not Found: the session has ended; send initialize again")

type dupError struct{ id []byte }

func (e *dupError) Error() string {
	return "Invalid Request: id " + string(e.id) + " is already in use by a request in flight"
}

// unregister forgets x's requests; hs.mu is held.
func (hs *hsession) unregister(x *exchange) {
	x.each(func(key string, clientID []byte) {
		if hs.ex[key] == x {
			delete(hs.ex, key)
		}
		if hs.byClient[string(clientID)] == key {
			delete(hs.byClient, string(clientID))
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

// inside maps a legacy client's request id to the one used inside.
func (hs *hsession) inside(clientID []byte) (string, bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	k, ok := hs.byClient[string(clientID)]
	return k, ok
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

// deliver hands one outgoing message to whoever should send it: the
// exchange of the request it belongs to (key), or, in a legacy session, the
// GET stream for a message that belongs to no open request. A response
// (final) ends its exchange. Anything with no receiver is dropped: a
// response whose client left, a notification nobody listens for.
func (hs *hsession) deliver(key string, final bool, data []byte) {
	hs.mu.Lock()
	var x *exchange
	if key != "" {
		x = hs.ex[key]
	}
	if x != nil && final {
		hs.unregister(x)
		if x.orphaned {
			x = nil // its client left: the response goes nowhere
		}
	}
	if (x == nil || x.orphaned) && !final && hs.id != "" {
		// Each message on one stream only: the oldest open one.
		x = nil
		if len(hs.gets) > 0 {
			x = hs.gets[0]
		}
	}
	hs.mu.Unlock()
	if x != nil {
		x.push(data, final)
	}
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

// exchange is one request waiting for what the session sends for it, or a
// legacy GET stream.
type exchange struct {
	key      string // the request id used inside
	clientID []byte // the client's, put back on what is sent
	listen   bool   // subscriptions/listen: its subscription id is key
	// batch (2025-03-26): the ids inside of the batch's requests, and the
	// client's for each; key is the first of them.
	batch map[string][]byte

	orphaned bool // legacy: the client closed the stream (hsession.mu)

	mu        sync.Mutex
	q         [][]byte
	final     bool
	aborted   bool
	cancelled bool // by the client: no response will come
	dropped   int
	wake      chan struct{}
}

func newExchange(key string, clientID []byte, listen bool) *exchange {
	return &exchange{key: key, clientID: clientID, listen: listen, wake: make(chan struct{}, 1)}
}

// each calls fn for every request of the exchange.
func (x *exchange) each(fn func(key string, clientID []byte)) {
	if x.batch == nil {
		fn(x.key, x.clientID)
		return
	}
	for k, id := range x.batch {
		fn(k, id)
	}
}

func (x *exchange) push(b []byte, final bool) {
	x.mu.Lock()
	switch {
	case final:
		x.final = true
		x.q = append(x.q, b)
	case len(x.q) < maxPending:
		x.q = append(x.q, b)
	default:
		x.dropped++
	}
	x.mu.Unlock()
	x.signal()
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

// outward puts the client's id back on a message sent for the request.
func (x *exchange) outward(b []byte, final bool) []byte {
	if final && x.batch != nil {
		var parts []json.RawMessage
		if json.Unmarshal(b, &parts) != nil {
			return b
		}
		out := []byte{'['}
		for i, p := range parts {
			if i > 0 {
				out = append(out, ',')
			}
			if k, ok := responseKey(p); ok && x.batch[k] != nil {
				out = append(out, responsePrefix...)
				out = append(out, x.batch[k]...)
				p = p[len(responsePrefix)+len(k):]
			}
			out = append(out, p...)
		}
		return append(out, ']')
	}
	if final {
		if rest, ok := bytes.CutPrefix(b, []byte(responsePrefix)); ok {
			if rest, ok = bytes.CutPrefix(rest, []byte(x.key)); ok {
				out := make([]byte, 0, len(b)+len(x.clientID))
				out = append(out, responsePrefix...)
				out = append(out, x.clientID...)
				return append(out, rest...)
			}
		}
		return b
	}
	if x.listen {
		inner := []byte(`"io.modelcontextprotocol/subscriptionId":` + x.key)
		if bytes.Contains(b, inner) {
			return bytes.ReplaceAll(b, inner, append([]byte(`"io.modelcontextprotocol/subscriptionId":`), x.clientID...))
		}
	}
	return b
}

// responsePrefix starts every response the session writes.
const responsePrefix = `{"jsonrpc":"2.0","id":`

// responseKey returns the id of a response with one of the numeric ids
// used inside; for a batch's array of responses, its first one's.
func responseKey(b []byte) (string, bool) {
	if len(b) > 0 && b[0] == '[' {
		b = b[1:]
	}
	rest, ok := bytes.CutPrefix(b, []byte(responsePrefix))
	if !ok {
		return "", false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || n == len(rest) || rest[n] != ',' {
		return "", false
	}
	return string(rest[:n]), true
}

// route takes one of the session's outgoing messages, on the goroutine that
// sends it (session.Config.Deliver), and hands it to the exchange it
// belongs to.
func (hs *hsession) route(m stdio.Out) {
	data := m.Data
	if m.Text != "" {
		whole := make([]byte, 0, len(m.Data)+len(m.Text)+len(m.Tail))
		whole = append(append(append(whole, m.Data...), m.Text...), m.Tail...)
		data = whole
	}
	key, final := m.Ref, false
	if key == "" {
		key, final = responseKey(data)
	}
	hs.deliver(key, final, data)
	if m.Done != nil {
		m.Done()
	}
}
