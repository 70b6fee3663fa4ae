// Package jose verifies compact JWS tokens (RFC 7515) against public JSON
// Web Keys (RFC 7517), for a resource server that checks the JWT access
// tokens of an authorization server. It verifies only: it never signs,
// never decrypts, and knows only asymmetric keys.
//
// The algorithm is pinned to the key: a token is checked only against a
// key of the type its alg names (RS*/PS* an RSA key of 2048 bits or more,
// ES256/384/512 an EC key on P-256/384/521, EdDSA an Ed25519 key), and a
// key that names an alg of its own verifies only that one. "none" and the
// HMAC algorithms are refused outright, and symmetric keys in a set are
// dropped, so a public key can never be used as an HMAC secret. Header
// parameters that would name a key from the token itself (jwk, jku, x5u,
// x5c) are ignored by KeySet.Verify, and a token with crit parameters is
// refused. The one use of a token's own key is ProofKey's, for DPoP
// proofs, whose point is to be signed by the key they carry; it is never
// fetched (jku, x5u), only read from the header's jwk.
package jose

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// MaxTokenBytes bounds the compact form Parse accepts. Access tokens are
// a few kilobytes at most; the bound keeps a hostile one from costing more.
const MaxTokenBytes = 16 << 10

// Errors Verify returns (wrapped), so that a caller can tell a key it
// does not have yet (worth refetching the set once) from a bad token.
var (
	ErrMalformed    = errors.New("malformed token")
	ErrAlgorithm    = errors.New("algorithm not accepted")
	ErrUnknownKey   = errors.New("no key with the token's kid")
	ErrSignature    = errors.New("signature does not verify")
	ErrKeyMismatch  = errors.New("no key of the token's algorithm")
	ErrCritical     = errors.New("critical header parameter not understood")
	ErrPayloadShape = errors.New("payload is not a JSON object")
)

// b64 is base64url without padding, strict: a non-canonical encoding (stray
// trailing bits, padding, line breaks) is malformed, so one token has one
// spelling.
var b64 = base64.RawURLEncoding.Strict()

// Header is the protected header of a token, the parameters a verifier
// reads.
type Header struct {
	Alg  string   `json:"alg"`
	Kid  string   `json:"kid,omitempty"`
	Typ  string   `json:"typ,omitempty"`
	Crit []string `json:"crit,omitempty"`
	// JWK is the public key a DPoP proof carries (RFC 9449 section 4.2),
	// as sent. KeySet.Verify never looks at it: an access token is only
	// ever checked against the issuer's keys. ProofKey reads it.
	JWK json.RawMessage `json:"jwk,omitempty"`
}

// Token is a parsed, not yet verified, compact JWS.
type Token struct {
	Header  Header
	Payload []byte // decoded; a JSON object

	signed    []byte // the signing input: the first two segments, as sent
	signature []byte
}

// Parse splits and decodes a compact JWS without verifying it. The header
// must be a JSON object with an alg; the payload must be a JSON object
// (a JWT's claims set).
func Parse(compact string) (*Token, error) {
	if len(compact) > MaxTokenBytes {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, MaxTokenBytes)
	}
	first := strings.IndexByte(compact, '.')
	last := strings.LastIndexByte(compact, '.')
	if first <= 0 || last == first || strings.Count(compact, ".") != 2 {
		return nil, fmt.Errorf("%w: not three dot-separated parts", ErrMalformed)
	}
	hdr, err := b64.DecodeString(compact[:first])
	if err != nil {
		return nil, fmt.Errorf("%w: header is not base64url", ErrMalformed)
	}
	payload, err := b64.DecodeString(compact[first+1 : last])
	if err != nil || len(payload) == 0 {
		return nil, fmt.Errorf("%w: payload is not base64url", ErrMalformed)
	}
	sig, err := b64.DecodeString(compact[last+1:])
	if err != nil || len(sig) == 0 {
		return nil, fmt.Errorf("%w: signature is not base64url", ErrMalformed)
	}
	t := &Token{Payload: payload, signed: []byte(compact[:last]), signature: sig}
	if err := decodeObject(hdr, &t.Header); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrMalformed, err)
	}
	if t.Header.Alg == "" {
		return nil, fmt.Errorf("%w: header has no alg", ErrMalformed)
	}
	if !isObject(payload) {
		return nil, ErrPayloadShape
	}
	return t, nil
}

// decodeObject decodes a JSON object, refusing anything else (arrays,
// strings, trailing data).
func decodeObject(data []byte, v any) error {
	if !isObject(data) {
		return errors.New("not a JSON object")
	}
	return json.Unmarshal(data, v)
}

func isObject(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '{' && json.Valid(data)
}

// algorithm is what one alg value needs of a key and how it verifies.
type algorithm struct {
	kty   string // RSA, EC, OKP
	curve string // EC and OKP keys: the crv the key must have
	hash  crypto.Hash
	pss   bool
}

// algorithms are the ones accepted: asymmetric signatures only. Anything
// else, "none" and HS256/384/512 included, is ErrAlgorithm.
var algorithms = map[string]algorithm{
	"RS256":   {kty: "RSA", hash: crypto.SHA256},
	"RS384":   {kty: "RSA", hash: crypto.SHA384},
	"RS512":   {kty: "RSA", hash: crypto.SHA512},
	"PS256":   {kty: "RSA", hash: crypto.SHA256, pss: true},
	"PS384":   {kty: "RSA", hash: crypto.SHA384, pss: true},
	"PS512":   {kty: "RSA", hash: crypto.SHA512, pss: true},
	"ES256":   {kty: "EC", curve: "P-256", hash: crypto.SHA256},
	"ES384":   {kty: "EC", curve: "P-384", hash: crypto.SHA384},
	"ES512":   {kty: "EC", curve: "P-521", hash: crypto.SHA512},
	"EdDSA":   {kty: "OKP", curve: "Ed25519"},
	"Ed25519": {kty: "OKP", curve: "Ed25519"}, // RFC 9864's fully specified name
}

// Algorithms lists the alg values Verify accepts, for metadata documents.
func Algorithms() []string {
	return []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"}
}

// Verify checks the token's signature with the set: the key named by its
// kid, or, without a kid, every key of its algorithm until one verifies.
// ErrUnknownKey means the set has no key with that kid (a rotated key: the
// set is worth fetching again).
func (ks *KeySet) Verify(t *Token) error {
	alg, ok := algorithms[t.Header.Alg]
	if !ok {
		return fmt.Errorf("%w: %q", ErrAlgorithm, t.Header.Alg)
	}
	if len(t.Header.Crit) > 0 {
		return ErrCritical
	}
	if t.Header.Kid != "" {
		k := ks.byKID(t.Header.Kid)
		if k == nil {
			return ErrUnknownKey
		}
		if !k.fits(t.Header.Alg, alg) {
			return fmt.Errorf("%w: key %q is not for %s", ErrKeyMismatch, k.KID, t.Header.Alg)
		}
		return k.verify(alg, t.signed, t.signature)
	}
	tried := false
	for i := range ks.keys {
		k := &ks.keys[i]
		if !k.fits(t.Header.Alg, alg) {
			continue
		}
		tried = true
		if k.verify(alg, t.signed, t.signature) == nil {
			return nil
		}
	}
	if !tried {
		return fmt.Errorf("%w: %s", ErrKeyMismatch, t.Header.Alg)
	}
	return ErrSignature
}

// fits: the key may verify algName.
func (k *Key) fits(algName string, alg algorithm) bool {
	if k.kty != alg.kty || (alg.curve != "" && k.crv != alg.curve) {
		return false
	}
	if k.Alg != "" && k.Alg != algName && !(isEdDSA(k.Alg) && isEdDSA(algName)) {
		return false
	}
	return true
}

func isEdDSA(alg string) bool { return alg == "EdDSA" || alg == "Ed25519" }

func (k *Key) verify(alg algorithm, signed, sig []byte) error {
	switch pub := k.pub.(type) {
	case *rsa.PublicKey:
		digest := hashOf(alg.hash, signed)
		var err error
		if alg.pss {
			err = rsa.VerifyPSS(pub, alg.hash, digest, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		} else {
			err = rsa.VerifyPKCS1v15(pub, alg.hash, digest, sig)
		}
		if err != nil {
			return ErrSignature
		}
		return nil
	case *ecdsa.PublicKey:
		// JWS puts R and S side by side, each the curve's size (RFC 7518
		// section 3.4), not in ASN.1.
		size := (pub.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*size {
			return ErrSignature
		}
		r := new(big.Int).SetBytes(sig[:size])
		s := new(big.Int).SetBytes(sig[size:])
		if !ecdsa.Verify(pub, hashOf(alg.hash, signed), r, s) {
			return ErrSignature
		}
		return nil
	case ed25519.PublicKey:
		if len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, signed, sig) {
			return ErrSignature
		}
		return nil
	}
	return ErrKeyMismatch
}

func hashOf(h crypto.Hash, data []byte) []byte {
	switch h {
	case crypto.SHA256:
		d := sha256.Sum256(data)
		return d[:]
	case crypto.SHA384:
		d := sha512.Sum384(data)
		return d[:]
	default:
		d := sha512.Sum512(data)
		return d[:]
	}
}
