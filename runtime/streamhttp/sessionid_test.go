package streamhttp

import (
	"bytes"
	"strings"
	"testing"
)

// TestSessionIDs: an id opens under the key and tag it was minted with and
// under no other; any change to it (a byte of the sealed part, the tag, a
// tag added or dropped) makes it one no replica minted.
func TestSessionIDs(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	a, b := newSessionIDs(key, "a"), newSessionIDs(key, "b")
	other := newSessionIDs(bytes.Repeat([]byte{8}, 32), "a")
	untagged := newSessionIDs(key, "")

	id := a.mint()
	if !strings.HasPrefix(id, "a.") || len(id) != len("a.")+sealedLen {
		t.Fatalf("id %q: want a. and %d characters", id, sealedLen)
	}
	if id2 := a.mint(); id2 == id {
		t.Fatalf("two ids alike: %q", id)
	}
	if !a.valid(id) || !b.valid(id) {
		t.Fatalf("%q refused by a replica with the key", id)
	}
	if other.valid(id) {
		t.Fatalf("%q opened under another key", id)
	}
	u := untagged.mint()
	if strings.Contains(u, ".") || !a.valid(u) {
		t.Fatalf("untagged id %q: want no tag, valid with the key", u)
	}
	sealed := id[len("a."):]
	flip := []byte(sealed)
	flip[len(flip)/2] ^= 1
	for _, bad := range []string{
		"b." + sealed, // moved to another replica's tag
		sealed,        // its tag dropped
		"x." + u,      // a tag added
		"a." + string(flip),
		id[:len(id)-1],
		id + "A",
		"a.", "", ".", "a..", "nosuch",
		"a." + strings.Repeat("A", sealedLen),
		"a." + strings.Repeat("!", sealedLen),
	} {
		if a.valid(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

func BenchmarkSessionIDValid(b *testing.B) {
	s := newSessionIDs(bytes.Repeat([]byte{7}, 32), "a")
	id := s.mint()
	b.ReportAllocs()
	for b.Loop() {
		if !s.valid(id) {
			b.Fatal("refused")
		}
	}
}
