package jose

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
)

// Bounds on a key set: an authorization server publishes a handful of
// keys; these keep a hostile or broken one from costing more.
const (
	MaxKeys       = 100
	MinRSABits    = 2048
	maxRSABits    = 16384
	maxRSAExpBits = 32
)

// Key is one public verification key of a set.
type Key struct {
	KID string // kid, may be empty
	Alg string // alg the key is restricted to, may be empty

	kty, crv   string
	pub        crypto.PublicKey
	thumbprint string // RFC 7638, for ProofKey's keys
}

// KeySet is a parsed JWK Set: its usable signature keys, in order.
type KeySet struct {
	keys []Key
}

// Len is the number of usable keys.
func (ks *KeySet) Len() int { return len(ks.keys) }

// KIDs lists the keys' kid values (empty ones included), in order.
func (ks *KeySet) KIDs() []string {
	out := make([]string, len(ks.keys))
	for i, k := range ks.keys {
		out[i] = k.KID
	}
	return out
}

func (ks *KeySet) byKID(kid string) *Key {
	for i := range ks.keys {
		if ks.keys[i].KID == kid {
			return &ks.keys[i]
		}
	}
	return nil
}

// jwk is a key's JSON form, the members read.
type jwk struct {
	Kty    string   `json:"kty"`
	Kid    string   `json:"kid"`
	Use    string   `json:"use"`
	Alg    string   `json:"alg"`
	KeyOps []string `json:"key_ops"`
	Crv    string   `json:"crv"`
	N      string   `json:"n"`
	E      string   `json:"e"`
	X      string   `json:"x"`
	Y      string   `json:"y"`
	D      string   `json:"d"`
}

// ParseKeySet parses a JWK Set document ({"keys":[…]}). Keys that cannot
// verify a signature here are skipped, not errors: symmetric (oct) keys,
// encryption keys (use "enc", or key_ops without "verify"), keys of other
// types or curves, RSA keys under MinRSABits, and malformed keys. A key
// carrying private members is skipped too: a set published with them is
// a mistake this side will not build on. skipped says why each was left
// out (for a log line); the error is for a document that is not a key set.
func ParseKeySet(data []byte) (ks *KeySet, skipped []string, err error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := decodeObject(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("jwks: %v", err)
	}
	if doc.Keys == nil {
		return nil, nil, errors.New("jwks: no keys member")
	}
	if len(doc.Keys) > MaxKeys {
		return nil, nil, fmt.Errorf("jwks: %d keys, more than %d", len(doc.Keys), MaxKeys)
	}
	ks = &KeySet{}
	for i, raw := range doc.Keys {
		var j jwk
		if err := decodeObject(raw, &j); err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d: %v", i, err))
			continue
		}
		k, err := j.key()
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d (kid %q): %v", i, j.Kid, err))
			continue
		}
		if k.KID != "" && ks.byKID(k.KID) != nil {
			// Two keys under one kid would make the choice the set's
			// order; the first one stands.
			skipped = append(skipped, fmt.Sprintf("key %d: kid %q repeated", i, k.KID))
			continue
		}
		ks.keys = append(ks.keys, k)
	}
	return ks, skipped, nil
}

func (j *jwk) key() (Key, error) {
	if j.Use != "" && j.Use != "sig" {
		return Key{}, fmt.Errorf("use %q", j.Use)
	}
	if j.KeyOps != nil && !slices.Contains(j.KeyOps, "verify") {
		return Key{}, errors.New("key_ops without verify")
	}
	if j.D != "" {
		return Key{}, errors.New("private key material published")
	}
	if j.Alg != "" {
		a, ok := algorithms[j.Alg]
		if !ok {
			return Key{}, fmt.Errorf("alg %q not accepted", j.Alg)
		}
		if a.kty != j.Kty {
			return Key{}, fmt.Errorf("alg %s on a %s key", j.Alg, j.Kty)
		}
	}
	k := Key{KID: j.Kid, Alg: j.Alg, kty: j.Kty, crv: j.Crv}
	switch j.Kty {
	case "RSA":
		n, err := b64.DecodeString(j.N)
		if err != nil || len(n) == 0 || n[0] == 0 {
			return Key{}, errors.New("bad n")
		}
		e, err := b64.DecodeString(j.E)
		if err != nil || len(e) == 0 || e[0] == 0 || len(e)*8 > maxRSAExpBits {
			return Key{}, errors.New("bad e")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if bits := pub.N.BitLen(); bits < MinRSABits || bits > maxRSABits {
			return Key{}, fmt.Errorf("RSA modulus of %d bits", bits)
		}
		if pub.E < 3 || pub.E%2 == 0 {
			return Key{}, errors.New("bad e")
		}
		k.pub = pub
	case "EC":
		var curve elliptic.Curve
		switch j.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		case "P-521":
			curve = elliptic.P521()
		default:
			return Key{}, fmt.Errorf("curve %q", j.Crv)
		}
		size := (curve.Params().BitSize + 7) / 8
		x, errX := b64.DecodeString(j.X)
		y, errY := b64.DecodeString(j.Y)
		if errX != nil || errY != nil || len(x) != size || len(y) != size {
			return Key{}, errors.New("bad x or y")
		}
		// The point is checked to be on the curve.
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return Key{}, err
		}
		k.pub = pub
	case "OKP":
		if j.Crv != "Ed25519" {
			return Key{}, fmt.Errorf("curve %q", j.Crv)
		}
		x, err := b64.DecodeString(j.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return Key{}, errors.New("bad x")
		}
		k.pub = ed25519.PublicKey(x)
	default:
		// oct (a shared secret) included: never a verification key here.
		return Key{}, fmt.Errorf("kty %q", j.Kty)
	}
	return k, nil
}
