package client

import "time"

// Request timeouts share one timer per duration: the requests of one
// duration time out in the order they were sent, so a queue in that order
// and one timer for its head serve them all, as the server's session does
// with its deadlines. A time.Timer per request cost three allocations and
// two operations on the runtime's timer heap for every call; a client
// forwarding many calls gives most of them the same timeout (Options.Timeout
// or one WithTimeout). Past maxTimeoutQueues distinct durations a request
// gets a timer of its own.
const maxTimeoutQueues = 8

// timeoutQueue holds the deadlines of one duration, oldest first. It is
// guarded by Client.mu.
type timeoutQueue struct {
	d     time.Duration
	q     []timeoutEntry
	head  int
	timer *time.Timer
	armed bool
}

// timeoutEntry is one request's deadline, as time since Client.epoch (a
// monotonic reading; and no pointer for the collector to follow).
type timeoutEntry struct {
	at time.Duration
	id int64
}

// addTimeout starts request id's timeout d, from now (time.Since(c.epoch));
// c.mu is held and id is in c.pending. It reports false when d gets no
// queue: the caller then times the request itself.
func (c *Client) addTimeout(id int64, d, now time.Duration) bool {
	q := c.timeoutQueue(d)
	if q == nil {
		if len(c.timeouts) >= maxTimeoutQueues {
			return false
		}
		q = &timeoutQueue{d: d}
		q.timer = time.AfterFunc(time.Hour, func() { c.expire(q) })
		q.timer.Stop()
		c.timeouts = append(c.timeouts, q)
	}
	// Entries of answered requests stay until the head passes them; they
	// are dropped once they outnumber the requests in flight, so the queue
	// stays proportional to those, not to the calls of the last d.
	if len(q.q)-q.head >= 2*c.pending.len()+64 {
		q.compact(&c.pending)
	}
	q.q = append(q.q, timeoutEntry{now + d, id})
	if !q.armed {
		q.armed = true
		q.timer.Reset(d)
	}
	return true
}

// timeoutQueue returns the queue of duration d, or nil when it has none;
// c.mu is held. A slice, searched in order, for at most maxTimeoutQueues:
// most clients have one duration, and a map lookup per call cost more.
func (c *Client) timeoutQueue(d time.Duration) *timeoutQueue {
	for _, q := range c.timeouts {
		if q.d == d {
			return q
		}
	}
	return nil
}

func (q *timeoutQueue) compact(pending *pendingTable) {
	kept := q.q[:0]
	for _, e := range q.q[q.head:] {
		if pending.get(e.id) != nil {
			kept = append(kept, e)
		}
	}
	q.q, q.head = kept, 0
}

// expire runs on q's timer: every request whose deadline has passed and
// which is still pending is told so (its caller abandons it), and the
// timer is set for the earliest one left.
func (c *Client) expire(q *timeoutQueue) {
	type entry struct {
		id int64
		p  *pending
	}
	var due []entry
	c.mu.Lock()
	q.armed = false
	now := time.Since(c.epoch)
	for q.head < len(q.q) {
		e := q.q[q.head]
		if e.at > now {
			break
		}
		q.head++
		if p := c.pending.get(e.id); p != nil {
			if wait := p.extended(now); wait > 0 {
				// Its progress moved its deadline past the queue's
				// order: it gets a timer of its own.
				id := e.id
				p.timer = time.AfterFunc(wait, func() { c.timeOut(id) })
				continue
			}
			c.pending.take(e.id)
			due = append(due, entry{e.id, p})
		}
	}
	if q.head == len(q.q) {
		q.q, q.head = q.q[:0], 0
	} else if c.endErr == nil {
		q.armed = true
		q.timer.Reset(q.q[q.head].at - now)
	}
	c.mu.Unlock()
	for _, e := range due {
		c.deliver(e.id, e.p, reply{timedOut: true})
	}
}

// stopTimeouts stops the timers once the session has ended; c.mu is held.
func (c *Client) stopTimeouts() {
	for _, q := range c.timeouts {
		q.timer.Stop()
		q.armed = false
	}
}

// extended says how long request p may still wait at now, when its
// progress has moved its deadline (Options.MaxTimeout); 0 when it is due.
func (p *pending) extended(now time.Duration) time.Duration {
	if p.maxAt == 0 || p.progressAt == 0 {
		return 0
	}
	if until := min(p.progressAt+p.timeout, p.maxAt); until > now {
		return until - now
	}
	return 0
}
