package wire

import "sync/atomic"

// Backlog counts the input lines the reader has handed on and the answers
// queued at the writer that are not yet written, and holds the reader back
// while there are too many of them. It is the one place where reading waits,
// and it waits for one reason only: the client is not reading what the
// server writes (or the session has not yet looked at what it was given).
// Requests waiting for handlers do not count: holding the reader back for
// them would also hold back the client's cancellations and its answers to
// the server's own requests, which are what free handlers (a deadlock with
// enough elicitations in flight). Work is bounded elsewhere, by the session.
//
// The reader calls Wait and then Add(1) for each line it hands on; whoever
// takes the line calls Done once it is dealt with, or hands the unit on to
// the line's answer, which calls Done once written. Producers of answers
// that the reader did not pay for (a handler's) call Add(1) themselves and
// never wait: at most one per request in progress.
type Backlog struct {
	n       atomic.Int64
	max     int64
	waiting atomic.Bool
	wake    chan struct{}
}

// NewBacklog returns a Backlog that holds the reader back at max units.
func NewBacklog(max int) *Backlog {
	if max < 1 {
		max = 1
	}
	return &Backlog{max: int64(max), wake: make(chan struct{}, 1)}
}

// Wait returns true once the backlog is under its bound, and false if stop
// is closed first. Only one goroutine (the reader) may Wait.
func (b *Backlog) Wait(stop <-chan struct{}) bool {
	for b.n.Load() >= b.max {
		// Announce the wait, then look again: a Done that came between the
		// two loads sees the announcement, one that came before it is seen
		// here.
		b.waiting.Store(true)
		if b.n.Load() < b.max {
			b.waiting.Store(false)
			return true
		}
		select {
		case <-b.wake:
		case <-stop:
			b.waiting.Store(false)
			return false
		}
	}
	return true
}

// Add counts n more units.
func (b *Backlog) Add(n int) { b.n.Add(int64(n)) }

// Done gives one unit back, waking the reader if it waits and the backlog
// is now under its bound. Safe from any goroutine.
func (b *Backlog) Done() {
	if b.n.Add(-1) < b.max && b.waiting.Load() && b.waiting.CompareAndSwap(true, false) {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
}

// len reports the units counted now.
func (b *Backlog) len() int { return int(b.n.Load()) }
