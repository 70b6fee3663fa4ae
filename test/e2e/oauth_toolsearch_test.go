//go:build linux

package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
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
				if name == "ops__add" && ok && !strings.Contains(structuredText(r), `"sum":3`) {
					t.Errorf("%v: call_tool ops__add: %s", era, r.StructuredContent)
				}
			}
			if got := callText(t, c, "open__echo", map[string]any{"text": "direct"}); got != "direct" {
				t.Errorf("%v: %s calling open__echo directly: %q", era, tc.who, got)
			}
		}
	}
}

// TestOAuthGatewayEndpoint: a virtual endpoint of mcprt gateway -http
// behind a real authorization server is a protected resource of its own:
// its metadata at the RFC 9728 path for /mcp/ops names it; a request
// without a token is told to look there; a token for the gateway's own
// resource is refused there; one for the endpoint lists and calls the
// endpoint's tools that it may use (the backend's access and the
// endpoint's own), in both eras.
func TestOAuthGatewayEndpoint(t *testing.T) {
	t.Parallel()
	as := startAuthServer(t, asKeys("1"))
	f := newGateway(t)
	cfg := accessConfig(f)
	var top map[string]any
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustUnmarshal(t, b, &top)
	top["endpoints"] = map[string]any{"ops": map[string]any{"tools": []string{"ops__*"}, "access": map[string]any{"claims": map[string]any{"client_id": []string{"c-rs256", "c-es256"}}}}}
	servers, _ := top["mcpServers"].(map[string]any)
	delete(top, "mcpServers")
	cfg = f.writeConfig(servers, top)
	gw := f.startGatewayHTTP(cfg, "-http-oauth-issuer", as.issuer, "-http-oauth-resource", oauthResource, "-http-oauth-scopes", "mcp:tools")
	base, ops, resource := strings.TrimSuffix(gw.url, "/mcp"), gw.url+"/ops", oauthResource+"/ops"

	resp, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp/ops")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || json.Unmarshal(body, &md) != nil || md.Resource != resource || !slices.Contains(md.AuthorizationServers, as.issuer) {
		t.Errorf("the endpoint's metadata: %d %s", resp.StatusCode, body)
	}
	if resp, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp/nope"); err != nil || resp.StatusCode != 404 {
		t.Errorf("the metadata of an endpoint that does not exist: %v %v", resp.StatusCode, err)
	}
	status, challenge := postInitialize(t, ops, "")
	if want := `resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp/ops"`; status != 401 || !strings.Contains(challenge, want) {
		t.Errorf("no token at /mcp/ops: %d %q, want 401 with %s", status, challenge, want)
	}
	if status, _ := postInitialize(t, ops, as.token("c-rs256", oauthResource, "mcp:tools mcp:admin")); status != 401 {
		t.Errorf("a token for the gateway's own resource at /mcp/ops: %d, want 401", status)
	}

	admin := as.token("c-rs256", resource, "mcp:tools mcp:admin")
	adminES := as.token("c-admin-es", resource, "mcp:tools mcp:admin")
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		c := connectHTTP(t, ops, withToken(client.Options{Era: era}, admin))
		if got := toolNames(t, c); !slices.Equal(got, []string{"ops__echo", "ops__add"}) {
			t.Errorf("%v: c-rs256 lists %v at /mcp/ops", era, got)
		}
		if r, err := c.CallTool(testCtx(t), "ops__add", map[string]any{"a": 1, "b": 2}); err != nil || r.IsError {
			t.Errorf("%v: ops__add at /mcp/ops: %+v %v", era, r, err)
		}
		if _, err := c.CallTool(testCtx(t), "open__echo", map[string]any{"text": "hi"}); err == nil || !strings.Contains(err.Error(), `Unknown tool: "open__echo"`) {
			t.Errorf("%v: open__echo at /mcp/ops: %v, want Unknown tool", era, err)
		}
		// The endpoint's access: c-admin-es has the scopes, not the client id.
		c = connectHTTP(t, ops, withToken(client.Options{Era: era}, adminES))
		if got := toolNames(t, c); len(got) != 0 {
			t.Errorf("%v: c-admin-es lists %v at /mcp/ops", era, got)
		}
	}
}
