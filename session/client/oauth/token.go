package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Token is an access token and what the Authorizer knows of it.
// String and LogValue hide the secrets.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type"` // Bearer or DPoP
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Scope        string    `json:"scope,omitempty"`
	// Resource and Issuer: the token is for Resource, from Issuer; it is
	// sent nowhere else.
	Resource string `json:"resource"`
	Issuer   string `json:"issuer"`
	// Issued is when the token was obtained: a short-lived token is
	// renewed in the last half of its life, not refreshSkew before.
	Issued time.Time `json:"issued,omitzero"`
}

// String shows a token without its secrets.
func (t Token) String() string {
	return fmt.Sprintf("%s token for %s from %s, expiry %s", t.TokenType, t.Resource, t.Issuer, t.Expiry.Format(time.RFC3339))
}

// LogValue keeps the secrets out of logs.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("type", t.TokenType), slog.String("resource", t.Resource),
		slog.String("issuer", t.Issuer), slog.Time("expiry", t.Expiry))
}

// expiring reports whether the token ends within skew of now.
func (t *Token) expiring(now time.Time, skew time.Duration) bool {
	if t.Expiry.IsZero() {
		return false
	}
	if life := t.Expiry.Sub(t.Issued); !t.Issued.IsZero() && life/2 < skew {
		skew = life / 2
	}
	return now.Add(skew).After(t.Expiry)
}

// tokenResponse is a token endpoint's answer (RFC 6749 §5.1, §5.2).
type tokenResponse struct {
	AccessToken      string      `json:"access_token"`
	TokenType        string      `json:"token_type"`
	ExpiresIn        json.Number `json:"expires_in"`
	RefreshToken     string      `json:"refresh_token"`
	Scope            string      `json:"scope"`
	Error            string      `json:"error"`
	ErrorDescription string      `json:"error_description"`
}

// TokenError is an error a token endpoint answered (RFC 6749 §5.2).
type TokenError struct {
	Code        string // invalid_grant, invalid_client, …
	Description string
	Status      int
}

func (e *TokenError) Error() string {
	s := fmt.Sprintf("oauth: token endpoint: HTTP %d %s", e.Status, e.Code)
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// parseTokenResponse reads a token endpoint's answer; now dates the
// expiry. A success must carry an access token of a type this client can
// present.
func parseTokenResponse(status int, data []byte, now time.Time) (*Token, error) {
	var r tokenResponse
	if err := json.Unmarshal(data, &r); err != nil {
		if status != http.StatusOK {
			return nil, &TokenError{Code: "(no error member)", Status: status}
		}
		return nil, errors.New("oauth: token endpoint: the answer is not a JSON object")
	}
	if status != http.StatusOK || r.Error != "" {
		e := &TokenError{Code: printable(r.Error, 64), Description: printable(r.ErrorDescription, 200), Status: status}
		if e.Code == "" {
			e.Code = "(no error member)"
		}
		return nil, e
	}
	if r.AccessToken == "" {
		return nil, errors.New("oauth: token endpoint: no access_token")
	}
	t := &Token{AccessToken: r.AccessToken, RefreshToken: r.RefreshToken, Scope: r.Scope, Issued: now}
	switch {
	case strings.EqualFold(r.TokenType, "bearer"):
		t.TokenType = "Bearer"
	case strings.EqualFold(r.TokenType, "dpop"):
		t.TokenType = "DPoP"
	default:
		return nil, fmt.Errorf("oauth: token endpoint: token_type %q is not Bearer nor DPoP", printable(r.TokenType, 32))
	}
	if r.ExpiresIn != "" {
		secs, err := r.ExpiresIn.Int64()
		if err != nil || secs < 0 {
			return nil, errors.New("oauth: token endpoint: expires_in is not a number of seconds")
		}
		if secs > 0 && secs < 100*365*24*3600 {
			t.Expiry = now.Add(time.Duration(secs) * time.Second)
		}
	}
	return t, nil
}

// printable is s cut to n bytes with control characters dropped: what
// a server says goes into error messages.
func printable(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// clientCredentials are the client's identity at one authorization
// server.
type clientCredentials struct {
	ID     string
	Secret string
	Method string // token endpoint auth method; "" to choose
	// configured: Config's, which the Store does not keep, and which
	// alone authenticate with Config.ClientKey.
	configured bool
}

// authMethod chooses how the client authenticates at the token endpoint:
// what registration said, else what the server supports of what the
// client has (RFC 8414's default is client_secret_basic).
func (a *Authorizer) authMethod(c clientCredentials, m *serverMetadata) string {
	if c.Method != "" {
		return c.Method
	}
	supported := m.TokenEndpointAuthMethodsSupported
	if a.cfg.ClientKey != nil && c.configured && (len(supported) == 0 || slices.Contains(supported, "private_key_jwt")) {
		return "private_key_jwt"
	}
	if c.Secret == "" {
		return "none"
	}
	if len(supported) == 0 {
		return "client_secret_basic"
	}
	for _, s := range []string{"client_secret_basic", "client_secret_post"} {
		if slices.Contains(supported, s) {
			return s
		}
	}
	if slices.Contains(supported, "none") {
		return "none"
	}
	return "client_secret_basic"
}

// tokenRequest POSTs form to the token endpoint with the client's
// authentication, and a DPoP proof when tokens are bound; it retries once
// with the server's nonce when asked (RFC 9449 §8).
func (a *Authorizer) tokenRequest(ctx context.Context, m *serverMetadata, c clientCredentials, form url.Values) (*Token, error) {
	header := http.Header{}
	switch method := a.authMethod(c, m); method {
	case "client_secret_basic":
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString(
			[]byte(url.QueryEscape(c.ID)+":"+url.QueryEscape(c.Secret))))
	case "client_secret_post":
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	case "private_key_jwt":
		if a.cfg.ClientKey == nil || !c.configured {
			return nil, errors.New("oauth: the server wants private_key_jwt and no client key is configured")
		}
		// RFC 7523 §3: the audience identifies the authorization server;
		// the configured issuer, never one the MCP server chose (the key
		// is only ever used there: see bound).
		jwt, err := clientAssertion(a.cfg.ClientKey, a.cfg.ClientKeyID, c.ID, a.cfg.ClientIssuer)
		if err != nil {
			return nil, err
		}
		form.Set("client_id", c.ID)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", jwt)
	case "none":
		if c.ID != "" {
			form.Set("client_id", c.ID)
		}
	default:
		return nil, fmt.Errorf("oauth: token endpoint auth method %q is not supported", printable(method, 40))
	}
	dpop := a.usesDPoP(m)
	ctx = a.withPolicy(ctx, m.TokenEndpoint, a.trustedIssuer(m.Issuer))
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.TokenEndpoint, strings.NewReader(form.Encode()))
		if err != nil {
			return nil, err
		}
		req.Header = header.Clone()
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json")
		if dpop {
			p, err := a.dpop.proof(http.MethodPost, htu(req.URL), "", a.asNonce)
			if err != nil {
				return nil, err
			}
			req.Header.Set("DPoP", p)
		}
		resp, err := a.hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("oauth: token endpoint %s: %w", redact(m.TokenEndpoint), stripURL(err))
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("oauth: token endpoint %s: %w", redact(m.TokenEndpoint), err)
		}
		if n := resp.Header.Get("DPoP-Nonce"); dpop && n != "" {
			a.asNonce = n
		}
		t, err := parseTokenResponse(resp.StatusCode, data, a.now())
		var te *TokenError
		if dpop && attempt == 0 && errors.As(err, &te) && te.Code == "use_dpop_nonce" && a.asNonce != "" {
			continue
		}
		if err != nil {
			return nil, err
		}
		if t.TokenType == "DPoP" && !dpop {
			return nil, errors.New("oauth: token endpoint: a DPoP token was issued without a DPoP proof")
		}
		return t, nil
	}
}

// htu is a request's URI for a DPoP proof: no query, no fragment.
func htu(u *url.URL) string {
	c := *u
	c.RawQuery, c.Fragment, c.User = "", "", nil
	return c.String()
}

// stripURL keeps an *url.Error's cause without its URL, which may carry a
// query the caller did not choose to show.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// IdentityAssertion exchanges an identity provider's ID token for an
// Identity Assertion JWT Authorization Grant (ID-JAG) at the provider's
// token endpoint (RFC 8693 token exchange, the enterprise-managed
// authorization extension, SEP-990): the assertion of a JWTBearer grant
// at issuer for resource. clientID is the client's id at the provider.
func IdentityAssertion(ctx context.Context, hc *http.Client, tokenEndpoint, clientID, idToken, issuer, resource string) (string, error) {
	form := url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token":        {idToken},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:id_token"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:id-jag"},
		"audience":             {issuer},
		"resource":             {resource},
		"client_id":            {clientID},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("oauth: token exchange at %s: %w", redact(tokenEndpoint), stripURL(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	if err != nil {
		return "", err
	}
	var r struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
		Error           string `json:"error"`
		Description     string `json:"error_description"`
	}
	if err := json.Unmarshal(data, &r); err != nil || resp.StatusCode != http.StatusOK || r.AccessToken == "" {
		return "", &TokenError{Code: printable(r.Error, 64), Description: printable(r.Description, 200), Status: resp.StatusCode}
	}
	if r.IssuedTokenType != "" && r.IssuedTokenType != "urn:ietf:params:oauth:token-type:id-jag" {
		return "", fmt.Errorf("oauth: token exchange: issued %q, not an ID-JAG", printable(r.IssuedTokenType, 80))
	}
	return r.AccessToken, nil
}
