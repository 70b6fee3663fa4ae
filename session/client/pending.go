package client

// pendingTable holds the requests waiting for their answers, by id. Ids
// come from Client.nextID, one after another, so the requests in flight
// are a window of consecutive ids: a ring indexed by id modulo a power of
// two finds each with one masked index and no hashing. A Go map here (an
// insert, a lookup and a delete per call, and more lookups when a timeout
// queue is tidied) was about 2.5% of a forwarding gateway's CPU.
//
// A slot already taken by an older request when a new id comes to it
// means the window outgrew the ring: the ring doubles while it is at least
// half full; otherwise the old request is a straggler (a long call among
// many short ones) and moves to spill, a map, so that the ring stays
// proportional to the requests in flight rather than to the calls made
// since the straggler was sent. It is guarded by Client.mu.
type pendingTable struct {
	slots []pendingSlot
	n     int // requests held, in slots and in spill
	spill map[int64]*pending
}

type pendingSlot struct {
	id int64
	p  *pending // nil: the slot is free
}

// minPendingSlots is the ring's first size.
const minPendingSlots = 64

// get returns request id's entry, or nil when id is not waiting (answered,
// timed out, or never ours).
func (t *pendingTable) get(id int64) *pending {
	if len(t.slots) > 0 {
		if s := &t.slots[uint64(id)&uint64(len(t.slots)-1)]; s.p != nil && s.id == id {
			return s.p
		}
	}
	if len(t.spill) > 0 {
		return t.spill[id]
	}
	return nil
}

// take removes request id's entry and returns it, or nil when id is not
// waiting.
func (t *pendingTable) take(id int64) *pending {
	if len(t.slots) > 0 {
		if s := &t.slots[uint64(id)&uint64(len(t.slots)-1)]; s.p != nil && s.id == id {
			p := s.p
			*s = pendingSlot{}
			t.n--
			return p
		}
	}
	if p := t.spill[id]; p != nil {
		delete(t.spill, id)
		t.n--
		return p
	}
	return nil
}

// put adds request id, which is not in the table.
func (t *pendingTable) put(id int64, p *pending) {
	if len(t.slots) == 0 {
		t.slots = make([]pendingSlot, minPendingSlots)
	}
	for {
		s := &t.slots[uint64(id)&uint64(len(t.slots)-1)]
		if s.p == nil {
			*s = pendingSlot{id, p}
			t.n++
			return
		}
		if 2*(t.n-len(t.spill)) < len(t.slots) {
			// Half empty: the one in the way is a straggler.
			if t.spill == nil {
				t.spill = map[int64]*pending{}
			}
			t.spill[s.id] = s.p
			*s = pendingSlot{id, p}
			t.n++
			return
		}
		t.grow()
	}
}

// grow doubles the ring, moving every entry to its slot in the new one;
// two that meet there again (ids a multiple of the new size apart) send
// the older to spill.
func (t *pendingTable) grow() {
	old := t.slots
	t.slots = make([]pendingSlot, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.p == nil {
			continue
		}
		d := &t.slots[uint64(s.id)&mask]
		if d.p != nil {
			if t.spill == nil {
				t.spill = map[int64]*pending{}
			}
			if d.id < s.id {
				t.spill[d.id] = d.p
				*d = s
			} else {
				t.spill[s.id] = s.p
			}
			continue
		}
		*d = s
	}
}

// len is the number of requests waiting.
func (t *pendingTable) len() int { return t.n }

// each calls f for every request waiting, in no particular order; f must
// not change the table.
func (t *pendingTable) each(f func(id int64, p *pending)) {
	if t.n == 0 {
		return
	}
	for _, s := range t.slots {
		if s.p != nil {
			f(s.id, s.p)
		}
	}
	for id, p := range t.spill {
		f(id, p)
	}
}
