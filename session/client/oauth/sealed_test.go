package oauth

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Tokens kept per (owner, server), sealed: readable back with the key,
// never in clear on disk, not across owners or servers (a file renamed
// to another's name does not open), gone after Delete; a folder opened
// with another key is refused at once.
func TestSealedStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tokens")
	key := bytes.Repeat([]byte{7}, 32)
	s, err := NewSealedStore(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	tok := Token{AccessToken: "at-alice-secret", RefreshToken: "rt-alice-secret", TokenType: "Bearer",
		Resource: "https://mcp.example/mcp", Issuer: "https://as.example", Expiry: time.Now().Add(time.Hour).Round(0)}
	alice, bob := s.For("sub:alice"), s.For("sub:bob")
	if err := alice.Save("https://mcp.example/mcp", &Stored{Token: tok, ClientID: "c"}); err != nil {
		t.Fatal(err)
	}
	got, err := alice.Load("https://mcp.example/mcp")
	if err != nil || got == nil || got.Token.AccessToken != tok.AccessToken || got.Token.RefreshToken != tok.RefreshToken || got.ClientID != "c" {
		t.Fatalf("alice's token back: %+v %v", got, err)
	}
	if got, err := bob.Load("https://mcp.example/mcp"); got != nil || err != nil {
		t.Errorf("bob sees %+v %v", got, err)
	}
	if got, err := alice.Load("https://other.example/mcp"); got != nil || err != nil {
		t.Errorf("another server: %+v %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if bytes.Contains(data, []byte("alice")) || bytes.Contains(data, []byte("mcp.example")) || strings.Contains(e.Name(), "alice") {
			t.Errorf("%s holds something in clear", e.Name())
		}
		if fi, _ := os.Stat(filepath.Join(dir, e.Name())); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", e.Name(), fi.Mode().Perm())
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("the folder: mode %v", fi.Mode().Perm())
	}
	// Alice's file put under Bob's name does not open as his.
	a := filepath.Join(dir, s.name("sub:alice", "https://mcp.example/mcp"))
	b := filepath.Join(dir, s.name("sub:bob", "https://mcp.example/mcp"))
	data, _ := os.ReadFile(a)
	os.WriteFile(b, data, 0o600)
	if got, err := bob.Load("https://mcp.example/mcp"); got != nil || err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("alice's file as bob's: %+v %v", got, err)
	}
	// Sign-out.
	if err := s.Delete("sub:alice", "https://mcp.example/mcp"); err != nil {
		t.Fatal(err)
	}
	if got, err := alice.Load("https://mcp.example/mcp"); got != nil || err != nil {
		t.Errorf("after Delete: %+v %v", got, err)
	}
	if err := s.Delete("sub:alice", "https://mcp.example/mcp"); err != nil {
		t.Errorf("Delete again: %v", err)
	}
	// The same key opens the folder again; another is refused.
	if _, err := NewSealedStore(dir, key); err != nil {
		t.Errorf("the same key: %v", err)
	}
	if _, err := NewSealedStore(dir, bytes.Repeat([]byte{8}, 32)); !errors.Is(err, errWrongKey) {
		t.Errorf("another key: %v, want ErrWrongKey", err)
	}
	if _, err := NewSealedStore(dir, key[:16]); err == nil {
		t.Error("a 128-bit key taken")
	}
}

func TestParseSealKey(t *testing.T) {
	want := bytes.Repeat([]byte{0xab}, 32)
	for _, in := range []string{
		strings.Repeat("ab", 32) + "\n",
		"q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=",
		" q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s ",
	} {
		if k, err := ParseSealKey(in); err != nil || !bytes.Equal(k, want) {
			t.Errorf("%q: %x %v", in, k, err)
		}
	}
	for _, in := range []string{"", "short", strings.Repeat("ab", 16), "hunter2-not-a-key"} {
		if _, err := ParseSealKey(in); err == nil || strings.Contains(err.Error(), in) && in != "" {
			t.Errorf("%q: %v", in, err)
		}
	}
}
