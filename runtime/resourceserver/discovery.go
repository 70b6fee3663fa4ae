package resourceserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// maxDocumentBytes bounds a fetched document (metadata, key set,
// introspection response).
const maxDocumentBytes = 1 << 20

// asMetadata is what this side reads of an authorization server's
// metadata (RFC 8414, or OpenID Connect Discovery).
type asMetadata struct {
	Issuer                string   `json:"issuer"`
	JWKSURI               string   `json:"jwks_uri,omitempty"`
	IntrospectionEndpoint string   `json:"introspection_endpoint,omitempty"`
	ScopesSupported       []string `json:"scopes_supported,omitempty"`
}

// metadataURLsFor are where an issuer's metadata may be, in the order the
// MCP specification has clients try them: RFC 8414 with the well-known
// part inserted, OpenID Connect Discovery inserted, then appended (only
// for an issuer with a path).
func metadataURLsFor(issuer *url.URL) []string {
	path := strings.TrimSuffix(issuer.Path, "/")
	at := func(p string) string {
		u := url.URL{Scheme: issuer.Scheme, Host: issuer.Host, Path: p}
		return u.String()
	}
	if path == "" {
		return []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}
	}
	return []string{
		at("/.well-known/oauth-authorization-server" + path),
		at("/.well-known/openid-configuration" + path),
		at(path + "/.well-known/openid-configuration"),
	}
}

// parseASMetadata parses an authorization server metadata document and
// checks it against the issuer it was fetched for: the same issuer (RFC
// 8414 section 3.3: a document naming another one must not be used), and
// endpoints that are https (or http on loopback).
func parseASMetadata(doc []byte, issuer string) (*asMetadata, error) {
	var m asMetadata
	if !isJSONObject(doc) {
		return nil, errors.New("metadata is not a JSON object")
	}
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, fmt.Errorf("metadata: %v", err)
	}
	if m.Issuer != issuer {
		return nil, fmt.Errorf("metadata names issuer %q, not %q", m.Issuer, issuer)
	}
	if m.JWKSURI != "" {
		if _, err := checkURL("jwks_uri", m.JWKSURI, true); err != nil {
			return nil, err
		}
	}
	if m.IntrospectionEndpoint != "" {
		if _, err := checkURL("introspection_endpoint", m.IntrospectionEndpoint, true); err != nil {
			return nil, err
		}
	}
	return &m, nil
}

// discover fetches the issuer's metadata from the first of its
// well-known URLs that has it.
func (g *Guard) discover(ctx context.Context) (*asMetadata, error) {
	var errs []error
	for _, u := range metadataURLsFor(g.issuerURL) {
		doc, status, err := g.get(ctx, u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if status != http.StatusOK {
			errs = append(errs, fmt.Errorf("%s: %d %s", u, status, http.StatusText(status)))
			continue
		}
		m, err := parseASMetadata(doc, g.issuer)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", u, err))
			continue
		}
		return m, nil
	}
	return nil, fmt.Errorf("no authorization server metadata for %s: %w", g.issuer, errors.Join(errs...))
}

// get fetches a document; a body over maxDocumentBytes is an error.
func (g *Guard) get(ctx context.Context, u string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	return g.do(req)
}

func (g *Guard) do(req *http.Request) ([]byte, int, error) {
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %v", req.URL, err)
	}
	if len(body) > maxDocumentBytes {
		return nil, 0, fmt.Errorf("%s: document over %d bytes", req.URL, maxDocumentBytes)
	}
	return body, resp.StatusCode, nil
}

// noRedirects: documents are read from the URLs metadata names, not from
// wherever those send: a redirect is an answer that is not the document.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func isJSONObject(b []byte) bool {
	b = []byte(strings.TrimLeft(string(b), " \t\r\n"))
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}
