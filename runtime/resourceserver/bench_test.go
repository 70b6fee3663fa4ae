package resourceserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	rst "github.com/mcprt/mcprt/test/resourceservertest"
)

// BenchmarkWrap: what the guard adds to a request whose token it has
// verified before (the cache hit every request after a client's first
// takes), against the bare handler; the headers are a Streamable HTTP
// client's.
func BenchmarkWrap(b *testing.B) {
	k := rst.MustKey("ES256", "k1")
	as := newFakeAS(b, k)
	g, err := New(b.Context(), Options{Issuer: as.URL, Resource: testResource, Scopes: []string{"mcp:tools"}, Logger: discard})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(g.Close)
	tok := k.Sign(claimsFor(as, nil), nil)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
	for k, v := range map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2025-11-25", "Mcp-Session-Id": "0123456789abcdef0123456789abcdef",
		"User-Agent": "mcprt-client", "Accept-Encoding": "gzip", "Content-Length": "120",
	} {
		req.Header.Set(k, v)
	}
	for _, bc := range []struct {
		name  string
		h     http.Handler
		token bool
	}{{"bare", next, false}, {"guarded", g.Wrap(next), true}} {
		b.Run(bc.name, func(b *testing.B) {
			r := req.Clone(req.Context())
			auth := []string{"Bearer " + tok}
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				if bc.token {
					r.Header["Authorization"] = auth // the guard takes it off
				}
				bc.h.ServeHTTP(w, r)
			}
		})
	}
}

// BenchmarkDPoPProof: what a DPoP-bound request costs besides a bearer
// one: parsing a proof and verifying its ES256 signature with the key it
// carries (a proof is new on every request, so none of it is cached).
func BenchmarkDPoPProof(b *testing.B) {
	k := rst.MustKey("ES256", "k1")
	as := newFakeAS(b, k)
	g, err := New(b.Context(), Options{Issuer: as.URL, Resource: testResource, Logger: discard})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(g.Close)
	client := rst.MustKey("ES256", "")
	p := proofFor(client, "token", nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.verifyProof(p); err != nil {
			b.Fatal(err)
		}
	}
}
