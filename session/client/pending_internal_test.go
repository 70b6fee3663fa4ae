package client

import (
	"math/rand/v2"
	"testing"
)

// checkTable compares t with want, the requests that should be waiting.
func checkTable(t *testing.T, tb *pendingTable, want map[int64]*pending) {
	t.Helper()
	if tb.len() != len(want) {
		t.Fatalf("len = %d, want %d", tb.len(), len(want))
	}
	seen := 0
	tb.each(func(id int64, p *pending) {
		seen++
		if want[id] != p {
			t.Fatalf("each gave id %d with the wrong entry", id)
		}
	})
	if seen != len(want) {
		t.Fatalf("each gave %d, want %d", seen, len(want))
	}
	for id, p := range want {
		if tb.get(id) != p {
			t.Fatalf("get(%d) lost its entry", id)
		}
	}
}

// One request at a time goes round the ring many times: the ring does not
// grow, and an id answered a lap ago (its slot now another's) finds nothing.
func TestPendingTableWrapsAround(t *testing.T) {
	var tb pendingTable
	for id := int64(1); id <= 10*minPendingSlots; id++ {
		p := &pending{}
		tb.put(id, p)
		if id > minPendingSlots {
			stale := id - minPendingSlots // same slot, answered long ago
			if tb.get(stale) != nil || tb.take(stale) != nil {
				t.Fatalf("stale id %d found the entry of %d", stale, id)
			}
		}
		if tb.take(id) != p || tb.take(id) != nil {
			t.Fatalf("id %d: not taken exactly once", id)
		}
	}
	if len(tb.slots) != minPendingSlots || tb.len() != 0 || tb.spill != nil {
		t.Fatalf("ring of %d slots, %d held, spill %v; want %d, 0, none", len(tb.slots), tb.len(), tb.spill, minPendingSlots)
	}
}

// Many thousands in flight: the ring grows to hold them all, answered in
// a shuffled order; ids that are not ours (0, negative, beyond) find nothing.
func TestPendingTableGrowsOutOfOrder(t *testing.T) {
	var tb pendingTable
	want := map[int64]*pending{}
	const n = 20000
	for id := int64(1); id <= n; id++ {
		p := &pending{}
		tb.put(id, p)
		want[id] = p
	}
	checkTable(t, &tb, want)
	if len(tb.spill) != 0 || len(tb.slots) > 4*n {
		t.Fatalf("ring of %d slots and %d spilled for %d consecutive ids", len(tb.slots), len(tb.spill), n)
	}
	for _, id := range []int64{0, -1, -n, n + 1, n + int64(len(tb.slots)), 1 << 62} {
		if tb.get(id) != nil || tb.take(id) != nil {
			t.Fatalf("id %d is not ours but was found", id)
		}
	}
	ids := make([]int64, 0, n)
	for id := range want {
		ids = append(ids, id)
	}
	rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for i, id := range ids {
		if tb.take(id) != want[id] || tb.take(id) != nil {
			t.Fatalf("id %d: not taken exactly once", id)
		}
		delete(want, id)
		if i%1000 == 0 {
			checkTable(t, &tb, want)
		}
	}
	checkTable(t, &tb, want)
}

// A straggler (one long request among many short ones) moves to the spill
// map when a new id comes to its slot, rather than growing the ring with
// every lap; it is still found, answered once, and listed by each.
func TestPendingTableStraggler(t *testing.T) {
	var tb pendingTable
	slow := &pending{}
	tb.put(1, slow)
	for id := int64(2); id <= 100*minPendingSlots; id++ {
		p := &pending{}
		tb.put(id, p)
		if tb.take(id) != p {
			t.Fatalf("id %d lost", id)
		}
	}
	if len(tb.slots) != minPendingSlots {
		t.Fatalf("the ring grew to %d for one request in flight", len(tb.slots))
	}
	checkTable(t, &tb, map[int64]*pending{1: slow})
	if tb.take(1) != slow || tb.take(1) != nil || tb.len() != 0 {
		t.Fatal("the straggler was not taken exactly once")
	}
}

// Random traffic against a map: ids sent in order, up to a few thousand in
// flight, answered in any order, with now and then a stale or foreign id.
func TestPendingTableAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tb pendingTable
	want := map[int64]*pending{}
	var inFlight []int64
	next := int64(0)
	for step := 0; step < 200000; step++ {
		limit := 1 + (step/20000%4)*1000 // bursts of more, then fewer
		switch {
		case len(inFlight) < limit && r.IntN(2) == 0:
			next++
			p := &pending{}
			tb.put(next, p)
			want[next] = p
			inFlight = append(inFlight, next)
		case len(inFlight) > 0:
			i := r.IntN(len(inFlight))
			if r.IntN(4) == 0 {
				i = 0 // the oldest: stragglers
			}
			id := inFlight[i]
			inFlight[i] = inFlight[len(inFlight)-1]
			inFlight = inFlight[:len(inFlight)-1]
			if tb.take(id) != want[id] {
				t.Fatalf("step %d: id %d answered with the wrong entry", step, id)
			}
			delete(want, id)
			if tb.take(id) != nil {
				t.Fatalf("step %d: id %d answered twice", step, id)
			}
		}
		if stale := next - int64(r.IntN(5000)); want[stale] == nil && tb.get(stale) != nil {
			t.Fatalf("step %d: stale id %d found an entry", step, stale)
		}
		if step%10000 == 0 {
			checkTable(t, &tb, want)
		}
	}
	checkTable(t, &tb, want)
	if len(tb.slots) > 4*4096 {
		t.Fatalf("ring of %d slots for at most ~3000 in flight", len(tb.slots))
	}
}
