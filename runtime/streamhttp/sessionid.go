package streamhttp

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// sessionIDs mints and checks legacy session ids. An id is the replica's
// tag in clear, so that a proxy can route on it ("a."), then a sealed part:
// AES-256-GCM over 16 random bytes, with the tag as additional data. A
// client can neither read anything out of an id nor make one: an id opens
// only under the key of the replicas that share Options.StateKey, and only
// with the tag it was minted under, so a forged or altered id (another
// tag, a flipped byte) is refused before any lookup, as an unknown session
// is (404). Replicas with one key open each other's ids; the session itself
// still lives only in the memory of the replica that made it, so a lost
// replica's sessions end with 404 at the others and their clients
// initialize again, as the specification provides.
type sessionIDs struct {
	aead cipher.AEAD
	tag  string // "" or "tag."
}

// sessionIDInfo separates the session id key from the requestState key it
// is derived from, so one shared secret serves both without reuse.
const sessionIDInfo = "mcprt legacy session id v1"

// sealedLen is the length of an id's sealed part: nonce, the 16 random
// bytes and GCM's tag, in unpadded base64url.
var sealedLen = base64.RawURLEncoding.EncodedLen(12 + 16 + 16)

func newSessionIDs(stateKey []byte, tag string) *sessionIDs {
	m := hmac.New(sha256.New, stateKey)
	m.Write([]byte(sessionIDInfo))
	block, err := aes.NewCipher(m.Sum(nil)) // 32 bytes: AES-256
	if err != nil {
		panic("streamhttp: session id key: " + err.Error()) // a 32-byte key never fails
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("streamhttp: session id cipher: " + err.Error())
	}
	s := &sessionIDs{aead: aead}
	if tag != "" {
		s.tag = tag + "."
	}
	return s
}

// mint returns a new session id.
func (s *sessionIDs) mint() string {
	var buf [12 + 16 + 16]byte
	nonce, secret := buf[:12], buf[12:28]
	_, _ = rand.Read(buf[:28])
	sealed := s.aead.Seal(buf[:12], nonce, secret, []byte(s.tag))
	return s.tag + base64.RawURLEncoding.EncodeToString(sealed)
}

// valid reports whether id was minted by a replica holding the key, under
// the tag it carries (which may be another replica's).
func (s *sessionIDs) valid(id string) bool {
	i := strings.LastIndexByte(id, '.')
	tag, sealed := id[:i+1], id[i+1:]
	if len(sealed) != sealedLen {
		return false
	}
	var buf [12 + 16 + 16]byte
	if n, err := base64.RawURLEncoding.Decode(buf[:], []byte(sealed)); err != nil || n != len(buf) {
		return false
	}
	var out [16]byte
	_, err := s.aead.Open(out[:0], buf[:12], buf[12:], []byte(tag))
	return err == nil
}
