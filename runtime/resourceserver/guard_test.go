package resourceserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	rst "github.com/mcprt/mcprt/test/resourceservertest"
)

const testResource = "https://mcp.example.test/mcp"

var discard = slog.New(slog.DiscardHandler)

// fakeAS serves the documents of an authorization server (metadata, key
// set, introspection) for the package's own tests; the tests against a
// real authorization server are test/e2e's.
type fakeAS struct {
	*httptest.Server
	mu         sync.Mutex
	keys       []*rst.Key
	opaque     map[string]map[string]any // introspection answers by token
	jwksFetch  atomic.Int64
	introCalls atomic.Int64
	introFail  atomic.Bool
	metaPath   string // where the metadata is served (default RFC 8414)
	issuer     string // the issuer the metadata names (default the URL)
	noIntro    bool   // the metadata names no introspection endpoint
}

func newFakeAS(t testing.TB, keys ...*rst.Key) *fakeAS {
	as := &fakeAS{keys: keys, opaque: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		want := as.metaPath
		if want == "" {
			want = "/.well-known/oauth-authorization-server"
		}
		if r.URL.Path != want {
			http.NotFound(w, r)
			return
		}
		iss := as.issuer
		if iss == "" {
			iss = as.URL
		}
		m := map[string]any{"issuer": iss, "jwks_uri": as.URL + "/jwks", "introspection_endpoint": as.URL + "/introspect"}
		if as.noIntro {
			delete(m, "introspection_endpoint")
		}
		json.NewEncoder(w).Encode(m)
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		as.jwksFetch.Add(1)
		as.mu.Lock()
		defer as.mu.Unlock()
		w.Write(rst.Set(false, as.keys...))
	})
	mux.HandleFunc("/introspect", func(w http.ResponseWriter, r *http.Request) {
		as.introCalls.Add(1)
		if as.introFail.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		id, secret, ok := r.BasicAuth()
		if !ok || id != "rs" || secret != "s3cret" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		as.mu.Lock()
		resp, ok := as.opaque[r.PostFormValue("token")]
		as.mu.Unlock()
		if !ok {
			resp = map[string]any{"active": false}
		}
		json.NewEncoder(w).Encode(resp)
	})
	as.Server = httptest.NewServer(mux)
	t.Cleanup(as.Close)
	return as
}

func (as *fakeAS) setKeys(keys ...*rst.Key) {
	as.mu.Lock()
	as.keys = keys
	as.mu.Unlock()
}

// testClock is a settable clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newGuard(t *testing.T, as *fakeAS, o Options) (*Guard, *testClock) {
	t.Helper()
	clock := &testClock{t: time.Now()}
	o.Issuer = as.URL
	if o.Resource == "" {
		o.Resource = testResource
	}
	o.now = clock.now
	if o.Logger == nil {
		o.Logger = discard
	}
	g, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g, clock
}

// claimsFor are valid claims for as and testResource, changed by edits
// (a nil value removes a claim).
func claimsFor(as *fakeAS, edits map[string]any) map[string]any {
	now := time.Now().Unix()
	c := map[string]any{
		"iss": as.URL, "sub": "alice", "client_id": "app", "aud": testResource,
		"exp": now + 300, "iat": now, "jti": "j1", "scope": "mcp:tools mcp:read",
	}
	for k, v := range edits {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// serve runs one request with token (none when "") through g, behind it a
// handler that records what it got.
func serve(g *Guard, token string, header ...string) (*httptest.ResponseRecorder, *seen) {
	s := &seen{}
	h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.called = true
		s.caller = handlers.CallerFrom(r.Context())
		s.authorization = r.Header.Values("Authorization")
		s.subjectToken = SubjectToken(r.Context())
		w.WriteHeader(http.StatusOK)
	}))
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w, s
}

type seen struct {
	called        bool
	caller        *handlers.Caller
	authorization []string
	subjectToken  string
}

// TestMetadataDocument: RFC 9728 metadata at the resource's well-known
// path and the root form, naming the issuer, scopes and header method,
// readable from any origin.
func TestMetadataDocument(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	g, _ := newGuard(t, as, Options{Scopes: []string{"mcp:tools"}})
	if got, want := g.metadataURL, "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"; got != want {
		t.Errorf("MetadataURL %s, want %s", got, want)
	}
	paths := g.MetadataPaths()
	if len(paths) != 2 || paths[0] != "/.well-known/oauth-protected-resource/mcp" || paths[1] != wellKnownPath {
		t.Errorf("MetadataPaths %v", paths)
	}
	w := httptest.NewRecorder()
	g.MetadataHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, paths[0], nil))
	var doc map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if doc["resource"] != testResource || doc["authorization_servers"].([]any)[0] != as.URL ||
		doc["scopes_supported"].([]any)[0] != "mcp:tools" || doc["bearer_methods_supported"].([]any)[0] != "header" {
		t.Errorf("document %v", doc)
	}
	if w.Header().Get("Access-Control-Allow-Origin") != "*" || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", w.Header())
	}
	w = httptest.NewRecorder()
	g.MetadataHandler().ServeHTTP(w, httptest.NewRequest(http.MethodPost, paths[0], nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", w.Code)
	}

	// A resource at the root has one path.
	g2, _ := newGuard(t, as, Options{Resource: "https://mcp.example.test"})
	if p := g2.MetadataPaths(); len(p) != 1 || p[0] != wellKnownPath || g2.metadataURL != "https://mcp.example.test"+wellKnownPath {
		t.Errorf("root resource: %v %s", p, g2.metadataURL)
	}
}

// TestChallengeWithoutToken: no token (or another scheme) is 401 with the
// challenge naming the metadata and the scopes; the handler is not run.
func TestChallengeWithoutToken(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	g, _ := newGuard(t, as, Options{Scopes: []string{"mcp:tools", "mcp:read"}})
	want := `Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="mcp:tools mcp:read"`
	for name, hdr := range map[string][]string{"none": nil, "basic": {"Authorization", "Basic YTpi"}, "bare": {"Authorization", "Bearer"}} {
		w, s := serve(g, "", hdr...)
		if w.Code != 401 || w.Header().Get("WWW-Authenticate") != want || s.called {
			t.Errorf("%s: %d %q called=%v", name, w.Code, w.Header().Get("WWW-Authenticate"), s.called)
		}
		if !strings.Contains(w.Body.String(), `"code":-32600`) {
			t.Errorf("%s: body %s", name, w.Body)
		}
	}
	w, _ := serve(g, "", "Authorization", "Bearer a", "Authorization", "Bearer b")
	if w.Code != 400 || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_request"`) {
		t.Errorf("two headers: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	if got := g.Refusals(); !maps.Equal(got, map[string]uint64{"no_token": 3, "invalid_request": 1}) {
		t.Errorf("Refusals = %v", got)
	}
}

// TestAcceptsIssuedTokens: a token of each algorithm signed by the
// issuer's key reaches the handler with its caller, without its
// Authorization header.
func TestAcceptsIssuedTokens(t *testing.T) {
	var keys []*rst.Key
	for _, alg := range []string{"RS256", "PS256", "ES256", "EdDSA"} {
		keys = append(keys, rst.MustKey(alg, "k-"+alg))
	}
	as := newFakeAS(t, keys...)
	g, _ := newGuard(t, as, Options{Scopes: []string{"mcp:tools"}})
	for _, k := range keys {
		w, s := serve(g, k.Sign(claimsFor(as, map[string]any{"aud": []string{"https://other.example", testResource}}), nil))
		if w.Code != 200 || !s.called {
			t.Fatalf("%s: %d %s %s", k.Alg, w.Code, w.Header().Get("WWW-Authenticate"), w.Body)
		}
		c := s.caller
		if c == nil || c.Subject != "alice" || c.ClientID != "app" || c.Issuer != as.URL || !c.HasScopes([]string{"mcp:tools", "mcp:read"}) || c.Claims["jti"] != "j1" || c.Expiry.IsZero() {
			t.Errorf("%s: caller %+v", k.Alg, c)
		}
		if len(s.authorization) != 0 {
			t.Errorf("%s: the handler saw Authorization %v", k.Alg, s.authorization)
		}
	}
	// Case in scheme and host, and scp instead of scope.
	w, s := serve(g, keys[0].Sign(claimsFor(as, map[string]any{"aud": "HTTPS://MCP.Example.Test/mcp", "scope": nil, "scp": []string{"mcp:tools"}}), nil))
	if w.Code != 200 || !s.caller.HasScope("mcp:tools") {
		t.Errorf("uppercase aud, scp: %d %s", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

// TestPassToken: the token goes past the guard, on the context, only with
// Options.PassToken; never in the headers.
func TestPassToken(t *testing.T) {
	key := rst.MustKey("ES256", "k1")
	as := newFakeAS(t, key)
	tok := key.Sign(claimsFor(as, nil), nil)
	for _, pass := range []bool{false, true} {
		g, _ := newGuard(t, as, Options{PassToken: pass})
		w, s := serve(g, tok)
		if w.Code != 200 || len(s.authorization) != 0 {
			t.Fatalf("PassToken %v: %d, Authorization %v", pass, w.Code, s.authorization)
		}
		if want := map[bool]string{false: "", true: tok}[pass]; s.subjectToken != want {
			t.Errorf("PassToken %v: SubjectToken %q", pass, s.subjectToken)
		}
	}
}

// TestRefusesTokens: every way a token can be wrong is 401 invalid_token,
// and the handler is not run.
func TestRefusesTokens(t *testing.T) {
	k := rst.MustKey("RS256", "k1")
	ec := rst.MustKey("ES256", "k2")
	as := newFakeAS(t, k, ec)
	g, _ := newGuard(t, as, Options{})
	now := time.Now().Unix()
	attacker := rst.MustKey("RS256", "k1")
	bare, withSig := rst.Unsigned(claimsFor(as, nil), map[string]any{"kid": "k1"})
	good := k.Sign(claimsFor(as, nil), nil)
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + rst.Segment(claimsFor(as, map[string]any{"sub": "admin"})) + "." + parts[2]
	cases := map[string]string{
		"expired":          k.Sign(claimsFor(as, map[string]any{"exp": now - 120}), nil),
		"not yet valid":    k.Sign(claimsFor(as, map[string]any{"nbf": now + 120}), nil),
		"no exp":           k.Sign(claimsFor(as, map[string]any{"exp": nil}), nil),
		"exp as string":    k.Sign(claimsFor(as, map[string]any{"exp": "4102444800"}), nil),
		"wrong audience":   k.Sign(claimsFor(as, map[string]any{"aud": "https://other.example/mcp"}), nil),
		"audience-less":    k.Sign(claimsFor(as, map[string]any{"aud": nil}), nil),
		"empty audience":   k.Sign(claimsFor(as, map[string]any{"aud": []string{}}), nil),
		"audience prefix":  k.Sign(claimsFor(as, map[string]any{"aud": testResource + "/x"}), nil),
		"wrong issuer":     k.Sign(claimsFor(as, map[string]any{"iss": "https://evil.example"}), nil),
		"no issuer":        k.Sign(claimsFor(as, map[string]any{"iss": nil}), nil),
		"re-signed":        attacker.Sign(claimsFor(as, nil), nil),
		"tampered":         tampered,
		"unknown kid":      attacker.Sign(claimsFor(as, nil), map[string]any{"kid": "k9"}),
		"alg none":         bare,
		"alg none + sig":   withSig,
		"HMAC with n":      rst.SignHMAC("HS256", k.PublicKeyBytes(), claimsFor(as, nil), map[string]any{"kid": "k1"}),
		"HMAC with PEM":    rst.SignHMAC("HS256", k.PublicKeyPEM(), claimsFor(as, nil), map[string]any{"kid": "k1"}),
		"ES256 as RS256":   ec.Sign(claimsFor(as, nil), map[string]any{"kid": "k1"}),
		"typ JWT":          k.Sign(claimsFor(as, nil), map[string]any{"typ": "JWT"}),
		"no typ":           k.Sign(claimsFor(as, nil), map[string]any{"typ": nil}),
		"id token typ":     k.Sign(claimsFor(as, nil), map[string]any{"typ": "id_token+jwt"}),
		"opaque":           "b3BhcXVl",
		"malformed":        "a.b.c",
		"claims not JSON":  parts[0] + ".bm90IGpzb24." + parts[2],
		"crit":             k.Sign(claimsFor(as, nil), map[string]any{"crit": []string{"exp"}}),
		"huge":             strings.Repeat("a", 20000) + ".b.c",
		"active pretender": k.Sign(claimsFor(as, map[string]any{"exp": nil, "active": true}), nil),
	}
	for name, tok := range cases {
		w, s := serve(g, tok)
		if w.Code != 401 || s.called || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("%s: %d %q called=%v", name, w.Code, w.Header().Get("WWW-Authenticate"), s.called)
		}
	}
	// Within the leeway is fine.
	for name, tok := range map[string]string{
		"expired 10s ago":    k.Sign(claimsFor(as, map[string]any{"exp": now - 10}), nil),
		"valid in 10s":       k.Sign(claimsFor(as, map[string]any{"nbf": now + 10}), nil),
		"typ application/at": k.Sign(claimsFor(as, nil), map[string]any{"typ": "application/at+jwt"}),
	} {
		if w, _ := serve(g, tok); w.Code != 200 {
			t.Errorf("%s: %d %q", name, w.Code, w.Header().Get("WWW-Authenticate"))
		}
	}
	// AcceptUntypedJWT lets typ JWT and none in, nothing else.
	lax, _ := newGuard(t, as, Options{AcceptUntypedJWT: true})
	if w, _ := serve(lax, cases["typ JWT"]); w.Code != 200 {
		t.Errorf("typ JWT with AcceptUntypedJWT: %d", w.Code)
	}
	if w, _ := serve(lax, cases["id token typ"]); w.Code != 401 {
		t.Errorf("id_token+jwt with AcceptUntypedJWT: %d", w.Code)
	}
}

// TestInsufficientScope: a valid token without a required scope is 403
// insufficient_scope, the challenge naming the required scopes and the
// token's own.
func TestInsufficientScope(t *testing.T) {
	k := rst.MustKey("ES256", "k1")
	as := newFakeAS(t, k)
	g, _ := newGuard(t, as, Options{Scopes: []string{"mcp:admin"}})
	w, s := serve(g, k.Sign(claimsFor(as, map[string]any{"scope": `mcp:tools bad"scope`}), nil))
	want := `Bearer error="insufficient_scope", error_description="the token lacks a required scope", resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="mcp:admin mcp:tools"`
	if w.Code != 403 || s.called || w.Header().Get("WWW-Authenticate") != want {
		t.Errorf("%d called=%v\n got %s\nwant %s", w.Code, s.called, w.Header().Get("WWW-Authenticate"), want)
	}
	if got := g.Refusals(); !maps.Equal(got, map[string]uint64{"insufficient_scope": 1}) {
		t.Errorf("Refusals = %v", got)
	}
}

// TestKeyRotation: a token signed by a key the guard has not seen fetches
// the set once and is accepted; more unknown kids within KeyRefetch fetch
// nothing; a key the issuer drops stops vouching for remembered tokens.
func TestKeyRotation(t *testing.T) {
	old := rst.MustKey("ES256", "old")
	as := newFakeAS(t, old)
	g, clock := newGuard(t, as, Options{KeyRefetch: time.Minute})
	oldTok := old.Sign(claimsFor(as, nil), nil)
	if w, _ := serve(g, oldTok); w.Code != 200 {
		t.Fatalf("old key: %d", w.Code)
	}
	fetches := as.jwksFetch.Load()
	next := rst.MustKey("RS256", "new")
	as.setKeys(next)
	if w, _ := serve(g, next.Sign(claimsFor(as, nil), nil)); w.Code != 200 {
		t.Fatalf("rotated key: %d %s", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	if n := as.jwksFetch.Load() - fetches; n != 1 {
		t.Errorf("rotation fetched the set %d times, want 1", n)
	}
	// The old key is gone from the set: its token, remembered before, is
	// refused now.
	if w, _ := serve(g, oldTok); w.Code != 401 {
		t.Errorf("token of a dropped key: %d", w.Code)
	}
	clock.add(time.Minute)
	fetches = as.jwksFetch.Load()
	for i := range 5 {
		rogue := rst.MustKey("ES256", "rogue")
		serve(g, rogue.Sign(claimsFor(as, map[string]any{"jti": i}), map[string]any{"kid": "rogue"}))
	}
	if n := as.jwksFetch.Load() - fetches; n != 1 {
		t.Errorf("five unknown kids fetched the set %d times, want 1 (once per KeyRefetch)", n)
	}
	newer := rst.MustKey("EdDSA", "newer")
	as.setKeys(next, newer)
	if w, _ := serve(g, newer.Sign(claimsFor(as, nil), nil)); w.Code != 401 {
		t.Errorf("within KeyRefetch of the last fetch: %d, want 401", w.Code)
	}
	clock.add(time.Minute)
	if w, _ := serve(g, newer.Sign(claimsFor(as, nil), nil)); w.Code != 200 {
		t.Errorf("a KeyRefetch later: %d", w.Code)
	}
}

// TestCacheRemembersByHash: a token is verified once; the cache holds no
// token; it is bounded; an expired entry is verified again (and refused).
func TestCacheRemembersByHash(t *testing.T) {
	k := rst.MustKey("ES256", "k1")
	as := newFakeAS(t, k)
	g, clock := newGuard(t, as, Options{CacheSize: 4, Leeway: -1})
	tok := k.Sign(claimsFor(as, map[string]any{"exp": time.Now().Unix() + 60}), nil)
	w1, s1 := serve(g, tok)
	w2, s2 := serve(g, tok)
	if w1.Code != 200 || w2.Code != 200 || s1.caller != s2.caller {
		t.Fatalf("%d %d, same caller %v", w1.Code, w2.Code, s1.caller == s2.caller)
	}
	for i := range 20 {
		serve(g, k.Sign(claimsFor(as, map[string]any{"jti": i}), nil))
	}
	if n := g.cache.len(); n > 4 {
		t.Errorf("cache of 4 holds %d", n)
	}
	clock.add(2 * time.Minute)
	if w, _ := serve(g, tok); w.Code != 401 {
		t.Errorf("after exp: %d", w.Code)
	}
}

// TestIntrospection: an opaque token is asked about once, with the
// server's credentials, and remembered; inactive, foreign-audience and
// DPoP ones are refused; an issuer that fails is 503, not 401.
func TestIntrospection(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	exp := time.Now().Unix() + 300
	as.opaque["good"] = map[string]any{"active": true, "sub": "bob", "client_id": "c", "aud": testResource, "iss": as.URL, "exp": exp, "scope": "mcp:tools", "token_type": "Bearer"}
	as.opaque["noaud"] = map[string]any{"active": true, "sub": "bob", "exp": exp}
	as.opaque["other"] = map[string]any{"active": true, "aud": "https://other.example", "exp": exp}
	as.opaque["dpop"] = map[string]any{"active": true, "aud": testResource, "exp": exp, "token_type": "DPoP"}
	as.opaque["otheriss"] = map[string]any{"active": true, "aud": testResource, "exp": exp, "iss": "https://evil.example"}
	as.opaque["expired"] = map[string]any{"active": true, "aud": testResource, "exp": time.Now().Unix() - 300}
	g, _ := newGuard(t, as, Options{Introspection: &ClientCredentials{ClientID: "rs", ClientSecret: "s3cret"}})
	for range 3 {
		w, s := serve(g, "good")
		if w.Code != 200 || s.caller.Subject != "bob" || !s.caller.HasScope("mcp:tools") {
			t.Fatalf("good: %d %s", w.Code, w.Header().Get("WWW-Authenticate"))
		}
		if _, ok := s.caller.Claims["active"]; ok {
			t.Errorf("claims keep active: %v", s.caller.Claims)
		}
	}
	if n := as.introCalls.Load(); n != 1 {
		t.Errorf("3 requests introspected %d times, want 1", n)
	}
	for _, tok := range []string{"unknown", "noaud", "other", "dpop", "otheriss", "expired"} {
		if w, _ := serve(g, tok); w.Code != 401 {
			t.Errorf("%s: %d", tok, w.Code)
		}
	}
	as.introFail.Store(true)
	if w, _ := serve(g, "new-token"); w.Code != 503 || w.Header().Get("Retry-After") == "" {
		t.Errorf("issuer down: %d", w.Code)
	}
	if w, _ := serve(g, "good"); w.Code != 200 {
		t.Errorf("remembered token while the issuer is down: %d", w.Code)
	}
	// Without credentials, an opaque token is refused outright.
	g2, _ := newGuard(t, as, Options{})
	if w, _ := serve(g2, "good"); w.Code != 401 {
		t.Errorf("no introspection: %d", w.Code)
	}
}

// TestIssuerRules: the issuer is https or loopback; its metadata must
// name it; it is discovered at the OpenID location too; New fails when
// it cannot fetch what it needs.
func TestIssuerRules(t *testing.T) {
	for _, o := range []Options{
		{Issuer: "http://auth.example.com", Resource: testResource},
		{Issuer: "https://auth.example.com?x=1", Resource: testResource},
		{Issuer: "https://user@auth.example.com", Resource: testResource},
		{Issuer: "auth.example.com", Resource: testResource},
		{Issuer: "https://127.0.0.1:1", Resource: "http://mcp.example.com/mcp"},
		{Issuer: "https://127.0.0.1:1", Resource: testResource + "#f"},
		{Issuer: "https://127.0.0.1:1", Resource: testResource, Scopes: []string{`a"b`}},
	} {
		if _, err := New(context.Background(), o); err == nil {
			t.Errorf("%+v: accepted", o)
		}
	}
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	as.issuer = "https://evil.example"
	if _, err := New(context.Background(), Options{Issuer: as.URL, Resource: testResource}); err == nil || !strings.Contains(err.Error(), "evil") {
		t.Errorf("metadata naming another issuer: %v", err)
	}
	as.issuer = ""
	as.metaPath = "/.well-known/openid-configuration"
	if _, err := New(context.Background(), Options{Issuer: as.URL, Resource: testResource}); err != nil {
		t.Errorf("OpenID Connect discovery: %v", err)
	}
	as.metaPath = "/nowhere"
	if _, err := New(context.Background(), Options{Issuer: as.URL, Resource: testResource}); err == nil {
		t.Error("no metadata: New succeeded")
	}
}

// TestDiscoveryOrder: the metadata URLs tried for an issuer with and
// without a path, in the MCP specification's order.
func TestDiscoveryOrder(t *testing.T) {
	for iss, want := range map[string][]string{
		"https://a.example":          {"https://a.example/.well-known/oauth-authorization-server", "https://a.example/.well-known/openid-configuration"},
		"https://a.example/tenant1/": {"https://a.example/.well-known/oauth-authorization-server/tenant1", "https://a.example/.well-known/openid-configuration/tenant1", "https://a.example/tenant1/.well-known/openid-configuration"},
	} {
		u, _ := checkURL("issuer", iss, false)
		if got := metadataURLsFor(u); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s:\n got %v\nwant %v", iss, got, want)
		}
	}
}

// TestTokenNeverLogged: at debug level, whatever happens to a token, the
// token is in no log line, no response header and no response body.
func TestTokenNeverLogged(t *testing.T) {
	k := rst.MustKey("ES256", "k1")
	as := newFakeAS(t, k)
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g, _ := newGuard(t, as, Options{Logger: logger, Scopes: []string{"mcp:admin"}, Introspection: &ClientCredentials{ClientID: "rs", ClientSecret: "s3cret"}})
	toks := []string{
		k.Sign(claimsFor(as, nil), nil),                             // 403
		k.Sign(claimsFor(as, map[string]any{"exp": 1}), nil),        // expired
		rst.MustKey("ES256", "zz").Sign(claimsFor(as, nil), nil),    // unknown kid
		"opaque-secret-token-value",                                 // introspected, inactive
		rst.SignHMAC("HS256", []byte("x"), claimsFor(as, nil), nil), // HMAC
	}
	as.introFail.Store(false)
	var out bytes.Buffer
	for _, tok := range toks {
		w, _ := serve(g, tok)
		for k, v := range w.Header() {
			out.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
		out.Write(w.Body.Bytes())
	}
	as.introFail.Store(true)
	w, _ := serve(g, "another-opaque-secret")
	out.Write(w.Body.Bytes())
	toks = append(toks, "another-opaque-secret")
	mu.Lock()
	defer mu.Unlock()
	for _, tok := range toks {
		sig := tok[strings.LastIndexByte(tok, '.')+1:]
		if strings.Contains(logs.String(), sig) || strings.Contains(out.String(), sig) {
			t.Errorf("token %.20s… appears:\nlogs: %s\nresponses: %s", tok, logs.String(), out.String())
		}
	}
	if !strings.Contains(logs.String(), "token refused") {
		t.Errorf("no debug line for refused tokens: %s", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestRefreshFollowsKeys: the periodic refresh picks a new key set up
// with no token asking for it, and Close stops it.
func TestRefreshFollowsKeys(t *testing.T) {
	a := rst.MustKey("ES256", "a")
	as := newFakeAS(t, a)
	g, _ := newGuard(t, as, Options{Refresh: 10 * time.Millisecond})
	b := rst.MustKey("ES256", "b")
	as.setKeys(a, b)
	deadline := time.Now().Add(10 * time.Second)
	for g.keys.Load().Len() != 2 {
		if time.Now().After(deadline) {
			t.Fatal("the refresh did not fetch the new set")
		}
		time.Sleep(5 * time.Millisecond)
	}
	g.Close() // waits for the refreshing goroutine; Cleanup's Close is then a no-op
	select {
	case <-g.refreshEnded:
	default:
		t.Error("Close returned with the refresh running")
	}
}

// ScopeChallenge is the 403 step-up challenge streamhttp sends for what a
// handlers.Access refuses: the metadata, and the scopes to ask for, minus
// any a header cannot quote.
func TestScopeChallengeHeader(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	g, _ := newGuard(t, as, Options{})
	h := http.Header{}
	g.ScopeChallenge(h, `read admin read bad"scope`)
	want := `Bearer error="insufficient_scope", error_description="the token lacks a scope this needs", resource_metadata="` + g.metadataURL + `", scope="read admin"`
	if got := h.Get("WWW-Authenticate"); got != want {
		t.Fatalf("challenge\n%s\nwant\n%s", got, want)
	}
}

// TestNoPrincipalRefused: a token that names neither a subject nor a
// client (legal in an introspection answer, RFC 7662 section 2.2; RFC
// 9068 section 2.2 requires both in a JWT) is refused. At 00335bc two
// such tokens, of two users, were both the principal "client:" and
// shared legacy sessions, tasks and request state (issue 31 item 6).
func TestNoPrincipalRefused(t *testing.T) {
	k := rst.MustKey("ES256", "k1")
	as := newFakeAS(t, k)
	exp := time.Now().Unix() + 300
	as.opaque["user-1"] = map[string]any{"active": true, "aud": testResource, "exp": exp, "scope": "mcp:tools"}
	as.opaque["user-2"] = map[string]any{"active": true, "aud": testResource, "exp": exp, "scope": "mcp:tools", "username": "bob"}
	as.opaque["client-only"] = map[string]any{"active": true, "aud": testResource, "exp": exp, "client_id": "svc"}
	as.opaque["azp-only"] = map[string]any{"active": true, "aud": testResource, "exp": exp, "azp": "svc2"}
	g, _ := newGuard(t, as, Options{Introspection: &ClientCredentials{ClientID: "rs", ClientSecret: "s3cret"}})
	for _, tok := range []string{"user-1", "user-2", k.Sign(claimsFor(as, map[string]any{"sub": nil, "client_id": nil}), nil)} {
		w, s := serve(g, tok)
		if w.Code != 401 || s.called || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error_description="no subject nor client id"`) {
			t.Errorf("%.20s: %d %q, want 401", tok, w.Code, w.Header().Get("WWW-Authenticate"))
		}
	}
	// A client acting for itself is its own principal, one per client.
	for tok, want := range map[string]string{"client-only": "client:svc", "azp-only": "client:svc2"} {
		w, s := serve(g, tok)
		if w.Code != 200 || s.caller.Principal() != want {
			t.Errorf("%s: %d principal %q, want %q", tok, w.Code, s.caller.Principal(), want)
		}
	}
}

// TestTokenTimes: a token issued in the future (beyond Leeway), or that
// lasts longer than MaxTokenLifetime, is refused; at 00335bc both an iat
// an hour ahead and a 100-year exp were accepted (issue 31 item 11).
// RFC 7519 section 4.1.6 leaves iat to the application; RFC 9068
// section 4 has the resource server check the times it relies on.
func TestTokenTimes(t *testing.T) {
	k := rst.MustKey("ES256", "k1")
	as := newFakeAS(t, k)
	now := time.Now().Unix()
	as.opaque["future"] = map[string]any{"active": true, "sub": "bob", "aud": testResource, "iat": now + 3600, "exp": now + 7200}
	as.opaque["century"] = map[string]any{"active": true, "sub": "bob", "aud": testResource, "exp": now + 100*365*86400}
	g, _ := newGuard(t, as, Options{Introspection: introspector})
	year := int64(365 * 86400)
	for name, tok := range map[string]string{
		"iat an hour ahead":     k.Sign(claimsFor(as, map[string]any{"iat": now + 3600, "exp": now + 7200}), nil),
		"iat 2 min ahead":       k.Sign(claimsFor(as, map[string]any{"iat": now + 120}), nil),
		"exp in 100 years":      k.Sign(claimsFor(as, map[string]any{"exp": now + 100*year}), nil),
		"25 h lifetime":         k.Sign(claimsFor(as, map[string]any{"iat": now - 3600, "exp": now + 24*3600}), nil),
		"no iat, 100 years":     k.Sign(claimsFor(as, map[string]any{"iat": nil, "exp": now + 100*year}), nil),
		"iat as a string":       k.Sign(claimsFor(as, map[string]any{"iat": "now"}), nil),
		"introspected, future":  "future",
		"introspected, century": "century",
	} {
		if w, _ := serve(g, tok); w.Code != 401 {
			t.Errorf("%s: %d, want 401", name, w.Code)
		}
	}
	for name, tok := range map[string]string{
		"iat 10 s ahead (leeway)": k.Sign(claimsFor(as, map[string]any{"iat": now + 10}), nil),
		"23 h lifetime":           k.Sign(claimsFor(as, map[string]any{"iat": now - 3600, "exp": now + 22*3600}), nil),
	} {
		if w, _ := serve(g, tok); w.Code != 200 {
			t.Errorf("%s: %d, want 200", name, w.Code)
		}
	}
	// The bound is an option; negative: none.
	long := k.Sign(claimsFor(as, map[string]any{"exp": now + 100*year}), nil)
	if g2, _ := newGuard(t, as, Options{MaxTokenLifetime: -1}); func() int { w, _ := serve(g2, long); return w.Code }() != 200 {
		t.Error("MaxTokenLifetime -1: a 100-year token refused")
	}
	g3, _ := newGuard(t, as, Options{MaxTokenLifetime: time.Hour})
	if w, _ := serve(g3, k.Sign(claimsFor(as, map[string]any{"exp": now + 7200}), nil)); w.Code != 401 {
		t.Errorf("MaxTokenLifetime 1h, a 2 h token: %d", w.Code)
	}
}

// TestURLSecretsNotEchoed: an issuer (or other URL) with user info is
// refused without its password in the error; at 00335bc the error quoted
// the URL whole (issue 31 item 11).
func TestURLSecretsNotEchoed(t *testing.T) {
	for _, o := range []Options{
		{Issuer: "https://admin:hunter2@auth.example.com", Resource: testResource},
		{Issuer: "https://auth.example.com", Resource: "https://admin:hunter2@mcp.example.com/mcp"},
		{Issuer: "http://admin:hunter2@auth.example.com", Resource: testResource},
		{Issuer: "ftp://admin:hunter2@auth.example.com", Resource: testResource},
		{Issuer: "https://admin:hunter2@auth.example.com:bad", Resource: testResource},
		{Issuer: "https://auth.example.com", Resource: testResource, Introspection: introspector, IntrospectionEndpoint: "https://admin:hunter2@auth.example.com/i"},
	} {
		err := o.Validate()
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%v", err)
		}
	}
	err := Options{Issuer: "https://admin:hunter2@auth.example.com/t", Resource: testResource}.Validate()
	if err == nil || err.Error() != `issuer "https://auth.example.com/t": user info not allowed` {
		t.Errorf("%v", err)
	}
}
