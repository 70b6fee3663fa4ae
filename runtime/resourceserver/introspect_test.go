package resourceserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	rst "github.com/mcprt/mcprt/test/resourceservertest"
)

// serveFrom runs one request with a bearer token through g from the
// client address addr.
func serveFrom(g *Guard, addr, token string) int {
	h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
	r.RemoteAddr = addr
	r.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

var introspector = &ClientCredentials{ClientID: "rs", ClientSecret: "s3cret"}

// TestIntrospectionCacheBound: an active answer is remembered for
// IntrospectionCache at most, however far its exp. At 00335bc it was
// remembered until exp: a token revoked at the authorization server
// still worked 30 minutes later (issue 31 item 7). RFC 7662 section 4:
// a cache that outlives a revocation is the risk the server takes; it
// must be short.
func TestIntrospectionCacheBound(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	as.opaque["tok"] = map[string]any{"active": true, "sub": "bob", "aud": testResource, "exp": time.Now().Add(time.Hour).Unix()}
	g, clock := newGuard(t, as, Options{Introspection: introspector})
	if w, _ := serve(g, "tok"); w.Code != 200 {
		t.Fatalf("active: %d", w.Code)
	}
	as.mu.Lock()
	delete(as.opaque, "tok") // revoked: inactive from now on
	as.mu.Unlock()
	clock.add(time.Minute)
	if w, _ := serve(g, "tok"); w.Code != 200 {
		t.Errorf("within the cache bound: %d", w.Code)
	}
	clock.add(DefaultIntrospectionCache)
	if w, _ := serve(g, "tok"); w.Code != 401 {
		t.Errorf("revoked, past the cache bound: %d, want 401", w.Code)
	}
	if n := as.introCalls.Load(); n != 2 {
		t.Errorf("%d introspections, want 2", n)
	}
	// The bound is an option.
	as.opaque["tok2"] = map[string]any{"active": true, "sub": "bob", "aud": testResource, "exp": time.Now().Add(time.Hour).Unix()}
	g2, clock2 := newGuard(t, as, Options{Introspection: introspector, IntrospectionCache: 10 * time.Second})
	serve(g2, "tok2")
	calls := as.introCalls.Load()
	clock2.add(11 * time.Second)
	serve(g2, "tok2")
	if n := as.introCalls.Load() - calls; n != 1 {
		t.Errorf("IntrospectionCache 10s: %d introspections 11 s on, want 1", n)
	}
}

// TestIntrospectionNegativeCache: a token the authorization server calls
// inactive is refused for IntrospectionNegativeCache without asking
// again; at 00335bc every repetition was an introspection.
func TestIntrospectionNegativeCache(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	g, clock := newGuard(t, as, Options{Introspection: introspector})
	for range 100 {
		if c := serveFrom(g, "198.51.100.7:4000", "junk"); c != 401 {
			t.Fatalf("junk: %d", c)
		}
	}
	if n := as.introCalls.Load(); n != 1 {
		t.Errorf("100 requests with one junk token: %d introspections, want 1", n)
	}
	clock.add(defaultIntrospectionNegativeCache)
	serveFrom(g, "198.51.100.7:4000", "junk")
	if n := as.introCalls.Load(); n != 2 {
		t.Errorf("after the negative cache: %d introspections, want 2", n)
	}
	// An authorization server that is down is not a refusal: not kept.
	as.introFail.Store(true)
	serveFrom(g, "198.51.100.7:4000", "other")
	as.introFail.Store(false)
	as.opaque["other"] = map[string]any{"active": true, "sub": "bob", "aud": testResource}
	if c := serveFrom(g, "198.51.100.7:4000", "other"); c != 200 {
		t.Errorf("after the server came back: %d", c)
	}
}

// TestIntrospectionRateLimited: 400 made-up tokens from one address make
// at most a burst of introspections (at 00335bc: 400); the rest get 429,
// and another address is not held back by it.
func TestIntrospectionRateLimited(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	as.opaque["good"] = map[string]any{"active": true, "sub": "bob", "aud": testResource}
	g, clock := newGuard(t, as, Options{Introspection: introspector})
	codes := map[int]int{}
	for i := range 400 {
		codes[serveFrom(g, "203.0.113.9:5000", fmt.Sprintf("junk-%d", i))]++
	}
	if n := as.introCalls.Load(); n > defaultIntrospectionBurst {
		t.Errorf("400 junk tokens: %d introspections, want at most %d", n, defaultIntrospectionBurst)
	}
	if codes[401] != defaultIntrospectionBurst || codes[429] != 400-defaultIntrospectionBurst {
		t.Errorf("statuses %v", codes)
	}
	// The same /64 is the same client; another address is not.
	if c := serveFrom(g, "[2001:db8::1]:1", "good"); c != 200 {
		t.Errorf("another address: %d", c)
	}
	for i := range defaultIntrospectionBurst {
		serveFrom(g, fmt.Sprintf("[2001:db8::%x]:1", i+2), fmt.Sprintf("v6-%d", i))
	}
	if c := serveFrom(g, "[2001:db8::ffff]:1", "v6-last"); c != 429 {
		t.Errorf("the same /64 past its burst: %d", c)
	}
	// A token that was good when last asked about is asked about again
	// past the cache bound even with the bucket empty.
	clock.add(DefaultIntrospectionCache)
	for i := range 2 * defaultIntrospectionBurst {
		serveFrom(g, "[2001:db8::99]:1", fmt.Sprintf("v6-more-%d", i))
	}
	if c := serveFrom(g, "[2001:db8::1]:1", "good"); c != 200 {
		t.Errorf("a known token, bucket empty: %d", c)
	}
	// The bucket refills.
	clock.add(time.Second)
	calls := as.introCalls.Load()
	serveFrom(g, "203.0.113.9:5000", "junk-again")
	if as.introCalls.Load() != calls+1 {
		t.Error("a second later, no introspection")
	}
}

// TestAddrLimiterBounded: the limiter keeps at most its bound of
// addresses; past it, new addresses share one bucket.
func TestAddrLimiterBounded(t *testing.T) {
	l := newAddrLimiter(1, 2)
	l.max = 10
	now := time.Now()
	for i := range 1000 {
		l.allow(fmt.Sprintf("10.0.%d.%d:1", i/256, i%256), now)
	}
	if len(l.m) > 10 {
		t.Errorf("%d addresses kept", len(l.m))
	}
	if l.allow("192.0.2.200:1", now) || l.allow("192.0.2.201:1", now) {
		t.Error("an overflowing address got a bucket of its own")
	}
	// Once buckets are full again, they make room.
	if !l.allow("192.0.2.202:1", now.Add(time.Minute)) {
		t.Error("a minute later, a new address is still refused")
	}
}

// TestTokenSizeCap: a token over MaxTokenBytes is refused without asking
// the authorization server; at 00335bc a 60 KB token was forwarded to it.
func TestTokenSizeCap(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	g, _ := newGuard(t, as, Options{Introspection: introspector})
	for _, n := range []int{60 << 10, defaultMaxTokenBytes + 1} {
		w, _ := serve(g, strings.Repeat("a", n))
		if w.Code != 401 || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error_description="too long"`) {
			t.Errorf("%d bytes: %d %q", n, w.Code, w.Header().Get("WWW-Authenticate"))
		}
	}
	if n := as.introCalls.Load(); n != 0 {
		t.Errorf("%d introspections of oversized tokens", n)
	}
	serve(g, strings.Repeat("a", defaultMaxTokenBytes))
	if n := as.introCalls.Load(); n != 1 {
		t.Errorf("a token of the maximum size: %d introspections, want 1", n)
	}
}

// TestIntrospectionEndpointOption: an authorization server whose metadata
// names no introspection endpoint (the TypeScript SDK's demo server; Ory
// Hydra, whose introspection is on its admin port) can be used with
// opaque tokens through Options.IntrospectionEndpoint; at 00335bc New
// refused to start. The endpoint is https or loopback http, and needs
// the credentials.
func TestIntrospectionEndpointOption(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	as.noIntro = true
	as.opaque["tok"] = map[string]any{"active": true, "sub": "bob", "aud": testResource}
	if _, err := New(t.Context(), Options{Issuer: as.URL, Resource: testResource, Introspection: introspector, Logger: discard}); err == nil {
		t.Error("introspection credentials, no endpoint anywhere: New succeeded")
	}
	g, _ := newGuard(t, as, Options{Introspection: introspector, IntrospectionEndpoint: as.URL + "/introspect"})
	if w, s := serve(g, "tok"); w.Code != 200 || s.caller.Subject != "bob" {
		t.Errorf("opaque token: %d", w.Code)
	}
	for _, o := range []Options{
		{Issuer: as.URL, Resource: testResource, IntrospectionEndpoint: as.URL + "/introspect"},
		{Issuer: as.URL, Resource: testResource, Introspection: introspector, IntrospectionEndpoint: "http://auth.example.com/introspect"},
		{Issuer: as.URL, Resource: testResource, Introspection: introspector, IntrospectionEndpoint: "https://u:p@auth.example.com/introspect"},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%s accepted", o.IntrospectionEndpoint)
		}
	}
}
