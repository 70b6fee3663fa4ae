//go:build linux

package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/session/client"
)

// TestOAuthGatewayToolSearch: mcprt gateway -http -tool-search behind a
// real authorization server, in both eras. Each caller lists only
// search_tools and call_tool; a search finds only the tools its token
// allows ("access", "toolAccess"), so a tool hidden from it is never
// found, and call_tool refuses it as a direct call does; what it may use
// it calls through call_tool and directly.
func TestOAuthGatewayToolSearch(t *testing.T) {
	t.Parallel()
	as := startAuthServer(t, asKeys("1"))
	f := newGateway(t)
	cfg := accessConfig(f)
	gw := f.startGatewayHTTP(cfg, "-tool-search", "-http-oauth-issuer", as.issuer, "-http-oauth-resource", oauthResource, "-http-oauth-scopes", "mcp:tools")

	admin := as.token("c-rs256", oauthResource, "mcp:tools mcp:admin")
	adminES := as.token("c-admin-es", oauthResource, "mcp:tools mcp:admin")
	tools := as.token("c-es256", oauthResource, "mcp:tools")
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		for _, tc := range []struct {
			who, token string
			may        []string
		}{
			{"c-rs256 with mcp:admin", admin, []string{"open__echo", "ops__echo", "ops__add"}},
			{"c-admin-es with mcp:admin", adminES, []string{"open__echo", "ops__echo"}},
			{"c-es256 with mcp:tools", tools, []string{"open__echo"}},
		} {
			c := connectHTTP(t, gw.url, withToken(client.Options{Era: era}, tc.token))
			if got := toolNames(t, c); !slices.Equal(got, []string{"search_tools", "call_tool"}) {
				t.Errorf("%v: %s lists %v", era, tc.who, got)
			}
			var found []string
			for _, q := range []string{"add two numbers", "echo text back"} {
				r, err := c.CallTool(testCtx(t), "search_tools", map[string]any{"query": q, "limit": 50})
				if err != nil || r.IsError {
					t.Fatalf("%v: %s searching %q: %+v %v", era, tc.who, q, r, err)
				}
				found = append(found, searchFound(t, r.StructuredContent)...)
			}
			slices.Sort(found)
			found = slices.Compact(found)
			want := slices.Sorted(slices.Values(tc.may))
			if !slices.Equal(found, want) {
				t.Errorf("%v: %s found %v, want %v", era, tc.who, found, want)
			}
			for _, name := range []string{"open__echo", "ops__echo", "ops__add"} {
				args := map[string]any{"text": "hi"}
				if name == "ops__add" {
					args = map[string]any{"a": 1, "b": 2}
				}
				r, err := c.CallTool(testCtx(t), "call_tool", map[string]any{"name": name, "arguments": args})
				ok := err == nil && !r.IsError
				if ok != slices.Contains(tc.may, name) {
					t.Errorf("%v: %s calling %s through call_tool: %+v %v", era, tc.who, name, r, err)
				}
				if name == "ops__add" && ok && !strings.Contains(string(r.StructuredContent), `"sum":3`) {
					t.Errorf("%v: call_tool ops__add: %s", era, r.StructuredContent)
				}
			}
			if got := callText(t, c, "open__echo", map[string]any{"text": "direct"}); got != "direct" {
				t.Errorf("%v: %s calling open__echo directly: %q", era, tc.who, got)
			}
		}
	}
}
