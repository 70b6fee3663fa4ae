package handlers

import (
	"fmt"
	"github.com/mcprt/mcprt/handlers/mcp"
	"slices"
	"testing"
)

// OnSubscription's hook hears what Subscription tells; nil, or none set,
// tells nobody; a later hook replaces an earlier one.
func TestOnSubscription(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.Subscription("test://x", true) // no hook: nothing happens
	var got []string
	s.OnSubscription(func(uri string, on bool) { got = append(got, fmt.Sprint(uri, " ", on)) })
	s.Subscription("test://x", true)
	s.Subscription("test://x", false)
	var other []string
	s.OnSubscription(func(uri string, on bool) { other = append(other, uri) })
	s.Subscription("test://y", true)
	s.OnSubscription(nil)
	s.Subscription("test://z", true)
	if !slices.Equal(got, []string{"test://x true", "test://x false"}) || !slices.Equal(other, []string{"test://y"}) {
		t.Fatalf("first hook %q, second %q", got, other)
	}
}

// OnRootsListChanged's hook is called by RootsListChanged; nil removes it.
func TestOnRootsListChanged(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.RootsListChanged() // no hook
	n := 0
	s.OnRootsListChanged(func() { n++ })
	s.RootsListChanged()
	s.OnRootsListChanged(nil)
	s.RootsListChanged()
	if n != 1 {
		t.Fatalf("hook called %d times, want 1", n)
	}
}
