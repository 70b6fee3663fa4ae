package oauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// SealedStore keeps the tokens of many users, each under the name of its
// owner (a gateway's caller principal) and MCP server, in files of a
// folder, sealed with AES-256-GCM: a copy of the folder without the key
// reveals nothing, and a file moved to another owner's or server's name
// does not open (the owner and server are the seal's additional data).
// The folder holds a sealed check value: a key other than the one the
// folder's tokens were sealed with is refused by NewSealedStore, not
// found out at a user's first request.
type SealedStore struct {
	dir  string
	aead cipher.AEAD
	mu   sync.Mutex
}

// checkFile is the sealed check value, and checkValue what it holds.
const (
	checkFile  = "key-check.sealed"
	checkValue = "mcprt sealed token store v1"
)

// errWrongKey: the key does not open what the folder holds.
var errWrongKey = errors.New("oauth: the key is not the one this token folder was sealed with")

// ParseSealKey reads a 256-bit key as a file or an environment variable
// gives it: 64 hex digits, or 32 bytes in base64 (standard or URL
// alphabet, padded or not), surrounding space ignored.
func ParseSealKey(text string) ([]byte, error) {
	s := strings.TrimSpace(text)
	if k, err := hex.DecodeString(s); err == nil && len(k) == 32 {
		return k, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == 32 {
			return k, nil
		}
	}
	// Not quoting it: it is meant to be a secret.
	return nil, errors.New("oauth: a seal key is 32 bytes, as 64 hex digits or in base64 (openssl rand -base64 32)")
}

// NewSealedStore opens (making it, 0700) the folder dir with key, 32
// bytes. A folder sealed with another key is refused (errWrongKey).
func NewSealedStore(dir string, key []byte) (*SealedStore, error) {
	if len(key) != 32 {
		return nil, errors.New("oauth: a seal key is 32 bytes (AES-256)")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	s := &SealedStore{dir: dir, aead: aead}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, checkFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := s.write(checkFile, s.seal([]byte(checkValue), checkFile)); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	default:
		if got, err := s.open(data, checkFile); err != nil || string(got) != checkValue {
			return nil, fmt.Errorf("%w (%s)", errWrongKey, dir)
		}
	}
	return s, nil
}

// For is the Store of owner's tokens, for an Authorizer acting for them.
func (s *SealedStore) For(owner string) Store { return ownerStore{s, owner} }

// Delete forgets owner's token for server (a sign-out), the MCP server's
// URL as given to New (taken as an Authorizer keys it: scheme and host in
// lower case, no query); deleting what is not there is no error.
func (s *SealedStore) Delete(owner, server string) error {
	if u, err := httpURL(server); err == nil {
		server = canonical(u)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := os.Remove(filepath.Join(s.dir, s.name(owner, server)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

type ownerStore struct {
	s     *SealedStore
	owner string
}

// Load implements Store.
func (o ownerStore) Load(server string) (*Stored, error) {
	s := o.s
	s.mu.Lock()
	defer s.mu.Unlock()
	name := s.name(o.owner, server)
	data, err := os.ReadFile(filepath.Join(s.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	plain, err := s.open(data, additional(o.owner, server))
	if err != nil {
		return nil, fmt.Errorf("oauth: %s does not open with the key for this owner and server", name)
	}
	var st Stored
	if err := json.Unmarshal(plain, &st); err != nil {
		return nil, fmt.Errorf("oauth: %s is not a sealed token", name)
	}
	return &st, nil
}

// Save implements Store: the file is replaced whole, 0600.
func (o ownerStore) Save(server string, st *Stored) error {
	s := o.s
	plain, err := json.Marshal(st)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.write(s.name(o.owner, server), s.seal(plain, additional(o.owner, server)))
}

// name is the file of owner's token for server: a hash, so that the
// folder's listing names no one.
func (s *SealedStore) name(owner, server string) string {
	sum := sha256.Sum256([]byte(additional(owner, server)))
	return hex.EncodeToString(sum[:16]) + ".sealed"
}

func additional(owner, server string) string { return owner + "\x00" + server }

// seal is a fresh nonce and plain sealed under it, with ad.
func (s *SealedStore) seal(plain []byte, ad string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, plain, []byte(ad))
}

func (s *SealedStore) open(data []byte, ad string) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(data) < n {
		return nil, errors.New("short")
	}
	return s.aead.Open(nil, data[:n], data[n:], []byte(ad))
}

// write replaces the file name of the folder with data: written aside,
// then renamed, never readable by others.
func (s *SealedStore) write(name string, data []byte) error {
	return writePrivate(filepath.Join(s.dir, name), data)
}
