//go:build linux

package e2e

import (
	"slices"
	"testing"

	"github.com/mcprt/mcprt/session/client"
)

// TestGatewayToolSearchHTTP: mcprt gateway -http -tool-search, through
// mcprt's Streamable HTTP client in both eras: the list, a search, a
// call_tool and a direct call.
func TestGatewayToolSearchHTTP(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	gw := f.startGatewayHTTP(f.config(map[string]any{"alpha": f.serve("alpha", nil)}), "-tool-search")
	for _, era := range []client.Era{client.EraModern, client.EraLegacy} {
		c := connectHTTP(t, gw.url, client.Options{Era: era})
		if got := toolNames(t, c); !slices.Equal(got, []string{"search_tools", "call_tool"}) {
			t.Errorf("%v: tools/list %v", era, got)
		}
		r, err := c.CallTool(testCtx(t), "search_tools", map[string]any{"query": "add two numbers"})
		if err != nil || r.IsError {
			t.Fatalf("%v: search_tools: %+v %v", era, r, err)
		}
		if got := searchFound(t, r.StructuredContent); len(got) == 0 || got[0] != "alpha__add" {
			t.Errorf("%v: add two numbers: %v", era, got)
		}
		if got := callText(t, c, "call_tool", map[string]any{"name": "alpha__echo", "arguments": map[string]any{"text": "via"}}); got != "via" {
			t.Errorf("%v: call_tool alpha__echo: %q", era, got)
		}
		if got := callText(t, c, "alpha__echo", map[string]any{"text": "direct"}); got != "direct" {
			t.Errorf("%v: alpha__echo: %q", era, got)
		}
	}
}
