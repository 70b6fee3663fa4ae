package sessionactor

import (
	"testing"
	"time"
)

// TestDeadlinesStayBounded: with a long timeout and every call answered at
// once, the queue holds a bounded number of entries, not one per request
// of the last RequestTimeout.
func TestDeadlinesStayBounded(t *testing.T) {
	dl := newDeadlines(time.Hour, func(any) {})
	defer dl.stop()
	for i := range 100000 {
		cl := &call{}
		cl.state.Store(stateDelivered) // answered: nothing left to expire
		dl.add(cl, 1)
		if n := len(dl.q) - dl.head; n > 2*1+64+1 {
			t.Fatalf("after %d calls the queue holds %d entries", i+1, n)
		}
	}
	pending := &call{}
	dl.add(pending, 1)
	for range 200 {
		cl := &call{}
		cl.state.Store(stateDelivered)
		dl.add(cl, 1)
	}
	found := false
	for _, e := range dl.q[dl.head:] {
		found = found || e.cl == pending
	}
	if !found {
		t.Fatal("compaction dropped a pending call")
	}
}

// TestDeadlinesForget: a call that is over leaves the queue at once, so
// nothing keeps its input line alive, and the queue's other entries keep
// their places.
func TestDeadlinesForget(t *testing.T) {
	dl := newDeadlines(time.Hour, func(any) {})
	defer dl.stop()
	calls := make([]*call, 10)
	for i := range calls {
		calls[i] = &call{}
		dl.add(calls[i], len(calls))
	}
	for i := 0; i < len(calls); i += 2 {
		dl.remove(calls[i])
		if calls[i].dl != 0 {
			t.Fatalf("call %d still has entry %d", i, calls[i].dl)
		}
	}
	for _, e := range dl.q[dl.head:] {
		for i := 0; i < len(calls); i += 2 {
			if e.cl == calls[i] {
				t.Fatalf("call %d still in the queue", i)
			}
		}
	}
	dl.compact()
	if n := len(dl.q) - dl.head; n != 5 {
		t.Fatalf("%d entries after compaction, want 5", n)
	}
	for i := 1; i < len(calls); i += 2 {
		if e := dl.q[calls[i].dl-1]; e.cl != calls[i] {
			t.Fatalf("call %d's index points at another entry", i)
		}
		dl.remove(calls[i])
	}
	for _, e := range dl.q {
		if e.cl != nil {
			t.Fatal("an entry survived remove")
		}
	}
}

// TestDeadlinesOneAtATime: a session with one request at a time, each
// answered before the next arrives (most HTTP sessions), keeps a queue of
// one entry, not the 2*live+64 that compaction allows; a call answered
// behind a pending one keeps the pending one's entry in place.
func TestDeadlinesOneAtATime(t *testing.T) {
	ticks := make(chan any, 1)
	dl := newDeadlines(time.Hour, func(m any) { ticks <- m })
	defer dl.stop()
	for i := range 1000 {
		cl := &call{}
		dl.add(cl, 1)
		dl.remove(cl)
		if len(dl.q) != 0 || dl.head != 0 {
			t.Fatalf("after call %d the queue is %d entries from %d", i+1, len(dl.q), dl.head)
		}
	}
	if c := cap(dl.q); c > 4 {
		t.Fatalf("the queue grew to a capacity of %d entries", c)
	}
	// Answered out of order: a call's entry ahead of a pending one stays
	// until the front is expired; the tail is cut only down to the pending
	// one.
	first, pending, last := &call{}, &call{}, &call{}
	dl.add(first, 3)
	dl.add(pending, 3)
	dl.add(last, 3)
	dl.remove(last)
	dl.remove(first)
	if len(dl.q)-dl.head != 2 || dl.q[pending.dl-1].cl != pending {
		t.Fatalf("queue %v, pending at %d", dl.q[dl.head:], pending.dl)
	}
	// Once it is answered elsewhere (here: marked so), the timer's
	// expiry finds it and empties the queue.
	pending.state.Store(stateDelivered)
	if n := dl.expire(); n != 0 {
		t.Fatalf("expire answered %d calls", n)
	}
	if len(dl.q) != 0 {
		t.Fatalf("%d entries left after expiry", len(dl.q))
	}
}
