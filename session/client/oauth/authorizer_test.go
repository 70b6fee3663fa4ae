package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testSecret = "s3cret-client-secret"
)

// fakeAS is an authorization server for the client credentials grant
// that counts its token requests and issues numbered tokens.
type fakeAS struct {
	srv      *httptest.Server
	issuer   string // what its metadata says (default: its URL)
	ttl      int
	requests atomic.Int32
	mu       sync.Mutex
	forms    []url.Values
	dpop     int // token requests that carried a DPoP proof
}

func newFakeAS(t *testing.T) *fakeAS {
	as := &fakeAS{ttl: 3600}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		iss := as.issuer
		if iss == "" {
			iss = as.srv.URL
		}
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss, "token_endpoint": as.srv.URL + "/token",
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"},
			"dpop_signing_alg_values_supported":     []string{"ES256"},
		})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		n := as.requests.Add(1)
		r.ParseForm()
		as.mu.Lock()
		as.forms = append(as.forms, r.PostForm)
		if r.Header.Get("DPoP") != "" {
			as.dpop++
		}
		as.mu.Unlock()
		id, secret, ok := r.BasicAuth()
		if !ok || id != "gw" || secret != testSecret {
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client"})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"access_token": fmt.Sprintf("tok-%d", n), "token_type": "Bearer", "expires_in": as.ttl,
		})
	})
	as.srv = httptest.NewUnstartedServer(mux) // started once set: the handlers read it
	as.srv.Start()
	t.Cleanup(as.srv.Close)
	return as
}

// fakeRS is an MCP endpoint at /mcp protected by as; accept decides
// whether a presented token passes (nil: any "tok-*").
type fakeRS struct {
	srv      *httptest.Server
	as       *fakeAS
	resource string // what its metadata names (default: its /mcp URL)
	accept   func(tok string) int
	seen     []string // Authorization headers, in order
	mu       sync.Mutex
}

func newFakeRS(t *testing.T, as *fakeAS) *fakeRS {
	rs := &fakeRS{as: as}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		res := rs.resource
		if res == "" {
			res = rs.srv.URL + "/mcp"
		}
		json.NewEncoder(w).Encode(map[string]any{"resource": res, "authorization_servers": []string{as.srv.URL}})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		rs.mu.Lock()
		rs.seen = append(rs.seen, h)
		rs.mu.Unlock()
		status := http.StatusUnauthorized
		if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
			if rs.accept != nil {
				status = rs.accept(tok)
			} else if strings.HasPrefix(tok, "tok-") {
				status = http.StatusOK
			}
		}
		switch status {
		case http.StatusUnauthorized:
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+rs.srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
		case http.StatusForbidden:
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="admin"`)
		}
		w.WriteHeader(status)
		io.WriteString(w, "{}")
	})
	rs.srv = httptest.NewUnstartedServer(mux) // started once set: the handlers read it
	rs.srv.Start()
	t.Cleanup(rs.srv.Close)
	return rs
}

func newGateway(t *testing.T, rs *fakeRS, log *slog.Logger) *Authorizer {
	t.Helper()
	a, err := New(rs.srv.URL+"/mcp", Config{Grant: ClientCredentials, ClientID: "gw", ClientSecret: testSecret, ClientIssuer: rs.as.srv.URL, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func post(t *testing.T, hc *http.Client, u string) (*http.Response, error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, u, bytes.NewReader([]byte(`{"jsonrpc":"2.0"}`)))
	resp, err := hc.Do(req)
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// The token goes to the resource it was issued for, and nowhere else:
// not to another server through the same client, nor on a redirect.
func TestTokenOnlyToItsResource(t *testing.T) {
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	var other []string
	var mu sync.Mutex
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		other = append(other, r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer elsewhere.Close()
	// The protected server also redirects one path elsewhere.
	a := newGateway(t, rs, nil)
	hc := a.Client()
	resp, err := post(t, hc, rs.srv.URL+"/mcp")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("first request: %v %v", resp, err)
	}
	if rs.seen[len(rs.seen)-1] != "Bearer tok-1" {
		t.Fatalf("the server got %q", rs.seen)
	}
	// The authorization server offers DPoP; the resource asks for
	// Bearer, and gets it.
	if as.dpop != 0 {
		t.Fatal("a DPoP proof went to the token endpoint for a resource that asks for Bearer tokens")
	}
	if _, err := post(t, hc, elsewhere.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	// Same host, path outside the resource: no token either.
	if _, err := post(t, hc, rs.srv.URL+"/other"); err != nil {
		t.Fatal(err)
	}
	redirector := httptest.NewServer(http.RedirectHandler(elsewhere.URL+"/x", http.StatusTemporaryRedirect))
	defer redirector.Close()
	if _, err := post(t, hc, redirector.URL); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range other {
		if h != "" {
			t.Errorf("another server got Authorization %q", h)
		}
	}
	if len(other) != 2 {
		t.Errorf("the other server got %d requests, want 2", len(other))
	}
	if got := rs.seen[len(rs.seen)-1]; got != "" {
		t.Errorf("a path outside the resource got Authorization %q", got)
	}
}

// A resource metadata naming another resource stops the authorization
// before the authorization server is asked anything.
func TestResourceMismatchRefused(t *testing.T) {
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	rs.resource = "https://evil.example/mcp"
	a := newGateway(t, rs, nil)
	_, err := post(t, a.Client(), rs.srv.URL+"/mcp")
	if !errors.Is(err, errResourceMismatch) {
		t.Fatalf("err = %v, want ErrResourceMismatch", err)
	}
	if n := as.requests.Load(); n != 0 {
		t.Fatalf("%d token requests after a mismatching resource", n)
	}
	// A resource that covers the endpoint from higher up is the server's.
	rs.resource = rs.srv.URL
	if resp, err := post(t, a.Client(), rs.srv.URL+"/mcp"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("origin-wide resource: %v %v", resp, err)
	}
	if got := as.forms[0].Get("resource"); got != rs.srv.URL {
		t.Fatalf("resource sent %q, want it as published, %q", got, rs.srv.URL)
	}
}

// Metadata whose issuer is not the one it was fetched for is not used.
func TestServerMetadataIssuerChecked(t *testing.T) {
	as := newFakeAS(t)
	as.issuer = "https://attacker.example"
	rs := newFakeRS(t, as)
	a := newGateway(t, rs, nil)
	_, err := post(t, a.Client(), rs.srv.URL+"/mcp")
	if err == nil || !strings.Contains(err.Error(), "issuer") {
		t.Fatalf("err = %v, want an issuer mismatch", err)
	}
	if as.requests.Load() != 0 {
		t.Fatal("a token was asked of a server whose metadata names another issuer")
	}
}

// A server that keeps refusing is authorized at most three times in a
// row, and the refusal reaches the caller.
func TestAuthorizationsBounded(t *testing.T) {
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	rs.accept = func(string) int { return http.StatusForbidden }
	a := newGateway(t, rs, nil)
	for range 3 {
		resp, err := post(t, a.Client(), rs.srv.URL+"/mcp")
		if err != nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("%v %v, want the 403", resp, err)
		}
	}
	if n := as.requests.Load(); n != maxAuthorizations {
		t.Fatalf("%d token requests, want %d", n, maxAuthorizations)
	}
	if scope := as.forms[1].Get("scope"); scope != "admin" {
		t.Fatalf("step-up asked for %q, want the challenged admin", scope)
	}
}

// A token that expires is replaced: before use when it is about to, and
// on the server's 401 when the server ends it early.
func TestClientCredentialsRenewed(t *testing.T) {
	as := newFakeAS(t)
	as.ttl = 60
	rs := newFakeRS(t, as)
	a := newGateway(t, rs, nil)
	clock := time.Now()
	a.now = func() time.Time { return clock }
	for _, step := range []time.Duration{0, 20 * time.Second, 20 * time.Second, 45 * time.Second} {
		clock = clock.Add(step)
		if resp, err := post(t, a.Client(), rs.srv.URL+"/mcp"); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
	}
	// Obtained at 0 s; used at 20 s; renewed at 40 s (within the last
	// half of its 60 s); that one renewed at 85 s.
	if n := as.requests.Load(); n != 3 {
		t.Fatalf("%d token requests, want 3", n)
	}
	as.ttl = 3600
	a2 := newGateway(t, rs, nil)
	post(t, a2.Client(), rs.srv.URL+"/mcp")
	first := a2.Token().AccessToken
	rs.accept = func(tok string) int { // the server revokes the first token
		if tok == first {
			return http.StatusUnauthorized
		}
		return http.StatusOK
	}
	if resp, err := post(t, a2.Client(), rs.srv.URL+"/mcp"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("after revocation: %v %v", resp, err)
	}
	if a2.Token().AccessToken == first {
		t.Fatal("the revoked token is still used")
	}
}

// No secret reaches the log nor an error: the client secret when the
// server refuses it, the tokens when all goes well.
func TestSecretsNotLogged(t *testing.T) {
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a := newGateway(t, rs, log)
	if _, err := post(t, a.Client(), rs.srv.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	bad, _ := New(rs.srv.URL+"/mcp", Config{Grant: ClientCredentials, ClientID: "gw", ClientSecret: "wrong-" + testSecret, ClientIssuer: as.srv.URL, Logger: log})
	_, err := post(t, bad.Client(), rs.srv.URL+"/mcp")
	if err == nil {
		t.Fatal("a refused client secret gave no error")
	}
	all := logs.String() + err.Error() + fmt.Sprint(*a.Token()) + fmt.Sprintf("%v", a.Token())
	for _, secret := range []string{testSecret, "tok-1"} {
		if strings.Contains(all, secret) {
			t.Errorf("%q reached the log or an error:\n%s", secret, all)
		}
	}
	if !strings.Contains(err.Error(), "invalid_client") {
		t.Errorf("the error does not say why: %v", err)
	}
}

func TestChallengeParsing(t *testing.T) {
	for _, c := range []struct {
		in   string
		want challenge
	}{
		{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource", scope="a b"`,
			challenge{Scheme: "Bearer", ResourceMetadata: "https://x/.well-known/oauth-protected-resource", Scope: "a b"}},
		{`Basic realm="x", Bearer error="insufficient_scope", scope="w", resource_metadata="u"`,
			challenge{Scheme: "Bearer", ResourceMetadata: "u", Scope: "w", Error: "insufficient_scope"}},
		{`DPoP error="use_dpop_nonce", resource_metadata="u"`, challenge{Scheme: "DPoP", ResourceMetadata: "u", Error: "use_dpop_nonce"}},
		{`Bearer realm="a\"b", scope=token`, challenge{Scheme: "Bearer", Scope: "token"}},
		{`Bearer abc==`, challenge{Scheme: "Bearer"}},
		{``, challenge{}},
	} {
		if got := parseChallenges([]string{c.in}); got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.in, got, c.want)
		}
	}
}

func TestMetadataURLs(t *testing.T) {
	u, _ := url.Parse("https://as.example/tenant1")
	want := []string{
		"https://as.example/.well-known/oauth-authorization-server/tenant1",
		"https://as.example/.well-known/openid-configuration/tenant1",
		"https://as.example/tenant1/.well-known/openid-configuration",
	}
	if got := serverMetadataURLs(u); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q", got)
	}
	s, _ := url.Parse("https://rs.example/a/mcp")
	if got := resourceMetadataURLs(s); fmt.Sprint(got) != fmt.Sprint([]string{
		"https://rs.example/.well-known/oauth-protected-resource/a/mcp",
		"https://rs.example/.well-known/oauth-protected-resource"}) {
		t.Errorf("got %q", got)
	}
	for res, ok := range map[string]bool{
		"https://rs.example": true, "https://rs.example/": true, "https://rs.example/a": true,
		"https://RS.example/a/mcp": true, "https://rs.example/a/m": false, "http://rs.example/a/mcp": false,
		"https://rs.example:8443/a/mcp": false, "https://rs.example/a/mcp#f": false,
	} {
		if covers(res, s) != ok {
			t.Errorf("covers(%q) = %v", res, !ok)
		}
	}
}

func TestTokenResponseExpiry(t *testing.T) {
	now := time.Unix(1000, 0)
	tok, err := parseTokenResponse(200, []byte(`{"access_token":"x","token_type":"bearer","expires_in":60}`), now)
	if err != nil || tok.TokenType != "Bearer" || !tok.Expiry.Equal(now.Add(time.Minute)) {
		t.Fatalf("%v %v", tok, err)
	}
	if _, err := parseTokenResponse(200, []byte(`{"access_token":"x","token_type":"mac"}`), now); err == nil {
		t.Fatal("a MAC token was accepted")
	}
}

// The file store keeps a token for its user alone, and a later run uses
// it without asking the authorization server again.
func TestFileStoreKeepsToken(t *testing.T) {
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	store := &FileStore{Dir: t.TempDir() + "/oauth"}
	cfg := Config{Grant: ClientCredentials, ClientID: "gw", ClientSecret: testSecret, ClientIssuer: as.srv.URL, Store: store}
	a, _ := New(rs.srv.URL+"/mcp", cfg)
	if resp, err := post(t, a.Client(), rs.srv.URL+"/mcp"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	path := store.Path(rs.srv.URL + "/mcp")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(store.Dir); di.Mode().Perm() != 0o700 {
		t.Fatalf("token folder mode %v, want 0700", di.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte(testSecret)) {
		t.Fatal("the configured client secret was written to the token file")
	}
	b, _ := New(rs.srv.URL+"/mcp", cfg)
	if resp, err := post(t, b.Client(), rs.srv.URL+"/mcp"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	if n := as.requests.Load(); n != 1 {
		t.Fatalf("%d token requests, want 1: the second run has the kept token", n)
	}
	if err := store.Delete(rs.srv.URL + "/mcp"); err != nil {
		t.Fatal(err)
	}
	if st, err := store.Load(rs.srv.URL + "/mcp"); st != nil || err != nil {
		t.Fatalf("after Delete: %v %v", st, err)
	}
}

// The loopback user agent gets the redirect back on 127.0.0.1, and
// Close ends its listener.
func TestLoopback(t *testing.T) {
	var opened string
	l := &Loopback{Open: func(_ context.Context, u string) error {
		opened = u
		go func() { // the browser, redirected back
			resp, err := http.Get(u)
			if err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}}
	redirect, err := l.RedirectURI(context.Background())
	if err != nil || !strings.HasPrefix(redirect, "http://127.0.0.1:") {
		t.Fatalf("%q %v", redirect, err)
	}
	back, err := l.Authorize(context.Background(), redirect+"?code=c1&state=s1")
	if err != nil || back.Get("code") != "c1" || back.Get("state") != "s1" || opened == "" {
		t.Fatalf("%v %v", back, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get(redirect); err == nil {
		resp.Body.Close()
		t.Fatal("the loopback listener still answers after Close")
	}
}

// uaFunc is a user agent that approves by asking the authorization
// endpoint itself, counting the sign-ins.
type uaFunc struct{ signIns *atomic.Int32 }

func (uaFunc) RedirectURI(context.Context) (string, error) { return "http://127.0.0.1:1/cb", nil }
func (u uaFunc) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	u.signIns.Add(1)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(authURL)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return nil, err
	}
	return loc.Query(), nil
}

// A user's token is refreshed before it expires, with its refresh token
// and the resource, and without a new sign-in; offline_access is asked
// for where the server offers it, with prompt=consent (OpenID Connect
// Core §11).
func TestRefreshBeforeExpiry(t *testing.T) {
	var issued atomic.Int32
	var mu sync.Mutex
	var forms []url.Values
	var asURL string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": asURL, "authorization_endpoint": asURL + "/authorize",
			"token_endpoint": asURL + "/token", "registration_endpoint": asURL + "/register",
			"scopes_supported": []string{"mcp", "offline_access"}, "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"client_id":"dyn-1"}`)
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		mu.Lock()
		forms = append(forms, q)
		mu.Unlock()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code=c&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		forms = append(forms, r.PostForm)
		mu.Unlock()
		n := issued.Add(1)
		json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("tok-%d", n), "token_type": "Bearer",
			"expires_in": 60, "refresh_token": fmt.Sprintf("refresh-%d", n)})
	})
	as := httptest.NewUnstartedServer(mux)
	as.Start()
	defer as.Close()
	asURL = as.URL
	rs := newFakeRS(t, &fakeAS{srv: as})
	var signIns atomic.Int32
	a, err := New(rs.srv.URL+"/mcp", Config{UserAgent: uaFunc{&signIns}, Scopes: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	a.now = func() time.Time { return clock }
	for _, step := range []time.Duration{0, 10 * time.Second, 40 * time.Second} {
		clock = clock.Add(step)
		if resp, err := post(t, a.Client(), rs.srv.URL+"/mcp"); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
	}
	if signIns.Load() != 1 || issued.Load() != 2 {
		t.Fatalf("%d sign-ins, %d tokens; want 1 sign-in, and a refresh", signIns.Load(), issued.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	auth, refresh := forms[0], forms[2]
	if auth.Get("scope") != "mcp offline_access" || auth.Get("prompt") != "consent" || auth.Get("code_challenge_method") != "S256" || auth.Get("resource") != rs.srv.URL+"/mcp" {
		t.Errorf("authorization request: %v", auth)
	}
	if refresh.Get("grant_type") != "refresh_token" || refresh.Get("refresh_token") != "refresh-1" ||
		refresh.Get("resource") != rs.srv.URL+"/mcp" || refresh.Get("client_id") != "dyn-1" {
		t.Errorf("refresh request: %v", refresh)
	}
	if got := a.Token().RefreshToken; got != "refresh-2" {
		t.Errorf("refresh token kept: %q", got)
	}
}
