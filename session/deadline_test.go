package session

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
