package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"time"
)

var b64 = base64.RawURLEncoding

// ParsePrivateKey reads a PEM private key (PKCS #8, or SEC 1 "EC PRIVATE
// KEY", or PKCS #1 "RSA PRIVATE KEY") for private_key_jwt. The error
// never quotes the key.
func ParsePrivateKey(pemData []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return nil, errors.New("oauth: private key: no PEM block")
	}
	var k any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, errors.New("oauth: private key: not a PKCS #8, SEC 1 or PKCS #1 key")
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, errors.New("oauth: private key: unsupported key type")
	}
	if _, err := algorithm(s); err != nil {
		return nil, err
	}
	return s, nil
}

// algorithm is the JWS algorithm a key signs with: ES256/384/512 by
// curve, RS256, EdDSA.
func algorithm(k crypto.Signer) (string, error) {
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
	case *rsa.PrivateKey:
		return "RS256", nil
	case ed25519.PrivateKey:
		return "EdDSA", nil
	}
	return "", errors.New("oauth: private key: unsupported key type (EC P-256/384/521, RSA or Ed25519)")
}

// signJWT makes a compact JWS of header and claims with k.
func signJWT(k crypto.Signer, header map[string]any, claims map[string]any) (string, error) {
	alg, err := algorithm(k)
	if err != nil {
		return "", err
	}
	header["alg"] = alg
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := b64.EncodeToString(h) + "." + b64.EncodeToString(c)
	var sig []byte
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		var hf hash.Hash
		size := (k.Curve.Params().BitSize + 7) / 8
		switch size {
		case 32:
			hf = sha256.New()
		case 48:
			hf = sha512.New384()
		default:
			hf = sha512.New()
		}
		hf.Write([]byte(input))
		r, s, err := ecdsa.Sign(rand.Reader, k, hf.Sum(nil))
		if err != nil {
			return "", err
		}
		sig = make([]byte, 2*size)
		r.FillBytes(sig[:size])
		s.FillBytes(sig[size:])
	case *rsa.PrivateKey:
		d := sha256.Sum256([]byte(input))
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, d[:])
		if err != nil {
			return "", err
		}
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, []byte(input))
	}
	return input + "." + b64.EncodeToString(sig), nil
}

// clientAssertion is a private_key_jwt client authentication (RFC 7523
// §2.2): issued by and about the client, for the authorization server.
func clientAssertion(k crypto.Signer, keyID, clientID, audience string) (string, error) {
	now := time.Now()
	header := map[string]any{"typ": "JWT"}
	if keyID != "" {
		header["kid"] = keyID
	}
	return signJWT(k, header, map[string]any{
		"iss": clientID, "sub": clientID, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": randomString(16),
	})
}

// dpopKey is the key the Authorizer binds its DPoP tokens to (RFC 9449).
type dpopKey struct {
	k   *ecdsa.PrivateKey
	jwk map[string]any
}

func newDPoPKey() (*dpopKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	b, err := k.PublicKey.Bytes() // uncompressed point: 0x04 || X || Y
	if err != nil {
		return nil, err
	}
	return &dpopKey{k: k, jwk: map[string]any{
		"kty": "EC", "crv": "P-256",
		"x": b64.EncodeToString(b[1:33]), "y": b64.EncodeToString(b[33:65]),
	}}, nil
}

// proof is a DPoP proof for one request: method, URI without query and
// fragment, the access token's hash when one is presented, and the
// server's nonce when it gave one.
func (d *dpopKey) proof(method, uri, accessToken, nonce string) (string, error) {
	claims := map[string]any{
		"jti": randomString(16), "htm": method, "htu": uri, "iat": time.Now().Unix(),
	}
	if accessToken != "" {
		h := sha256.Sum256([]byte(accessToken))
		claims["ath"] = b64.EncodeToString(h[:])
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	return signJWT(d.k, map[string]any{"typ": "dpop+jwt", "jwk": d.jwk}, claims)
}

// randomString is n random bytes, base64url: PKCE verifiers, states,
// JWT ids.
func randomString(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("oauth: crypto/rand: %v", err)) // never fails on supported platforms
	}
	return b64.EncodeToString(b)
}
