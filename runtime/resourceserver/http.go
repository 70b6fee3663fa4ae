package resourceserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// protectedResourceMetadata is the RFC 9728 document this server
// publishes.
type protectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	// DPoP (RFC 9728 section 2, RFC 9449): the proof algorithms
	// accepted, and whether only DPoP-bound tokens are.
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
	DPoPBoundAccessTokensRequired bool     `json:"dpop_bound_access_tokens_required,omitempty"`
}

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

// Wrap returns next behind the guard. A request without a token gets 401
// and the challenge that names the metadata; one with a token that does
// not verify gets 401 invalid_token; one whose token lacks
// Options.Scopes gets 403 insufficient_scope; while the issuer cannot be
// asked about an opaque token, 503; past the client address's
// introspection rate, 429. A token bound to a key is accepted
// only with its proof: a DPoP-bound one (cnf.jkt) under the DPoP scheme
// with a valid DPoP proof (RFC 9449), else 401 (invalid_dpop_proof, or
// use_dpop_nonce with a DPoP-Nonce); a certificate-bound one
// (cnf.x5t#S256, RFC 8705) only over a TLS connection whose client
// certificate it names. A request let through reaches next with its
// handlers.Caller on its context (handlers.CallerFrom) and without its Authorization and
// DPoP headers: nothing behind the guard can pass the token on.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, scheme, status := authorization(r)
		switch status {
		case http.StatusBadRequest:
			g.refuse(w, http.StatusBadRequest, schemeBearer, "invalid_request", "one Authorization: Bearer or DPoP header, please", nil)
			return
		case http.StatusUnauthorized:
			g.refusals.add("no_token")
			w.Header().Set("WWW-Authenticate", g.challenge)
			writeError(w, http.StatusUnauthorized, "Unauthorized: a bearer token is required")
			return
		}
		now := g.now()
		e, err := g.authenticate(r.Context(), token, r.RemoteAddr, now)
		if err != nil {
			var te *tokenError
			if errors.As(err, &te) {
				g.log.Debug("resourceserver: token refused", "reason", te.Reason)
				g.refuse(w, http.StatusUnauthorized, scheme, "invalid_token", te.Reason, nil)
				return
			}
			if errors.Is(err, errRateLimited) {
				g.log.Debug("resourceserver: introspection rate-limited", "addr", limitKey(r.RemoteAddr))
				g.refusals.add("rate_limited")
				w.Header().Set("Retry-After", "1")
				writeError(w, http.StatusTooManyRequests, "Too Many Requests: too many new tokens from this address")
				return
			}
			g.log.Warn("resourceserver: token not checked", "err", err)
			g.refusals.add("unavailable")
			w.Header().Set("Retry-After", "5")
			writeError(w, http.StatusServiceUnavailable, "Service Unavailable: the token could not be checked")
			return
		}
		if e.bind != (binding{}) || scheme == schemeDPoP || g.opts.DPoPRequired {
			if !g.checkBinding(w, r, token, scheme, e, now) {
				return
			}
		}
		c := e.caller
		if !c.HasScopes(g.opts.Scopes) {
			g.refuse(w, http.StatusForbidden, scheme, "insufficient_scope", "the token lacks a required scope", c)
			return
		}
		// The credential goes no further than the guard. It is removed
		// from the request's own header map, which the server does not
		// read again for it: a copy of the map would cost as much as the
		// rest of the guard.
		r.Header.Del("Authorization")
		if scheme == schemeDPoP {
			r.Header.Del("DPoP")
		}
		ctx := handlers.WithCaller(r.Context(), c)
		if g.opts.PassToken && scheme == schemeBearer {
			// A DPoP-bound token is not: its proof is for this server.
			ctx = context.WithValue(ctx, subjectTokenKey{}, token)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

type subjectTokenKey struct{}

// SubjectToken is the bearer token that a Guard with Options.PassToken
// let through, carried by the request's context (and the context of a
// handler serving it), or "": the subject token of a token exchange.
func SubjectToken(ctx context.Context) string {
	t, _ := ctx.Value(subjectTokenKey{}).(string)
	return t
}

// checkBinding checks what a token is bound to against the request: a
// DPoP-bound token comes with the DPoP scheme and its proof, a
// certificate-bound one over TLS with that certificate, and an unbound
// one with the Bearer scheme (and not at all with DPoPRequired). It
// answers the request itself when it refuses it, and says so.
func (g *Guard) checkBinding(w http.ResponseWriter, r *http.Request, token, scheme string, e cached, now time.Time) bool {
	switch {
	case e.bind.jkt != "" && scheme != schemeDPoP:
		// RFC 9449 section 7.2: a resource server that supports both
		// schemes MUST reject a DPoP-bound token presented as a bearer
		// token; a stolen token must not work without its key.
		g.log.Debug("resourceserver: token refused", "reason", "DPoP-bound token as a bearer token")
		g.refuse(w, http.StatusUnauthorized, schemeBearer, "invalid_token", "the token is DPoP-bound: present it with the DPoP scheme and a proof", nil, g.dpopChallenge)
		return false
	case e.bind.jkt != "":
		nonce, err := g.checkProof(r, token, e.bind.jkt, now)
		if err != nil {
			g.refuseProof(w, err)
			return false
		}
		if g.nonces != nil {
			// A nonce about to age out is replaced before it does
			// (RFC 9449 section 8.2: a new one may come with any answer).
			if cur := g.nonces.current(now); cur != nonce {
				w.Header().Set("DPoP-Nonce", cur)
			}
		}
		return true
	case scheme == schemeDPoP:
		// RFC 9449 section 4.3 step 12: the proof's key must be the
		// token's; a token bound to no key (or a certificate) has none.
		g.refuse(w, http.StatusUnauthorized, schemeDPoP, "invalid_token", "the token is not DPoP-bound", nil)
		return false
	case g.opts.DPoPRequired:
		g.refuse(w, http.StatusUnauthorized, schemeDPoP, "invalid_token", "only DPoP-bound tokens are accepted", nil)
		return false
	case e.bind.x5t != "":
		// RFC 8705 section 3: a certificate-bound token is good only
		// over a TLS connection with the certificate it names.
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
			g.refuse(w, http.StatusUnauthorized, schemeBearer, "invalid_token", "the token is bound to a TLS client certificate, and none was presented", nil)
			return false
		}
		sum := sha256.Sum256(r.TLS.PeerCertificates[0].Raw)
		if subtle.ConstantTimeCompare([]byte(b64.EncodeToString(sum[:])), []byte(e.bind.x5t)) != 1 {
			g.refuse(w, http.StatusUnauthorized, schemeBearer, "invalid_token", "the token is bound to another TLS client certificate", nil)
			return false
		}
	}
	return true
}

// refuseProof answers a request whose DPoP proof was refused (RFC 9449
// section 7.1): 401 invalid_dpop_proof, or use_dpop_nonce with the
// nonce to use, or 503 when the replay cache is full.
func (g *Guard) refuseProof(w http.ResponseWriter, err error) {
	var pe *proofError
	switch {
	case errors.As(err, &pe):
		g.log.Debug("resourceserver: DPoP proof refused", "reason", pe.Reason)
		g.refuse(w, http.StatusUnauthorized, schemeDPoP, "invalid_dpop_proof", pe.Reason, nil)
	case errors.Is(err, errNonce):
		w.Header().Set("DPoP-Nonce", g.nonces.current(g.now()))
		g.refuse(w, http.StatusUnauthorized, schemeDPoP, "use_dpop_nonce", "the DPoP proof needs the server's nonce", nil)
	default:
		g.log.Warn("resourceserver: DPoP proof not checked", "err", err)
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "Service Unavailable: the DPoP proof could not be checked")
	}
}

// The authorization schemes of the tokens Wrap takes.
const (
	schemeBearer = "Bearer"
	schemeDPoP   = "DPoP"
)

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
// section 3), and the further challenges also. For insufficient_scope,
// scope is the required scopes and the ones the token already has (so a
// client asking again loses none).
func (g *Guard) refuse(w http.ResponseWriter, status int, scheme, code, desc string, c *handlers.Caller, also ...string) {
	g.refusals.add(code)
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString(` error="`)
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
	if scheme == schemeDPoP {
		// RFC 9449 section 7.1: the algorithms a proof may use.
		b.WriteString(`, algs="`)
		b.WriteString(strings.Join(dpopAlgorithms(), " "))
		b.WriteByte('"')
	}
	w.Header().Set("WWW-Authenticate", b.String())
	for _, a := range also {
		w.Header().Add("WWW-Authenticate", a)
	}
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

// authorization reads the request's one Authorization header: the token,
// its scheme (Bearer or DPoP, RFC 9449 section 7.1) and 200, or 401
// when there is none (or another scheme), or 400 when there are several.
// Tokens in the query or the body are not looked at (the MCP
// specification forbids the query; the body is the endpoint's).
func authorization(r *http.Request) (token, scheme string, status int) {
	vals := r.Header.Values("Authorization")
	switch len(vals) {
	case 0:
		return "", "", http.StatusUnauthorized
	case 1:
	default:
		return "", "", http.StatusBadRequest
	}
	s, token, ok := strings.Cut(vals[0], " ")
	switch {
	case !ok:
		return "", "", http.StatusUnauthorized
	case strings.EqualFold(s, schemeBearer):
		scheme = schemeBearer
	case strings.EqualFold(s, schemeDPoP):
		scheme = schemeDPoP
	default:
		return "", "", http.StatusUnauthorized
	}
	token = strings.TrimLeft(token, " ")
	if token == "" {
		return "", "", http.StatusUnauthorized
	}
	// Its syntax is authenticate's to check, on a cache miss: a token
	// found in the cache had it when it was verified.
	return token, scheme, http.StatusOK
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

// Refusals counts the requests the guard refused since it was made, by
// reason: the error code it answered with (invalid_token,
// insufficient_scope, invalid_request, invalid_dpop_proof,
// use_dpop_nonce), no_token for a request without one, rate_limited (429)
// and unavailable (503: the issuer could not be asked).
func (g *Guard) Refusals() map[string]uint64 { return g.refusals.snapshot() }

// refusals are Guard.Refusals' counts: a few fixed reasons, counted off
// the hot path (a refused request).
type refusals struct {
	mu sync.Mutex
	n  map[string]uint64
}

func (r *refusals) add(reason string) {
	r.mu.Lock()
	if r.n == nil {
		r.n = map[string]uint64{}
	}
	r.n[reason]++
	r.mu.Unlock()
}

func (r *refusals) snapshot() map[string]uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.n)
}
