package resourceserver

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/session/jsonrpc"
)

// ProtectedResourceMetadata is the RFC 9728 document this server
// publishes.
type ProtectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
}

// MetadataURL is the protected resource metadata's URL, the
// resource_metadata of every challenge.
func (g *Guard) MetadataURL() string { return g.metadataURL }

// MetadataPaths are the paths to mount MetadataHandler on: the well-known
// path for the resource's own path (RFC 9728 section 3.1), and the root
// form /.well-known/oauth-protected-resource.
func (g *Guard) MetadataPaths() []string { return slices.Clone(g.paths) }

// MetadataHandler serves the protected resource metadata document: to
// anyone (it is public), from any origin (browser-based clients read it
// across origins), on GET and HEAD.
func (g *Guard) MetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			h.Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", defaultMetadataCache)
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(g.metadataDoc)
		}
	})
}

// Wrap returns next behind the guard. A request without a bearer token
// gets 401 and the challenge that names the metadata; one with a token
// that does not verify gets 401 invalid_token; one whose token lacks
// Options.Scopes gets 403 insufficient_scope; while the issuer cannot be
// asked about an opaque token, 503. A request let through reaches next
// with its Caller on its context (CallerFrom) and without its
// Authorization header: nothing behind the guard can pass the token on.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, status := bearerToken(r)
		switch status {
		case http.StatusBadRequest:
			g.refuse(w, http.StatusBadRequest, "invalid_request", "one Authorization: Bearer header, please", nil)
			return
		case http.StatusUnauthorized:
			w.Header().Set("WWW-Authenticate", g.challenge)
			writeError(w, http.StatusUnauthorized, "Unauthorized: a bearer token is required")
			return
		}
		c, err := g.Authenticate(r.Context(), token)
		if err != nil {
			var te *TokenError
			if errors.As(err, &te) {
				g.log.Debug("resourceserver: token refused", "reason", te.Reason)
				g.refuse(w, http.StatusUnauthorized, "invalid_token", te.Reason, nil)
				return
			}
			g.log.Warn("resourceserver: token not checked", "err", err)
			w.Header().Set("Retry-After", "5")
			writeError(w, http.StatusServiceUnavailable, "Service Unavailable: the token could not be checked")
			return
		}
		if !c.HasScopes(g.opts.Scopes) {
			g.refuse(w, http.StatusForbidden, "insufficient_scope", "the token lacks a required scope", c)
			return
		}
		// The credential goes no further than the guard. It is removed
		// from the request's own header map, which the server does not
		// read again for it: a copy of the map would cost as much as the
		// rest of the guard.
		r.Header.Del("Authorization")
		next.ServeHTTP(w, r.WithContext(WithCaller(r.Context(), c)))
	})
}

// ScopeChallenge sets h's WWW-Authenticate to the insufficient_scope
// challenge (RFC 6750 section 3.1) for a request its caller's token lacks
// a scope for, naming the metadata and scope (space-separated: the scopes
// to ask for; ones a header cannot quote are left out), as the MCP
// authorization specification has a 403 for step-up carry: a
// streamhttp.Options.ScopeChallenge, for what handlers.Access refuses.
func (g *Guard) ScopeChallenge(h http.Header, scope string) {
	var b strings.Builder
	b.WriteString(`Bearer error="insufficient_scope", error_description="the token lacks a scope this needs", resource_metadata="`)
	b.WriteString(g.metadataURL)
	b.WriteByte('"')
	var scopes []string
	for s := range strings.FieldsSeq(scope) {
		if validScope(s) && !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	if len(scopes) > 0 {
		b.WriteString(`, scope="`)
		b.WriteString(strings.Join(scopes, " "))
		b.WriteByte('"')
	}
	h.Set("WWW-Authenticate", b.String())
}

// refuse answers with status and a challenge carrying the error (RFC 6750
// section 3). For insufficient_scope, scope is the required scopes and the
// ones the token already has (so a client asking again loses none).
func (g *Guard) refuse(w http.ResponseWriter, status int, code, desc string, c *Caller) {
	var b strings.Builder
	b.WriteString(`Bearer error="`)
	b.WriteString(code)
	b.WriteString(`", error_description="`)
	b.WriteString(desc) // a fixed phrase: no quote, no token
	b.WriteString(`", resource_metadata="`)
	b.WriteString(g.metadataURL)
	b.WriteByte('"')
	scopes := g.opts.Scopes
	if c != nil {
		scopes = append([]string(nil), scopes...)
		for _, s := range c.Scopes {
			if validScope(s) && !slices.Contains(scopes, s) {
				scopes = append(scopes, s)
			}
		}
	}
	if len(scopes) > 0 {
		b.WriteString(`, scope="`)
		b.WriteString(strings.Join(scopes, " "))
		b.WriteByte('"')
	}
	w.Header().Set("WWW-Authenticate", b.String())
	msg := "Unauthorized: " + desc
	switch status {
	case http.StatusForbidden:
		msg = "Forbidden: " + desc
	case http.StatusBadRequest:
		msg = "Bad Request: " + desc
	}
	writeError(w, status, msg)
}

// writeError answers with a JSON-RPC error without an id, as the MCP
// endpoint behind the guard answers requests it refuses.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonrpc.AppendError(nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}))
}

// bearerToken reads the request's one Authorization header: the token and
// 200, or 401 when there is none (or another scheme), or 400 when there
// are several. Tokens in the query or the body are not looked at (the
// MCP specification forbids the query; the body is the endpoint's).
func bearerToken(r *http.Request) (string, int) {
	vals := r.Header.Values("Authorization")
	switch len(vals) {
	case 0:
		return "", http.StatusUnauthorized
	case 1:
	default:
		return "", http.StatusBadRequest
	}
	scheme, token, ok := strings.Cut(vals[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", http.StatusUnauthorized
	}
	token = strings.TrimLeft(token, " ")
	if token == "" {
		return "", http.StatusUnauthorized
	}
	// Its syntax is Authenticate's to check, on a cache miss: a token
	// found in the cache had it when it was verified.
	return token, http.StatusOK
}

// token68 is the syntax of a bearer token (RFC 6750 section 2.1):
// token68 characters, then any '='.
func token68(s string) bool {
	if s == "" || s[0] == '=' {
		return false
	}
	i := 0
	for i < len(s) && token68Char[s[i]] {
		i++
	}
	for i < len(s) && s[i] == '=' {
		i++
	}
	return i == len(s)
}

var token68Char = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/", byte(c)) >= 0
	}
	return t
}()
