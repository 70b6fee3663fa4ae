//go:build linux

package e2e

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
	rst "github.com/mcprt/mcprt/test/resourceservertest"
)

// dpopToken asks the authorization server for a client_credentials token
// bound to key (RFC 9449 section 5: a DPoP proof on the token request);
// it returns the token and its token_type.
func (as *authServer) dpopToken(key *rst.Key, clientID, resource, scope string) (string, string) {
	as.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}, "scope": {scope}}
	req, _ := http.NewRequest(http.MethodPost, as.issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, "secret-"+clientID)
	req.Header.Set("DPoP", key.Proof(map[string]any{"jti": rand.Text(), "htm": "POST", "htu": as.issuer + "/token", "iat": time.Now().Unix()}, nil))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		as.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(b, &body) != nil || body.AccessToken == "" {
		as.t.Fatalf("DPoP token for %s: %d %s\n%s", clientID, resp.StatusCode, b, as.out)
	}
	return body.AccessToken, body.TokenType
}

// postDPoP posts an initialize to endpoint with token under scheme and
// the DPoP header proof ("" for none); it returns the status and the
// WWW-Authenticate values.
func postDPoP(t *testing.T, endpoint, scheme, token, proof string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", scheme+" "+token)
	if proof != "" {
		req.Header.Set("DPoP", proof)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, strings.Join(resp.Header.Values("WWW-Authenticate"), ", ")
}

// TestOAuthDPoP: mcprt serve -http -http-oauth-dpop-required as the
// resource server of a real authorization server (oidc-provider, which
// binds tokens to a DPoP key when the token request carries a proof),
// and mcprt gateway as its client: the gateway's own OAuth client sees
// the metadata ask for DPoP, gets a DPoP-bound token and presents it
// with a proof on every request, and calls go through, across renewals.
// Then the attacker's view, against the same server: the stolen bound
// token as a bearer token, with a replayed proof, with a proof for
// another URL or method, with the wrong ath, or with its own key, is
// refused (RFC 9449 section 4.3 and 7.2: MUST); an unbound token too,
// DPoP being required.
func TestOAuthDPoP(t *testing.T) {
	t.Parallel()
	as := startAuthServerTTL(t, asKeys("1"), 3)
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	backend := startHTTPEnv(t, []string{"LOG_LEVEL=debug"}, binPath, "serve", "-http", strings.TrimSuffix(strings.TrimPrefix(resource, "http://"), "/mcp"),
		"-http-oauth-issuer", as.issuer, "-http-oauth-resource", resource, "-http-oauth-scopes", "mcp:tools", "-http-oauth-dpop-required")
	f := newGateway(t)
	cfg := f.config(map[string]any{"remote": map[string]any{"url": backend.url,
		"oauth": map[string]any{"issuer": as.issuer, "clientId": "c-es256", "clientSecret": "${GW_OAUTH_SECRET}", "scopes": "mcp:tools"}}})
	gw := startHTTPEnv(t, []string{"GW_OAUTH_SECRET=secret-c-es256", "LOG_LEVEL=debug"}, binPath,
		"gateway", "-config", cfg, "-http", "127.0.0.1:0")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gateway log:\n%s\nbackend log:\n%s", tail(gw.stderr.String(), 4000), tail(backend.stderr.String(), 4000))
		}
	})
	c := connectHTTP(t, gw.url, client.Options{})
	deadline := time.Now().Add(5 * time.Second) // past a token lifetime
	for calls := 0; time.Now().Before(deadline) || calls < 2; calls++ {
		text := fmt.Sprintf("call %d", calls)
		if got := callText(t, c, "remote__echo", map[string]any{"text": text}); got != text {
			t.Fatalf("call %d through the gateway: %q", calls, got)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if strings.Contains(backend.stderr.String(), "token refused") || strings.Contains(backend.stderr.String(), "proof refused") {
		t.Errorf("the backend refused some of the gateway's requests:\n%s", tail(backend.stderr.String(), 2000))
	}

	// The attacker's side. A token bound to the client's key, from the
	// authorization server itself.
	key := rst.MustKey("ES256", "")
	tok, typ := as.dpopToken(key, "c-es256", resource, "mcp:tools")
	if typ != "DPoP" {
		t.Fatalf("token_type %q, want DPoP", typ)
	}
	proof := func(edits map[string]any, k *rst.Key) string {
		c := map[string]any{"jti": rand.Text(), "htm": "POST", "htu": resource, "iat": time.Now().Unix(), "ath": rst.ATH(tok)}
		for n, v := range edits {
			c[n] = v
		}
		return k.Proof(c, nil)
	}
	good := proof(nil, key)
	if status, h := postDPoP(t, resource, "DPoP", tok, good); status != 200 {
		t.Fatalf("the bound token with its proof: %d %s", status, h)
	}
	unbound := as.token("c-es256", resource, "mcp:tools")
	for name, req := range map[string][3]string{
		"stolen token as Bearer":   {"Bearer", tok, ""},
		"replayed proof":           {"DPoP", tok, good},
		"proof for another URL":    {"DPoP", tok, proof(map[string]any{"htu": "http://127.0.0.1:1/mcp"}, key)},
		"proof for another method": {"DPoP", tok, proof(map[string]any{"htm": "GET"}, key)},
		"wrong ath":                {"DPoP", tok, proof(map[string]any{"ath": rst.ATH(unbound)}, key)},
		"the attacker's key":       {"DPoP", tok, proof(nil, rst.MustKey("ES256", ""))},
		"no proof":                 {"DPoP", tok, ""},
		"unbound token":            {"Bearer", unbound, ""},
	} {
		// A 401 with a DPoP challenge (RFC 9449 section 7.1): the
		// scheme at the start of a challenge, not in a description.
		status, h := postDPoP(t, resource, req[0], req[1], req[2])
		if status != 401 || !(strings.HasPrefix(h, "DPoP ") || strings.Contains(h, ", DPoP algs=")) {
			t.Errorf("%s: %d %s", name, status, h)
		}
	}
	// The metadata says DPoP is required (RFC 9728 section 2).
	resp, err := http.Get(strings.Replace(resource, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"dpop_bound_access_tokens_required":true`) {
		t.Errorf("metadata: %s", b)
	}
}

// TestOAuthNoPrincipal: two users whose tokens name neither a subject nor
// a client (the authorization server's keys, claims it may issue to an
// introspecting server) are refused, and so cannot share a legacy
// session. At 00335bc both were the principal "client:": the second user
// used the first one's session (issue 31 item 6).
func TestOAuthNoPrincipal(t *testing.T) {
	t.Parallel()
	as := startAuthServer(t, asKeys("1"))
	srv := oauthServe(t, as)
	es := as.key("ES256")
	alice := es.Sign(as.claims(map[string]any{"sub": nil, "client_id": nil, "username": "alice"}), nil)
	bob := es.Sign(as.claims(map[string]any{"sub": nil, "client_id": nil, "username": "bob"}), nil)
	resp := postLegacy(t, srv.url, alice, "", initializeBody)
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("a token naming no one: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		postLegacy(t, srv.url, alice, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if resp := postLegacy(t, srv.url, bob, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode == 200 {
			t.Errorf("bob used alice's session")
		}
	}
}

// TestOAuthIntrospectionEndpoint: mcprt serve
// -http-oauth-introspection-endpoint introspects opaque tokens at the
// URL given rather than the metadata's, for authorization servers that
// publish none (issue 31, interop): here a proxy in front of the real
// authorization server's endpoint, which sees the calls.
func TestOAuthIntrospectionEndpoint(t *testing.T) {
	t.Parallel()
	as := startAuthServer(t, asKeys("1"))
	var calls atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		req, _ := http.NewRequest(r.Method, as.issuer+"/token/introspection", r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(proxy.Close)
	srv := oauthServe(t, as, "-http-oauth-introspection-endpoint", proxy.URL+"/introspect")
	tok := as.token("c-opaque", oauthResource, "mcp:tools")
	if status, h := postInitialize(t, srv.url, tok); status != 200 {
		t.Fatalf("opaque token: %d %s", status, h)
	}
	if calls.Load() != 1 {
		t.Errorf("%d introspections at the endpoint given, want 1", calls.Load())
	}
}

// TestOAuthDPoPNonce: with -http-oauth-dpop-nonce, mcprt's own client
// (the gateway's) answers the use_dpop_nonce challenge with the nonce
// given (RFC 9449 section 9) and its calls go through; a proof made
// without the nonce gets the challenge and a DPoP-Nonce.
func TestOAuthDPoPNonce(t *testing.T) {
	t.Parallel()
	as := startAuthServer(t, asKeys("1"))
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	backend := startHTTPEnv(t, []string{"LOG_LEVEL=debug"}, binPath, "serve", "-http", strings.TrimSuffix(strings.TrimPrefix(resource, "http://"), "/mcp"),
		"-http-oauth-issuer", as.issuer, "-http-oauth-resource", resource, "-http-oauth-scopes", "mcp:tools",
		"-http-oauth-dpop-required", "-http-oauth-dpop-nonce")
	f := newGateway(t)
	cfg := f.config(map[string]any{"remote": map[string]any{"url": backend.url,
		"oauth": map[string]any{"issuer": as.issuer, "clientId": "c-es256", "clientSecret": "${GW_OAUTH_SECRET}", "scopes": "mcp:tools"}}})
	gw := startHTTPEnv(t, []string{"GW_OAUTH_SECRET=secret-c-es256", "LOG_LEVEL=debug"}, binPath,
		"gateway", "-config", cfg, "-http", "127.0.0.1:0")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gateway log:\n%s\nbackend log:\n%s", tail(gw.stderr.String(), 4000), tail(backend.stderr.String(), 4000))
		}
	})
	c := connectHTTP(t, gw.url, client.Options{})
	for i := range 3 {
		text := fmt.Sprintf("call %d", i)
		if got := callText(t, c, "remote__echo", map[string]any{"text": text}); got != text {
			t.Fatalf("call %d through the gateway: %q", i, got)
		}
	}
	key := rst.MustKey("ES256", "")
	tok, _ := as.dpopToken(key, "c-es256", resource, "mcp:tools")
	p := key.Proof(map[string]any{"jti": rand.Text(), "htm": "POST", "htu": resource, "iat": time.Now().Unix(), "ath": rst.ATH(tok)}, nil)
	req, _ := http.NewRequest(http.MethodPost, resource, strings.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "DPoP "+tok)
	req.Header.Set("DPoP", p)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	nonce := resp.Header.Get("DPoP-Nonce")
	if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `DPoP error="use_dpop_nonce"`) || nonce == "" {
		t.Fatalf("a proof without the nonce: %d %q nonce %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), nonce)
	}
	p = key.Proof(map[string]any{"jti": rand.Text(), "htm": "POST", "htu": resource, "iat": time.Now().Unix(), "ath": rst.ATH(tok), "nonce": nonce}, nil)
	if status, h := postDPoP(t, resource, "DPoP", tok, p); status != 200 {
		t.Errorf("with the nonce: %d %s", status, h)
	}
}
