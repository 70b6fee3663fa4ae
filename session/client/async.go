package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// Answerer takes the answer to a request sent with Go.
type Answerer interface {
	// Answer gets the request's result, or why there is none. It runs
	// once, on whichever goroutine settles the request (the one reading
	// the server, the timeout's, the one that ends the session or calls
	// Abandon), and must not block: the next response waits for it.
	Answer(result json.RawMessage, err error)
}

// ProgressAnswerer is an Answerer that also takes the request's progress:
// a request sent with Go whose Answerer is one asks the server for
// progress, and reports each notifications/progress to it, on the reading
// goroutine, before its answer. It must not block. (A func per request,
// WithProgress, would be an allocation per call for a gateway that
// forwards many.)
type ProgressAnswerer interface {
	Answerer
	Progress(Progress)
}

// paramsVouched is an Answerer whose caller vouches that the params it
// gives Go are one JSON object, valid UTF-8, built from JSON already
// checked: a gateway forwarding a call around the arguments its own
// session read and checked. Go then takes them without checking them a
// second time (jsonrpc.Valid was a few percent of a gateway's CPU per
// call). Unexported: the gateway's Answerer satisfies it without naming
// it, and no library user is meant to.
type paramsVouched interface {
	Answerer
	ParamsChecked() bool
}

// checkedParams is paramsOf for params a paramsVouched caller built:
// only what their builder cannot know is looked at, the line breaks of
// arguments that came pretty-printed (over HTTP) and that the stdio line
// must not hold.
func checkedParams(method string, params json.RawMessage) ([]byte, error) {
	if len(params) == 0 || params[0] != '{' {
		return paramsOf(method, params)
	}
	if bytes.IndexByte(params, '\n') >= 0 || bytes.IndexByte(params, '\r') >= 0 {
		return paramsOf(method, params)
	}
	return params, nil
}

// Go sends a request and returns without waiting for its answer, which
// goes to a, exactly once, unless Go returns an error (the session has
// ended, or params are not a JSON object). It is Call for a caller that
// must not hold a goroutine per request, such as a gateway forwarding
// many: the result is the raw JSON the server sent, WithTimeout and
// WithProgress apply, and Abandon, not a context or WithDone, gives up on
// the request. The id it returns is the request's, for Abandon.
func (c *Client) Go(method string, params json.RawMessage, a Answerer, opts ...CallOption) (id int64, err error) {
	var o callOptions
	if len(opts) > 0 {
		po := new(callOptions) // as in call
		for _, f := range opts {
			f(po)
		}
		o = *po
	}
	if _, ok := a.(ProgressAnswerer); ok {
		o.askProgress = true
	}
	var base []byte
	if v, ok := a.(paramsVouched); ok && v.ParamsChecked() {
		base, err = checkedParams(method, params)
	} else {
		base, err = paramsOf(method, params)
	}
	if err != nil {
		return 0, fmt.Errorf("client: %w", err)
	}
	var meta []member
	if c.era == EraModern {
		meta = c.metaWith(c.version, o.extensions)
	}
	id, _, err = c.begin(method, base, nil, meta, o, true, a)
	if err != nil {
		return 0, fmt.Errorf("client: %w", err)
	}
	return id, nil
}

// Abandon gives up on request id, sent with Go, as a cancelled context
// does for Call: unless its answer came first, the request's Answerer
// gets an error wrapping context.Canceled, and the server is told
// (notifications/cancelled) if the request was already written.
func (c *Client) Abandon(id int64, reason string) {
	c.mu.Lock()
	p := c.pending.get(id)
	if p != nil && p.async == nil {
		p = nil // Call's: its caller abandons it
	}
	if p != nil {
		c.pending.take(id)
	}
	c.mu.Unlock()
	if p == nil {
		return
	}
	c.abandon(id, p.cancellable, reason)
	c.deliver(id, p, reply{err: fmt.Errorf("%s: %w", p.method, context.Canceled)})
}

// deliver settles request id, already out of c.pending: Call's waits on
// its channel; Go's Answerer is called here.
func (c *Client) deliver(id int64, p *pending, r reply) {
	if p.async == nil {
		p.ch <- r
		return
	}
	a, method, cancellable, timeout := p.async, p.method, p.cancellable, p.timeout
	if p.timer != nil {
		p.timer.Stop()
	}
	recycle(p)
	switch {
	case r.timedOut:
		cause := fmt.Errorf("client: %s timed out after %v: %w", method, timeout, context.DeadlineExceeded)
		c.abandon(id, cancellable, cause.Error())
		a.Answer(nil, cause)
		return
	case r.err != nil:
		a.Answer(nil, fmt.Errorf("client: %w", r.err))
		return
	}
	if c.era == EraModern {
		switch more, ok := inputRequired(r.result); {
		case !ok:
			a.Answer(nil, fmt.Errorf("client: %s: result is not an object with a string resultType", method))
			return
		case more:
			a.Answer(nil, fmt.Errorf("client: %s: %w", method, mcp.ErrInputRequired))
			return
		}
	}
	a.Answer(r.result, nil)
}

// timeOut settles request id, whose timeout has a timer of its own (a Go
// request's timeout with no queue, or one its progress extended), unless
// its progress has moved the deadline again.
func (c *Client) timeOut(id int64) {
	c.mu.Lock()
	p := c.pending.get(id)
	if p != nil {
		if wait := p.extended(time.Since(c.epoch)); wait > 0 {
			p.timer.Reset(wait)
			c.mu.Unlock()
			return
		}
		c.pending.take(id)
	}
	c.mu.Unlock()
	if p != nil {
		c.deliver(id, p, reply{timedOut: true})
	}
}
