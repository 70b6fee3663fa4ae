package resourceserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// ClientCredentials authenticate this server at the authorization
// server's introspection endpoint (client_secret_basic).
type ClientCredentials struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// LoadClientCredentials reads a JSON file {"client_id": "…",
// "client_secret": "…"}.
func LoadClientCredentials(path string) (*ClientCredentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c ClientCredentials
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: want {\"client_id\": \"…\", \"client_secret\": \"…\"}: %v", path, err)
	}
	if c.ClientID == "" || c.ClientSecret == "" {
		return nil, fmt.Errorf("%s: client_id and client_secret are both needed", path)
	}
	return &c, nil
}

// introspect asks the authorization server about an opaque token (RFC
// 7662). An answer it cannot get is errUnavailable, not a bad token.
func (g *Guard) introspect(ctx context.Context, token string, now time.Time) (cached, error) {
	m := g.meta.Load()
	if m.IntrospectionEndpoint == "" {
		return cached{}, invalid("not a JWT, and the authorization server has no introspection endpoint")
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.IntrospectionEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return cached{}, fmt.Errorf("%w: %v", errUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 section 2.3.1: the id and secret are form-encoded first.
	req.SetBasicAuth(url.QueryEscape(g.creds.ClientID), url.QueryEscape(g.creds.ClientSecret))
	body, status, err := g.do(req)
	if err != nil {
		// The error names the endpoint, never the token (it is in the
		// body, not the URL).
		return cached{}, fmt.Errorf("%w: introspection: %v", errUnavailable, err)
	}
	if status != http.StatusOK {
		return cached{}, fmt.Errorf("%w: introspection answered %d", errUnavailable, status)
	}
	if !isJSONObject(body) {
		return cached{}, fmt.Errorf("%w: introspection answered something not a JSON object", errUnavailable)
	}
	var cs claimSet
	if err := json.Unmarshal(body, &cs); err != nil {
		return cached{}, fmt.Errorf("%w: introspection response: %v", errUnavailable, err)
	}
	if cs.Active == nil || !*cs.Active {
		return cached{}, invalid("not active")
	}
	bind, err := bindingOf(&cs)
	if err != nil {
		return cached{}, err
	}
	switch {
	case cs.TokenType == "" || strings.EqualFold(cs.TokenType, "Bearer"):
	case strings.EqualFold(cs.TokenType, "DPoP"):
		// RFC 9449 section 6.2: a DPoP token's answer names its key.
		if bind.jkt == "" {
			return cached{}, invalid("a DPoP token without its key's thumbprint")
		}
	default:
		return cached{}, invalid("a token of an unknown type")
	}
	c, exp, err := g.check(&cs, body, now, false)
	if err != nil {
		return cached{}, err
	}
	delete(c.Claims, "active")
	// Remembered until its exp, but no longer than IntrospectionCache:
	// the answer says the token is active now, and it may be revoked.
	until := now.Add(g.opts.IntrospectionCache)
	if !exp.IsZero() && exp.Before(until) {
		until = exp
	}
	return cached{caller: c, until: until, bind: bind}, nil
}
