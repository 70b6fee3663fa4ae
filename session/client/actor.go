package client

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/supervisor"
)

// Send is a message that asks a client actor to send one request to its
// server (named for what it asks, not Request: handlers.Request is the
// request a server is serving). The actor answers the sender with a
// Response; from non-actor code use Engine.Request, whose reply process is
// the sender. Sends that arrive while the actor is still connecting wait
// for the connection.
type Send struct {
	ID      any // echoed in the Response, to tell answers apart
	Method  string
	Params  any
	Timeout time.Duration // 0: Options.Timeout
}

// Response answers a Send: the raw result, or the error that Call would
// have returned.
type Response struct {
	ID     any
	Result json.RawMessage
	Err    error
}

// Subscribe is a message that makes the actor forward the server's
// notifications whose method is Method ("" for all) to the sender, as
// Notification values, until Unsubscribe.
type Subscribe struct{ Method string }

// Unsubscribe stops the forwarding that the sender's Subscribe started.
type Unsubscribe struct{}

// Producer returns a hollywood Producer for a client actor: the actor
// starts the server and connects when it starts, serves Requests, and
// closes the session when it stops. It is meant as the Start of a
// supervisor.ChildSpec, with Restart Transient: when the server crashes
// (exits non-zero, by a signal, or closes its stdout), or the connect
// fails, the actor exits with that error as an abnormal reason and is
// restarted, within the supervisor's intensity; a server that exits with
// status 0 on its own ends the actor normally. The actor's Stopped runs
// Close, which takes up to CloseGrace + TermGrace + 1s with a server that
// ignores everything: give the ChildSpec a Shutdown longer than that (6s
// with the default graces; the supervisor's default is 5s).
//
// The actor is a thin owner around a Client, which does all the protocol
// work: hollywood cannot interrupt a Receive, so reading, waiting and
// timing out must happen off the actor's goroutine anyway, and the blocking
// API then needs no engine at all.
func Producer(cmd Command, opts *Options) actor.Producer {
	return func() actor.Receiver {
		return &clientActor{dial: func(ctx context.Context) (*Client, error) { return Connect(ctx, cmd, opts) }}
	}
}

// ProducerURL is Producer for a server at a Streamable HTTP endpoint (see
// ConnectURL). A legacy session the server ends (ErrSessionEnded) ends the
// actor abnormally, so a Transient child connects again with a new one.
// Its Stopped runs Close, which takes up to CloseGrace plus a little.
func ProducerURL(endpoint string, opts *Options) actor.Producer {
	return func() actor.Receiver {
		return &clientActor{dial: func(ctx context.Context) (*Client, error) { return ConnectURL(ctx, endpoint, opts) }}
	}
}

// Messages the actor sends itself.
type (
	connected    struct{ err error }
	sessionEnded struct{ err error }
)

type queuedRequest struct {
	req    Send
	sender *actor.PID
}

type clientActor struct {
	dial func(context.Context) (*Client, error) // Connect or ConnectURL

	ctx    context.Context // ends in Stopped: connect and requests give up
	cancel context.CancelFunc
	cl     *Client // set once connected (on the actor goroutine)
	queue  []queuedRequest
	wg     sync.WaitGroup

	mu      sync.Mutex // guards what the client's goroutines touch
	conn    *Client    // handed over by the connecting goroutine
	stopped bool
	subs    map[string]subscriber // by PID string
}

type subscriber struct {
	pid    *actor.PID
	method string
}

func (a *clientActor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		a.start(c)
	case connected:
		a.onConnected(c, m)
	case Send:
		if a.cl == nil {
			a.queue = append(a.queue, queuedRequest{m, c.Sender()})
			return
		}
		a.serve(c.Engine(), c.Sender(), m)
	case Subscribe:
		if s := c.Sender(); s != nil {
			a.mu.Lock()
			if a.subs == nil {
				a.subs = map[string]subscriber{}
			}
			a.subs[s.String()] = subscriber{s, m.Method}
			a.mu.Unlock()
		}
	case Unsubscribe:
		if s := c.Sender(); s != nil {
			a.mu.Lock()
			delete(a.subs, s.String())
			a.mu.Unlock()
		}
	case sessionEnded:
		reason := m.err
		var ee *ExitError
		if errors.As(reason, &ee) && ee.clean(false) {
			reason = nil // the server ended the session on purpose
		}
		supervisor.Exit(c, reason)
	case actor.Stopped:
		a.stop()
	}
}

func (a *clientActor) start(c *actor.Context) {
	// Started runs on the spawner's goroutine (the supervisor's): connect
	// elsewhere and report back.
	a.ctx, a.cancel = context.WithCancel(context.Background())
	e, self := c.Engine(), c.PID()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		cl, err := a.dial(a.ctx)
		if err == nil {
			a.mu.Lock()
			if a.stopped {
				a.mu.Unlock()
				cl.Close()
				return
			}
			a.conn = cl
			a.mu.Unlock()
		}
		e.Send(self, connected{err})
	}()
}

func (a *clientActor) onConnected(c *actor.Context, m connected) {
	e, self := c.Engine(), c.PID()
	if m.err != nil {
		for _, q := range a.queue {
			answer(e, q.sender, Response{ID: q.req.ID, Err: m.err})
		}
		a.queue = nil
		supervisor.Exit(c, m.err)
		return
	}
	a.mu.Lock()
	a.cl = a.conn
	a.mu.Unlock()
	cl := a.cl
	cl.Subscribe("", func(n Notification) {
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, s := range a.subs {
			if s.method == "" || s.method == n.Method {
				e.Send(s.pid, n)
			}
		}
	})
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		<-cl.Done()
		e.Send(self, sessionEnded{cl.Err()})
	}()
	for _, q := range a.queue {
		a.serve(e, q.sender, q.req)
	}
	a.queue = nil
}

func (a *clientActor) serve(e *actor.Engine, sender *actor.PID, r Send) {
	cl := a.cl
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		var raw json.RawMessage
		err := cl.Call(a.ctx, r.Method, r.Params, &raw, WithTimeout(r.Timeout))
		answer(e, sender, Response{ID: r.ID, Result: raw, Err: err})
	}()
}

func answer(e *actor.Engine, to *actor.PID, r Response) {
	if to == nil {
		slog.Warn("client actor: a Send without a sender cannot be answered; use Context.Send or Engine.Request")
		return
	}
	e.Send(to, r)
}

// stop closes the session and waits for every goroutine the actor started.
// It runs in Stopped, whatever the reason, and at most once.
func (a *clientActor) stop() {
	if a.cancel == nil {
		return // never started
	}
	a.cancel()
	a.mu.Lock()
	a.stopped = true
	cl := a.conn
	a.mu.Unlock()
	if cl != nil {
		_ = cl.Close()
	}
	a.wg.Wait()
}
