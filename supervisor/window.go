package supervisor

import "time"

// Window is the one rule "at most Max failures within any Period": a
// supervisor's restart intensity, a session's crash-loop suspension and
// the gateway's restart backoff all count with it. It holds no clock of
// its own: each call says what time it is, so its owner's clock (an
// injected one in tests) drives it and nothing sleeps to test it.
//
// A Window is not safe for concurrent use; its owner (an actor, or a
// type behind a mutex) serializes the calls.
type Window struct {
	// Max is how many failures the window allows; a negative Max allows
	// none.
	Max int
	// Period is how far back failures count.
	Period time.Duration

	times []time.Time // within Period, oldest first
}

// Add records a failure at now and returns how many fall within the
// window, this one included, and whether that is still within Max.
func (w *Window) Add(now time.Time) (n int, within bool) {
	w.expire(now)
	w.times = append(w.times, now)
	return len(w.times), w.Max >= 0 && len(w.times) <= w.Max
}

// Count returns how many failures fall within the window at now.
func (w *Window) Count(now time.Time) int {
	w.expire(now)
	return len(w.times)
}

// Reset forgets every failure: after a crash loop was acted on, the next
// one is counted afresh.
func (w *Window) Reset() { w.times = w.times[:0] }

// expire drops the failures older than Period: the window slides.
func (w *Window) expire(now time.Time) {
	cut := 0
	for cut < len(w.times) && now.Sub(w.times[cut]) >= w.Period {
		cut++
	}
	if cut > 0 {
		w.times = append(w.times[:0], w.times[cut:]...)
	}
}

// Backoff is a restart delay that doubles with each failure in a row:
// Initial before the first restart, twice that before the second, and so
// on, never more than Max. The zero value waits for nothing.
type Backoff struct {
	Initial, Max time.Duration
}

// Delay is the wait before restart attempt n (1 for the first restart
// within the window): Initial·2^(n-1), capped at Max (Initial alone when
// Max is below it); 0 for n < 1 or a zero Initial.
func (b Backoff) Delay(n int) time.Duration {
	if n < 1 || b.Initial <= 0 {
		return 0
	}
	d := b.Initial
	for i := 1; i < n && (b.Max <= 0 || d < b.Max); i++ {
		d *= 2
	}
	if b.Max > 0 && d > b.Max {
		d = max(b.Max, b.Initial)
	}
	return d
}
