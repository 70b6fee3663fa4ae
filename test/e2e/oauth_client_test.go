package e2e

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	backend := startHTTPEnv(t, []string{"LOG_LEVEL=debug"}, binPath, "serve", "-http", strings.TrimSuffix(strings.TrimPrefix(resource, "http://"), "/mcp"),
		"-http-oauth-issuer", as.issuer, "-http-oauth-resource", resource, "-http-oauth-scopes", "mcp:tools")
	f := newGateway(t)
	cfg := f.config(map[string]any{"remote": map[string]any{"url": backend.url,
		"oauth": map[string]any{"issuer": as.issuer, "clientId": "c-es256", "clientSecret": "${GW_OAUTH_SECRET}", "scopes": "mcp:tools"}}})
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

// authorizations counts the tokens the gateway says it obtained, waiting
// (within callTimeout) for want of them: its log reaches the test a
// moment after the call it served.
func authorizations(gw *httpProc, want int) int {
	deadline := time.Now().Add(callTimeout)
	for {
		n := strings.Count(gw.stderr.String(), "oauth: authorized")
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
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
	if n := authorizations(gw, 3); n < 3 {
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
	if n := authorizations(gw, 2); n != 2 {
		t.Errorf("%d tokens obtained, want 2 (the first, and one after the refusal)", n)
	}
}

// signIn is the user's browser at authURL, the address mcprt login
// printed: it follows the authorization server's redirects to its sign-in
// form (oidc-provider's development interactions), signs in as user with
// any password, submits the consent form that follows, and follows the
// last redirect, to mcprt's loopback listener. It returns the page that
// listener answered, and where it was.
func signIn(t *testing.T, as *authServer, authURL, user string) (string, *url.URL) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: callTimeout}
	page := func(resp *http.Response, err error) (string, *url.URL) {
		t.Helper()
		if err != nil {
			t.Fatalf("browser: %v\nauthorization server:\n%s", err, as.out)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("browser at %s: HTTP %d\n%s\nauthorization server:\n%s", resp.Request.URL, resp.StatusCode, tail(string(b), 2000), as.out)
		}
		return string(b), resp.Request.URL
	}
	body, at := page(browser.Get(authURL))
	for _, step := range []struct {
		prompt string
		fields url.Values
	}{
		{"login", url.Values{"login": {user}, "password": {"any password"}}},
		{"consent", url.Values{}},
	} {
		form := formRE.FindStringSubmatch(body)
		if form == nil || !strings.Contains(body, `name="prompt" value="`+step.prompt+`"`) {
			t.Fatalf("at %s, no %s form:\n%s", at, step.prompt, tail(body, 2000))
		}
		action, err := at.Parse(html.UnescapeString(form[1]))
		if err != nil {
			t.Fatal(err)
		}
		step.fields.Set("prompt", step.prompt)
		body, at = page(browser.PostForm(action.String(), step.fields))
	}
	return body, at
}

var formRE = regexp.MustCompile(`<form[^>]*action="([^"]*)"[^>]*method="post"`)

// loginAS runs the real authorization server with users (the
// authorization code grant, dynamic registration, refresh tokens) and
// mcprt serve -http protected by it; it returns the server's endpoint and
// resource, and the environment of a user whose configuration folder is
// new. Its one pre-registered client is mcprt-cli, public.
func loginAS(t *testing.T) (as *authServer, srv *httpProc, resource string, env []string, home string) {
	as = startAuthServerConfig(t, asKeys("1"), 300, map[string]any{"authorizationCode": true,
		// RFC 8252 §7.3: the port of a loopback redirect URI is the
		// client's to choose at each sign-in.
		"publicClients": []map[string]any{{"client_id": "mcprt-cli", "redirect_uris": []string{"http://127.0.0.1/callback"}}}})
	resource = fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	srv = startHTTP(t, binPath, "serve", "-http", strings.TrimSuffix(strings.TrimPrefix(resource, "http://"), "/mcp"),
		"-http-oauth-issuer", as.issuer, "-http-oauth-resource", resource, "-http-oauth-scopes", "mcp:tools")
	home = t.TempDir()
	env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))
	return as, srv, resource, env, home
}

// mcprtLogin runs mcprt login -url -no-browser and, as the user, opens
// the address it prints in a browser (signIn); it returns what login
// said.
func mcprtLogin(t *testing.T, as *authServer, endpoint string, env []string, user string, flags ...string) string {
	t.Helper()
	login := exec.Command(binPath, append([]string{"login", "-url", endpoint, "-no-browser"}, flags...)...)
	login.Env = env
	login.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, _ := login.StderrPipe()
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	opened := 0
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if u := strings.TrimSpace(line); strings.HasPrefix(u, as.issuer+"/") {
			opened++
			body, at := signIn(t, as, u, user)
			if at.Host == strings.TrimPrefix(as.issuer, "http://") || !strings.Contains(body, "Authorization received") {
				t.Errorf("the browser ended at %s:\n%s", at, tail(body, 1000))
			}
		}
	}
	if err := login.Wait(); err != nil {
		t.Fatalf("mcprt login: %v\n%s\nauthorization server:\n%s", err, out.String(), as.out)
	}
	if opened != 1 {
		t.Errorf("mcprt login printed %d sign-in addresses, want 1:\n%s", opened, out.String())
	}
	return out.String()
}

// storedToken reads the one token file of the user's configuration
// folder: its path, and its one issuer's entry.
func storedToken(t *testing.T, home string) (string, map[string]any) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(home, ".config", "mcprt", "oauth", "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files: %q", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Issuers map[string]map[string]any `json:"issuers"`
	}
	if err := json.Unmarshal(b, &f); err != nil || len(f.Issuers) != 1 {
		t.Fatalf("token file: %v\n%s", err, b)
	}
	for _, s := range f.Issuers {
		return files[0], s
	}
	return "", nil
}

// jwtClaims are a JWT's claims, unverified (the resource server verifies).
func jwtClaims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	var c map[string]any
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || json.Unmarshal(b, &c) != nil {
		t.Fatalf("JWT claims: %v", err)
	}
	return c
}

// TestOAuthLoginCall: mcprt login -url signs in to an OAuth-protected
// mcprt serve -http through a real authorization server (oidc-provider:
// mcprt registers itself dynamically, sends the user's browser, the test,
// to its sign-in and consent forms with PKCE S256 and the resource
// indicator, and takes the code at its loopback listener); the token is
// a JWT for the resource, kept with its refresh token in a file only the
// user can read; mcprt call -url sends it, and renews it with the
// refresh token once it has (the client thinks) expired; mcprt logout
// forgets it, and call says to sign in again.
func TestOAuthLoginCall(t *testing.T) {
	t.Parallel()
	as, srv, resource, env, home := loginAS(t)

	out := mcprtLogin(t, as, srv.url, env, "user-1")
	if !strings.Contains(out, "signed in to "+resource) {
		t.Errorf("mcprt login said:\n%s", out)
	}
	file, stored := storedToken(t, home)
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", fi.Mode().Perm())
	}
	tok, _ := stored["token"].(map[string]any)
	access, _ := tok["access_token"].(string)
	c := jwtClaims(t, access)
	if c["aud"] != resource || c["iss"] != as.issuer || c["sub"] != "user-1" || c["client_id"] != stored["client_id"] {
		t.Errorf("the access token's claims: %v (registered client %v)", c, stored["client_id"])
	}
	if tok["refresh_token"] == nil || tok["refresh_token"] == "" {
		t.Errorf("no refresh token kept (scope %q)", tok["scope"])
	}
	if strings.Contains(out, access) || strings.Contains(srv.stderr.String(), access) {
		t.Errorf("the access token reached a log")
	}

	call := func(text string) (string, error) {
		cmd := exec.Command(binPath, "call", "-url", srv.url, "echo", "text="+text)
		cmd.Env = env
		got, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(got)), err
	}
	if got, err := call("with the kept token"); err != nil || got != "with the kept token" {
		t.Fatalf("mcprt call -url after login: %v\n%s", err, got)
	}

	// The kept token expired, for all the client knows, and is no good
	// besides: only a refresh gets the next call through (mcprt call has
	// no browser to sign in again with).
	b, _ := os.ReadFile(file)
	b = []byte(strings.Replace(string(b), access, "not-a-token", 1))
	var f map[string]any
	json.Unmarshal(b, &f)
	for _, s := range f["issuers"].(map[string]any) {
		s.(map[string]any)["token"].(map[string]any)["expiry"] = time.Now().Add(-time.Minute).Format(time.RFC3339)
	}
	b, _ = json.Marshal(f)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := call("with a refreshed token"); err != nil || got != "with a refreshed token" {
		t.Fatalf("mcprt call -url after the token expired: %v\n%s\nauthorization server:\n%s", err, got, as.out)
	}
	_, stored = storedToken(t, home)
	if a := stored["token"].(map[string]any)["access_token"]; a == "not-a-token" || a == access {
		t.Errorf("the token was not renewed")
	}

	logout := exec.Command(binPath, "logout", "-url", srv.url)
	logout.Env = env
	if got, err := logout.CombinedOutput(); err != nil {
		t.Fatalf("mcprt logout: %v\n%s", err, got)
	}
	if got, err := call("x"); err == nil || !strings.Contains(got, "HTTP 401") || !strings.Contains(got, "mcprt login -url "+srv.url) {
		t.Errorf("mcprt call -url after logout: %v\n%s", err, got)
	}
}

// TestOAuthLoginPreregistered: mcprt login -client-id signs in as a
// client pre-registered at the authorization server (public, native,
// its redirect URI http://127.0.0.1/callback, which the loopback
// listener's port of the moment matches), registers nothing, and
// mcprt call -url then works with the token and that client.
func TestOAuthLoginPreregistered(t *testing.T) {
	t.Parallel()
	as, srv, resource, env, home := loginAS(t)
	if out := mcprtLogin(t, as, srv.url, env, "user-2", "-client-id", "mcprt-cli"); !strings.Contains(out, "signed in to "+resource) {
		t.Errorf("mcprt login said:\n%s", out)
	}
	_, stored := storedToken(t, home)
	access, _ := stored["token"].(map[string]any)["access_token"].(string)
	if c := jwtClaims(t, access); c["client_id"] != "mcprt-cli" || c["sub"] != "user-2" || c["aud"] != resource {
		t.Errorf("the access token's claims: %v", c)
	}
	cmd := exec.Command(binPath, "call", "-url", srv.url, "echo", "text=hi")
	cmd.Env = env
	if got, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(got)) != "hi" {
		t.Fatalf("mcprt call -url after login: %v\n%s", err, got)
	}
}

// TestOAuthGatewayHostileBackend (issue 31, items 1 and 4): mcprt gateway
// holds client credentials of a real authorization server (its "oauth"
// block names the issuer). Three remote backends play the attacker: one
// whose protected resource metadata names the attacker's own
// authorization server, one whose 401 sends the gateway to the cloud
// metadata service (169.254.169.254), one whose 401 sends it to another
// origin's document, one whose well-known document redirects to
// 169.254.169.254. The attacker's servers record what they receive:
// never the secret (RFC 6749 §2.3.1: client credentials authenticate to
// the server that issued them), nothing at all from the other origin
// (RFC 9728 §7.7, MCP authorization "Server-Side Request Forgery": the
// client does not fetch internal URLs on a server's say-so). Refusing
// 169.254.169.254 happens before any connection: the resource_metadata
// must be on the backend's own origin, and discovery follows no redirect.
func TestOAuthGatewayHostileBackend(t *testing.T) {
	t.Parallel()
	as := startAuthServerTTL(t, asKeys("1"), 300)
	const secret = "secret-c-es256"
	var mu sync.Mutex
	var got []string // what the attacker's servers received
	record := func(r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Host+" "+r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(b))
		mu.Unlock()
	}
	var evil *httptest.Server
	evil = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]any{"issuer": evil.URL, "token_endpoint": evil.URL + "/token",
				"code_challenge_methods_supported": []string{"S256"}})
		case "/token":
			io.WriteString(w, `{"access_token":"evil","token_type":"Bearer","expires_in":300}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer evil.Close()
	backend := func(prmAS, challenge string) *httptest.Server {
		var b *httptest.Server
		b = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			record(r)
			if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") && prmAS == "redirect" {
				http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
				return
			}
			if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") && prmAS != "" {
				json.NewEncoder(w).Encode(map[string]any{"resource": b.URL + "/mcp", "authorization_servers": []string{prmAS}})
				return
			}
			if r.URL.Path != "/mcp" {
				http.NotFound(w, r)
				return
			}
			h := "Bearer"
			if challenge != "" {
				h += ` resource_metadata="` + challenge + `"`
			}
			w.Header().Set("WWW-Authenticate", h)
			w.WriteHeader(http.StatusUnauthorized)
		}))
		t.Cleanup(b.Close)
		return b
	}
	named := backend(evil.URL, "")
	steered := backend("", "http://169.254.169.254/latest/meta-data/iam/security-credentials/")
	other := backend("", evil.URL+"/.well-known/oauth-protected-resource/mcp")
	redirected := backend("redirect", "")
	block := map[string]any{"issuer": as.issuer, "clientId": "c-es256", "clientSecret": "${GW_OAUTH_SECRET}"}
	f := newGateway(t)
	cfg := f.config(map[string]any{
		"named":   map[string]any{"url": named.URL + "/mcp", "oauth": block},
		"steered": map[string]any{"url": steered.URL + "/mcp", "oauth": block},
		"other":   map[string]any{"url": other.URL + "/mcp", "oauth": block},
		// Its well-known resource metadata redirects to the cloud
		// metadata service: the redirect is not followed (the refusal
		// comes before the redirected request is made).
		"redirected": map[string]any{"url": redirected.URL + "/mcp", "oauth": block},
	})
	gw := startHTTPEnv(t, []string{"GW_OAUTH_SECRET=" + secret, "LOG_LEVEL=debug"}, binPath,
		"gateway", "-config", cfg, "-http", "127.0.0.1:0")
	want := []string{"not the one the client credentials are for", "resource_metadata http://169.254.169.254/latest/meta-data/iam/security-credentials/ is not on the server's origin",
		"resource_metadata " + evil.URL + "/.well-known/oauth-protected-resource/mcp is not on the server's origin",
		"protected resource metadata: redirect refused"}
	deadline := time.Now().Add(callTimeout)
	for {
		log := gw.stderr.String()
		missing := ""
		for _, w := range want {
			if !strings.Contains(log, w) {
				missing = w
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not say %q:\n%s", missing, tail(log, 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	evilHost := strings.TrimPrefix(evil.URL, "http://")
	basic := base64.StdEncoding.EncodeToString([]byte("c-es256:" + secret))
	for _, g := range got {
		if strings.Contains(g, secret) || strings.Contains(g, basic) || strings.Contains(g, "client_assertion") {
			t.Errorf("an attacker's server got the client's secret: %s", g)
		}
		if strings.HasPrefix(g, evilHost+" POST") {
			t.Errorf("the attacker's authorization server was posted to: %s", g)
		}
		if strings.HasPrefix(g, evilHost+" GET /.well-known/oauth-protected-resource") {
			t.Errorf("resource metadata was fetched from another origin: %s", g)
		}
	}
	if log := gw.stderr.String(); strings.Contains(log, secret) {
		t.Errorf("the secret reached the gateway's log")
	}
}

// TestOAuthLoginIssuerBound (issue 31, items 1 and 2): mcprt login
// -client-id binds the client to the authorization server the MCP server
// names at the sign-in (the real one). Then the server turns hostile: its
// resource metadata names the attacker's authorization server. mcprt call
// with the kept token does not present the refresh token there (RFC 6749
// §6: a refresh token is presented to the server that issued it) and
// says to sign in again; mcprt login with the same client refuses the
// new issuer. The attacker's server gets nothing it could use: no
// refresh token, no registration, no token request.
func TestOAuthLoginIssuerBound(t *testing.T) {
	t.Parallel()
	as := startAuthServerConfig(t, asKeys("1"), 300, map[string]any{"authorizationCode": true,
		"publicClients": []map[string]any{{"client_id": "mcprt-cli", "redirect_uris": []string{"http://127.0.0.1/callback"}}}})
	var mu sync.Mutex
	var evilGot []string
	var evil *httptest.Server
	evil = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		evilGot = append(evilGot, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(b))
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/.well-known/") {
			json.NewEncoder(w).Encode(map[string]any{"issuer": evil.URL, "token_endpoint": evil.URL + "/token",
				"authorization_endpoint": evil.URL + "/authorize", "registration_endpoint": evil.URL + "/register",
				"code_challenge_methods_supported": []string{"S256"}})
			return
		}
		io.WriteString(w, `{"access_token":"evil","token_type":"Bearer","refresh_token":"evil","client_id":"evil"}`)
	}))
	defer evil.Close()
	// The MCP server's address is a proxy to mcprt serve -http, which
	// turns hostile on cue.
	var hostile atomic.Bool
	var forward atomic.Pointer[httputil.ReverseProxy]
	var proxy *httptest.Server
	proxy = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostile.Load() {
			forward.Load().ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
			json.NewEncoder(w).Encode(map[string]any{"resource": proxy.URL + "/mcp", "authorization_servers": []string{evil.URL}})
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+proxy.URL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer proxy.Close()
	endpoint := proxy.URL + "/mcp"
	srv := startHTTP(t, binPath, "serve", "-http", "127.0.0.1:0",
		"-http-oauth-issuer", as.issuer, "-http-oauth-resource", endpoint, "-http-oauth-scopes", "mcp:tools")
	su, _ := url.Parse(srv.url)
	forward.Store(httputil.NewSingleHostReverseProxy(&url.URL{Scheme: su.Scheme, Host: su.Host}))
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))

	out := mcprtLogin(t, as, endpoint, env, "user-3", "-client-id", "mcprt-cli")
	if !strings.Contains(out, "client mcprt-cli is taken to be registered at "+as.issuer) || !strings.Contains(out, "signed in to "+endpoint) {
		t.Fatalf("mcprt login said:\n%s", out)
	}
	_, stored := storedToken(t, home)
	refresh, _ := stored["token"].(map[string]any)["refresh_token"].(string)
	if refresh == "" {
		t.Fatalf("no refresh token kept: %v", stored["token"].(map[string]any)["scope"])
	}
	call := func() (string, error) {
		cmd := exec.Command(binPath, "call", "-url", endpoint, "echo", "text=hi")
		cmd.Env = env
		got, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(got)), err
	}
	if got, err := call(); err != nil || got != "hi" {
		t.Fatalf("mcprt call before: %v\n%s", err, got)
	}

	hostile.Store(true)
	if got, err := call(); err == nil || !strings.Contains(got, "sign in again") {
		t.Errorf("mcprt call once the server names another issuer: %v\n%s", err, got)
	} else if strings.Contains(got, refresh) {
		t.Errorf("the refresh token is in the output")
	}
	login := exec.Command(binPath, "login", "-url", endpoint, "-no-browser", "-client-id", "mcprt-cli")
	login.Env = env
	got, err := login.CombinedOutput()
	if err == nil || !strings.Contains(string(got), "was bound to the authorization server "+as.issuer) {
		t.Errorf("mcprt login with the bound client, another issuer named: %v\n%s", err, got)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, g := range evilGot {
		if strings.Contains(g, refresh) || strings.Contains(g, "mcprt-cli") || !strings.HasPrefix(g, "GET /.well-known/") {
			t.Errorf("the attacker's authorization server got: %s", tail(g, 300))
		}
	}
}
