package resourceserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	rst "github.com/mcprt/mcprt/test/resourceservertest"
)

// proofFor is a valid DPoP proof by key for a POST of token to
// testResource, changed by edits (a nil value removes a claim).
func proofFor(key *rst.Key, token string, edits map[string]any) string {
	c := map[string]any{
		"jti": rand.Text(), "htm": http.MethodPost, "htu": testResource,
		"iat": time.Now().Unix(), "ath": rst.ATH(token),
	}
	for k, v := range edits {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return key.Proof(c, nil)
}

// boundTo are claims of a token bound to key (cnf.jkt, RFC 9449 section
// 6.1).
func boundTo(as *fakeAS, key *rst.Key, edits map[string]any) map[string]any {
	c := claimsFor(as, edits)
	c["cnf"] = map[string]any{"jkt": key.Thumbprint()}
	return c
}

// serveDPoP runs one request through g with Authorization: DPoP token and
// the proofs given (one DPoP header each), method and path as given.
func serveDPoP(g *Guard, method, target, token string, proofs ...string) (*httptest.ResponseRecorder, *seen) {
	s := &seen{}
	h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.called = true
		s.caller = handlers.CallerFrom(r.Context())
		s.authorization = append(r.Header.Values("Authorization"), r.Header.Values("DPoP")...)
		w.WriteHeader(http.StatusOK)
	}))
	r := httptest.NewRequest(method, target, strings.NewReader(`{}`))
	r.Header.Set("Authorization", "DPoP "+token)
	for _, p := range proofs {
		r.Header.Add("DPoP", p)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w, s
}

func dpopRefused(w *httptest.ResponseRecorder, s *seen, code string) bool {
	return w.Code == 401 && !s.called && strings.HasPrefix(w.Header().Get("WWW-Authenticate"), `DPoP error="`+code+`"`) &&
		strings.Contains(w.Header().Get("WWW-Authenticate"), `algs="ES256`)
}

// TestDPoPAcceptsProofs: a DPoP-bound token with a valid proof by the key
// it is bound to (ES256, RS256, EdDSA) is accepted, in the RFC 3986
// spellings of the resource's URI; the handler sees neither header.
func TestDPoPAcceptsProofs(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	g, _ := newGuard(t, as, Options{Scopes: []string{"mcp:tools"}})
	for _, alg := range []string{"ES256", "RS256", "PS256", "EdDSA"} {
		client := rst.MustKey(alg, "")
		tok := as.keys[0].Sign(boundTo(as, client, nil), nil)
		w, s := serveDPoP(g, http.MethodPost, "/mcp", tok, proofFor(client, tok, nil))
		if w.Code != 200 || s.caller == nil || s.caller.Subject != "alice" {
			t.Fatalf("%s: %d %s", alg, w.Code, w.Header().Get("WWW-Authenticate"))
		}
		if len(s.authorization) != 0 {
			t.Errorf("%s: the handler saw %v", alg, s.authorization)
		}
	}
	// RFC 9449 section 4.3 step 9: htu is compared without query and
	// fragment, after syntax- and scheme-based normalization.
	client := rst.MustKey("ES256", "")
	tok := as.keys[0].Sign(boundTo(as, client, nil), nil)
	for _, htu := range []string{
		"HTTPS://MCP.Example.Test:443/mcp", "https://mcp.example.test/./mcp", "https://mcp.example.test/%6dcp",
		"https://mcp.example.test/mcp?x=1", "https://mcp.example.test/mcp#f",
	} {
		if w, _ := serveDPoP(g, http.MethodPost, "/mcp", tok, proofFor(client, tok, map[string]any{"htu": htu})); w.Code != 200 {
			t.Errorf("htu %s: %d %s", htu, w.Code, w.Header().Get("WWW-Authenticate"))
		}
	}
	// The metadata names the algorithms (RFC 9728 section 2), and does
	// not require DPoP unless told to.
	w := httptest.NewRecorder()
	g.MetadataHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, wellKnownPath, nil))
	var doc map[string]any
	json.Unmarshal(w.Body.Bytes(), &doc)
	if algs, _ := doc["dpop_signing_alg_values_supported"].([]any); len(algs) == 0 || algs[0] != "ES256" {
		t.Errorf("metadata: %s", w.Body)
	}
	if _, ok := doc["dpop_bound_access_tokens_required"]; ok {
		t.Errorf("metadata requires DPoP: %s", w.Body)
	}
}

// TestDPoPStolenTokenAsBearer: the attacker holds a DPoP-bound token but
// not its key, and presents it as a bearer token. RFC 9449 section 7.2:
// a resource server supporting both schemes "MUST reject a DPoP-bound
// access token received as a bearer token". At 00335bc it was accepted.
func TestDPoPStolenTokenAsBearer(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	as.opaque["bound-opaque"] = map[string]any{"active": true, "sub": "bob", "aud": testResource, "exp": time.Now().Unix() + 300,
		"token_type": "DPoP", "cnf": map[string]any{"jkt": rst.MustKey("ES256", "").Thumbprint()}}
	g, _ := newGuard(t, as, Options{Introspection: &ClientCredentials{ClientID: "rs", ClientSecret: "s3cret"}})
	client := rst.MustKey("ES256", "")
	for name, tok := range map[string]string{
		"JWT cnf.jkt":          as.keys[0].Sign(boundTo(as, client, nil), nil),
		"introspected DPoP":    "bound-opaque",
		"cnf by jwk (RFC7800)": as.keys[0].Sign(claimsFor(as, map[string]any{"cnf": map[string]any{"jwk": client.ProofJWK()}}), nil),
	} {
		w, s := serve(g, tok)
		if w.Code != 401 || s.called {
			t.Errorf("%s as Bearer: %d, want 401", name, w.Code)
			continue
		}
		// What was sent, not what the header map became after.
		if h := w.Result().Header.Values("WWW-Authenticate"); !strings.HasPrefix(h[0], `Bearer error="invalid_token"`) || (name != "cnf by jwk (RFC7800)" && (len(h) != 2 || !strings.HasPrefix(h[1], `DPoP algs="ES256 `))) {
			t.Errorf("%s: challenge %q", name, h)
		}
		// Authenticate, which cannot see a proof, refuses it too.
		if _, err := g.bearerCaller(t.Context(), tok); err == nil {
			t.Errorf("%s: Authenticate accepted a bound token", name)
		}
	}
	// The same token with its proof but presented as Bearer: the proof
	// does not make the Bearer scheme acceptable.
	tok := as.keys[0].Sign(boundTo(as, client, nil), nil)
	w, _ := serve(g, tok, "DPoP", proofFor(client, tok, nil))
	if w.Code != 401 || !strings.Contains(strings.Join(w.Result().Header.Values("WWW-Authenticate"), ","), `DPoP algs="`) {
		t.Errorf("bound token as Bearer with a proof: %d %q", w.Code, w.Header().Values("WWW-Authenticate"))
	}
}

// TestDPoPRefusesProofs plays the attacker against RFC 9449 section 4.3,
// which lists what a resource server MUST check of a proof; each defect
// is 401 invalid_dpop_proof with a DPoP challenge (section 7.1), and the
// handler is not run.
func TestDPoPRefusesProofs(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	g, _ := newGuard(t, as, Options{})
	client := rst.MustKey("ES256", "")
	attacker := rst.MustKey("ES256", "")
	rsaClient := rst.MustKey("RS256", "")
	tok := as.keys[0].Sign(boundTo(as, client, nil), nil)
	now := time.Now().Unix()
	good := proofFor(client, tok, nil)
	parts := strings.Split(good, ".")
	claims := func(edits map[string]any) map[string]any {
		c := map[string]any{"jti": rand.Text(), "htm": "POST", "htu": testResource, "iat": now, "ath": rst.ATH(tok)}
		for k, v := range edits {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	privJWK := client.PrivateJWK()
	delete(privJWK, "kid")
	bareNone, _ := rst.Unsigned(claims(nil), map[string]any{"typ": "dpop+jwt", "jwk": client.ProofJWK()})
	cases := map[string][]string{
		"no proof":           nil,
		"two DPoP headers":   {proofFor(client, tok, nil), proofFor(client, tok, nil)}, // step 1: not more than one
		"not a JWT":          {"this-is-not-a-jwt"},                                    // step 2: well-formed JWT
		"tampered signature": {parts[0] + "." + parts[1] + "." + rst.Segment("x")},
		"tampered claims":    {parts[0] + "." + rst.Segment(claims(map[string]any{"htm": "GET"})) + "." + parts[2]},
		"typ jwt":            {client.Proof(claims(nil), map[string]any{"typ": "jwt"})}, // step 4: typ dpop+jwt
		"no typ":             {client.Proof(claims(nil), map[string]any{"typ": nil})},
		"alg none":           {bareNone}, // step 5: asymmetric alg
		"HS256 with x":       {rst.SignHMAC("HS256", []byte(client.ProofJWK()["x"].(string)), claims(nil), map[string]any{"typ": "dpop+jwt", "jwk": client.ProofJWK()})},
		"HS256 with oct jwk": {rst.SignHMAC("HS256", []byte("k"), claims(nil), map[string]any{"typ": "dpop+jwt", "jwk": map[string]any{"kty": "oct", "k": "aw"}})},
		"no jwk":             {client.Proof(claims(nil), map[string]any{"jwk": nil})},                        // step 6: jwk a public key
		"private key in jwk": {client.Proof(claims(nil), map[string]any{"jwk": privJWK})},                    // step 6: no private key
		"jwk of another key": {client.Proof(claims(nil), map[string]any{"jwk": attacker.ProofJWK()})},        // step 7: signature by jwk
		"ES256 jwk, RS256":   {rsaClient.Proof(claims(nil), map[string]any{"jwk": client.ProofJWK()})},       // the key fits the alg
		"crit":               {client.Proof(claims(nil), map[string]any{"crit": []string{"htm"}})},           // no unknown crit
		"no jti":             {client.Proof(claims(map[string]any{"jti": nil}), nil)},                        // step 3: required claims
		"no htm":             {client.Proof(claims(map[string]any{"htm": nil}), nil)},                        //
		"no htu":             {client.Proof(claims(map[string]any{"htu": nil}), nil)},                        //
		"no iat":             {client.Proof(claims(map[string]any{"iat": nil}), nil)},                        //
		"iat as a string":    {client.Proof(claims(map[string]any{"iat": "now"}), nil)},                      //
		"htm GET":            {client.Proof(claims(map[string]any{"htm": "GET"}), nil)},                      // step 8: htm the method
		"htm post":           {client.Proof(claims(map[string]any{"htm": "post"}), nil)},                     //
		"htu another host":   {client.Proof(claims(map[string]any{"htu": "https://evil.example/mcp"}), nil)}, // step 9: htu the URI
		"htu host prefix":    {client.Proof(claims(map[string]any{"htu": "https://mcp.example.test.evil.example/mcp"}), nil)},
		"htu host suffix":    {client.Proof(claims(map[string]any{"htu": "https://evil.mcp.example.test/mcp"}), nil)},
		"htu another path":   {client.Proof(claims(map[string]any{"htu": testResource + "/admin"}), nil)},
		"htu http":           {client.Proof(claims(map[string]any{"htu": "http://mcp.example.test/mcp"}), nil)},
		"htu another port":   {client.Proof(claims(map[string]any{"htu": "https://mcp.example.test:8443/mcp"}), nil)},
		"htu userinfo":       {client.Proof(claims(map[string]any{"htu": "https://u@mcp.example.test/mcp"}), nil)},
		"htu relative":       {client.Proof(claims(map[string]any{"htu": "/mcp"}), nil)},
		"iat 5 min old":      {client.Proof(claims(map[string]any{"iat": now - 303}), nil)}, // step 11: iat window
		"iat 5 min ahead":    {client.Proof(claims(map[string]any{"iat": now + 303}), nil)},
		"iat 2 min old":      {client.Proof(claims(map[string]any{"iat": now - 120}), nil)},
		"no ath":             {client.Proof(claims(map[string]any{"ath": nil}), nil)},                       // step 12a: ath
		"wrong ath":          {client.Proof(claims(map[string]any{"ath": rst.ATH(tok + "x")}), nil)},        //
		"ath unencoded":      {client.Proof(claims(map[string]any{"ath": "not-the-right-hash"}), nil)},      //
		"attacker's own key": {attacker.Proof(claims(nil), nil)},                                            // step 12b: jkt match
		"proof with RSA key": {rsaClient.Proof(claims(nil), nil)},                                           //
		"huge proof":         {client.Proof(claims(map[string]any{"pad": strings.Repeat("a", 9000)}), nil)}, //
	}
	for name, proofs := range cases {
		w, s := serveDPoP(g, http.MethodPost, "/mcp", tok, proofs...)
		if !dpopRefused(w, s, "invalid_dpop_proof") {
			t.Errorf("%s: %d %q called=%v", name, w.Code, w.Header().Get("WWW-Authenticate"), s.called)
		}
	}
	// The proof for a POST does not open a GET (step 8), and a proof is
	// good once (step 5 and section 11.1: a replayed proof is refused).
	if w, s := serveDPoP(g, http.MethodGet, "/mcp", tok, good); !dpopRefused(w, s, "invalid_dpop_proof") {
		t.Errorf("POST proof on a GET: %d", w.Code)
	}
	if w, _ := serveDPoP(g, http.MethodPost, "/mcp", tok, good); w.Code != 200 {
		t.Fatalf("the good proof: %d %s", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	if w, s := serveDPoP(g, http.MethodPost, "/mcp", tok, good); !dpopRefused(w, s, "invalid_dpop_proof") {
		t.Errorf("replayed proof: %d %s", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	// A proof for this resource presented at another path of it.
	if w, s := serveDPoP(g, http.MethodPost, "/other", tok, proofFor(client, tok, map[string]any{"htu": "https://mcp.example.test/admin"})); !dpopRefused(w, s, "invalid_dpop_proof") {
		t.Errorf("htu of another path, at a third: %d", w.Code)
	}
	// An unbound token under the DPoP scheme: step 12b has no key to
	// match; and a bound token of a wrong audience stays refused.
	plain := as.keys[0].Sign(claimsFor(as, nil), nil)
	if w, s := serveDPoP(g, http.MethodPost, "/mcp", plain, proofFor(client, plain, nil)); !dpopRefused(w, s, "invalid_token") {
		t.Errorf("unbound token as DPoP: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	other := as.keys[0].Sign(boundTo(as, client, map[string]any{"aud": "https://other.example/mcp"}), nil)
	if w, s := serveDPoP(g, http.MethodPost, "/mcp", other, proofFor(client, other, nil)); !dpopRefused(w, s, "invalid_token") {
		t.Errorf("wrong audience: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

// TestDPoPNonce: with nonces on, a proof without the server's nonce gets
// use_dpop_nonce and a DPoP-Nonce to use (RFC 9449 section 9); with it,
// it is accepted; a made-up or expired nonce is refused the same way.
func TestDPoPNonce(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	g, clock := newGuard(t, as, Options{DPoPNonce: true, DPoPNonceLifetime: time.Minute})
	client := rst.MustKey("ES256", "")
	tok := as.keys[0].Sign(boundTo(as, client, nil), nil)
	w, s := serveDPoP(g, http.MethodPost, "/mcp", tok, proofFor(client, tok, nil))
	nonce := w.Header().Get("DPoP-Nonce")
	if !dpopRefused(w, s, "use_dpop_nonce") || nonce == "" {
		t.Fatalf("no nonce: %d %q nonce %q", w.Code, w.Header().Get("WWW-Authenticate"), nonce)
	}
	if w, _ := serveDPoP(g, http.MethodPost, "/mcp", tok, proofFor(client, tok, map[string]any{"nonce": nonce})); w.Code != 200 || w.Header().Get("DPoP-Nonce") != "" {
		t.Fatalf("with the nonce: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	for _, n := range []string{"made-up", nonce[:len(nonce)-2] + "AA", ""} {
		if w, s := serveDPoP(g, http.MethodPost, "/mcp", tok, proofFor(client, tok, map[string]any{"nonce": n})); !dpopRefused(w, s, "use_dpop_nonce") {
			t.Errorf("nonce %q: %d", n, w.Code)
		}
	}
	// A minute on, the nonce still works and a new one comes with the
	// answer; two minutes on, it is refused. Proofs are made at the
	// guard's time.
	clock.add(time.Minute)
	at := clock.now().Unix()
	w, _ = serveDPoP(g, http.MethodPost, "/mcp", tok, proofFor(client, tok, map[string]any{"nonce": nonce, "iat": at}))
	if w.Code != 200 || w.Header().Get("DPoP-Nonce") == "" || w.Header().Get("DPoP-Nonce") == nonce {
		t.Errorf("a step later: %d, new nonce %q", w.Code, w.Header().Get("DPoP-Nonce"))
	}
	clock.add(time.Minute)
	at = clock.now().Unix()
	if w, s := serveDPoP(g, http.MethodPost, "/mcp", tok, proofFor(client, tok, map[string]any{"nonce": nonce, "iat": at})); !dpopRefused(w, s, "use_dpop_nonce") {
		t.Errorf("an expired nonce: %d", w.Code)
	}
}

// TestDPoPRequired: with DPoPRequired, the metadata says so (RFC 9728
// section 2), the challenge is DPoP's, and an unbound bearer token is
// refused; a bound one with its proof is accepted.
func TestDPoPRequired(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	g, _ := newGuard(t, as, Options{DPoPRequired: true, Scopes: []string{"mcp:tools"}})
	w := httptest.NewRecorder()
	g.MetadataHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, wellKnownPath, nil))
	if !strings.Contains(w.Body.String(), `"dpop_bound_access_tokens_required":true`) {
		t.Errorf("metadata: %s", w.Body)
	}
	w, _ = serve(g, "")
	if h := w.Header().Get("WWW-Authenticate"); w.Code != 401 || !strings.HasPrefix(h, `DPoP resource_metadata="`) || !strings.Contains(h, `algs="`) {
		t.Errorf("no token: %d %q", w.Code, h)
	}
	w, s := serve(g, as.keys[0].Sign(claimsFor(as, nil), nil))
	if !dpopRefused(w, s, "invalid_token") {
		t.Errorf("bearer token: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	client := rst.MustKey("ES256", "")
	tok := as.keys[0].Sign(boundTo(as, client, nil), nil)
	if w, _ := serveDPoP(g, http.MethodPost, "/mcp", tok, proofFor(client, tok, nil)); w.Code != 200 {
		t.Errorf("bound token with its proof: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	// A 403 for scope answers in the request's scheme.
	short := as.keys[0].Sign(boundTo(as, client, map[string]any{"scope": "other"}), nil)
	w, _ = serveDPoP(g, http.MethodPost, "/mcp", short, proofFor(client, short, nil))
	if w.Code != 403 || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), `DPoP error="insufficient_scope"`) {
		t.Errorf("insufficient scope: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

// TestDPoPIntrospected: an introspection answer of token_type DPoP with
// cnf.jkt (RFC 9449 section 6.2) is accepted with its proof, and refused
// without the thumbprint.
func TestDPoPIntrospected(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	client := rst.MustKey("ES256", "")
	exp := time.Now().Unix() + 300
	as.opaque["bound"] = map[string]any{"active": true, "sub": "bob", "aud": testResource, "exp": exp, "token_type": "DPoP", "cnf": map[string]any{"jkt": client.Thumbprint()}}
	as.opaque["keyless"] = map[string]any{"active": true, "sub": "bob", "aud": testResource, "exp": exp, "token_type": "DPoP"}
	g, _ := newGuard(t, as, Options{Introspection: &ClientCredentials{ClientID: "rs", ClientSecret: "s3cret"}})
	if w, _ := serveDPoP(g, http.MethodPost, "/mcp", "bound", proofFor(client, "bound", nil)); w.Code != 200 {
		t.Errorf("introspected DPoP token: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	if w, s := serveDPoP(g, http.MethodPost, "/mcp", "keyless", proofFor(client, "keyless", nil)); !dpopRefused(w, s, "invalid_token") {
		t.Errorf("DPoP token without cnf.jkt: %d", w.Code)
	}
}

// TestDPoPReplayCacheBounded: the replay cache holds DPoPReplayCache
// proofs; past it, new proofs are refused (503), never let through with
// an earlier one forgotten; once the window has passed, they are taken
// again.
func TestDPoPReplayCacheBounded(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	g, clock := newGuard(t, as, Options{DPoPReplayCache: 4, Leeway: -1})
	client := rst.MustKey("ES256", "")
	tok := as.keys[0].Sign(boundTo(as, client, nil), nil)
	var first string
	for i := range 2 {
		p := proofFor(client, tok, nil)
		if i == 0 {
			first = p
		}
		if w, _ := serveDPoP(g, http.MethodPost, "/mcp", tok, p); w.Code != 200 {
			t.Fatalf("proof %d: %d", i, w.Code)
		}
	}
	if w, _ := serveDPoP(g, http.MethodPost, "/mcp", tok, proofFor(client, tok, nil)); w.Code != 503 {
		t.Errorf("past the bound: %d, want 503", w.Code)
	}
	if w, _ := serveDPoP(g, http.MethodPost, "/mcp", tok, first); w.Code != 401 {
		t.Errorf("the first proof again: %d, want 401", w.Code)
	}
	clock.add(defaultDPoPWindow)
	if w, _ := serveDPoP(g, http.MethodPost, "/mcp", tok, proofFor(client, tok, map[string]any{"iat": clock.now().Unix()})); w.Code != 200 {
		t.Errorf("a window later: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

// TestMTLSBoundToken: a token bound to a TLS client certificate
// (cnf.x5t#S256) is accepted only over a connection with that certificate
// (RFC 8705 section 3: the resource server MUST verify the binding, and
// refuse the token when they do not match).
func TestMTLSBoundToken(t *testing.T) {
	as := newFakeAS(t, rst.MustKey("ES256", "k1"))
	g, _ := newGuard(t, as, Options{})
	cert, other := selfSigned(t), selfSigned(t)
	sum := sha256.Sum256(cert.Raw)
	tok := as.keys[0].Sign(claimsFor(as, map[string]any{"cnf": map[string]any{"x5t#S256": b64.EncodeToString(sum[:])}}), nil)
	run := func(certs ...*x509.Certificate) int {
		h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		if certs != nil {
			r.TLS = &tls.ConnectionState{PeerCertificates: certs}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if c := run(); c != 401 {
		t.Errorf("no TLS: %d", c)
	}
	if c := run([]*x509.Certificate{}...); c != 401 {
		t.Errorf("TLS without a client certificate: %d", c)
	}
	if c := run(other); c != 401 {
		t.Errorf("another certificate: %d", c)
	}
	if c := run(cert); c != 200 {
		t.Errorf("its certificate: %d", c)
	}
	client := rst.MustKey("ES256", "")
	if w, s := serveDPoP(g, http.MethodPost, "/mcp", tok, proofFor(client, tok, nil)); !dpopRefused(w, s, "invalid_token") {
		t.Errorf("certificate-bound token as DPoP: %d", w.Code)
	}
}

func selfSigned(t *testing.T) *x509.Certificate {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "client"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNormalizeURI: the RFC 3986 section 6.2.2 and 6.2.3 normal form htu
// is compared in.
func TestNormalizeURI(t *testing.T) {
	for in, want := range map[string]string{
		"https://MCP.example.test:443/mcp": "https://mcp.example.test/mcp",
		"HTTP://127.0.0.1:80":              "http://127.0.0.1/",
		"http://[::1]:8080/a/./b/../c?q#f": "http://[::1]:8080/a/c",
		"https://h/%7euser/%2f/%e2%82%ac":  "https://h/~user/%2F/%E2%82%AC",
		"https://h/a/..":                   "https://h/",
		"https://h/../../x":                "https://h/x",
		"https://h:8443":                   "https://h:8443/",
		"https://h/a%2":                    "",
		"ftp://h/x":                        "",
		"https://u@h/x":                    "",
		"/relative":                        "",
		"mailto:x@h":                       "",
	} {
		o, p, ok := normalizeURI(in)
		if got := o + p; (ok && got != want) || (!ok && want != "") {
			t.Errorf("%s: %q %v, want %q", in, got, ok, want)
		}
	}
}
