//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

// exchangeFixture: a real authorization server that serves token
// exchange to the gateway's client (c-rs256) with tokens of ttl seconds,
// refusing to represent c-eddsa; two backends, mcprt serve -http
// protected by it (A spoken to in 2025-11-25, B in 2026-07-28), each
// "auth": "exchange"; and mcprt gateway -http, itself protected by the
// same server.
type exchangeFixture struct {
	as             *authServer
	a, b           *httpProc // the backends
	resA, resB     string    // their resources
	gw             *httpProc
	gwResource     string
	exchangesSoFar func() int
}

func newExchangeFixture(t *testing.T, ttl int, extra ...string) *exchangeFixture {
	t.Helper()
	x := &exchangeFixture{}
	x.resA = fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	x.resB = fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	x.as = startAuthServerConfig(t, asKeys("1"), 300, map[string]any{"tokenExchange": map[string]any{
		"clients": []string{"c-rs256"}, "ttl": ttl, "refuse": []string{"c-eddsa"}, "resources": []string{x.resA, x.resB}}})
	serveAt := func(res string) *httpProc {
		return startHTTPEnv(t, []string{"LOG_LEVEL=debug"}, binPath, "serve", "-http", strings.TrimSuffix(strings.TrimPrefix(res, "http://"), "/mcp"),
			"-http-oauth-issuer", x.as.issuer, "-http-oauth-resource", res, "-http-oauth-scopes", "mcp:tools")
	}
	x.a, x.b = serveAt(x.resA), serveAt(x.resB)
	f := newGateway(t)
	oauth := map[string]any{"issuer": x.as.issuer, "clientId": "c-rs256", "clientSecret": "${GW_OAUTH_SECRET}", "scopes": "mcp:tools"}
	cfg := f.config(map[string]any{
		"a": map[string]any{"url": x.a.url, "auth": "exchange", "protocol": "legacy", "oauth": oauth},
		"b": map[string]any{"url": x.b.url, "auth": "exchange", "protocol": "modern", "oauth": oauth},
	})
	x.gwResource = fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	x.gw = startHTTPEnv(t, []string{"GW_OAUTH_SECRET=secret-c-rs256", "LOG_LEVEL=debug"}, binPath,
		append([]string{"gateway", "-config", cfg, "-http", strings.TrimSuffix(strings.TrimPrefix(x.gwResource, "http://"), "/mcp"),
			"-http-oauth-issuer", x.as.issuer, "-http-oauth-resource", x.gwResource, "-http-oauth-scopes", "mcp:tools"}, extra...)...)
	t.Cleanup(func() {
		log := x.gw.stderr.String()
		if strings.Contains(log, "secret-c-rs256") {
			t.Errorf("the client secret reached the gateway's log")
		}
		if strings.Contains(log, "eyJ") {
			t.Errorf("a JWT reached the gateway's log")
		}
		if t.Failed() {
			t.Logf("gateway log:\n%s\nA's log:\n%s\nauthorization server:\n%s", tail(log, 6000), tail(x.a.stderr.String(), 2000), tail(x.as.out.String(), 2000))
		}
	})
	return x
}

// exchanges counts the exchanges the authorization server made for sub.
func (x *exchangeFixture) exchanges(sub string) int {
	return strings.Count(x.as.out.String(), "exchanged "+sub+" for ")
}

// whoami calls backend's whoami through c and returns what it says.
func whoami(t *testing.T, c *client.Client, backend string) map[string]any {
	t.Helper()
	text := callText(t, c, backend+"__whoami", map[string]any{})
	var who map[string]any
	if err := json.Unmarshal([]byte(text), &who); err != nil {
		t.Fatalf("%s__whoami: %q", backend, text)
	}
	return who
}

// TestOAuthGatewayExchange: two users through mcprt gateway -http reach
// OAuth-protected backends, each as themselves: the gateway exchanges
// each caller's token (RFC 8693) for one for the backend, so the
// backend's whoami names that caller, never the other, in both eras on
// both sides, and names the gateway as the actor. The exchanged token is
// kept per caller and backend (one exchange for many calls), and
// renewed when it nears its expiry (tokens of 4 s). A token for backend
// A is refused by backend B. A refused exchange tells the caller why, in
// words; with the authorization server down, a new caller is told it
// could not be reached, naming it, within the call's bound.
func TestOAuthGatewayExchange(t *testing.T) {
	t.Parallel()
	x := newExchangeFixture(t, 4)
	users := []string{"c-es256", "c-ps256"}
	tokens := map[string]string{}
	for _, u := range users {
		tokens[u] = x.as.token(u, x.gwResource, "mcp:tools")
	}
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		for _, u := range users {
			c := connectHTTP(t, x.gw.url, withToken(client.Options{Era: era}, tokens[u]))
			for _, backend := range []string{"a", "b"} {
				who := whoami(t, c, backend)
				if who["sub"] != u {
					t.Errorf("%v: %s through the gateway reaches %s as %v, want %s", era, u, backend, who["sub"], u)
				}
				if act, _ := who["act"].(map[string]any); act["sub"] != "c-rs256" {
					t.Errorf("%v: %s: the actor is %v, want the gateway's client c-rs256", era, backend, who["act"])
				}
				want := x.resA
				if backend == "b" {
					want = x.resB
				}
				if aud, _ := who["aud"].([]any); len(aud) != 1 || aud[0] != want {
					t.Errorf("%v: %s's token is for %v, want %s", era, backend, who["aud"], want)
				}
			}
		}
	}
	// Four calls per user per backend, within the token's first half of
	// life mostly: about one exchange each, not one per call.
	for _, u := range users {
		if n := x.exchanges(u); n < 2 || n > 4 {
			t.Errorf("%s: %d exchanges for 4 calls to each of 2 backends, want 2 to 4 (kept per caller and backend)", u, n)
		}
	}

	// Renewal: past the token's lifetime, the call goes through on a new
	// exchange.
	c := connectHTTP(t, x.gw.url, withToken(client.Options{}, tokens["c-es256"]))
	before := x.exchanges("c-es256")
	time.Sleep(4500 * time.Millisecond)
	if who := whoami(t, c, "a"); who["sub"] != "c-es256" {
		t.Errorf("after expiry: %v", who)
	}
	if n := x.exchanges("c-es256"); n <= before {
		t.Errorf("no exchange after the token expired (%d before, %d after)", before, n)
	}

	// A token for A, presented to B: refused.
	tokA := exchangeAt(t, x.as, "c-rs256", tokens["c-es256"], x.resA)
	if status, _ := postInitialize(t, x.b.url, tokA); status != http.StatusUnauthorized {
		t.Errorf("a token for backend A presented to B: %d, want 401", status)
	}
	if status, _ := postInitialize(t, x.a.url, tokA); status != http.StatusOK {
		t.Errorf("a token for backend A presented to A: %d, want 200", status)
	}

	// A refused exchange: the caller hears why, in words.
	refused := connectHTTP(t, x.gw.url, withToken(client.Options{}, x.as.token("c-eddsa", x.gwResource, "mcp:tools")))
	r, err := refused.CallTool(testCtx(t), "a__whoami", map[string]any{})
	if err != nil || !r.IsError || len(r.Content) == 0 {
		t.Fatalf("a refused exchange: %+v %v", r, err)
	}
	if msg := r.Content[0].Text; strings.Contains(msg, "eyJ") {
		t.Errorf("a refused exchange's message holds a token: %q", msg)
	}
	if msg := r.Content[0].Text; !strings.Contains(msg, "refused to exchange your sign-in") || !strings.Contains(msg, "c-eddsa may not be represented by c-rs256") {
		t.Errorf("a refused exchange says: %q", msg)
	}

	// The authorization server down: a caller the gateway has not
	// exchanged for yet is told, naming it, well within the bound.
	lateJWT := x.as.token("c-admin-es", x.gwResource, "mcp:tools")
	x.as.cmd.Process.Kill()
	down := connectHTTP(t, x.gw.url, withToken(client.Options{}, lateJWT))
	start := time.Now()
	r, err = down.CallTool(testCtx(t), "a__whoami", map[string]any{})
	if err != nil || !r.IsError || len(r.Content) == 0 {
		t.Fatalf("the authorization server down: %+v %v", r, err)
	}
	if msg := r.Content[0].Text; !strings.Contains(msg, x.as.issuer) || strings.Contains(msg, "eyJ") || strings.Contains(msg, "secret-c-rs256") {
		t.Errorf("the authorization server down: %q does not name it (%s)", msg, x.as.issuer)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the authorization server down: answered after %v", took)
	}
	for _, secret := range []string{tokens["c-es256"], tokens["c-ps256"], lateJWT} {
		if strings.Contains(x.gw.stderr.String(), secret) {
			t.Errorf("a caller's token reached the gateway's log")
		}
	}
}

// TestOAuthGatewayExchangeNoToken: over stdio nobody has a token, and a
// backend reached as each caller says so.
func TestOAuthGatewayExchangeNoToken(t *testing.T) {
	t.Parallel()
	as := startAuthServerConfig(t, asKeys("1"), 300, map[string]any{"tokenExchange": map[string]any{"clients": []string{"c-rs256"}}})
	res := fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	backend := startHTTP(t, binPath, "serve", "-http", strings.TrimSuffix(strings.TrimPrefix(res, "http://"), "/mcp"),
		"-http-oauth-issuer", as.issuer, "-http-oauth-resource", res, "-http-oauth-scopes", "mcp:tools")
	f := newGateway(t)
	cfg := f.config(map[string]any{"a": map[string]any{"url": backend.url, "auth": "exchange",
		"oauth": map[string]any{"issuer": as.issuer, "clientId": "c-rs256", "clientSecret": "secret-c-rs256", "scopes": "mcp:tools"}}})
	gw := startHTTP(t, binPath, "gateway", "-config", cfg, "-http", "127.0.0.1:0")
	c := connectHTTP(t, gw.url, client.Options{})
	r, err := c.CallTool(testCtx(t), "a__whoami", map[string]any{})
	if err != nil || !r.IsError || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, "carries no OAuth access token") {
		t.Fatalf("a call without a token: %+v %v", r, err)
	}
}

// exchangeAt exchanges subject for a token for resource, as client.
func exchangeAt(t *testing.T, as *authServer, clientID, subject, resource string) string {
	t.Helper()
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {subject},
		"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "resource": {resource}, "scope": {"mcp:tools"}}
	req, _ := http.NewRequest(http.MethodPost, as.issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, "secret-"+clientID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &body) != nil || body.AccessToken == "" {
		t.Fatalf("exchange: %d %s", resp.StatusCode, b)
	}
	return body.AccessToken
}

// TestOAuthGatewayExchangeAuditStatus: with "auth": "exchange", the
// audit log names each call's caller and the credential mode
// "exchange", and the status page lists each caller beside it; neither
// holds a token (the callers' nor the exchanged ones).
func TestOAuthGatewayExchangeAuditStatus(t *testing.T) {
	t.Parallel()
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	x := newExchangeFixture(t, 300, "-audit", auditPath, "-http-status", "/status")
	tokens := map[string]string{}
	for _, u := range []string{"c-es256", "c-ps256"} {
		tokens[u] = x.as.token(u, x.gwResource, "mcp:tools")
		c := connectHTTP(t, x.gw.url, withToken(client.Options{}, tokens[u]))
		if who := whoami(t, c, "a"); who["sub"] != u {
			t.Fatalf("%s reaches a as %v", u, who["sub"])
		}
	}
	req, _ := http.NewRequest("GET", strings.TrimSuffix(x.gw.url, "/mcp")+"/status", nil)
	req.Header.Set("Authorization", "Bearer "+tokens["c-es256"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`data-auth="exchange">exchange (callers: 2)`, `data-principal="sub:c-es256" data-auth="exchange"`, `data-principal="sub:c-ps256" data-auth="exchange"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the status page lacks %q:\n%s", want, page)
		}
	}
	for u, tok := range tokens {
		noToken(t, "the status page (token of "+u+")", string(page), tok)
	}
	seen := map[string]bool{}
	deadline := time.Now().Add(callTimeout)
	for len(seen) < 2 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		data, _ := os.ReadFile(auditPath)
		for u, tok := range tokens {
			noToken(t, "the audit log (token of "+u+")", string(data), tok)
		}
		for l := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(l), &e) == nil && e["tool"] == "a__whoami" && e["credential"] == "exchange" && e["backend"] == "a" {
				seen[e["principal"].(string)] = true
			}
		}
	}
	if !seen["c-es256"] || !seen["c-ps256"] {
		t.Errorf("audit lines of a__whoami with credential exchange, by principal: %v", seen)
	}
}
