//go:build linux

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
	rst "github.com/mcprt/mcprt/test/resourceservertest"
)

// oauthASEnv names a directory where test/oauth/install.sh installed the
// pinned authorization server (oidc-provider); it prints it, as CI does:
//
//	MCPRT_OAUTH_AS=$(bash test/oauth/install.sh) go test ./test/e2e -run OAuth
//
// Without it, or without node, the OAuth tests are skipped.
const oauthASEnv = "MCPRT_OAUTH_AS"

// The resource mcprt is told it is: the URL clients would reach it at
// behind a TLS-terminating proxy, not the loopback address it binds.
const oauthResource = "https://mcp.example.test/mcp"

// authServer is oidc-provider running test/oauth/as.mjs: a real
// authorization server, issuing client_credentials tokens for the
// resource a client names (and users' tokens, startAuthServerConfig's
// "authorizationCode").
type authServer struct {
	t        *testing.T
	issuer   string
	cmd      *exec.Cmd
	keysFile string
	keys     []*rst.Key // its signing keys, private halves: the test forges with them
	lines    chan string
	out      *syncBuffer
}

// The AS's clients: one per signing algorithm, one that gets opaque
// tokens, one without the scope mcprt requires, and mcprt's own (for
// introspection). All secrets are "secret-" + the id.
var asClients = []map[string]string{
	{"client_id": "c-rs256", "alg": "RS256", "scope": "mcp:tools mcp:admin"},
	{"client_id": "c-ps256", "alg": "PS256", "scope": "mcp:tools"},
	{"client_id": "c-es256", "alg": "ES256", "scope": "mcp:tools"},
	{"client_id": "c-eddsa", "alg": "EdDSA", "scope": "mcp:tools"},
	{"client_id": "c-opaque", "format": "opaque", "scope": "mcp:tools"},
	{"client_id": "c-admin-only", "alg": "ES256", "scope": "mcp:admin"},
	{"client_id": "c-admin-es", "alg": "ES256", "scope": "mcp:tools mcp:admin"},
	{"client_id": "mcprt-rs", "alg": "ES256", "scope": "mcp:tools"},
}

func asKeys(suffix string) []*rst.Key {
	var keys []*rst.Key
	for _, alg := range []string{"RS256", "PS256", "ES256", "EdDSA"} {
		keys = append(keys, rst.MustKey(alg, strings.ToLower(alg)+"-"+suffix))
	}
	return keys
}

// startAuthServer runs the authorization server with keys, or skips the
// test when it is not installed.
func startAuthServer(t *testing.T, keys []*rst.Key) *authServer {
	t.Helper()
	return startAuthServerTTL(t, keys, 300)
}

// startAuthServerTTL is startAuthServer issuing tokens that last ttl
// seconds.
func startAuthServerTTL(t *testing.T, keys []*rst.Key, ttl int) *authServer {
	t.Helper()
	return startAuthServerConfig(t, keys, ttl, nil)
}

// startAuthServerConfig is startAuthServerTTL with extra settings of
// as.mjs's CONFIG ("authorizationCode": true: users sign in too).
func startAuthServerConfig(t *testing.T, keys []*rst.Key, ttl int, extra map[string]any) *authServer {
	t.Helper()
	dir := os.Getenv(oauthASEnv)
	if dir == "" {
		t.Skipf("set %s to a directory with the authorization server installed (see oauthASEnv)", oauthASEnv)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "oidc-provider")); err != nil {
		t.Skipf("oidc-provider: %v", err)
	}
	// as.mjs as the checkout has it, resolving its imports in dir.
	tmp := t.TempDir()
	src, err := os.ReadFile("../oauth/as.mjs")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tmp, "as.mjs"), src, 0o600)
	if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(tmp, "node_modules")); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tmp, "package.json"), []byte(`{"type":"module"}`), 0o600)
	as := &authServer{t: t, keysFile: filepath.Join(tmp, "jwks.json"), lines: make(chan string, 16), out: &syncBuffer{}}
	as.writeKeys(keys)
	var clients []map[string]string
	for _, c := range asClients {
		m := map[string]string{"client_secret": "secret-" + c["client_id"]}
		for k, v := range c {
			m[k] = v
		}
		clients = append(clients, m)
	}
	settings := map[string]any{"keysFile": as.keysFile, "ttl": ttl, "scope": "mcp:tools mcp:admin", "clients": clients}
	for k, v := range extra {
		settings[k] = v
	}
	cfg, _ := json.Marshal(settings)
	os.WriteFile(filepath.Join(tmp, "config.json"), cfg, 0o600)

	as.cmd = exec.Command(node, filepath.Join(tmp, "as.mjs"), filepath.Join(tmp, "config.json"))
	as.cmd.Dir = tmp
	as.cmd.Stderr = as.out
	as.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := as.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := as.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			as.out.Write([]byte(sc.Text() + "\n"))
			if l := sc.Text(); strings.HasPrefix(l, "issuer ") || l == "rotated" {
				as.lines <- l
			}
		}
		io.Copy(io.Discard, stdout)
		as.cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		as.cmd.Process.Kill()
		<-exited
	})
	select {
	case l := <-as.lines:
		as.issuer = strings.TrimPrefix(l, "issuer ")
	case <-exited:
		t.Fatalf("the authorization server exited:\n%s", as.out)
	case <-time.After(callTimeout):
		t.Fatalf("the authorization server did not start:\n%s", as.out)
	}
	return as
}

func (as *authServer) writeKeys(keys []*rst.Key) {
	as.keys = keys
	if err := os.WriteFile(as.keysFile, rst.Set(true, keys...), 0o600); err != nil {
		as.t.Fatal(err)
	}
}

// rotate gives the server new keys (it reads them on SIGHUP), and waits
// until it serves with them.
func (as *authServer) rotate(keys []*rst.Key) {
	as.t.Helper()
	as.writeKeys(keys)
	as.cmd.Process.Signal(syscall.SIGHUP)
	select {
	case <-as.lines:
	case <-time.After(callTimeout):
		as.t.Fatalf("no rotation:\n%s", as.out)
	}
}

// token asks the server for a client_credentials token for resource.
func (as *authServer) token(clientID, resource, scope string) string {
	as.t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}, "scope": {scope}}
	req, _ := http.NewRequest(http.MethodPost, as.issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, "secret-"+clientID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		as.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(b, &body) != nil || body.AccessToken == "" {
		as.t.Fatalf("token for %s: %d %s\n%s", clientID, resp.StatusCode, b, as.out)
	}
	return body.AccessToken
}

// key is the server's signing key for alg.
func (as *authServer) key(alg string) *rst.Key {
	for _, k := range as.keys {
		if k.Alg == alg {
			return k
		}
	}
	as.t.Fatalf("no %s key", alg)
	return nil
}

// claims are what the server puts in a token for oauthResource, changed
// by edits (nil removes).
func (as *authServer) claims(edits map[string]any) map[string]any {
	now := time.Now().Unix()
	c := map[string]any{"iss": as.issuer, "sub": "c-es256", "client_id": "c-es256", "aud": oauthResource,
		"iat": now, "exp": now + 300, "jti": fmt.Sprint(time.Now().UnixNano()), "scope": "mcp:tools"}
	for k, v := range edits {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

// postInitialize sends an initialize with token ("" for none), and
// returns the status and the WWW-Authenticate header.
func postInitialize(t *testing.T, endpoint, token string) (int, string) {
	t.Helper()
	resp := postLegacy(t, endpoint, token, "", initializeBody)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// postLegacy posts body with token and, unless "", the session id.
func postLegacy(t *testing.T, endpoint, token, sid, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func withToken(o client.Options, token string) client.Options {
	o.Header = http.Header{"Authorization": {"Bearer " + token}}
	return o
}

// oauthServe runs mcprt serve -http as the resource server of as.
func oauthServe(t *testing.T, as *authServer, extra ...string) *httpProc {
	creds := filepath.Join(t.TempDir(), "introspection.json")
	os.WriteFile(creds, []byte(`{"client_id":"mcprt-rs","client_secret":"secret-mcprt-rs"}`), 0o600)
	args := append([]string{"serve", "-http", "127.0.0.1:0",
		"-http-oauth-issuer", as.issuer, "-http-oauth-resource", oauthResource, "-http-oauth-scopes", "mcp:tools",
		"-http-oauth-introspection-client", creds}, extra...)
	return startHTTP(t, binPath, args...)
}

// TestOAuthServeHTTP: mcprt serve -http as the resource server of a real
// authorization server. Its metadata names the server; without a token
// it says where to get one; the tokens the server issues (JWTs of each
// algorithm, and opaque ones, introspected) are accepted in both eras;
// tokens it did not issue for this resource, or that are not valid now,
// are refused, as is one without the required scope (403).
func TestOAuthServeHTTP(t *testing.T) {
	t.Parallel()
	as := startAuthServer(t, asKeys("1"))
	srv := oauthServe(t, as)
	base := strings.TrimSuffix(srv.url, "/mcp")

	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if resp.StatusCode != 200 || doc["resource"] != oauthResource || fmt.Sprint(doc["authorization_servers"]) != "["+as.issuer+"]" || fmt.Sprint(doc["scopes_supported"]) != "[mcp:tools]" {
			t.Errorf("%s: %d %v", p, resp.StatusCode, doc)
		}
	}
	status, challenge := postInitialize(t, srv.url, "")
	if want := `Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`; status != 401 || challenge != want {
		t.Errorf("no token: %d %q", status, challenge)
	}

	for _, clientID := range []string{"c-rs256", "c-ps256", "c-es256", "c-eddsa", "c-opaque"} {
		tok := as.token(clientID, oauthResource, "mcp:tools")
		if clientID != "c-opaque" && strings.Count(tok, ".") != 2 {
			t.Fatalf("%s: not a JWT: %.20s…", clientID, tok)
		}
		for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
			c := connectHTTP(t, srv.url, withToken(client.Options{Era: era}, tok))
			if got := callText(t, c, "echo", map[string]any{"text": clientID}); got != clientID {
				t.Errorf("%s %v: %q", clientID, era, got)
			}
		}
	}

	es := as.key("ES256")
	rs := as.key("RS256")
	attacker := rst.MustKey("ES256", es.KID)
	now := time.Now().Unix()
	real := as.token("c-es256", oauthResource, "mcp:tools")
	parts := strings.Split(real, ".")
	bare, withSig := rst.Unsigned(as.claims(nil), map[string]any{"kid": es.KID})
	for name, tok := range map[string]string{
		"wrong audience (issued for another resource)": as.token("c-es256", "https://other.example.test/mcp", "mcp:tools"),
		"expired":         es.Sign(as.claims(map[string]any{"exp": now - 120, "iat": now - 420}), nil),
		"not yet valid":   es.Sign(as.claims(map[string]any{"nbf": now + 120}), nil),
		"wrong issuer":    es.Sign(as.claims(map[string]any{"iss": "https://evil.example.test"}), nil),
		"audience-less":   es.Sign(as.claims(map[string]any{"aud": nil}), nil),
		"re-signed":       attacker.Sign(as.claims(nil), nil),
		"tampered":        parts[0] + "." + rst.Segment(as.claims(map[string]any{"sub": "admin"})) + "." + parts[2],
		"alg none":        bare,
		"alg none + sig":  withSig,
		"HMAC, PEM key":   rst.SignHMAC("HS256", rs.PublicKeyPEM(), as.claims(nil), map[string]any{"kid": rs.KID}),
		"HMAC, n bytes":   rst.SignHMAC("HS256", rs.PublicKeyBytes(), as.claims(nil), map[string]any{"kid": rs.KID}),
		"opaque, made up": "bm90LWEtdG9rZW4tdGhlLXNlcnZlci1pc3N1ZWQ",
	} {
		status, challenge := postInitialize(t, srv.url, tok)
		if status != 401 || !strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(challenge, `resource_metadata="`) {
			t.Errorf("%s: %d %q", name, status, challenge)
		}
	}
	// The forgeries' keys are the server's: with good claims they pass,
	// so it is the claims above that were refused.
	if status, _ := postInitialize(t, srv.url, es.Sign(as.claims(nil), nil)); status != 200 {
		t.Errorf("a token signed with the server's key, good claims: %d", status)
	}

	// A legacy session belongs to the subject that opened it: another
	// client's token with its id gets 404, its own goes on.
	mine, theirs := as.token("c-es256", oauthResource, "mcp:tools"), as.token("c-eddsa", oauthResource, "mcp:tools")
	sid := postLegacy(t, srv.url, mine, "", initializeBody).Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session")
	}
	postLegacy(t, srv.url, mine, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	if resp := postLegacy(t, srv.url, theirs, sid, list); resp.StatusCode != 404 {
		t.Errorf("another subject's token with the session: %d", resp.StatusCode)
	}
	if resp := postLegacy(t, srv.url, mine, sid, list); resp.StatusCode != 200 {
		t.Errorf("the session's own subject: %d", resp.StatusCode)
	}

	status, challenge = postInitialize(t, srv.url, as.token("c-admin-only", oauthResource, "mcp:admin"))
	if status != 403 || !strings.Contains(challenge, `error="insufficient_scope"`) || !strings.Contains(challenge, `scope="mcp:tools mcp:admin"`) {
		t.Errorf("without mcp:tools: %d %q", status, challenge)
	}
	for _, tok := range []string{real, "bm90LWEtdG9rZW4tdGhlLXNlcnZlci1pc3N1ZWQ"} {
		if strings.Contains(srv.stderr.String(), tok[len(tok)-20:]) {
			t.Errorf("a token is in mcprt's log:\n%s", srv.stderr)
		}
	}
}

// TestOAuthKeyRotation: the authorization server rotates its keys; mcprt
// follows without a restart: the new keys' tokens are accepted at once,
// the old keys' are refused from then on.
func TestOAuthKeyRotation(t *testing.T) {
	t.Parallel()
	as := startAuthServer(t, asKeys("1"))
	srv := oauthServe(t, as)
	old := as.token("c-es256", oauthResource, "mcp:tools")
	c := connectHTTP(t, srv.url, withToken(client.Options{Era: client.EraLegacy}, old))
	if got := callText(t, c, "echo", map[string]any{"text": "before"}); got != "before" {
		t.Fatalf("before: %q", got)
	}

	as.rotate(asKeys("2"))
	for _, clientID := range []string{"c-es256", "c-rs256", "c-eddsa"} {
		tok := as.token(clientID, oauthResource, "mcp:tools")
		c := connectHTTP(t, srv.url, withToken(client.Options{Era: client.EraModern}, tok))
		if got := callText(t, c, "echo", map[string]any{"text": "after"}); got != "after" {
			t.Errorf("%s after the rotation: %q", clientID, got)
		}
	}
	if status, challenge := postInitialize(t, srv.url, old); status != 401 {
		t.Errorf("a token of a key the server dropped: %d %q", status, challenge)
	}
	if code := srv.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestOAuthGatewayHTTP: mcprt gateway -http as a resource server in front
// of a remote backend: the client's token opens the gateway, and never
// reaches the backend, which gets the headers of the gateway's config
// and nothing of the client's.
func TestOAuthGatewayHTTP(t *testing.T) {
	t.Parallel()
	as := startAuthServer(t, asKeys("1"))
	f := newGateway(t)
	backend := startHTTP(t, f.mcprt("remote"), "serve", "-http", "127.0.0.1:0")
	target, _ := url.Parse(backend.url)
	// Between the gateway and the backend, a proxy that keeps every
	// request's headers.
	var mu sync.Mutex
	var seenHeaders []string
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		mu.Lock()
		for k, vs := range pr.In.Header {
			seenHeaders = append(seenHeaders, k+": "+strings.Join(vs, ","))
		}
		mu.Unlock()
		pr.SetURL(target)
		pr.Out.URL.Path = target.Path
	}})
	t.Cleanup(proxy.Close)
	cfg := f.config(map[string]any{"remote": map[string]any{"url": proxy.URL + "/mcp", "headers": map[string]string{"Authorization": "Bearer gateway-own"}}})
	gw := f.startGatewayHTTP(cfg, "-http-oauth-issuer", as.issuer, "-http-oauth-resource", oauthResource, "-http-oauth-scopes", "mcp:tools")

	if status, challenge := postInitialize(t, gw.url, ""); status != 401 || !strings.Contains(challenge, "resource_metadata=") {
		t.Errorf("no token: %d %q", status, challenge)
	}
	tok := as.token("c-rs256", oauthResource, "mcp:tools")
	// It failed twice in ~50 runs under heavy load ("could not start: its
	// subscriptions/listen stream broke: … unexpected EOF", through the
	// proxy) and not in 200 since: the logs, if it fails again.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gateway log:\n%s\nbackend log:\n%s", gw.stderr.String(), backend.stderr.String())
		}
	})
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		c := connectHTTP(t, gw.url, withToken(client.Options{Era: era}, tok))
		if got := callText(t, c, "remote__echo", map[string]any{"text": "through"}); got != "through" {
			t.Errorf("%v: %q", era, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(seenHeaders, "\n")
	if len(seenHeaders) == 0 || !strings.Contains(all, "Authorization: Bearer gateway-own") {
		t.Errorf("the backend did not get the gateway's own header:\n%s", all)
	}
	if strings.Contains(all, tok[len(tok)-20:]) || strings.Count(all, "Authorization:") != strings.Count(all, "Authorization: Bearer gateway-own") {
		t.Errorf("the client's token reached the backend:\n%s", all)
	}
}
