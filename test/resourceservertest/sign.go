// Package resourceservertest makes signing keys and signs JWTs, for tests
// of a resource server: the keys an authorization server under test is
// given (as a private JWK Set), and tokens it would never issue (expired,
// for another audience, re-signed, alg none, HMAC with a public key), so a
// test can show they are refused. It is for tests only: keys are made
// with crypto/rand but never protected.
package resourceservertest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
)

var b64 = base64.RawURLEncoding

// Key is a signing key and the alg it signs with.
type Key struct {
	KID string
	Alg string // RS256, PS256, ES256, ES384, EdDSA, …

	priv crypto.Signer
}

// NewKey makes a key for alg (RS*/PS*: RSA 2048; ES256/384/512: the
// matching curve; EdDSA: Ed25519).
func NewKey(alg, kid string) (*Key, error) {
	var priv crypto.Signer
	var err error
	switch alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ES384":
		priv, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ES512":
		priv, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "EdDSA":
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, fmt.Errorf("resourceservertest: alg %q", alg)
	}
	if err != nil {
		return nil, err
	}
	return &Key{KID: kid, Alg: alg, priv: priv}, nil
}

// MustKey is NewKey that panics on an error.
func MustKey(alg, kid string) *Key {
	k, err := NewKey(alg, kid)
	if err != nil {
		panic(err)
	}
	return k
}

// PublicJWK is the key's public JWK (with kid, alg and use "sig").
func (k *Key) PublicJWK() map[string]any {
	m := map[string]any{"kid": k.KID, "alg": k.Alg, "use": "sig"}
	switch p := k.priv.(type) {
	case *rsa.PrivateKey:
		m["kty"] = "RSA"
		m["n"] = b64.EncodeToString(p.N.Bytes())
		m["e"] = b64.EncodeToString(big.NewInt(int64(p.E)).Bytes())
	case *ecdsa.PrivateKey:
		pub, _ := p.PublicKey.Bytes() // 04 || X || Y
		size := (len(pub) - 1) / 2
		m["kty"] = "EC"
		m["crv"] = p.Curve.Params().Name
		m["x"] = b64.EncodeToString(pub[1 : 1+size])
		m["y"] = b64.EncodeToString(pub[1+size:])
	case ed25519.PrivateKey:
		m["kty"] = "OKP"
		m["crv"] = "Ed25519"
		m["x"] = b64.EncodeToString(p.Public().(ed25519.PublicKey))
	}
	return m
}

// PrivateJWK is the key's JWK with its private members, the form an
// authorization server is configured with.
func (k *Key) PrivateJWK() map[string]any {
	m := k.PublicJWK()
	switch p := k.priv.(type) {
	case *rsa.PrivateKey:
		p.Precompute()
		m["d"] = b64.EncodeToString(p.D.Bytes())
		m["p"] = b64.EncodeToString(p.Primes[0].Bytes())
		m["q"] = b64.EncodeToString(p.Primes[1].Bytes())
		m["dp"] = b64.EncodeToString(p.Precomputed.Dp.Bytes())
		m["dq"] = b64.EncodeToString(p.Precomputed.Dq.Bytes())
		m["qi"] = b64.EncodeToString(p.Precomputed.Qinv.Bytes())
	case *ecdsa.PrivateKey:
		d, _ := p.Bytes()
		m["d"] = b64.EncodeToString(d)
	case ed25519.PrivateKey:
		m["d"] = b64.EncodeToString(p.Seed())
	}
	return m
}

// PublicKeyBytes is the key's public key as the bytes of its JWK "n"
// (RSA), its uncompressed point (EC) or "x" (OKP): one thing an attacker
// would try as an HMAC secret (PublicKeyPEM is the other).
func (k *Key) PublicKeyBytes() []byte {
	switch p := k.priv.(type) {
	case *rsa.PrivateKey:
		return p.N.Bytes()
	case *ecdsa.PrivateKey:
		b, _ := p.PublicKey.Bytes()
		return b
	case ed25519.PrivateKey:
		return p.Public().(ed25519.PublicKey)
	}
	return nil
}

// PublicKeyPEM is the key's public key in PEM (SubjectPublicKeyInfo), the
// classic secret of an HMAC-confusion forgery.
func (k *Key) PublicKeyPEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(k.priv.Public())
	must(err)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// Set is a JWK Set document of the keys' public (or, with private,
// private) forms.
func Set(private bool, keys ...*Key) []byte {
	var out []map[string]any
	for _, k := range keys {
		if private {
			out = append(out, k.PrivateJWK())
		} else {
			out = append(out, k.PublicJWK())
		}
	}
	b, _ := json.Marshal(map[string]any{"keys": out})
	return b
}

// Sign returns the compact JWS of claims, signed by k, with the header
// {"alg": k.Alg, "kid": k.KID, "typ": "at+jwt"} and the members of extra
// (a nil value removes one).
func (k *Key) Sign(claims map[string]any, extra map[string]any) string {
	h := map[string]any{"alg": k.Alg, "kid": k.KID, "typ": "at+jwt"}
	for n, v := range extra {
		if v == nil {
			delete(h, n)
		} else {
			h[n] = v
		}
	}
	input := encode(h) + "." + encode(claims)
	return input + "." + b64.EncodeToString(k.signature(h["alg"].(string), []byte(input)))
}

func (k *Key) signature(alg string, input []byte) []byte {
	hash := crypto.SHA256
	switch alg {
	case "RS384", "PS384", "ES384":
		hash = crypto.SHA384
	case "RS512", "PS512", "ES512":
		hash = crypto.SHA512
	}
	digest := func() []byte {
		switch hash {
		case crypto.SHA384:
			d := sha512.Sum384(input)
			return d[:]
		case crypto.SHA512:
			d := sha512.Sum512(input)
			return d[:]
		}
		d := sha256.Sum256(input)
		return d[:]
	}
	switch p := k.priv.(type) {
	case *rsa.PrivateKey:
		if alg[0] == 'P' {
			s, err := rsa.SignPSS(rand.Reader, p, hash, digest(), &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
			must(err)
			return s
		}
		s, err := rsa.SignPKCS1v15(rand.Reader, p, hash, digest())
		must(err)
		return s
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, p, digest())
		must(err)
		size := (p.Curve.Params().BitSize + 7) / 8
		out := make([]byte, 2*size)
		r.FillBytes(out[:size])
		s.FillBytes(out[size:])
		return out
	case ed25519.PrivateKey:
		return ed25519.Sign(p, input)
	}
	panic("resourceservertest: unknown key type")
}

// ProofJWK is the key's public JWK with only the members that make the
// key (kty, crv, x, y, n, e): what a DPoP proof's header carries.
func (k *Key) ProofJWK() map[string]any {
	m := k.PublicJWK()
	delete(m, "kid")
	delete(m, "alg")
	delete(m, "use")
	return m
}

// Thumbprint is the key's JWK SHA-256 thumbprint (RFC 7638), base64url:
// the cnf.jkt of a token bound to it. It is computed here from the
// RFC's member lists, independently of the package under test.
func (k *Key) Thumbprint() string {
	j := k.ProofJWK()
	var names []string
	switch j["kty"] {
	case "RSA":
		names = []string{"e", "kty", "n"}
	case "EC":
		names = []string{"crv", "kty", "x", "y"}
	default:
		names = []string{"crv", "kty", "x"}
	}
	doc := "{"
	for i, n := range names {
		if i > 0 {
			doc += ","
		}
		doc += fmt.Sprintf("%q:%q", n, j[n])
	}
	sum := sha256.Sum256([]byte(doc + "}"))
	return b64.EncodeToString(sum[:])
}

// Proof returns a DPoP proof (RFC 9449 section 4.2) of claims, signed by
// k, with the header {"typ": "dpop+jwt", "alg": k.Alg, "jwk": k.ProofJWK()}
// and the members of extra (a nil value removes one).
func (k *Key) Proof(claims map[string]any, extra map[string]any) string {
	h := map[string]any{"typ": "dpop+jwt", "alg": k.Alg, "jwk": k.ProofJWK()}
	for n, v := range extra {
		if v == nil {
			delete(h, n)
		} else {
			h[n] = v
		}
	}
	input := encode(h) + "." + encode(claims)
	return input + "." + b64.EncodeToString(k.signature(h["alg"].(string), []byte(input)))
}

// ATH is the ath claim of a proof presented with token: its SHA-256,
// base64url.
func ATH(token string) string {
	sum := sha256.Sum256([]byte(token))
	return b64.EncodeToString(sum[:])
}

// SignHMAC returns claims signed with HMAC (alg HS256, HS384 or HS512)
// under secret, with header members as for Sign (a kid among them).
func SignHMAC(alg string, secret []byte, claims map[string]any, header map[string]any) string {
	h := map[string]any{"alg": alg, "typ": "at+jwt"}
	for n, v := range header {
		h[n] = v
	}
	input := encode(h) + "." + encode(claims)
	newHash := sha256.New
	switch alg {
	case "HS384":
		newHash = sha512.New384
	case "HS512":
		newHash = sha512.New
	}
	mac := hmac.New(newHash, secret)
	mac.Write([]byte(input))
	return input + "." + b64.EncodeToString(mac.Sum(nil))
}

// Unsigned returns claims with alg "none" and an empty signature, and, in
// withSig, the same with a junk signature appended.
func Unsigned(claims map[string]any, header map[string]any) (bare, withSig string) {
	h := map[string]any{"alg": "none", "typ": "at+jwt"}
	for n, v := range header {
		h[n] = v
	}
	input := encode(h) + "." + encode(claims)
	return input + ".", input + "." + b64.EncodeToString([]byte("junk"))
}

// Segment is v's JSON in base64url: a token's header or claims segment,
// for splicing a tampered token together.
func Segment(v any) string { return encode(v) }

func encode(v any) string {
	b, err := json.Marshal(v)
	must(err)
	return b64.EncodeToString(b)
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}
