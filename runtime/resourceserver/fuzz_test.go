package resourceserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	rst "github.com/mcprt/mcprt/test/resourceservertest"
)

// FuzzAuthenticate: no token panics the guard, and none is accepted but
// the valid ones the issuer's keys signed.
func FuzzAuthenticate(f *testing.F) {
	k := rst.MustKey("ES256", "k1")
	r := rst.MustKey("RS256", "k2")
	as := newFakeAS(f, k, r)
	g, err := New(context.Background(), Options{Issuer: as.URL, Resource: testResource, Logger: discard, KeyRefetch: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(g.Close)
	valid := map[string]bool{}
	for _, key := range []*rst.Key{k, r} {
		tok := key.Sign(claimsFor(as, nil), nil)
		valid[tok] = true
		f.Add(tok)
		f.Add(key.Sign(claimsFor(as, map[string]any{"aud": nil}), nil))
		f.Add(key.Sign(claimsFor(as, map[string]any{"exp": 1}), nil))
		f.Add(rst.SignHMAC("HS256", key.PublicKeyPEM(), claimsFor(as, nil), map[string]any{"kid": key.KID}))
	}
	bare, _ := rst.Unsigned(claimsFor(as, nil), nil)
	f.Add(bare)
	f.Add("opaque")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := g.bearerCaller(context.Background(), tok)
		if err == nil && !valid[tok] {
			t.Fatalf("accepted %q as %+v", tok, c)
		}
		if err == nil && c == nil {
			t.Fatal("no error and no caller")
		}
	})
}

// FuzzASMetadata: no document panics ParseASMetadata, and one it accepts
// names the issuer asked for and only URLs this side may fetch.
func FuzzASMetadata(f *testing.F) {
	const iss = "https://auth.example.com"
	f.Add([]byte(`{"issuer":"https://auth.example.com","jwks_uri":"https://auth.example.com/jwks"}`))
	f.Add([]byte(`{"issuer":"https://auth.example.com","jwks_uri":"http://evil.example/jwks"}`))
	f.Add([]byte(`{"issuer":"https://other.example","introspection_endpoint":"https://auth.example.com/i"}`))
	f.Add([]byte(`{"issuer":1}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		m, err := parseASMetadata(doc, iss)
		if err != nil {
			return
		}
		if m.Issuer != iss {
			t.Fatalf("issuer %q", m.Issuer)
		}
		for _, u := range []string{m.JWKSURI, m.IntrospectionEndpoint} {
			if u == "" {
				continue
			}
			if _, err := checkURL("u", u, true); err != nil {
				t.Fatalf("kept %q: %v", u, err)
			}
		}
	})
}

// FuzzBearerHeader: whatever the Authorization header, only a Bearer
// header yields a token, and the guard accepts only a token of a bearer
// token's syntax.
func FuzzBearerHeader(f *testing.F) {
	as := newFakeAS(f, rst.MustKey("ES256", "k1"))
	g, err := New(context.Background(), Options{Issuer: as.URL, Resource: testResource, Logger: discard})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(g.Close)
	for _, s := range []string{"Bearer abc", "bearer a.b.c", "Bearer  x==", "Basic YTpi", "Bearer =x", "Bearer a b", "Bearer"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header["Authorization"] = []string{v}
		tok, scheme, status := authorization(r)
		bearer := len(v) >= 7 && equalFoldASCII(v[:6], "bearer") && scheme == schemeBearer
		dpop := len(v) >= 5 && equalFoldASCII(v[:4], "dpop") && scheme == schemeDPoP
		if tok != "" && (status != http.StatusOK || !(bearer || dpop) || tok[0] == ' ') {
			t.Fatalf("%q gave token %q, status %d", v, tok, status)
		}
		if tok != "" && !token68(tok) {
			if _, err := g.bearerCaller(context.Background(), tok); err == nil {
				t.Fatalf("%q: accepted a token that is not token68", tok)
			}
		}
	})
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i]|0x20, b[i]|0x20
		if x != y {
			return false
		}
	}
	return true
}

// FuzzDPoPProof: no DPoP header panics the proof checks, and none is
// accepted but the valid proofs the client's key made for this request
// and token, each once (RFC 9449 section 4.3, section 11.1).
func FuzzDPoPProof(f *testing.F) {
	k := rst.MustKey("ES256", "k1")
	as := newFakeAS(f, k)
	g, err := New(context.Background(), Options{Issuer: as.URL, Resource: testResource, Logger: discard})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(g.Close)
	client := rst.MustKey("ES256", "")
	rsaClient := rst.MustKey("RS256", "")
	tok := k.Sign(boundTo(as, client, nil), nil)
	valid := map[string]bool{}
	for _, p := range []string{proofFor(client, tok, nil), proofFor(client, tok, map[string]any{"htu": testResource + "?q"})} {
		valid[p] = true
		f.Add(p)
	}
	f.Add(proofFor(client, tok, map[string]any{"htm": "GET"}))
	f.Add(proofFor(client, tok, map[string]any{"ath": nil}))
	f.Add(proofFor(rsaClient, tok, nil))
	f.Add(client.Proof(map[string]any{"jti": "x"}, map[string]any{"jwk": map[string]any{"kty": "oct", "k": "aw"}}))
	f.Add(rst.SignHMAC("HS256", []byte("x"), map[string]any{"jti": "x"}, map[string]any{"typ": "dpop+jwt"}))
	bare, _ := rst.Unsigned(map[string]any{"jti": "x"}, map[string]any{"typ": "dpop+jwt", "jwk": client.ProofJWK()})
	f.Add(bare)
	f.Add("e30.e30.e30")
	seen := map[string]bool{}
	f.Fuzz(func(t *testing.T, p string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("DPoP", p)
		_, err := g.checkProof(r, tok, client.Thumbprint(), time.Now())
		if err == nil && (!valid[p] || seen[p]) {
			t.Fatalf("accepted %q (seen before: %v)", p, seen[p])
		}
		if err == nil {
			seen[p] = true
		}
	})
}
