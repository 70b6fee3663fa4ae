package oauth

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// The documents a server sends: no input panics, and what is accepted
// holds what the client relies on.
func FuzzResourceMetadata(f *testing.F) {
	f.Add([]byte(`{"resource":"https://rs.example/mcp","authorization_servers":["https://as.example"],"scopes_supported":["a"]}`))
	f.Add([]byte(`{"resource":"","authorization_servers":[]}`))
	f.Add([]byte(`{"resource":"x","authorization_servers":["javascript:alert(1)"]}`))
	f.Add([]byte(`{"resource":"x","authorization_servers":["http://as.example"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseResourceMetadata(data)
		if err != nil {
			return
		}
		if m.Resource == "" {
			t.Fatal("accepted without a resource")
		}
		if _, err := secureURL(m.AuthorizationServers[0]); err != nil { // https, or loopback http
			t.Fatalf("accepted authorization server %q", m.AuthorizationServers[0])
		}
	})
}

func FuzzServerMetadata(f *testing.F) {
	f.Add([]byte(`{"issuer":"https://as.example","token_endpoint":"https://as.example/token","authorization_endpoint":"https://as.example/a"}`), "https://as.example")
	f.Add([]byte(`{"issuer":"https://as.example/","token_endpoint":"https://as.example/token"}`), "https://as.example")
	f.Add([]byte(`{"issuer":"https://as.example","token_endpoint":"file:///etc/passwd"}`), "https://as.example")
	f.Fuzz(func(t *testing.T, data []byte, issuer string) {
		m, err := parseServerMetadata(data, issuer)
		if err != nil {
			return
		}
		if m.Issuer != issuer {
			t.Fatalf("accepted issuer %q for %q", m.Issuer, issuer)
		}
		if _, err := secureURL(m.TokenEndpoint); err != nil {
			t.Fatalf("accepted token endpoint %q", m.TokenEndpoint)
		}
	})
}

func FuzzTokenResponse(f *testing.F) {
	f.Add(200, []byte(`{"access_token":"a","token_type":"Bearer","expires_in":3600,"refresh_token":"r"}`))
	f.Add(400, []byte(`{"error":"invalid_grant","error_description":"bad\ncode"}`))
	f.Add(200, []byte(`{"access_token":"a","token_type":"DPoP","expires_in":1e400}`))
	f.Add(200, []byte(`{"access_token":"a","token_type":"Bearer","expires_in":-5}`))
	f.Fuzz(func(t *testing.T, status int, data []byte) {
		now := time.Unix(1_700_000_000, 0)
		tok, err := parseTokenResponse(status, data, now)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("control characters in %q", err)
			}
			return
		}
		if status != 200 || tok.AccessToken == "" || (tok.TokenType != "Bearer" && tok.TokenType != "DPoP") {
			t.Fatalf("accepted %d %+v", status, tok)
		}
		if !tok.Expiry.IsZero() && tok.Expiry.Before(now) {
			t.Fatalf("expiry %v before now", tok.Expiry)
		}
	})
}

func FuzzChallenges(f *testing.F) {
	f.Add(`Bearer resource_metadata="https://x", scope="a b", error="insufficient_scope"`)
	f.Add(`Basic realm="x", DPoP error="use_dpop_nonce"`)
	f.Add(`Bearer ="`)
	f.Add(`Bearer a="\`)
	f.Fuzz(func(t *testing.T, s string) {
		parseChallenges([]string{s})
	})
}

// FuzzTokenDestination: whatever resource a server's metadata names and
// whatever URL a request goes to, the token is attached only to requests
// for the server's own origin, within the resource.
func FuzzTokenDestination(f *testing.F) {
	f.Add("https://rs.example/mcp", "https://rs.example/mcp")
	f.Add("https://rs.example", "https://evil.example/mcp")
	f.Add("https://rs.example/", "https://rs.example.evil.example/mcp")
	f.Add("https://rs.example/mcp", "https://rs.example/mcp-other")
	f.Add("https://RS.example/mcp", "https://rs.example:443/mcp")
	f.Fuzz(func(t *testing.T, resource, target string) {
		a, err := New("https://rs.example/mcp", Config{Grant: ClientCredentials, ClientID: "c", ClientSecret: "s", ClientIssuer: "https://as.example"})
		if err != nil {
			t.Fatal(err)
		}
		if !covers(resource, a.server) {
			return // discover refuses such metadata
		}
		a.tok = &Token{AccessToken: "secret-token", TokenType: "Bearer", Resource: resource}
		req, err := http.NewRequest(http.MethodPost, target, nil)
		if err != nil {
			return
		}
		if _, err := a.authorize(req); err != nil {
			return
		}
		if req.Header.Get("Authorization") == "" {
			return
		}
		if req.URL.Scheme != "https" || !strings.EqualFold(req.URL.Host, "rs.example") {
			t.Fatalf("resource %q: the token went to %q", resource, target)
		}
	})
}

// sinkTransport records what the client sends to authorization servers,
// and answers every request with an error: nothing leaves the process.
type sinkTransport struct{ sent []string }

func (s *sinkTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	s.sent = append(s.sent, req.URL.String()+" "+req.Header.Get("Authorization")+" "+string(body))
	return &http.Response{StatusCode: http.StatusBadRequest, Header: http.Header{}, Request: req,
		Body: io.NopCloser(strings.NewReader(`{"error":"invalid_request"}`))}, nil
}

// FuzzSecretDestination: the issuer binding (issue 31, items 1 and 2).
// Whatever authorization server the MCP server's metadata names, the
// configured client secret is sent only to the configured issuer's
// token endpoint, and a kept refresh token only to the issuer that
// minted it.
func FuzzSecretDestination(f *testing.F) {
	const configured = "https://as.example"
	f.Add("https://as.example", "https://as.example")
	f.Add("https://evil.example", "https://as.example")
	f.Add("https://as.example/", "https://as.example")
	f.Add("https://AS.example", "https://as.example")
	f.Add("https://as.example", "https://other.example")
	f.Add("http://127.0.0.1:1", "http://127.0.0.1:1")
	f.Fuzz(func(t *testing.T, named, minted string) {
		sink := &sinkTransport{}
		a, err := New("https://rs.example/mcp", Config{Grant: ClientCredentials, ClientID: "c", ClientSecret: "the-secret",
			ClientIssuer: configured, HTTPClient: &http.Client{Transport: sink}})
		if err != nil {
			t.Fatal(err)
		}
		a.lookup = func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		a.issuer, a.resource = named, "https://rs.example/mcp"
		a.meta = &serverMetadata{Issuer: named, TokenEndpoint: named + "/token"}
		a.mu.Lock()
		a.grant(context.Background())
		a.refresh(context.Background(), &Token{AccessToken: "a", TokenType: "Bearer", RefreshToken: "the-refresh", Issuer: minted})
		a.mu.Unlock()
		for _, s := range sink.sent {
			if strings.Contains(s, "the-refresh") && (minted != named || named != configured) {
				t.Fatalf("issuer %q's refresh token went to %q: %s", minted, named, s)
			}
			if (strings.Contains(s, "the-secret") || strings.Contains(s, "Basic ")) && named != configured {
				t.Fatalf("the secret for %q went to %q: %s", configured, named, s)
			}
		}
	})
}
