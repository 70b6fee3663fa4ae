package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// TestOffersStillComing: a server whose offers arrive after its first
// client (OfferEverything, WaitBeforeListing, OnUnknownTool): every
// capability is advertised before anything is registered, lists and a call
// of a tool not yet there wait for ready, and an unknown tool is answered
// as the hook says.
func TestOffersStillComing(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "s", Version: "1"}, "")
	s.OfferEverything()
	for _, c := range []string{"tools", "resources", "prompts", "completions"} {
		if _, ok := s.Capabilities()[c]; !ok {
			t.Errorf("capability %s not advertised", c)
		}
	}
	ready := make(chan struct{})
	s.WaitBeforeListing(ready)
	s.OnUnknownTool(func(name string, _ *Caller) *mcp.CallToolResult {
		if strings.HasPrefix(name, "down__") {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("down is down")}, IsError: true}
		}
		return nil
	})

	list := make(chan answer, 1)
	call := make(chan answer, 1)
	go func() { list <- run(t, s, "2025-11-25", "tools/list", `{}`) }()
	go func() { call <- run(t, s, "2025-11-25", "tools/call", `{"name":"late","arguments":{}}`) }()
	time.Sleep(50 * time.Millisecond) // time for them to find nothing, had they not waited
	for _, ch := range []chan answer{list, call} {
		select {
		case a := <-ch:
			t.Fatalf("answered before ready: %v", a)
		default:
		}
	}
	s.AddTool(Tool{Tool: mcp.Tool{Name: "late"}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult("here"), nil
	})
	close(ready)
	if a := <-list; !strings.Contains(a.result, `"late"`) {
		t.Errorf("tools/list: %v", a)
	}
	if a := <-call; !strings.Contains(a.result, `"here"`) {
		t.Errorf("tools/call of a tool registered while it waited: %v", a)
	}
	if a := run(t, s, "2025-11-25", "tools/call", `{"name":"down__x","arguments":{}}`); !strings.Contains(a.result, "down is down") {
		t.Errorf("the hook's answer: %v", a)
	}
	if a := run(t, s, "2025-11-25", "tools/call", `{"name":"nope","arguments":{}}`); a.err == nil || !strings.Contains(a.err.Error(), "Unknown tool") {
		t.Errorf("the protocol's answer when the hook has none: %v", a)
	}
}
