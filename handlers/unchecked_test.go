package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// An Unchecked tool lists its schemas as given, even ones this package
// cannot compile, and its handler gets whatever arguments object the
// client sent and returns what it likes: the party it forwards to checks.
func TestUncheckedToolIsNotValidated(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	// A lookahead: ECMA-262, not RE2, so Compile rejects it.
	in := `{"type":"object","properties":{"email":{"type":"string","pattern":"^(?!\\.)[a-z.]+@x$"}},"required":["email"]}`
	out := `{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`
	var got []string
	s.AddTool(Tool{Tool: mcp.Tool{Name: "fwd", InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out)}, Unchecked: true},
		func(_ context.Context, _ *Request, args json.RawMessage) (*mcp.CallToolResult, error) {
			got = append(got, string(args))
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("ok")}, StructuredContent: json.RawMessage(`{"sum":"three"}`)}, nil
		})
	list := run(t, s, "2025-11-25", "tools/list", `{}`)
	if !strings.Contains(list.result, `"pattern":"^(?!\\.)[a-z.]+@x$"`) || !strings.Contains(list.result, `"outputSchema":`+out) {
		t.Fatalf("tools/list does not show the schemas as given: %s", list.result)
	}
	// Missing the required property, and a result that breaks the output
	// schema: neither is this server's business.
	wantResult(t, run(t, s, "2025-11-25", "tools/call", `{"name":"fwd","arguments":{"other":1}}`),
		`{"content":[{"type":"text","text":"ok"}],"structuredContent":{"sum":"three"}}`)
	wantResult(t, run(t, s, "2025-11-25", "tools/call", `{"name":"fwd"}`),
		`{"content":[{"type":"text","text":"ok"}],"structuredContent":{"sum":"three"}}`)
	if len(got) != 2 || got[0] != `{"other":1}` || got[1] != `{}` {
		t.Fatalf("handler got %q", got)
	}
	// Arguments must still be an object, and a schema must still be JSON
	// of type object.
	wantError(t, run(t, s, "2025-11-25", "tools/call", `{"name":"fwd","arguments":[1]}`), -32602, "Invalid params: arguments must be an object", "")
	for _, schema := range []string{`{"type":"object"`, `{"type":"string"}`} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AddTool accepted the unchecked input schema %s", schema)
				}
			}()
			s.AddTool(Tool{Tool: mcp.Tool{Name: "bad", InputSchema: json.RawMessage(schema)}, Unchecked: true}, textTool("bad"))
		}()
	}
	// Without Unchecked the same schema does not compile.
	defer func() {
		if recover() == nil {
			t.Error("AddTool compiled a lookahead pattern")
		}
	}()
	s.AddTool(Tool{Tool: mcp.Tool{Name: "checked", InputSchema: json.RawMessage(in)}}, textTool("checked"))
}
