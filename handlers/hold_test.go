package handlers

import (
	"fmt"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/handlers/mcp"
)

func TestHoldReportsEachChangeOnce(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	var mu sync.Mutex
	var got []string
	s.Watch(func(c Change) {
		mu.Lock()
		got = append(got, fmt.Sprint(c.Kind, " ", c.URI))
		mu.Unlock()
	})
	reported := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}

	release := s.Hold()
	inner := s.Hold() // overlapping holds: reports wait for the last release
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() { s.AddTool(Tool{Tool: mcp.Tool{Name: fmt.Sprint("t", i)}}, textTool("x")) })
	}
	wg.Wait()
	s.RemoveTool("t3")
	s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: "p"}}, noPrompt)
	s.NotifyResourceUpdated("x:a")
	s.NotifyResourceUpdated("x:b")
	s.NotifyResourceUpdated("x:a")
	inner()
	if r := reported(); len(r) != 0 {
		t.Fatalf("reported while held: %v", r)
	}
	release()
	release() // harmless
	want := []string{"ToolsChanged ", "PromptsChanged ", "ResourceUpdated x:a", "ResourceUpdated x:b"}
	if r := reported(); fmt.Sprint(r) != fmt.Sprint(want) {
		t.Fatalf("reported %q, want %q", r, want)
	}
	// No hold: every change is reported as it is made again.
	s.RemoveTool("t4")
	s.RemoveTool("t5")
	if r := reported(); len(r) != len(want)+2 {
		t.Fatalf("after the hold: %q", r[len(want):])
	}
	// A hold with no change in it reports nothing.
	s.Hold()()
	if r := reported(); len(r) != len(want)+2 {
		t.Fatalf("an empty hold reported %q", r[len(want)+2:])
	}
}
