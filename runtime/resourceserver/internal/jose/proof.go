package jose

import (
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
)

// privateMembers are the JWK members that carry private or symmetric key
// material (RFC 7518 section 6): a proof whose jwk has any of them is
// refused, whatever their value.
var privateMembers = []string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// ProofKey is the public key a proof JWT carries in its header's jwk
// (RFC 9449 section 4.2: the key the proof is signed with and the one the
// access token is bound to). It must be an asymmetric key of a type
// Verify knows, fit for the header's alg, with no private members; the
// proof's signature is then checked with it. Only for proofs: an access
// token is verified with the issuer's KeySet, never with a key it names.
func ProofKey(t *Token) (*Key, error) {
	if len(t.Header.JWK) == 0 {
		return nil, fmt.Errorf("%w: no jwk", ErrMalformed)
	}
	var members map[string]json.RawMessage
	if err := decodeObject(t.Header.JWK, &members); err != nil {
		return nil, fmt.Errorf("%w: jwk: %v", ErrMalformed, err)
	}
	for _, m := range privateMembers {
		if _, ok := members[m]; ok {
			return nil, fmt.Errorf("%w: jwk has private key material", ErrMalformed)
		}
	}
	var j jwk
	if err := json.Unmarshal(t.Header.JWK, &j); err != nil {
		return nil, fmt.Errorf("%w: jwk: %v", ErrMalformed, err)
	}
	k, err := j.key()
	if err != nil {
		return nil, fmt.Errorf("%w: jwk: %v", ErrMalformed, err)
	}
	alg, ok := algorithms[t.Header.Alg]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrAlgorithm, t.Header.Alg)
	}
	if len(t.Header.Crit) > 0 {
		return nil, ErrCritical
	}
	if !k.fits(t.Header.Alg, alg) {
		return nil, fmt.Errorf("%w: jwk is not for %s", ErrKeyMismatch, t.Header.Alg)
	}
	if err := k.verify(alg, t.signed, t.signature); err != nil {
		return nil, err
	}
	k.thumbprint = j.thumbprint()
	return &k, nil
}

// Thumbprint is the key's RFC 7638 JWK SHA-256 thumbprint, base64url: what
// a DPoP-bound token's cnf.jkt names. Set for keys from ProofKey.
func (k *Key) Thumbprint() string { return k.thumbprint }

// thumbprint hashes the key's required members in lexicographic order,
// with no whitespace (RFC 7638 section 3.2; RFC 8037 section 2 for OKP).
// The members are base64url strings and names key() checked, so no JSON
// escaping is needed; key() has also made sure each has one spelling.
func (j *jwk) thumbprint() string {
	var doc string
	switch j.Kty {
	case "RSA":
		doc = `{"e":"` + j.E + `","kty":"RSA","n":"` + j.N + `"}`
	case "EC":
		doc = `{"crv":"` + j.Crv + `","kty":"EC","x":"` + j.X + `","y":"` + j.Y + `"}`
	case "OKP":
		doc = `{"crv":"` + j.Crv + `","kty":"OKP","x":"` + j.X + `"}`
	default:
		panic(errors.New("jose: thumbprint of an unchecked key"))
	}
	return b64.EncodeToString(hashOf(crypto.SHA256, []byte(doc)))
}
