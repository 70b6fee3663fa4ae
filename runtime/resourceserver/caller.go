package resourceserver

import (
	"context"
	"net/http"
	"slices"
	"time"
)

// Caller is who a verified access token speaks for: what a handler may
// decide on. It is shared between the requests that present the same
// token (cached), so it must not be changed.
type Caller struct {
	// Subject is the token's sub: the user, or for a client acting on its
	// own behalf (client_credentials) usually its client id. It may be
	// empty for an introspected token that has none.
	Subject string
	// ClientID is the OAuth client the token was issued to (client_id,
	// or azp when only that is there).
	ClientID string
	// Issuer is the authorization server that issued the token.
	Issuer string
	// Scopes are the token's scopes (scope, space separated; or scp).
	Scopes []string
	// Expiry is when the token expires (zero: an introspected token that
	// did not say).
	Expiry time.Time
	// Claims are all of the token's claims (a JWT's claims set, or the
	// introspection response), as encoding/json decodes them.
	Claims map[string]any
}

// HasScope reports whether the token carries scope.
func (c *Caller) HasScope(scope string) bool { return slices.Contains(c.Scopes, scope) }

// HasScopes reports whether the token carries every one of scopes.
func (c *Caller) HasScopes(scopes []string) bool {
	for _, s := range scopes {
		if !c.HasScope(s) {
			return false
		}
	}
	return true
}

// Principal names who c is, for binding state to it: "sub:" and its
// subject, or, for a token without one, "client:" and its client id.
func (c *Caller) Principal() string {
	if c.Subject != "" {
		return "sub:" + c.Subject
	}
	return "client:" + c.ClientID
}

// Principal is the principal of r's caller, "" when Guard.Wrap did not
// let r through: a streamhttp.Options.Principal.
func Principal(r *http.Request) string {
	if c := CallerFrom(r.Context()); c != nil {
		return c.Principal()
	}
	return ""
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller ctx carries (a request's context, after
// Guard.Wrap let it through, or the context of a handler serving an MCP
// request that came in such a request: streamhttp passes the HTTP
// request's values on, see session.In.Values), or nil.
func CallerFrom(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}
