package handlers

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/handlers/mcp"
)

func TestWatchReportsEveryChange(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	var got []string
	stop := s.Watch(func(c Change) {
		// Runs without the registry lock: reading the server must not deadlock.
		s.Capabilities()
		run(t, s, "2025-11-25", "tools/list", `{}`)
		got = append(got, strings.TrimSpace(c.Kind.String()+" "+c.URI))
	})
	steps := []struct {
		do   func()
		want string // "" for no change
	}{
		{func() { s.AddTool(Tool{Tool: mcp.Tool{Name: "a"}}, textTool("a")) }, "ToolsChanged"},
		{func() { s.AddTool(Tool{Tool: mcp.Tool{Name: "a", Description: "v2"}}, textTool("a")) }, "ToolsChanged"},
		{func() { s.RemoveTool("a") }, "ToolsChanged"},
		{func() { s.RemoveTool("a") }, ""},
		{func() { s.AddResource(Resource{Resource: mcp.Resource{URI: "x:r", Name: "r"}}, noContents) }, "ResourcesChanged"},
		{func() { s.RemoveResource("x:r") }, "ResourcesChanged"},
		{func() { s.RemoveResource("x:r") }, ""},
		{func() {
			s.AddResourceTemplate(ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "x:{v}", Name: "v"}}, noContents)
		}, "ResourcesChanged"},
		{func() { s.RemoveResourceTemplate("x:{v}") }, "ResourcesChanged"},
		{func() { s.RemoveResourceTemplate("x:{v}") }, ""},
		{func() { s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: "p"}}, noPrompt) }, "PromptsChanged"},
		{func() { s.RemovePrompt("p") }, "PromptsChanged"},
		{func() { s.RemovePrompt("p") }, ""},
		{func() { s.NotifyResourceUpdated("x:r") }, "ResourceUpdated x:r"},
		{func() {
			AddTool(s, Tool{Tool: mcp.Tool{Name: "typed"}}, func(context.Context, *Request, struct{}) (struct{}, error) { return struct{}{}, nil })
		}, "ToolsChanged"},
		{func() { s.SetPageSize(3) }, ""},
	}
	for i, step := range steps {
		before := len(got)
		step.do()
		switch {
		case step.want == "" && len(got) != before:
			t.Errorf("step %d: unexpected %v", i, got[before:])
		case step.want != "" && (len(got) != before+1 || got[before] != step.want):
			t.Errorf("step %d: got %v, want [%s]", i, got[before:], step.want)
		}
	}
	stop()
	stop() // harmless
	before := len(got)
	s.AddTool(Tool{Tool: mcp.Tool{Name: "b"}}, textTool("b"))
	s.NotifyResourceUpdated("x:r")
	if len(got) != before {
		t.Fatalf("called after stop: %v", got[before:])
	}
}

func TestWatchSeveralWatchers(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	var mu sync.Mutex
	calls := map[string]int{}
	watch := func(name string) func() {
		return s.Watch(func(c Change) {
			mu.Lock()
			defer mu.Unlock()
			calls[name]++
		})
	}
	stopA := watch("a")
	watch("b")
	s.NotifyResourceUpdated("x:1")
	stopA()
	s.NotifyResourceUpdated("x:2")
	if fmt.Sprint(calls) != "map[a:1 b:2]" {
		t.Fatalf("calls %v", calls)
	}
}

func TestWatchConcurrentChanges(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	var mu sync.Mutex
	n := 0
	s.Watch(func(Change) {
		mu.Lock()
		n++
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				name := fmt.Sprintf("t%d-%d", g, i)
				s.AddTool(Tool{Tool: mcp.Tool{Name: name}}, textTool(name))
				m, _ := s.Method("tools/list")
				if _, err := m.Run(context.Background(), newRequest("tools/list", "2025-11-25", `{}`)); err != nil {
					t.Error(err)
				}
				s.RemoveTool(name)
			}
		})
	}
	wg.Wait()
	if n != 4*50*2 {
		t.Fatalf("%d changes reported, want %d", n, 4*50*2)
	}
}

func TestChangeKindString(t *testing.T) {
	for k, want := range map[ChangeKind]string{ToolsChanged: "ToolsChanged", ResourcesChanged: "ResourcesChanged", PromptsChanged: "PromptsChanged", ResourceUpdated: "ResourceUpdated", 0: "ChangeKind(?)"} {
		if k.String() != want {
			t.Errorf("%d: %q", int(k), k.String())
		}
	}
}
