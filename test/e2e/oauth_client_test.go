package e2e

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

// freeLoopbackPort is a port of 127.0.0.1 free a moment ago: a server
// whose OAuth resource must name its own address is told it before it
// listens.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// oauthGateway runs a real authorization server issuing tokens of ttl
// seconds, mcprt serve -http protected by it, and mcprt gateway -http
// whose remote backend is that server with an "oauth" block (the secret
// from the environment); it returns a client of the gateway.
func oauthGateway(t *testing.T, ttl int) (as *authServer, resource string, gw *httpProc, c *client.Client) {
	as = startAuthServerTTL(t, asKeys("1"), ttl)
	resource = fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	backend := startHTTP(t, binPath, "serve", "-http", strings.TrimSuffix(strings.TrimPrefix(resource, "http://"), "/mcp"),
		"-http-oauth-issuer", as.issuer, "-http-oauth-resource", resource, "-http-oauth-scopes", "mcp:tools")
	f := newGateway(t)
	cfg := f.config(map[string]any{"remote": map[string]any{"url": backend.url,
		"oauth": map[string]any{"clientId": "c-es256", "clientSecret": "${GW_OAUTH_SECRET}", "scopes": "mcp:tools"}}})
	gw = startHTTPEnv(t, []string{"GW_OAUTH_SECRET=secret-c-es256", "LOG_LEVEL=debug"}, binPath,
		"gateway", "-config", cfg, "-http", "127.0.0.1:0")
	t.Cleanup(func() {
		log := gw.stderr.String()
		if strings.Contains(log, "secret-c-es256") {
			t.Errorf("the client secret reached the gateway's log")
		}
		if strings.Contains(log, "eyJ") {
			t.Errorf("a JWT reached the gateway's log")
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s\nbackend log:\n%s", tail(log, 4000), tail(backend.stderr.String(), 2000))
		}
	})
	return as, resource, gw, connectHTTP(t, gw.url, client.Options{})
}

// TestOAuthGatewayClientCredentials: mcprt gateway reaches a remote
// backend, mcprt serve -http protected by a real authorization server,
// as an OAuth client with the client credentials grant of its config's
// "oauth" block. Tokens last 3 s; the gateway keeps calling across
// several of them, renewing each before it expires; neither the secret
// nor a token shows in its log.
func TestOAuthGatewayClientCredentials(t *testing.T) {
	t.Parallel()
	_, _, gw, c := oauthGateway(t, 3)
	deadline := time.Now().Add(8 * time.Second) // past two token lifetimes
	calls := 0
	for time.Now().Before(deadline) || calls < 3 {
		text := fmt.Sprintf("call %d", calls)
		if got := callText(t, c, "remote__echo", map[string]any{"text": text}); got != text {
			t.Fatalf("call %d through the gateway: %q", calls, got)
		}
		calls++
		time.Sleep(500 * time.Millisecond)
	}
	if n := strings.Count(gw.stderr.String(), "oauth: authorized"); n < 3 {
		t.Errorf("%d tokens obtained in 8 s of 3 s tokens, want at least 3", n)
	}
}

// TestOAuthGatewayTokenRefused: when the backend refuses the gateway's
// token before it expires (the authorization server rotated its keys, so
// the backend no longer trusts the old one), the gateway gets a new one
// on the 401 and the call goes through.
func TestOAuthGatewayTokenRefused(t *testing.T) {
	t.Parallel()
	as, resource, gw, c := oauthGateway(t, 300)
	if got := callText(t, c, "remote__echo", map[string]any{"text": "before"}); got != "before" {
		t.Fatalf("before: %q", got)
	}
	as.rotate(asKeys("2"))
	// A token of the new keys makes the backend fetch them, and drop
	// the old ones.
	if status, _ := postInitialize(t, resource, as.token("c-rs256", resource, "mcp:tools")); status != 200 {
		t.Fatalf("a token of the new keys: %d", status)
	}
	if got := callText(t, c, "remote__echo", map[string]any{"text": "after"}); got != "after" {
		t.Fatalf("after the rotation: %q", got)
	}
	if n := strings.Count(gw.stderr.String(), "oauth: authorized"); n != 2 {
		t.Errorf("%d tokens obtained, want 2 (the first, and one after the refusal)", n)
	}
}
