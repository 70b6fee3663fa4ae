package resourceserver

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// maxLimitedAddrs bounds the addresses the introspection limiter keeps a
// bucket for; past it, new addresses share one.
const maxLimitedAddrs = 10000

// addrLimiter is a token bucket per client address, so that one client
// sending made-up opaque tokens cannot make this server ask the
// authorization server about each (nor spend others' share). It is
// bounded: a full bucket is the same as none and is dropped first; when
// every bucket in the map is in use, new addresses share one overflow
// bucket, so a flood from many addresses is limited as one.
type addrLimiter struct {
	mu       sync.Mutex
	rate     float64 // tokens a second
	burst    float64
	m        map[string]*bucket
	overflow bucket
	max      int
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newAddrLimiter(rate float64, burst int) *addrLimiter {
	return &addrLimiter{rate: rate, burst: float64(burst), m: map[string]*bucket{}, max: maxLimitedAddrs,
		overflow: bucket{tokens: float64(burst)}}
}

// allow takes a token from addr's bucket, reporting whether there was one.
func (l *addrLimiter) allow(addr string, now time.Time) bool {
	key := limitKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.m[key]
	if !ok {
		if len(l.m) >= l.max {
			for k, b := range l.m {
				if b.refill(l, now) >= l.burst {
					delete(l.m, k)
				}
			}
		}
		if len(l.m) >= l.max {
			b = &l.overflow
		} else {
			b = &bucket{tokens: l.burst, at: now}
			l.m[key] = b
		}
	}
	if b.refill(l, now) < 1 {
		return false
	}
	b.tokens--
	return true
}

func (b *bucket) refill(l *addrLimiter, now time.Time) float64 {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(l.burst, b.tokens+d.Seconds()*l.rate)
		b.at = now
	}
	return b.tokens
}

// limitKey is the part of a remote address that names a client: its IP
// (the port changes with every connection), and for IPv6 its /64, as one
// host usually holds a whole one.
func limitKey(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}
