package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The attacker's side: MCP servers and authorization servers that point
// the client at themselves, or at the network behind it, and record what
// the client hands them.

// recorder is an authorization server that answers whatever it is asked
// and keeps every request it got: the test asserts none carried a secret.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []string // method, path, Authorization, body of each request
	meta map[string]any
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, req.Method+" "+req.URL.Path+" "+req.Header.Get("Authorization")+" "+string(body))
		meta := r.meta
		r.mu.Unlock()
		switch {
		case strings.HasPrefix(req.URL.Path, "/.well-known/oauth-authorization-server"):
			m := map[string]any{"issuer": r.srv.URL, "token_endpoint": r.srv.URL + "/token",
				"registration_endpoint": r.srv.URL + "/register", "authorization_endpoint": r.srv.URL + "/authorize",
				"code_challenge_methods_supported": []string{"S256"}}
			for k, v := range meta {
				m[k] = v
			}
			json.NewEncoder(w).Encode(m)
		case req.URL.Path == "/register":
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"client_id":"evil-registration"}`)
		case req.URL.Path == "/token":
			io.WriteString(w, `{"access_token":"evil-token","token_type":"Bearer","expires_in":3600}`)
		default:
			http.NotFound(w, req)
		}
	}))
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// assertNothingSecret fails when any request r got carries one of the
// secrets, base64 (Basic) or not.
func (r *recorder) assertNothingSecret(t *testing.T, secrets ...string) {
	t.Helper()
	for _, got := range r.requests() {
		for _, s := range secrets {
			if strings.Contains(got, s) || strings.Contains(got, url.QueryEscape(s)) || strings.Contains(decodeBasic(got), s) {
				t.Errorf("the server-chosen authorization server got %q in: %s", s, got)
			}
		}
		if strings.Contains(got, "client_assertion=") {
			t.Errorf("the server-chosen authorization server got a client assertion: %s", got)
		}
	}
}

func decodeBasic(line string) string {
	_, after, ok := strings.Cut(line, " Basic ")
	if !ok {
		return ""
	}
	r := &http.Request{Header: http.Header{"Authorization": {"Basic " + strings.Fields(after)[0]}}}
	id, secret, _ := r.BasicAuth()
	return id + ":" + secret
}

// hostileMCP is an MCP server that answers 401 and whose protected
// resource metadata names authServer (or that publishes none when
// authServer is "", so that the 2025-03-26 fallback makes its own origin
// the authorization server, with /token there). challenge, when set, is
// its 401's resource_metadata.
func hostileMCP(t *testing.T, authServer func() string, challenge string) *httptest.Server {
	var srv *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		if authServer == nil {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"resource": srv.URL + "/mcp", "authorization_servers": []string{authServer()}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the MCP server's own /token was posted to (2025-03-26 fallback)")
		r.ParseForm()
		io.WriteString(w, `{"access_token":"evil","token_type":"Bearer"}`)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer evil-token" {
			w.WriteHeader(http.StatusOK)
			return
		}
		if challenge != "" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+challenge+`"`)
		} else {
			w.Header().Set("WWW-Authenticate", `Bearer`)
		}
		w.WriteHeader(http.StatusUnauthorized)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// Item 1 of issue 31. A configured client secret, or a private_key_jwt
// assertion, goes to the configured issuer alone: a backend whose
// resource metadata names its own authorization server, or that publishes
// none (so that the 2025-03-26 fallback would post to its own /token),
// gets neither. RFC 6749 §2.3.1 / §10.1: client credentials authenticate
// the client to the authorization server that issued them; RFC 7523 §3:
// the assertion's audience MUST identify the intended authorization
// server, the configured one.
func TestSecretNotOfferedToServerChosenIssuer(t *testing.T) {
	legit := newFakeAS(t)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"secret", Config{Grant: ClientCredentials, ClientID: "gw", ClientSecret: testSecret}},
		{"key", Config{Grant: ClientCredentials, ClientID: "gw", ClientKey: key}},
		{"authorization code", Config{Grant: AuthorizationCode, ClientID: "gw", ClientSecret: testSecret, UserAgent: uaFunc{new(atomic.Int32)}}},
	} {
		for _, own := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/legacy=%v", c.name, own), func(t *testing.T) {
				evil := newRecorder(t)
				var mcp *httptest.Server
				if own {
					mcp = hostileMCP(t, nil, "")
				} else {
					mcp = hostileMCP(t, func() string { return evil.srv.URL }, "")
				}
				cfg := c.cfg
				cfg.ClientIssuer = legit.srv.URL
				a, err := New(mcp.URL+"/mcp", cfg)
				if err != nil {
					t.Fatal(err)
				}
				_, err = post(t, a.Client(), mcp.URL+"/mcp")
				if !errors.Is(err, ErrWrongIssuer) {
					t.Fatalf("err = %v, want ErrWrongIssuer", err)
				}
				if err != nil && strings.Contains(err.Error(), testSecret) {
					t.Fatal("the secret is in the error")
				}
				evil.assertNothingSecret(t, testSecret, "gw:")
				if n := legit.requests.Load(); n != 0 {
					t.Fatalf("the configured issuer got %d token requests for another's resource", n)
				}
			})
		}
	}
	// A secret without the issuer it belongs to is refused at once.
	if _, err := New("https://rs.example/mcp", Config{Grant: ClientCredentials, ClientID: "gw", ClientSecret: testSecret}); err == nil {
		t.Fatal("a client secret without ClientIssuer was accepted")
	}
	if _, err := New("https://rs.example/mcp", Config{Grant: ClientCredentials, ClientID: "gw", ClientKey: key}); err == nil {
		t.Fatal("a client key without ClientIssuer was accepted")
	}
}

// The private_key_jwt assertion's audience is the configured issuer
// (RFC 7523 §3: "aud" MUST identify the authorization server).
func TestClientAssertionAudienceIsConfiguredIssuer(t *testing.T) {
	var asURL string
	var mu sync.Mutex
	var aud any
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": asURL, "token_endpoint": asURL + "/token",
			"token_endpoint_auth_methods_supported": []string{"private_key_jwt"}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		parts := strings.Split(r.PostForm.Get("client_assertion"), ".")
		if len(parts) == 3 {
			b, _ := b64.DecodeString(parts[1])
			var c map[string]any
			json.Unmarshal(b, &c)
			mu.Lock()
			aud = c["aud"]
			mu.Unlock()
		}
		io.WriteString(w, `{"access_token":"tok-1","token_type":"Bearer","expires_in":3600}`)
	})
	as := httptest.NewServer(mux)
	defer as.Close()
	asURL = as.URL
	rs := newFakeRS(t, &fakeAS{srv: as})
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	a, err := New(rs.srv.URL+"/mcp", Config{Grant: ClientCredentials, ClientID: "gw", ClientKey: key, ClientIssuer: as.URL})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := post(t, a.Client(), rs.srv.URL+"/mcp"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if aud != as.URL {
		t.Fatalf("assertion aud = %v, want the configured issuer %s", aud, as.URL)
	}
}

// refusingUA is the user agent of a run that cannot sign anyone in
// (mcprt call): it records that a sign-in was wanted.
type refusingUA struct{ asked *atomic.Int32 }

func (u refusingUA) RedirectURI(context.Context) (string, error) {
	u.asked.Add(1)
	return "", errors.New("no sign-in here")
}
func (u refusingUA) Authorize(context.Context, string) (url.Values, error) {
	return nil, errors.New("no sign-in here")
}

// memStore is a Store in memory.
type memStore struct {
	mu sync.Mutex
	m  map[string]Stored
}

func (s *memStore) Load(server string) (*Stored, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.m[server]
	if !ok {
		return nil, nil
	}
	return &st, nil
}

func (s *memStore) Save(server string, st *Stored) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[server] = *st
	return nil
}

// Item 2 of issue 31. A token kept from issuer X, with its refresh token,
// is never presented to issuer Y when the server's metadata names Y the
// next run: not on renewal before expiry, not on the 401. RFC 6749 §6:
// the refresh token is presented to the authorization server that issued
// it (§10.4: refresh tokens MUST be kept confidential in transit, and
// shared only among the authorization server and the client they were
// issued to). The caller gets errSignInAgain.
func TestRefreshTokenOnlyToItsIssuer(t *testing.T) {
	for _, expiring := range []bool{true, false} {
		t.Run(fmt.Sprintf("expiring=%v", expiring), func(t *testing.T) {
			evil := newRecorder(t)
			mcp := hostileMCP(t, func() string { return evil.srv.URL }, "")
			const refresh = "refresh-token-of-issuer-x"
			expiry := time.Now().Add(time.Hour)
			if expiring {
				expiry = time.Now().Add(time.Second)
			}
			store := &memStore{m: map[string]Stored{mcp.URL + "/mcp": {Token: Token{
				AccessToken: "not-accepted", TokenType: "Bearer", RefreshToken: refresh, Expiry: expiry,
				Resource: mcp.URL + "/mcp", Issuer: "https://issuer-x.example"}, ClientID: "dyn-at-x"}}}
			var asked atomic.Int32
			a, err := New(mcp.URL+"/mcp", Config{UserAgent: refusingUA{&asked}, Store: store})
			if err != nil {
				t.Fatal(err)
			}
			_, err = post(t, a.Client(), mcp.URL+"/mcp")
			if !errors.Is(err, errSignInAgain) || !strings.Contains(err.Error(), "sign in again") {
				t.Fatalf("err = %v, want errSignInAgain", err)
			}
			if err != nil && strings.Contains(err.Error(), refresh) {
				t.Fatal("the refresh token is in the error")
			}
			evil.assertNothingSecret(t, refresh, "dyn-at-x")
			for _, r := range evil.requests() {
				if strings.HasPrefix(r, "POST") {
					t.Errorf("the new issuer was posted to: %s", r)
				}
			}
		})
	}
}

// recordingTransport is the client's transport to authorization servers
// and metadata, which records the hosts it was asked to reach and reaches
// none but loopback ones: the tests see that a refusal came before any
// connection, and no traffic leaves the machine.
type recordingTransport struct {
	mu    sync.Mutex
	hosts []string
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.hosts = append(r.hosts, req.URL.Host)
	r.mu.Unlock()
	if !loopbackHost(req.URL.Hostname()) {
		return nil, fmt.Errorf("test transport: not dialling %s", req.URL.Host)
	}
	return http.DefaultTransport.RoundTrip(req)
}

func (r *recordingTransport) reached(host string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.hosts {
		if strings.HasPrefix(h, host) {
			return true
		}
	}
	return false
}

// Item 4 of issue 31 (SSRF through discovery). A 401's resource_metadata
// on another origin, link-local or not, is not fetched (RFC 9728 §7.7
// and MCP authorization's "Server-Side Request Forgery" considerations:
// clients MUST NOT let a server steer them to internal addresses); the
// well-known document's redirect to 169.254.169.254 is not followed;
// an authorization server whose name resolves to a link-local address is
// not contacted. Nothing reaches 169.254.169.254: the transport records
// every host it is asked for, and dials loopback only.
func TestDiscoveryNotSteeredInside(t *testing.T) {
	newA := func(t *testing.T, mcp string, rt *recordingTransport) *Authorizer {
		a, err := New(mcp+"/mcp", Config{Grant: ClientCredentials, ClientID: "gw", ClientSecret: testSecret,
			ClientIssuer: "https://as.example", HTTPClient: &http.Client{Transport: rt}})
		if err != nil {
			t.Fatal(err)
		}
		a.lookup = func(_ context.Context, host string) ([]netip.Addr, error) {
			switch host {
			case "metadata.attacker.example":
				return []netip.Addr{netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("169.254.169.254")}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		}
		return a
	}
	t.Run("challenge names the cloud metadata service", func(t *testing.T) {
		rt := &recordingTransport{}
		mcp := hostileMCP(t, nil, "http://169.254.169.254/latest/meta-data/iam/security-credentials/")
		_, err := post(t, newA(t, mcp.URL, rt).Client(), mcp.URL+"/mcp")
		if !errors.Is(err, errForbiddenTarget) && !errors.Is(err, errInsecureURL) {
			t.Fatalf("err = %v, want a refusal", err)
		}
		if rt.reached("169.254.") {
			t.Fatal("the client went to 169.254.169.254")
		}
	})
	t.Run("challenge names another origin", func(t *testing.T) {
		rt := &recordingTransport{}
		other := newRecorder(t)
		mcp := hostileMCP(t, nil, other.srv.URL+"/.well-known/oauth-protected-resource")
		_, err := post(t, newA(t, mcp.URL, rt).Client(), mcp.URL+"/mcp")
		if !errors.Is(err, errForbiddenTarget) {
			t.Fatalf("err = %v, want errForbiddenTarget", err)
		}
		if len(other.requests()) != 0 {
			t.Fatalf("another origin's metadata was fetched: %q", other.requests())
		}
	})
	t.Run("well-known redirects to the cloud metadata service", func(t *testing.T) {
		rt := &recordingTransport{}
		mux := http.NewServeMux()
		mux.Handle("/.well-known/", http.RedirectHandler("http://169.254.169.254/latest/meta-data/", http.StatusFound))
		mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
		mcp := httptest.NewServer(mux)
		defer mcp.Close()
		_, err := post(t, newA(t, mcp.URL, rt).Client(), mcp.URL+"/mcp")
		if err == nil || !strings.Contains(err.Error(), "redirect") {
			t.Fatalf("err = %v, want the redirect refused", err)
		}
		if rt.reached("169.254.") {
			t.Fatal("the client followed the redirect to 169.254.169.254")
		}
	})
	t.Run("authorization server resolves to link-local", func(t *testing.T) {
		rt := &recordingTransport{}
		mcp := hostileMCP(t, func() string { return "https://metadata.attacker.example" }, "")
		_, err := post(t, newA(t, mcp.URL, rt).Client(), mcp.URL+"/mcp")
		if !errors.Is(err, errForbiddenTarget) {
			t.Fatalf("err = %v, want errForbiddenTarget", err)
		}
		if rt.reached("metadata.attacker.example") {
			t.Fatal("the client was asked to reach the link-local authorization server")
		}
	})
}

// Item 4 of issue 31, the address rule: what a server names is not
// reached on a link-local address ever, nor on a private or loopback one
// unless the server itself is on one or the user allows it. Names are
// resolved by the test, nothing is dialled.
func TestAddressRule(t *testing.T) {
	names := map[string][]string{
		"mcp.example.com": {"93.184.216.34"}, "as.example.com": {"93.184.216.35"},
		"as.corp.example": {"10.1.2.3"}, "internal.example": {"192.168.1.1"}, "localhost": {"127.0.0.1", "::1"},
		"mixed.example": {"93.184.216.36", "169.254.169.254"}, "v6ll.example": {"fe80::1"},
		"mcp.corp.example": {"10.9.9.9"}, "mapped.example": {"::ffff:169.254.169.254"},
	}
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, s := range names[host] {
			out = append(out, netip.MustParseAddr(s))
		}
		if out == nil {
			return nil, errors.New("no such host")
		}
		return out, nil
	}
	for _, c := range []struct {
		server, target string
		allowPrivate   bool
		ok             bool
	}{
		{"https://mcp.example.com/mcp", "https://as.example.com", false, true},
		{"https://mcp.example.com/mcp", "https://as.corp.example", false, false},
		{"https://mcp.example.com/mcp", "https://internal.example/token", false, false},
		{"https://mcp.example.com/mcp", "https://localhost:9000", false, false},
		{"https://mcp.example.com/mcp", "https://127.0.0.1:9000", false, false},
		{"https://mcp.example.com/mcp", "https://169.254.169.254", false, false},
		{"https://mcp.example.com/mcp", "https://[fe80::1]", false, false},
		{"https://mcp.example.com/mcp", "https://mixed.example", false, false},
		{"https://mcp.example.com/mcp", "https://v6ll.example", false, false},
		{"https://mcp.example.com/mcp", "https://mapped.example", false, false},
		{"https://mcp.example.com/mcp", "https://[::ffff:10.0.0.1]", false, false},
		{"https://mcp.example.com/mcp", "https://as.corp.example", true, true},
		{"https://mcp.example.com/mcp", "https://169.254.169.254", true, false},
		{"https://mcp.corp.example/mcp", "https://as.corp.example", false, true},
		{"https://mcp.corp.example/mcp", "https://169.254.169.254", false, false},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:9000", false, true},
		{"http://127.0.0.1:8080/mcp", "http://localhost:9000", false, true},
		// Item 3 of issue 31: plain http is for loopback alone (OAuth 2.1
		// §1.5: authorization server endpoints MUST use TLS; MCP
		// authorization, "Communication Security").
		{"https://mcp.example.com/mcp", "http://as.example.com", false, false},
		{"http://127.0.0.1:8080/mcp", "http://as.corp.example", true, false},
	} {
		a, err := New(c.server, Config{Grant: ClientCredentials, ClientID: "gw", ClientSecret: "s",
			ClientIssuer: "https://configured.example", AllowPrivate: c.allowPrivate})
		if err != nil {
			t.Fatal(err)
		}
		a.lookup = lookup
		u, _ := url.Parse(c.target)
		err = a.checkTarget(context.Background(), "authorization server", u, false)
		if (err == nil) != c.ok {
			t.Errorf("server %s, target %s, allowPrivate %v: err = %v, want ok=%v", c.server, c.target, c.allowPrivate, err, c.ok)
		}
	}
}

// The dialer applies the same rule to the address it connects to (a name
// checked as public may resolve to another address when dialled): a
// request whose policy forbids loopback is refused before it connects.
func TestDialerAppliesAddressRule(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	hc := defaultClient()
	host := strings.TrimPrefix(srv.URL, "http://")
	ctx := context.WithValue(context.Background(), policyKey{}, addrPolicy{internalOK: false, hostPort: host})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err := hc.Do(req); !errors.Is(err, errForbiddenTarget) {
		t.Fatalf("err = %v, want errForbiddenTarget", err)
	}
	if hits.Load() != 0 {
		t.Fatal("the request reached the server")
	}
	ctx = context.WithValue(context.Background(), policyKey{}, addrPolicy{internalOK: true, hostPort: host})
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Through a proxy (HTTPS_PROXY on a private address, say) the dial
	// is to the proxy, which is the user's choice: not refused.
	pu, _ := url.Parse(srv.URL)
	hc.Transport.(*http.Transport).Proxy = http.ProxyURL(pu)
	ctx = context.WithValue(context.Background(), policyKey{}, addrPolicy{internalOK: false, hostPort: "as.example.com:80"})
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://as.example.com/", nil)
	if resp, err = hc.Do(req); err != nil {
		t.Fatalf("through a proxy: %v", err)
	}
	resp.Body.Close()
}

// Item 4 of issue 31, through the whole flow: a server taken to be on a
// public address names an authorization server on loopback; the client
// does not contact it.
func TestServerChosenLoopbackIssuerRefused(t *testing.T) {
	evil := newRecorder(t)
	mcp := hostileMCP(t, func() string { return evil.srv.URL }, "")
	var asked atomic.Int32
	a, err := New(mcp.URL+"/mcp", Config{UserAgent: refusingUA{&asked}})
	if err != nil {
		t.Fatal(err)
	}
	pub := public
	a.serverClass = &pub // as if mcp were on the internet
	_, err = post(t, a.Client(), mcp.URL+"/mcp")
	if !errors.Is(err, errForbiddenTarget) {
		t.Fatalf("err = %v, want errForbiddenTarget", err)
	}
	if n := len(evil.requests()); n != 0 {
		t.Fatalf("the loopback authorization server got %d requests", n)
	}
	a2, _ := New(mcp.URL+"/mcp", Config{UserAgent: refusingUA{&asked}, AllowPrivate: true})
	a2.serverClass = &pub
	if _, err = post(t, a2.Client(), mcp.URL+"/mcp"); errors.Is(err, errForbiddenTarget) {
		t.Fatalf("with AllowPrivate: %v", err)
	}
}

// Item 3 of issue 31: an authorization server, or its token endpoint, at
// plain http off loopback is not used (OAuth 2.1 §1.5: TLS MUST be used
// for authorization server endpoints; MCP authorization, "Communication
// Security": all authorization server endpoints MUST be served over
// HTTPS). Nothing is sent there.
func TestPlainHTTPAuthorizationServerRefused(t *testing.T) {
	rt := &recordingTransport{}
	mcp := hostileMCP(t, func() string { return "http://as.example.com" }, "")
	a, err := New(mcp.URL+"/mcp", Config{UserAgent: refusingUA{new(atomic.Int32)}, HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = post(t, a.Client(), mcp.URL+"/mcp"); !errors.Is(err, errInsecureURL) {
		t.Fatalf("err = %v, want errInsecureURL", err)
	}
	if rt.reached("as.example.com") {
		t.Fatal("the client went to the plain-http authorization server")
	}
	// Metadata served over https naming a plain-http token endpoint.
	data := []byte(`{"issuer":"https://as.example.com","token_endpoint":"http://as.example.com/token"}`)
	if _, err := parseServerMetadata(data, "https://as.example.com"); !errors.Is(err, errInsecureURL) {
		t.Fatalf("plain-http token endpoint: %v", err)
	}
	if _, err := New("https://rs.example/mcp", Config{Grant: ClientCredentials, ClientID: "gw", ClientSecret: "s", ClientIssuer: "http://as.example.com"}); err == nil {
		t.Fatal("a plain-http ClientIssuer was accepted")
	}
}

// Item 8 of issue 31. MCP authorization 2025-11-25, "Authorization Code
// Protection": "MCP clients MUST implement PKCE ... and MUST verify PKCE
// support before proceeding with authorization. ... If
// code_challenge_methods_supported is absent, the authorization server
// does not support PKCE and MCP clients MUST refuse to proceed." No
// sign-in starts, nothing is registered.
func TestNoPKCEAdvertisedRefused(t *testing.T) {
	for _, methods := range []any{nil, []string{}, []string{"plain"}} {
		evil := newRecorder(t)
		evil.meta = map[string]any{"code_challenge_methods_supported": methods}
		mcp := hostileMCP(t, func() string { return evil.srv.URL }, "")
		var signIns atomic.Int32
		a, err := New(mcp.URL+"/mcp", Config{UserAgent: uaFunc{&signIns}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err = post(t, a.Client(), mcp.URL+"/mcp"); !errors.Is(err, errNoPKCE) {
			t.Fatalf("%v: err = %v, want errNoPKCE", methods, err)
		}
		if signIns.Load() != 0 {
			t.Fatalf("%v: a sign-in started", methods)
		}
		for _, r := range evil.requests() {
			if strings.HasPrefix(r, "POST") {
				t.Fatalf("%v: %s", methods, r)
			}
		}
	}
}

// Item 10 of issue 31. The loopback listener takes the redirect back
// whose state is the request's (RFC 6749 §10.12: the client MUST
// implement CSRF protection, and the state binds the response to the
// request); another local process's GET /callback with another state is
// answered 400 and the listener keeps waiting.
func TestLoopbackIgnoresForeignState(t *testing.T) {
	l := &Loopback{}
	defer l.Close()
	redirect, err := l.RedirectURI(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	forged := make(chan int, 2)
	l.Open = func(_ context.Context, authURL string) error {
		go func() {
			for _, q := range []string{"?code=attacker&state=guessed", "?error=access_denied"} {
				resp, err := http.Get(redirect + q)
				if err != nil {
					forged <- 0
					continue
				}
				resp.Body.Close()
				forged <- resp.StatusCode
			}
			resp, err := http.Get(redirect + "?code=user&state=s-of-the-request")
			if err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	back, err := l.Authorize(ctx, "https://as.example/authorize?client_id=c&state=s-of-the-request")
	if err != nil {
		t.Fatal(err)
	}
	if back.Get("code") != "user" {
		t.Fatalf("took %v, want the redirect with the request's state", back)
	}
	for range 2 {
		if s := <-forged; s != http.StatusBadRequest {
			t.Fatalf("a forged callback got %d, want 400", s)
		}
	}
}

// Item 11 of issue 31. A refresh token the authorization server refuses
// (invalid_grant, RFC 6749 §5.2) is dropped from the Store and never
// presented again by a later run.
func TestRefusedRefreshTokenForgotten(t *testing.T) {
	var refreshes atomic.Int32
	var asURL string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": asURL, "authorization_endpoint": asURL + "/authorize",
			"token_endpoint": asURL + "/token", "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.PostForm.Get("grant_type") == "refresh_token" {
			refreshes.Add(1)
		}
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid_grant"}`)
	})
	as := httptest.NewServer(mux)
	defer as.Close()
	asURL = as.URL
	rs := newFakeRS(t, &fakeAS{srv: as})
	store := &FileStore{Dir: filepath.Join(t.TempDir(), "oauth")}
	server := rs.srv.URL + "/mcp"
	const refresh = "revoked-refresh-token"
	if err := store.Save(server, &Stored{Token: Token{AccessToken: "tok-old", TokenType: "Bearer", RefreshToken: refresh,
		Expiry: time.Now().Add(time.Second), Resource: server, Issuer: as.URL}, ClientID: "dyn-1"}); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		a, err := New(server, Config{UserAgent: refusingUA{new(atomic.Int32)}, Store: store})
		if err != nil {
			t.Fatal(err)
		}
		post(t, a.Client(), server)
		data, _ := os.ReadFile(store.Path(server))
		if strings.Contains(string(data), refresh) {
			t.Fatalf("run %d: the refused refresh token is still kept", run)
		}
	}
	if n := refreshes.Load(); n != 1 {
		t.Fatalf("the refused refresh token was presented %d times, want once", n)
	}
}

// Item 11 of issue 31: a token folder that exists with a wider mode is
// tightened to 0700 when a token is written into it.
func TestFileStoreTightensFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "oauth")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755) // whatever the umask made of it
	store := &FileStore{Dir: dir}
	if err := store.Save("https://rs.example/mcp", &Stored{Token: Token{AccessToken: "x", TokenType: "Bearer", Issuer: "https://as.example"}}); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("token folder mode %v, want 0700", fi.Mode().Perm())
	}
}
