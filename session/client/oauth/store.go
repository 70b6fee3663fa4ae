package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Stored is what a Store keeps for one MCP server and one issuer: the
// token and the client's registration there (a dynamically registered
// client needs its id, and secret, to refresh).
type Stored struct {
	Token        Token  `json:"token"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	AuthMethod   string `json:"token_endpoint_auth_method,omitempty"`
}

// Store keeps what an Authorizer obtained, per (MCP server, issuer).
type Store interface {
	// Load is what was saved last for server, nil when nothing was.
	Load(server string) (*Stored, error)
	// Save keeps s for server and s.Token.Issuer.
	Save(server string, s *Stored) error
}

// FileStore keeps tokens in files of Dir, one per MCP server, readable by
// the user alone (mode 0600, the folder 0700).
type FileStore struct {
	Dir string
	mu  sync.Mutex
}

// DefaultStore is the FileStore in the user's configuration folder
// (os.UserConfigDir: ~/.config/mcprt/oauth on Linux).
func DefaultStore() (*FileStore, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return nil, err
	}
	return &FileStore{Dir: filepath.Join(d, "mcprt", "oauth")}, nil
}

// serverFile is one server's file: the tokens of each issuer, and which
// was saved last.
type serverFile struct {
	Server string             `json:"server"`
	Last   string             `json:"last_issuer"`
	ByIss  map[string]*Stored `json:"issuers"`
}

// Path is the file that holds server's tokens.
func (s *FileStore) Path(server string) string {
	sum := sha256.Sum256([]byte(server))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:16])+".json")
}

func (s *FileStore) read(server string) (*serverFile, error) {
	data, err := os.ReadFile(s.Path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return &serverFile{Server: server, ByIss: map[string]*Stored{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var f serverFile
	if err := json.Unmarshal(data, &f); err != nil || f.Server != server {
		// Not quoting the content: it holds secrets.
		return nil, fmt.Errorf("oauth: %s is not a token file of %s", s.Path(server), server)
	}
	if f.ByIss == nil {
		f.ByIss = map[string]*Stored{}
	}
	return &f, nil
}

// Load implements Store.
func (s *FileStore) Load(server string) (*Stored, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.read(server)
	if err != nil {
		return nil, err
	}
	return f.ByIss[f.Last], nil
}

// Save implements Store: the file is replaced whole (written aside, then
// renamed), never readable by others.
func (s *FileStore) Save(server string, st *Stored) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	// MkdirAll leaves a folder that was there as it was: one made wider
	// by hand, or by an older mcprt, is tightened before a token goes in.
	if fi, err := os.Stat(s.Dir); err != nil {
		return err
	} else if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(s.Dir, 0o700); err != nil {
			return err
		}
	}
	f, err := s.read(server)
	if err != nil {
		return err
	}
	f.ByIss[st.Token.Issuer], f.Last = st, st.Token.Issuer
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return writePrivate(s.Path(server), data)
}

// Delete forgets server's tokens; deleting what is not there is no error.
func (s *FileStore) Delete(server string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := os.Remove(s.Path(server))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// writePrivate replaces the file at path with data, readable by its owner
// only: written aside in the same folder, then renamed, so a reader sees
// the old file or the new one, never a part, and never one others can
// read.
func writePrivate(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
