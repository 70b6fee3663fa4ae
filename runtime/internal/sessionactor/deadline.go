package sessionactor

import (
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// deadlines expires calls at the session's RequestTimeout. Every call gets
// the same timeout, so arrival order is deadline order and one timer can
// serve them all: a timer per call cost an allocation and two operations on
// the runtime's timer heap for every request (about 5% of the server's CPU
// under load). A handler that sets its own timeout (Peer.SetTimeout) gets a
// timer of its own, and this queue then leaves the call alone.
//
// Only the session's goroutine uses it.
type deadlines struct {
	d     time.Duration
	q     []deadline
	head  int
	timer *time.Timer
	armed bool
	// now is read once per batch of messages (see tick), not per call:
	// the clock was 3% of the CPU under load, and a deadline late by the
	// time one batch takes, against a timeout of seconds, is no loss.
	now time.Time
}

// tick forgets the cached time: the next deadline reads the clock again.
// The session calls it at the end of each batch.
func (dl *deadlines) tick() { dl.now = time.Time{} }

// deadline is one entry. cl is nil once the call is over (remove): the
// entry must not keep the call, and so its input line, alive.
type deadline struct {
	at time.Time
	cl *call
}

// deadlineTick is a queue's timer's message to the session: the earliest
// deadline of dl has passed.
type deadlineTick struct{ dl *deadlines }

func newDeadlines(d time.Duration, post func(any)) *deadlines {
	dl := &deadlines{d: d}
	dl.timer = time.AfterFunc(time.Hour, func() { post(deadlineTick{dl}) })
	dl.timer.Stop()
	return dl
}

// add starts cl's deadline. live is how many calls the session still
// tracks: answered calls are dropped from the queue once it holds twice
// that, so it stays proportional to the calls in flight, not to the
// requests of the last RequestTimeout.
func (dl *deadlines) add(cl *call, live int) {
	if n := len(dl.q) - dl.head; n >= 2*live+64 {
		dl.compact()
	}
	if dl.now.IsZero() {
		dl.now = time.Now()
	}
	dl.q = append(dl.q, deadline{dl.now.Add(dl.d), cl})
	cl.dl, cl.dlq = len(dl.q), dl
	if !dl.armed {
		dl.armed = true
		dl.timer.Reset(dl.d)
	}
}

// remove drops cl's entry, if it still has one in this queue. Entries
// that end the queue are cut off at once: a session with one request at a
// time (most of them) then keeps a queue of one entry rather than the
// 2*live+64 that compact waits for, about 2 KiB per HTTP session.
func (dl *deadlines) remove(cl *call) {
	if cl.dl > 0 && cl.dlq == dl {
		dl.q[cl.dl-1].cl = nil
		cl.dl, cl.dlq = 0, nil
		n := len(dl.q)
		for n > dl.head && dl.q[n-1].cl == nil {
			n--
		}
		dl.q = dl.q[:n]
		if n == dl.head {
			dl.q, dl.head = dl.q[:0], 0
		}
	}
}

func (dl *deadlines) compact() {
	kept := dl.q[:0]
	for _, e := range dl.q[dl.head:] {
		if e.cl == nil {
			continue
		}
		if e.cl.state.Load() != statePending {
			e.cl.dl, e.cl.dlq = 0, nil
			continue
		}
		kept = append(kept, e)
		e.cl.dl = len(kept)
	}
	clear(dl.q[len(kept):])
	dl.q, dl.head = kept, 0
}

// expire answers every call whose deadline has passed, and re-arms the timer
// for the earliest call still pending. It reports how many it answered.
func (dl *deadlines) expire() int {
	dl.armed = false
	now := time.Now()
	n := 0
	for dl.head < len(dl.q) {
		e := dl.q[dl.head]
		if e.cl != nil {
			if e.cl.state.Load() == statePending && e.at.After(now) {
				break
			}
			e.cl.dl, e.cl.dlq = 0, nil
			if e.cl.expireAt(dl.d) {
				n++
			}
		}
		dl.q[dl.head] = deadline{}
		dl.head++
	}
	if dl.head == len(dl.q) {
		dl.q, dl.head = dl.q[:0], 0
		return n
	}
	dl.armed = true
	dl.timer.Reset(dl.q[dl.head].at.Sub(now))
	return n
}

func (dl *deadlines) stop() { dl.timer.Stop() }

// maxOwnDeadlines bounds the queues of timeouts other than the session's
// (see scheduler.ownDeadline): past it, a call gets a timer of its own.
const maxOwnDeadlines = 8

// ownDeadline gives cl, a call a Start took and set its own timeout d
// for (a gateway's tools do, every call), a deadline in a queue of that
// duration rather than a timer of its own: the calls of one tool share
// their timeout, as the session's calls share RequestTimeout.
func (sc *scheduler) ownDeadline(cl *call, d time.Duration) {
	q := sc.own[d]
	if q == nil {
		if len(sc.own) >= maxOwnDeadlines {
			cl.startTimer(d)
			return
		}
		q = newDeadlines(d, sc.env.post)
		if sc.own == nil {
			sc.own = map[time.Duration]*deadlines{}
		}
		sc.own[d] = q
	}
	if cl.dlq != nil {
		cl.dlq.remove(cl)
	}
	q.add(cl, len(sc.calls))
}

// expireAt answers the call with a timeout error, unless a handler gave it
// a deadline of its own.
func (cl *call) expireAt(d time.Duration) bool {
	cl.mu.Lock()
	own := cl.timer != nil
	cl.mu.Unlock()
	return !own && cl.fail(timedOut(d))
}

func timedOut(d time.Duration) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Request timed out after " + d.String()}
}
