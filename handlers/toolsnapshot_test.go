package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// TestUnlistedTool: an Unlisted tool is left out of tools/list, for every
// caller, but still called by name, and Tools gives it with the rest.
func TestUnlistedTool(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	h := func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult("ran"), nil
	}
	s.AddTool(Tool{Tool: mcp.Tool{Name: "shown"}}, h)
	s.AddTool(Tool{Tool: mcp.Tool{Name: "hidden"}, Unlisted: true}, h)
	list, _ := s.Method("tools/list")
	call, _ := s.Method("tools/call")
	ctx := context.Background()
	for _, c := range []*Caller{nil, {Subject: "u", Scopes: []string{"a"}}} {
		res, err := list.Run(ctx, &Request{Method: "tools/list", Params: json.RawMessage(`{}`), Caller: c})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(res)
		if !strings.Contains(string(raw), `"shown"`) || strings.Contains(string(raw), `"hidden"`) {
			t.Errorf("caller %v: tools/list %s", c, raw)
		}
	}
	res, err := call.Run(ctx, &Request{Method: "tools/call", Params: json.RawMessage(`{"name":"hidden","arguments":{}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := json.Marshal(res); !strings.Contains(string(raw), "ran") {
		t.Errorf("tools/call hidden: %s", raw)
	}
	if tools := s.Tools(); len(tools) != 2 || tools[0].Name != "shown" || !tools[1].Unlisted {
		t.Errorf("Tools: %+v", tools)
	}
}
