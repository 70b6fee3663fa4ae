package resourceserver

import (
	"crypto/sha256"
	"github.com/mcprt/mcprt/handlers"
	"sync"
	"time"
)

// tokenKey is a token's cache key: its SHA-256, so the cache never holds
// a token, only what it was found to mean.
type tokenKey [sha256.Size]byte

// hashToken is tokenKey of token. Tokens of usual sizes are copied to a
// buffer on the stack for hashing: the conversion to []byte would
// otherwise allocate on every request.
func hashToken(token string) tokenKey {
	var buf [4096]byte
	if len(token) <= len(buf) {
		return sha256.Sum256(append(buf[:0], token...))
	}
	return sha256.Sum256([]byte(token))
}

// cached is what a verified token was found to mean: its caller, until
// when, and what it is bound to.
type cached struct {
	caller *handlers.Caller
	until  time.Time
	bind   binding
	// refused is why the authorization server refused it, in the
	// cache of refusals (caller nil).
	refused string
}

// tokenCache remembers verified tokens until they expire, so a client
// presenting the same token on every request pays for one verification.
// It is bounded: when full, expired entries go first, then arbitrary
// ones (a hostile client minting tokens cannot grow it, only churn it).
type tokenCache struct {
	mu  sync.RWMutex
	m   map[tokenKey]cached
	max int
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{m: make(map[tokenKey]cached), max: max}
}

func (c *tokenCache) get(k tokenKey, now time.Time) (cached, bool) {
	c.mu.RLock()
	e, ok := c.m[k]
	c.mu.RUnlock()
	if !ok || !now.Before(e.until) {
		return cached{}, false
	}
	return e, true
}

func (c *tokenCache) put(k tokenKey, e cached, now time.Time) {
	if !now.Before(e.until) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		for key, e := range c.m {
			if !now.Before(e.until) {
				delete(c.m, key)
			}
		}
		// Still full: drop an eighth, in map order (arbitrary).
		for key := range c.m {
			if len(c.m) < c.max-c.max/8 {
				break
			}
			delete(c.m, key)
		}
	}
	c.m[k] = e
}

// had reports whether k was verified once, expired or not (until it is
// evicted): a token found good before is no stranger.
func (c *tokenCache) had(k tokenKey) bool {
	c.mu.RLock()
	_, ok := c.m[k]
	c.mu.RUnlock()
	return ok
}

// purge forgets every token: the key set lost a key, and tokens it signed
// must be verified again.
func (c *tokenCache) purge() {
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}

func (c *tokenCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}
