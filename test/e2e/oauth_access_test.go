//go:build linux

package e2e

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/session/client"
)

// TestOAuthGatewayAccess: mcprt gateway -http, the resource server of a
// real authorization server, shows each caller the tools its token allows
// ("access" and "toolAccess" in its configuration), in both eras: a token
// with mcp:admin and client c-rs256 sees all of the ops backend's; one with
// mcp:tools alone sees only the open backend's, gets 403 insufficient_scope
// naming the scopes to ask for when it calls an ops tool (the spec's
// step-up), and is told "Unknown tool" of the tool only c-rs256 may use.
func TestOAuthGatewayAccess(t *testing.T) {
	t.Parallel()
	as := startAuthServer(t, asKeys("1"))
	f := newGateway(t)
	cfg := accessConfig(f)
	gw := f.startGatewayHTTP(cfg, "-http-oauth-issuer", as.issuer, "-http-oauth-resource", oauthResource, "-http-oauth-scopes", "mcp:tools")

	admin := as.token("c-rs256", oauthResource, "mcp:tools mcp:admin")
	adminES := as.token("c-admin-es", oauthResource, "mcp:tools mcp:admin")
	tools := as.token("c-es256", oauthResource, "mcp:tools")
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		for _, tc := range []struct {
			who, token string
			want       []string
		}{
			{"c-rs256 with mcp:admin", admin, []string{"open__echo", "ops__echo", "ops__add"}},
			{"c-admin-es with mcp:admin", adminES, []string{"open__echo", "ops__echo"}},
			{"c-es256 with mcp:tools", tools, []string{"open__echo"}},
		} {
			c := connectHTTP(t, gw.url, withToken(client.Options{Era: era}, tc.token))
			if got := toolNames(t, c); !slices.Equal(got, tc.want) {
				t.Errorf("%v: %s lists %v, want %v", era, tc.who, got, tc.want)
			}
			for _, name := range tc.want {
				args := map[string]any{"text": "hi"}
				if name == "ops__add" {
					args = map[string]any{"a": 1, "b": 2}
				}
				if r, err := c.CallTool(testCtx(t), name, args); err != nil || r.IsError {
					t.Errorf("%v: %s calling %s: %+v %v", era, tc.who, name, r, err)
				}
			}
		}
		// The client of too few scopes: its call of a tool it could have
		// with more is refused with 403, which mcprt's client reports.
		c := connectHTTP(t, gw.url, withToken(client.Options{Era: era}, tools))
		var he *client.HTTPError
		if _, err := c.CallTool(testCtx(t), "ops__echo", map[string]any{"text": "hi"}); !errors.As(err, &he) || he.Status != http.StatusForbidden {
			t.Errorf("%v: c-es256 calling ops__echo: %v, want a 403", era, err)
		}
		var re *client.RPCError
		if _, err := c.CallTool(testCtx(t), "ops__add", map[string]any{"a": 1, "b": 2}); !errors.As(err, &re) || !strings.Contains(err.Error(), `Unknown tool: "ops__add"`) {
			t.Errorf("%v: c-es256 calling ops__add: %v, want Unknown tool", era, err)
		}
	}

	// What the 403 says, on the wire, in both eras.
	r := postAs(t, gw.url, tools, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "ops__echo"},
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"ops__echo","arguments":{"text":"hi"}}}`)
	wantChallenge := `Bearer error="insufficient_scope", error_description="the token lacks a scope this needs", resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="mcp:tools mcp:admin"`
	if r.status != http.StatusForbidden || r.challenge != wantChallenge || !strings.Contains(r.body, `"id":7`) || !strings.Contains(r.body, `"code":403`) {
		t.Errorf("2026-07-28 call of ops__echo with mcp:tools: %+v", r)
	}
	r = postAs(t, gw.url, tools, nil, initializeBody)
	sid := r.sid
	if r.status != 200 || sid == "" {
		t.Fatalf("initialize: %+v", r)
	}
	postAs(t, gw.url, tools, map[string]string{"Mcp-Session-Id": sid}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	r = postAs(t, gw.url, tools, map[string]string{"Mcp-Session-Id": sid},
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ops__echo","arguments":{"text":"hi"}}}`)
	if r.status != http.StatusForbidden || r.challenge != wantChallenge || !strings.Contains(r.body, `"id":8`) {
		t.Errorf("legacy call of ops__echo with mcp:tools: %+v", r)
	}
}

// posted is what postAs got back.
type posted struct {
	status               int
	challenge, body, sid string // WWW-Authenticate, the body, Mcp-Session-Id
}

// postAs posts body with token and hdr.
func postAs(t *testing.T, endpoint, token string, hdr map[string]string, body string) posted {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return posted{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b), resp.Header.Get("Mcp-Session-Id")}
}

// accessConfig is the gateway configuration the access tests share: an
// open backend offering echo to every token, and an ops backend offering
// echo and add to tokens with mcp:admin, add only to client c-rs256.
func accessConfig(f *gwFixture) string {
	return f.config(map[string]any{
		"open": f.serve("open", map[string]any{"allowTools": []string{"echo"}}),
		"ops": f.serve("ops", map[string]any{
			"allowTools": []string{"echo", "add"},
			"access":     map[string]any{"scopes": []string{"mcp:admin"}},
			"toolAccess": map[string]any{"add": map[string]any{"claims": map[string]any{"client_id": "c-rs256"}}},
		}),
	})
}
