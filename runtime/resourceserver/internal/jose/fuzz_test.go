package jose_test

import (
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt/runtime/resourceserver/internal/jose"
	rst "github.com/mcprt/mcprt/test/resourceservertest"
)

// FuzzVerify: no input panics Parse or Verify, and none verifies but the
// tokens the set's keys signed: a mutation of a token (its header, claims,
// signature or spelling) is never accepted.
func FuzzVerify(f *testing.F) {
	var keys []*rst.Key
	for _, alg := range []string{"RS256", "PS256", "ES256", "ES384", "EdDSA"} {
		keys = append(keys, rst.MustKey(alg, "k-"+alg))
	}
	ks, _, err := jose.ParseKeySet(rst.Set(false, keys...))
	if err != nil {
		f.Fatal(err)
	}
	valid := map[string]bool{}
	for _, k := range keys {
		for _, tok := range []string{k.Sign(claims, nil), k.Sign(claims, map[string]any{"kid": nil})} {
			valid[tok] = true
			f.Add(tok)
		}
		f.Add(rst.SignHMAC("HS256", k.PublicKeyPEM(), claims, map[string]any{"kid": k.KID}))
	}
	bare, withSig := rst.Unsigned(claims, nil)
	f.Add(bare)
	f.Add(withSig)
	f.Add("..")
	f.Add("e30.e30.e30")
	f.Fuzz(func(t *testing.T, tok string) {
		parsed, err := jose.Parse(tok)
		if err != nil {
			return
		}
		if !json.Valid(parsed.Payload) || parsed.Header.Alg == "" {
			t.Fatalf("parsed a token without a JSON payload or an alg: %q", tok)
		}
		if ks.Verify(parsed) == nil && !valid[tok] {
			t.Fatalf("verified a token no key signed as is: %q", tok)
		}
	})
}

// FuzzParseKeySet: no document panics ParseKeySet, every key it keeps can
// be used to verify (without panicking), and its bounds hold.
func FuzzParseKeySet(f *testing.F) {
	for _, alg := range []string{"RS256", "ES256", "ES512", "EdDSA"} {
		f.Add(rst.Set(false, rst.MustKey(alg, alg)))
	}
	f.Add([]byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"},{"kty":"EC","crv":"P-256","x":"","y":""}]}`))
	f.Add([]byte(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`))
	f.Add([]byte(`{"keys":null}`))
	tok, _ := jose.Parse(rst.MustKey("ES256", "x").Sign(claims, map[string]any{"kid": nil}))
	f.Fuzz(func(t *testing.T, doc []byte) {
		ks, _, err := jose.ParseKeySet(doc)
		if err != nil {
			return
		}
		if ks.Len() > jose.MaxKeys {
			t.Fatalf("%d keys", ks.Len())
		}
		// tok's key is made afresh each run: no document has it.
		if ks.Verify(tok) == nil {
			t.Fatalf("a set of other keys verified the token: %s", doc)
		}
	})
}
