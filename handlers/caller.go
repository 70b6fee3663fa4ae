package handlers

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Caller is who a request comes from, as its transport vouched for it: over
// Streamable HTTP behind runtime/resourceserver, what the verified access
// token says (what runtime/resourceserver vouches for). It holds no credential,
// never the token: only what the token says about its holder.
//
// Request.Caller is nil where nobody vouched for anyone: over stdio (the
// user who started the server), and over HTTP without OAuth (a static
// bearer token names no one). A Caller is shared by every request that
// presents the same token, so it must not be changed.
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
	// Audience is the token's aud: the resources it was issued for, this
	// server among them.
	Audience []string
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
func (c *Caller) HasScope(scope string) bool { return c != nil && slices.Contains(c.Scopes, scope) }

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
// subject, or, for a token without one, "client:" and its client id; ""
// for a nil Caller (nobody in particular).
func (c *Caller) Principal() string {
	switch {
	case c == nil:
		return ""
	case c.Subject != "":
		return "sub:" + c.Subject
	}
	return "client:" + c.ClientID
}

// HasClaim reports whether the token's claim name is value: a string claim
// equal to it, or an array claim with an element equal to it (groups,
// roles). A claim of another JSON type is compared in its fmt form (true,
// 42).
func (c *Caller) HasClaim(name, value string) bool {
	if c == nil {
		return false
	}
	switch v := c.Claims[name].(type) {
	case nil:
		return false
	case string:
		return v == value
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok && s == value {
				return true
			}
		}
		return false
	default:
		return fmt.Sprint(v) == value
	}
}

type callerKey struct{}

// WithCaller returns ctx carrying c: what an HTTP middleware that
// authenticates requests (runtime/resourceserver's Guard) puts on a
// request's context, for the session to fill Request.Caller from.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the Caller ctx carries (WithCaller), or nil. A
// handler's context carries its request's: CallerFrom(ctx) is req.Caller.
func CallerFrom(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}
