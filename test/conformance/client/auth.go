package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/mcprt/mcprt/session/client/oauth"
)

// clientMetadataURL is the Client ID Metadata Document the suite's
// authorization servers expect of a client that uses one.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

// authContext is the part of MCP_CONFORMANCE_CONTEXT an OAuth scenario
// gives its client: pre-registered credentials, keys, assertions.
type authContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	Issuer           string `json:"issuer"`
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
	ValidJWT         string `json:"valid_jwt"`
}

// authorizer configures the OAuth client as the scenario's host would.
func authorizer(server, scenario string) (*oauth.Authorizer, error) {
	var ac authContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &ac); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	cfg := oauth.Config{
		ClientID:          ac.ClientID,
		ClientSecret:      ac.ClientSecret,
		ClientIssuer:      ac.Issuer,
		ClientMetadataURL: clientMetadataURL,
		ClientName:        "mcprt-conformance-client",
		UserAgent:         followRedirect{},
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	switch scenario {
	case "auth/client-credentials-jwt":
		k, err := oauth.ParsePrivateKey([]byte(ac.PrivateKeyPEM))
		if err != nil {
			return nil, err
		}
		cfg.Grant, cfg.ClientKey = oauth.ClientCredentials, k
	case "auth/client-credentials-basic":
		cfg.Grant = oauth.ClientCredentials
	case "auth/enterprise-managed-authorization":
		cfg.Grant = oauth.JWTBearer
		cfg.Assertion = func(ctx context.Context, issuer, resource string) (string, error) {
			return oauth.IdentityAssertion(ctx, http.DefaultClient, ac.IdPTokenEndpoint, ac.IdPClientID, ac.IdPIDToken, issuer, resource)
		}
	case "auth/wif-jwt-bearer":
		cfg.Grant = oauth.JWTBearer
		cfg.Assertion = func(context.Context, string, string) (string, error) { return ac.ValidJWT, nil }
	}
	if cfg.ClientIssuer == "" && (cfg.ClientSecret != "" || cfg.ClientKey != nil) {
		// The scenario gives the credentials without their issuer; a
		// host binds them to the one the server names at first use (as
		// mcprt login does), and offers them to no other.
		probe, err := oauth.New(server, oauth.Config{UserAgent: followRedirect{}})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if cfg.ClientIssuer, err = probe.Issuer(ctx); err != nil {
			return nil, err
		}
	}
	return oauth.New(server, cfg)
}

// followRedirect is the user agent of a user who approves at once: it
// asks the authorization endpoint and reads the redirect's parameters
// from its Location, never opening the redirect URI.
type followRedirect struct{}

func (followRedirect) RedirectURI(context.Context) (string, error) {
	return "http://127.0.0.1:3000/callback", nil
}

func (followRedirect) Authorize(ctx context.Context, authURL string) (url.Values, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil {
		return nil, errors.New("the authorization endpoint did not redirect back")
	}
	return loc.Query(), nil
}
