package oauth

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

// maxDocument bounds what is read of a metadata document or a token
// response: they are small, and a hostile server must not make the
// client buffer without end.
const maxDocument = 1 << 20

// resourceMetadata is a protected resource's metadata (RFC 9728), the
// members this client acts on.
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
	// DPoPBoundRequired: the resource takes only DPoP-bound tokens.
	DPoPBoundRequired bool `json:"dpop_bound_access_tokens_required"`
}

// serverMetadata is an authorization server's metadata (RFC 8414 and
// OpenID discovery), the members this client acts on.
type serverMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	ClientIDMetadataDocumentSupported bool     `json:"client_id_metadata_document_supported"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`
	DPoPSigningAlgValuesSupported     []string `json:"dpop_signing_alg_values_supported"`
}

// parseResourceMetadata reads a protected resource metadata document.
func parseResourceMetadata(data []byte) (*resourceMetadata, error) {
	var m resourceMetadata
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("protected resource metadata: %w", err)
	}
	if m.Resource == "" {
		return nil, errors.New("protected resource metadata: no resource")
	}
	if len(m.AuthorizationServers) == 0 || m.AuthorizationServers[0] == "" {
		return nil, errors.New("protected resource metadata: no authorization_servers")
	}
	if _, err := secureURL(m.AuthorizationServers[0]); err != nil {
		return nil, fmt.Errorf("protected resource metadata: authorization server: %w", err)
	}
	return &m, nil
}

// parseServerMetadata reads an authorization server metadata document
// fetched for issuer: its issuer must be that one exactly (RFC 8414 §3.3),
// or its endpoints are not to be trusted.
func parseServerMetadata(data []byte, issuer string) (*serverMetadata, error) {
	var m serverMetadata
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	if m.Issuer != issuer {
		return nil, fmt.Errorf("authorization server metadata: issuer %q is not %q, the issuer it was fetched for", m.Issuer, issuer)
	}
	if err := m.checkEndpoints(); err != nil {
		return nil, err
	}
	return &m, nil
}

func (m *serverMetadata) checkEndpoints() error {
	for _, e := range []struct{ name, u string }{
		{"token_endpoint", m.TokenEndpoint},
		{"authorization_endpoint", m.AuthorizationEndpoint},
		{"registration_endpoint", m.RegistrationEndpoint},
	} {
		if e.u == "" && e.name != "token_endpoint" {
			continue
		}
		if _, err := secureURL(e.u); err != nil {
			return fmt.Errorf("authorization server metadata: %s: %w", e.name, err)
		}
	}
	return nil
}

// httpURL parses an absolute http(s) URL.
func httpURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", u.Redacted())
	}
	return u, nil
}

// resourceMetadataURLs are where a server's protected resource metadata
// is looked for when its 401 names none (2025-11-25): the well-known URI
// with the endpoint's path, then at the root.
func resourceMetadataURLs(server *url.URL) []string {
	base := server.Scheme + "://" + server.Host + "/.well-known/oauth-protected-resource"
	p := strings.TrimSuffix(server.EscapedPath(), "/")
	if p == "" {
		return []string{base}
	}
	return []string{base + p, base}
}

// serverMetadataURLs are where an issuer's metadata is looked for, in the
// order the MCP specification gives: RFC 8414 then OpenID discovery, the
// path inserted after the well-known segment, and OpenID's path-appended
// form last.
func serverMetadataURLs(issuer *url.URL) []string {
	origin := issuer.Scheme + "://" + issuer.Host
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{
			origin + "/.well-known/oauth-authorization-server",
			origin + "/.well-known/openid-configuration",
		}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// covers reports whether resource, a protected resource's identifier,
// covers the server URL u: same scheme and host, and u's path within the
// resource's (at a segment boundary).
func covers(resource string, u *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || r.Fragment != "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, u.Scheme) || !strings.EqualFold(r.Host, u.Host) {
		return false
	}
	rp := strings.TrimSuffix(r.Path, "/")
	return rp == "" || u.Path == rp || strings.HasPrefix(u.Path, rp+"/")
}

// canonical is the canonical URI of an MCP server (the resource named
// when the server publishes no metadata): lower-case scheme and host, no
// query nor fragment.
func canonical(u *url.URL) string {
	c := url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: u.Path, RawPath: u.RawPath}
	return c.String()
}

// getDocument GETs a JSON document; found is false for a 4xx answer (the
// document is not there: try the next place).
func getDocument(ctx context.Context, hc *http.Client, u string) (data []byte, found bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return nil, false, err
	}
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return nil, false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, fmt.Errorf("GET %s: HTTP %d", redact(u), resp.StatusCode)
	}
	if len(data) > maxDocument {
		return nil, false, fmt.Errorf("GET %s: document over %d bytes", redact(u), maxDocument)
	}
	return data, true, nil
}

// redact shows a URL without its query nor credentials: metadata URLs
// carry none of the client's secrets, but a server-chosen URL could carry
// anything.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(a URL)"
	}
	u.RawQuery, u.Fragment = "", ""
	return u.Redacted()
}

// challenge is what a 401 or 403 answer's WWW-Authenticate header asks
// for (RFC 6750 §3, RFC 9449 §7.1).
type challenge struct {
	Scheme           string // Bearer or DPoP
	ResourceMetadata string
	Scope            string
	Error            string
}

// parseChallenges reads the Bearer or DPoP challenge of WWW-Authenticate
// header values: the first such, with its parameters.
func parseChallenges(values []string) challenge {
	var found *challenge
	for _, v := range values {
		for _, c := range splitChallenges(v) {
			if !strings.EqualFold(c.scheme, "Bearer") && !strings.EqualFold(c.scheme, "DPoP") {
				continue
			}
			if found == nil {
				found = &challenge{Scheme: c.scheme}
			}
			// Parameters of every Bearer/DPoP challenge, the first value
			// of each winning: a server that offers both names the same
			// metadata.
			if found.ResourceMetadata == "" {
				found.ResourceMetadata = c.params["resource_metadata"]
			}
			if found.Scope == "" {
				found.Scope = c.params["scope"]
			}
			if found.Error == "" {
				found.Error = c.params["error"]
			}
		}
	}
	if found == nil {
		return challenge{}
	}
	return *found
}

type rawChallenge struct {
	scheme string
	params map[string]string
}

// splitChallenges parses one WWW-Authenticate value into its challenges
// (RFC 9110 §11.6.1): a scheme, then comma-separated name=value
// parameters (a token or a quoted string), until the next scheme.
func splitChallenges(s string) []rawChallenge {
	var out []rawChallenge
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',') {
			i++
		}
	}
	token := func() string {
		j := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != ',' && s[i] != '=' && s[i] != '"' {
			i++
		}
		return s[j:i]
	}
	for {
		skip()
		if i >= len(s) {
			return out
		}
		name := token()
		if name == "" { // a stray quote or '='
			i++
			continue
		}
		// Spaces, then '=' means name was a parameter of the current
		// challenge; anything else makes it a new scheme.
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) && s[j] == '=' && len(out) > 0 && !(j+1 < len(s) && s[j+1] == '=') {
			i = j + 1
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			var val string
			if i < len(s) && s[i] == '"' {
				i++
				var b strings.Builder
				for i < len(s) && s[i] != '"' {
					if s[i] == '\\' && i+1 < len(s) {
						i++
					}
					b.WriteByte(s[i])
					i++
				}
				i++ // the closing quote
				val = b.String()
			} else {
				val = token()
			}
			key := strings.ToLower(name)
			if _, dup := out[len(out)-1].params[key]; !dup {
				out[len(out)-1].params[key] = val
			}
			continue
		}
		if j < len(s) && s[j] == '=' {
			// token68 (name followed by '=' padding) or a parameter
			// before any scheme: skip it.
			i = j
			for i < len(s) && s[i] == '=' {
				i++
			}
			continue
		}
		out = append(out, rawChallenge{scheme: name, params: map[string]string{}})
	}
}
