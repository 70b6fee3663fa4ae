package e2e

import (
	"encoding/json"
	"testing"
)

// TestModernMissingCapability: in 2026-07-28 a request whose processing
// needs a capability that this request's clientCapabilities did not
// declare is answered with -32021 and data.requiredCapabilities naming it
// (the reference elicit tool needs "elicitation"); with the capability
// declared the same call asks for input instead.
func TestModernMissingCapability(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	m := c.Call("tools/call", withMeta(map[string]any{"name": "elicit", "arguments": map[string]any{}}, meta()))
	e := wantError(t, m, -32021)
	var data struct {
		RequiredCapabilities map[string]json.RawMessage `json:"requiredCapabilities"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil || len(data.RequiredCapabilities) != 1 || string(data.RequiredCapabilities["elicitation"]) != "{}" {
		t.Fatalf("data = %s, want {\"requiredCapabilities\":{\"elicitation\":{}}}", e.Data)
	}
	withCap := meta()
	withCap["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"elicitation": map[string]any{}}
	m = c.Call("tools/call", withMeta(map[string]any{"name": "elicit", "arguments": map[string]any{}}, withCap))
	if m.Error != nil {
		t.Fatalf("with the capability declared: %s", m)
	}
	var r struct{ ResultType string }
	mustUnmarshal(t, m.Result, &r)
	if r.ResultType != "input_required" {
		t.Fatalf("with the capability declared: resultType %q, want input_required: %s", r.ResultType, m)
	}
}
