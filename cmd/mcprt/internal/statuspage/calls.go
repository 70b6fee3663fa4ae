package statuspage

import (
	"math"
	"sync"
	"time"
)

// Minutes is how many minutes of calls Calls keeps per backend.
const Minutes = 30

// latencyBuckets bound a minute's latency histogram: bucket i holds the
// calls that took at most firstBound·2^(i/2), the last one the rest.
const (
	latencyBuckets = 40
	firstBound     = 50 * time.Microsecond
)

// bound is bucket i's upper bound.
func bound(i int) time.Duration {
	return time.Duration(float64(firstBound) * math.Pow(2, float64(i)/2))
}

// bucketOf is the bucket of a call that took d.
func bucketOf(d time.Duration) int {
	if d <= firstBound {
		return 0
	}
	i := int(math.Ceil(2 * math.Log2(float64(d)/float64(firstBound))))
	return min(i, latencyBuckets-1)
}

// minute is one minute of a backend's calls.
type minute struct {
	at     int64 // unix minute; 0: unused
	calls  uint32
	errors uint32
	hist   [latencyBuckets]uint32
}

// Calls counts the calls of each backend minute by minute, for the last
// Minutes minutes: calls, errors and a latency histogram per minute, in
// fixed memory per backend (a ring of minutes). Safe for concurrent use.
type Calls struct {
	mu sync.Mutex
	by map[string]*[Minutes]minute
}

// Record counts one call to backend that ended at now after took; failed
// says it ended in an error (an error answer or a result with isError).
func (c *Calls) Record(backend string, now time.Time, took time.Duration, failed bool) {
	m := now.Unix() / 60
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[string]*[Minutes]minute{}
	}
	ring := c.by[backend]
	if ring == nil {
		ring = new([Minutes]minute)
		c.by[backend] = ring
	}
	slot := &ring[m%Minutes]
	switch {
	case slot.at > m:
		return // older than the ring holds (a call that ended long before it was recorded)
	case slot.at < m:
		*slot = minute{at: m}
	}
	slot.calls++
	if failed {
		slot.errors++
	}
	slot.hist[bucketOf(took)]++
}

// Minute is what one minute of a backend's calls came to: its calls and
// errors, and its latency percentiles (upper bounds of the histogram's
// buckets, within a factor of √2; zero without calls).
type Minute struct {
	Start         time.Time
	Calls, Errors int
	P50, P90, P99 time.Duration
}

// Recent returns the last Minutes minutes of backend's calls up to now,
// oldest first, minutes without calls included.
func (c *Calls) Recent(backend string, now time.Time) []Minute {
	last := now.Unix() / 60
	out := make([]Minute, Minutes)
	c.mu.Lock()
	ring := c.by[backend]
	for i := range out {
		m := last - int64(Minutes-1-i)
		out[i].Start = time.Unix(m*60, 0)
		if ring == nil || ring[m%Minutes].at != m {
			continue
		}
		slot := &ring[m%Minutes]
		out[i].Calls, out[i].Errors = int(slot.calls), int(slot.errors)
		out[i].P50, out[i].P90, out[i].P99 = quantile(&slot.hist, slot.calls, 0.50), quantile(&slot.hist, slot.calls, 0.90), quantile(&slot.hist, slot.calls, 0.99)
	}
	c.mu.Unlock()
	return out
}

// quantile is the upper bound of the bucket holding the q-quantile.
func quantile(h *[latencyBuckets]uint32, n uint32, q float64) time.Duration {
	if n == 0 {
		return 0
	}
	want := uint32(math.Ceil(q * float64(n)))
	var cum uint32
	for i, k := range h {
		if cum += k; cum >= want {
			return bound(i)
		}
	}
	return bound(latencyBuckets - 1)
}
