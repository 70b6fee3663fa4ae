package jose_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/runtime/resourceserver/internal/jose"
	rst "github.com/mcprt/mcprt/test/resourceservertest"
)

var claims = map[string]any{"iss": "https://as.example", "aud": "https://rs.example/mcp", "exp": 4102444800}

func mustSet(t testing.TB, doc []byte) *jose.KeySet {
	t.Helper()
	ks, skipped, err := jose.ParseKeySet(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) > 0 {
		t.Fatalf("skipped: %v", skipped)
	}
	return ks
}

func verify(ks *jose.KeySet, compact string) error {
	tok, err := jose.Parse(compact)
	if err != nil {
		return err
	}
	return ks.Verify(tok)
}

// TestVerifyAlgorithms: a token of each accepted algorithm verifies with
// its key, with or without a kid, and not with a key of another type.
func TestVerifyAlgorithms(t *testing.T) {
	for _, alg := range []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			k := rst.MustKey(alg, "k-"+alg)
			other := rst.MustKey(alg, "other")
			ks := mustSet(t, rst.Set(false, other, k))
			if err := verify(ks, k.Sign(claims, nil)); err != nil {
				t.Errorf("with kid: %v", err)
			}
			if err := verify(ks, k.Sign(claims, map[string]any{"kid": nil})); err != nil {
				t.Errorf("without kid: %v", err)
			}
			if err := verify(ks, other.Sign(claims, map[string]any{"kid": k.KID})); !errors.Is(err, jose.ErrSignature) {
				t.Errorf("another key's signature under this kid: %v, want ErrSignature", err)
			}
			if err := verify(ks, k.Sign(claims, map[string]any{"kid": "gone"})); !errors.Is(err, jose.ErrUnknownKey) {
				t.Errorf("unknown kid: %v, want ErrUnknownKey", err)
			}
		})
	}
}

// TestVerifyAlgorithmPinnedToKey: a key verifies only the algorithms of
// its type (and its own alg, when it names one); an RS256 key does not
// verify PS256, an ES256 key not ES384.
func TestVerifyAlgorithmPinnedToKey(t *testing.T) {
	rsaKey := rst.MustKey("RS256", "r")
	ks := mustSet(t, rst.Set(false, rsaKey))
	psToken := rsaKey.Sign(claims, map[string]any{"alg": "PS256"})
	if err := verify(ks, psToken); !errors.Is(err, jose.ErrKeyMismatch) {
		t.Errorf("PS256 under an RS256 key: %v, want ErrKeyMismatch", err)
	}
	// The same key without its alg member verifies both RSA schemes.
	jwk := rsaKey.PublicJWK()
	delete(jwk, "alg")
	doc, _ := json.Marshal(map[string]any{"keys": []any{jwk}})
	if err := verify(mustSet(t, doc), psToken); err != nil {
		t.Errorf("PS256 under an RSA key with no alg: %v", err)
	}
	ec := rst.MustKey("ES256", "e")
	ks = mustSet(t, rst.Set(false, ec, rsaKey))
	if err := verify(ks, ec.Sign(claims, map[string]any{"alg": "ES384"})); err == nil {
		t.Error("ES384 accepted under a P-256 key")
	}
	if err := verify(ks, ec.Sign(claims, map[string]any{"kid": "r"})); err == nil {
		t.Error("an ES256 token verified under the RSA key's kid")
	}
}

// TestVerifyRefusesNoneAndHMAC: alg none and HMAC are refused whatever
// the secret, the public key's bytes or PEM included, and a symmetric key
// in the set is dropped.
func TestVerifyRefusesNoneAndHMAC(t *testing.T) {
	k := rst.MustKey("RS256", "r")
	oct := map[string]any{"kty": "oct", "kid": "s", "k": base64.RawURLEncoding.EncodeToString([]byte("secret")), "alg": "HS256"}
	doc, _ := json.Marshal(map[string]any{"keys": []any{k.PublicJWK(), oct}})
	ks, skipped, err := jose.ParseKeySet(doc)
	if err != nil || ks.Len() != 1 || len(skipped) != 1 {
		t.Fatalf("set with an oct key: %d keys, skipped %v, %v", ks.Len(), skipped, err)
	}
	bare, withSig := rst.Unsigned(claims, map[string]any{"kid": "r"})
	for name, tok := range map[string]string{
		"none":          bare,
		"none+sig":      withSig,
		"HS256 n":       rst.SignHMAC("HS256", k.PublicKeyBytes(), claims, map[string]any{"kid": "r"}),
		"HS256 pem":     rst.SignHMAC("HS256", k.PublicKeyPEM(), claims, map[string]any{"kid": "r"}),
		"HS512 pem":     rst.SignHMAC("HS512", k.PublicKeyPEM(), claims, nil),
		"HS256 oct":     rst.SignHMAC("HS256", []byte("secret"), claims, map[string]any{"kid": "s"}),
		"lowercase alg": k.Sign(claims, map[string]any{"alg": "rs256"}),
	} {
		if err := verify(ks, tok); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestParseMalformed: what is not a compact JWS of two JSON objects and a
// signature, in strict base64url, is refused before any key is tried.
func TestParseMalformed(t *testing.T) {
	k := rst.MustKey("ES256", "e")
	good := k.Sign(claims, nil)
	parts := strings.Split(good, ".")
	enc := base64.RawURLEncoding.EncodeToString
	for name, tok := range map[string]string{
		"empty":          "",
		"two parts":      parts[0] + "." + parts[1],
		"four parts":     good + ".x",
		"padded":         parts[0] + "=." + parts[1] + "." + parts[2],
		"std alphabet":   strings.NewReplacer("-", "+", "_", "/").Replace(parts[0]) + "+." + parts[1] + "." + parts[2],
		"empty sig":      parts[0] + "." + parts[1] + ".",
		"array header":   enc([]byte(`["ES256"]`)) + "." + parts[1] + "." + parts[2],
		"no alg":         enc([]byte(`{"kid":"e"}`)) + "." + parts[1] + "." + parts[2],
		"string payload": parts[0] + "." + enc([]byte(`"x"`)) + "." + parts[2],
		"trailing data":  parts[0] + "." + enc([]byte(`{"a":1} x`)) + "." + parts[2],
		"alg number":     enc([]byte(`{"alg":1}`)) + "." + parts[1] + "." + parts[2],
		"huge":           strings.Repeat("a", jose.MaxTokenBytes) + ".a.a",
	} {
		if _, err := jose.Parse(tok); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	// Non-canonical trailing bits in the signature: the same bytes, another
	// spelling; strict decoding refuses it.
	sig := []byte(parts[2])
	last := sig[len(sig)-1]
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") {
		if c == last {
			continue
		}
		sig[len(sig)-1] = c
		alt := parts[0] + "." + parts[1] + "." + string(sig)
		if verify(mustSet(t, rst.Set(false, k)), alt) == nil {
			t.Errorf("signature spelled %q verified", sig[len(sig)-4:])
		}
	}
	tok, err := jose.Parse(k.Sign(claims, map[string]any{"crit": []string{"b64"}, "b64": false}))
	if err != nil {
		t.Fatal(err)
	}
	if err := mustSet(t, rst.Set(false, k)).Verify(tok); !errors.Is(err, jose.ErrCritical) {
		t.Errorf("crit: %v, want ErrCritical", err)
	}
}

// TestParseKeySetSkips: keys that cannot verify here are skipped with a
// reason, not fatal; a document that is not a set is an error.
func TestParseKeySetSkips(t *testing.T) {
	rsa := rst.MustKey("RS256", "r").PublicJWK()
	priv := rst.MustKey("ES256", "p").PrivateJWK()
	enc := rst.MustKey("RS256", "enc").PublicJWK()
	enc["use"] = "enc"
	small := map[string]any{"kty": "RSA", "kid": "small", "n": base64.RawURLEncoding.EncodeToString(make([]byte, 128)), "e": "AQAB"}
	offCurve := rst.MustKey("ES256", "off").PublicJWK()
	offCurve["y"] = offCurve["x"]
	wrongAlg := rst.MustKey("ES256", "wa").PublicJWK()
	wrongAlg["alg"] = "RS256"
	dup := rst.MustKey("EdDSA", "r").PublicJWK()
	doc, _ := json.Marshal(map[string]any{"keys": []any{rsa, priv, enc, small, offCurve, wrongAlg, dup, "junk"}})
	ks, skipped, err := jose.ParseKeySet(doc)
	if err != nil {
		t.Fatal(err)
	}
	if ks.Len() != 1 || ks.KIDs()[0] != "r" || len(skipped) != 7 {
		t.Errorf("kept %v, skipped %d: %v", ks.KIDs(), len(skipped), skipped)
	}
	for _, bad := range []string{``, `[]`, `{}`, `{"keys":{}}`, `{"keys":"x"}`, `null`} {
		if _, _, err := jose.ParseKeySet([]byte(bad)); err == nil {
			t.Errorf("%q: parsed as a key set", bad)
		}
	}
}
