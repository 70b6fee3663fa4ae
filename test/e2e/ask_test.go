package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAskLegacy: the elicit and sample tools send the client a request in
// its own id space and answer once the client responds.
func TestAskLegacy(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{AllowRequests: true})
	c.InitializeWith("2025-06-18", map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}})

	key := c.Request("e1", "tools/call", map[string]any{"name": "elicit", "arguments": map[string]any{}})
	req := c.ServerRequest("elicitation/create", callTimeout)
	var p struct {
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	mustUnmarshal(t, req.Params, &p)
	if p.Message == "" || !strings.Contains(string(p.RequestedSchema), `"name"`) {
		t.Fatalf("elicitation request: %s", req)
	}
	c.Send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
	if r := wantResult(t, c.Response(key, callTimeout)); !strings.Contains(string(r["structuredContent"]), `"greeting":"Hello, Ada!"`) {
		t.Fatalf("elicit result: %s", r["structuredContent"])
	}

	key = c.Request("s1", "tools/call", map[string]any{"name": "sample", "arguments": map[string]any{"prompt": "2+2?"}})
	req = c.ServerRequest("sampling/createMessage", callTimeout)
	c.Send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"role":"assistant","content":{"type":"text","text":"4"},"model":"m-1"}}`)
	if r := wantResult(t, c.Response(key, callTimeout)); !strings.Contains(string(r["structuredContent"]), `"text":"4"`) {
		t.Fatalf("sample result: %s", r["structuredContent"])
	}

	// A client error is the tool's error; a cancelled call cancels its ask.
	key = c.Request("s2", "tools/call", map[string]any{"name": "sample", "arguments": map[string]any{"prompt": "no"}})
	req = c.ServerRequest("sampling/createMessage", callTimeout)
	c.Send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-1,"message":"user rejected"}}`)
	if m := c.Response(key, callTimeout); m.Error == nil && !strings.Contains(string(m.Result), "user rejected") {
		t.Fatalf("rejected sampling: %s", m)
	}
}

// TestAskWithoutCapability: a client that did not declare elicitation is
// never sent one; the tool reports it.
func TestAskWithoutCapability(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-11-25")
	m := c.Call("tools/call", map[string]any{"name": "elicit", "arguments": map[string]any{}})
	if r := wantResult(t, m); string(r["isError"]) != "true" || !strings.Contains(string(r["content"]), "elicitation") {
		t.Fatalf("want an isError result naming the capability, got %s", m)
	}
}

// TestAskModern: in 2026-07-28 the same tool answers input_required; the
// retry with inputResponses and the requestState completes it.
func TestAskModern(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
	}
	m := c.Call("tools/call", map[string]any{"name": "elicit", "arguments": map[string]any{}, "_meta": meta})
	var first struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	mustUnmarshal(t, m.Result, &first)
	if first.ResultType != "input_required" || len(first.InputRequests) != 1 || first.RequestState == "" {
		t.Fatalf("want input_required, got %s", m)
	}
	var key string
	for k := range first.InputRequests {
		key = k
	}
	m = c.Call("tools/call", map[string]any{
		"name": "elicit", "arguments": map[string]any{}, "_meta": meta,
		"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": "Bo"}}},
		"requestState":   first.RequestState,
	})
	r := wantResult(t, m)
	if string(r["resultType"]) != `"complete"` || !strings.Contains(string(r["structuredContent"]), `"greeting":"Hello, Bo!"`) {
		t.Fatalf("retry: %s", m)
	}
}
