package e2e

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	rst "github.com/mcprt/mcprt/runtime/resourceserver/resourceservertest"
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

// codeAS is an authorization server of the test's own for the
// authorization code grant (the real one of startAuthServer issues client
// credentials only): it registers any client (RFC 7591), approves every
// authorization at once, and issues JWT access tokens for the resource
// asked for, signed with a key it publishes.
type codeAS struct {
	srv   *httptest.Server
	key   *rst.Key
	mu    sync.Mutex
	codes map[string]url.Values // code → the authorization request
}

func startCodeAS(t *testing.T) *codeAS {
	as := &codeAS{key: rst.MustKey("ES256", "code-as"), codes: map[string]url.Values{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		u := as.srv.URL
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": u, "authorization_endpoint": u + "/authorize", "token_endpoint": u + "/token",
			"registration_endpoint": u + "/register", "jwks_uri": u + "/jwks",
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
			"authorization_response_iss_parameter_supported": true, "response_types_supported": []string{"code"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) { w.Write(rst.Set(false, as.key)) })
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"client_id": "registered-1", "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		code := fmt.Sprintf("code-%d", time.Now().UnixNano())
		as.mu.Lock()
		as.codes[code] = q
		as.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {as.srv.URL}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		as.mu.Lock()
		q, ok := as.codes[r.PostForm.Get("code")]
		delete(as.codes, r.PostForm.Get("code"))
		as.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != q.Get("code_challenge") || r.PostForm.Get("resource") != q.Get("resource") {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		now := time.Now().Unix()
		tok := as.key.Sign(map[string]any{"iss": as.srv.URL, "aud": q.Get("resource"), "sub": "user-1", "client_id": q.Get("client_id"),
			"scope": q.Get("scope"), "iat": now, "exp": now + 300, "jti": fmt.Sprint(time.Now().UnixNano())}, nil)
		json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 300})
	})
	// Started after as.srv is set: the handlers read it.
	as.srv = httptest.NewUnstartedServer(mux)
	as.srv.Start()
	t.Cleanup(as.srv.Close)
	return as
}

// TestOAuthLoginCall: mcprt login -url signs in to an OAuth-protected
// mcprt serve -http (the user's browser is the test, following the
// printed address); mcprt call -url then sends the kept token, from a
// file only the user can read; mcprt logout forgets it, and call says to
// sign in again.
func TestOAuthLoginCall(t *testing.T) {
	t.Parallel()
	as := startCodeAS(t)
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", freeLoopbackPort(t))
	srv := startHTTP(t, binPath, "serve", "-http", strings.TrimSuffix(strings.TrimPrefix(resource, "http://"), "/mcp"),
		"-http-oauth-issuer", as.srv.URL, "-http-oauth-resource", resource, "-http-oauth-scopes", "mcp:tools")
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))

	login := exec.Command(binPath, "login", "-url", srv.url, "-no-browser")
	login.Env = env
	stderr, _ := login.StderrPipe()
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if u, ok := strings.CutPrefix(strings.TrimSpace(line), "http"); ok && strings.Contains(line, "/authorize?") {
			resp, err := http.Get("http" + u) // the browser: the server approves, and sends it back to mcprt
			if err != nil {
				t.Fatalf("following the sign-in address: %v", err)
			}
			resp.Body.Close()
		}
	}
	if err := login.Wait(); err != nil {
		t.Fatalf("mcprt login: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "signed in to "+resource) || !strings.Contains(out.String(), "/authorize?") {
		t.Errorf("mcprt login said:\n%s", out.String())
	}
	files, _ := filepath.Glob(filepath.Join(home, ".config", "mcprt", "oauth", "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files: %q", files)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", fi.Mode().Perm())
	}

	call := exec.Command(binPath, "call", "-url", srv.url, "echo", "text=with the kept token")
	call.Env = env
	if got, err := call.CombinedOutput(); err != nil || strings.TrimSpace(string(got)) != "with the kept token" {
		t.Fatalf("mcprt call -url after login: %v\n%s", err, got)
	}

	logout := exec.Command(binPath, "logout", "-url", srv.url)
	logout.Env = env
	if got, err := logout.CombinedOutput(); err != nil {
		t.Fatalf("mcprt logout: %v\n%s", err, got)
	}
	call = exec.Command(binPath, "call", "-url", srv.url, "echo", "text=x")
	call.Env = env
	if got, err := call.CombinedOutput(); err == nil || !strings.Contains(string(got), "HTTP 401") || !strings.Contains(string(got), "mcprt login -url "+srv.url) {
		t.Errorf("mcprt call -url after logout: %v\n%s", err, got)
	}
}
