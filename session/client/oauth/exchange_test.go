package oauth

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// The token exchange grant presents the user's token as the subject
// token, authenticated as the client, for the server's resource; to the
// configured issuer only.
func TestTokenExchange(t *testing.T) {
	as := newFakeAS(t)
	rs := newFakeRS(t, as)
	subject := "user-token-1"
	a, err := New(rs.srv.URL+"/mcp", Config{Grant: TokenExchange, ClientID: "gw", ClientSecret: testSecret,
		ClientIssuer: as.srv.URL, SubjectToken: func(context.Context) (string, error) { return subject, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := post(t, a.Client(), rs.srv.URL+"/mcp"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	as.mu.Lock()
	f := as.forms[0]
	as.mu.Unlock()
	for k, want := range map[string]string{
		"grant_type":           "urn:ietf:params:oauth:grant-type:token-exchange",
		"subject_token":        "user-token-1",
		"subject_token_type":   "urn:ietf:params:oauth:token-type:access_token",
		"requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
		"resource":             rs.srv.URL + "/mcp",
	} {
		if got := f.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}

	// A server naming another authorization server gets nothing: not the
	// client's secret, not the user's token.
	other := newFakeAS(t)
	rs2 := newFakeRS(t, other)
	a2, _ := New(rs2.srv.URL+"/mcp", Config{Grant: TokenExchange, ClientID: "gw", ClientSecret: testSecret,
		ClientIssuer: as.srv.URL, SubjectToken: func(context.Context) (string, error) { return subject, nil }})
	if _, err := post(t, a2.Client(), rs2.srv.URL+"/mcp"); !errors.Is(err, ErrWrongIssuer) {
		t.Fatalf("another issuer: %v, want ErrWrongIssuer", err)
	}
	if n := other.requests.Load(); n != 0 {
		t.Fatalf("the other issuer got %d token requests", n)
	}

	// No subject token: the caller is told, and nothing is asked.
	a3, _ := New(rs.srv.URL+"/mcp", Config{Grant: TokenExchange, ClientID: "gw", ClientSecret: testSecret,
		ClientIssuer: as.srv.URL, SubjectToken: func(context.Context) (string, error) { return "", errors.New("no token") }})
	before := as.requests.Load()
	if _, err := post(t, a3.Client(), rs.srv.URL+"/mcp"); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Fatalf("no subject token: %v", err)
	}
	if as.requests.Load() != before {
		t.Fatal("a token request without a subject token")
	}

	// The grant needs the client's authentication and a SubjectToken.
	if _, err := New(rs.srv.URL+"/mcp", Config{Grant: TokenExchange, ClientID: "gw", ClientIssuer: as.srv.URL,
		SubjectToken: func(context.Context) (string, error) { return subject, nil }}); err == nil {
		t.Error("a public client may exchange tokens")
	}
	if _, err := New(rs.srv.URL+"/mcp", Config{Grant: TokenExchange, ClientID: "gw", ClientSecret: testSecret, ClientIssuer: as.srv.URL}); err == nil {
		t.Error("no SubjectToken accepted")
	}
}
