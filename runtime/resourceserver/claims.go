package resourceserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/mcprt/mcprt/handlers"
)

// tokenError is why a token was refused. Its reason is a fixed phrase,
// never a value from the token (nor the token), so it is safe to log and
// to put in a WWW-Authenticate error_description.
type tokenError struct{ Reason string }

func (e *tokenError) Error() string { return "invalid token: " + e.Reason }

func invalid(reason string) error { return &tokenError{Reason: reason} }

// errUnavailable: the token could not be checked because the authorization
// server could not be asked (introspection failed); the request is worth
// retrying, the token is not known to be bad.
var errUnavailable = errors.New("the authorization server is unavailable")

// errRateLimited: the client's address has had as many tokens
// introspected as Options.IntrospectionRate allows for now; the request
// is worth retrying later.
var errRateLimited = errors.New("too many tokens to introspect from this address")

// claimSet is the members of a JWT claims set (RFC 9068 section 2.2) or an
// introspection response (RFC 7662 section 2.2) that are checked or
// carried. A member of the wrong JSON type fails decoding: the token is
// malformed.
type claimSet struct {
	Iss       string     `json:"iss"`
	Sub       string     `json:"sub"`
	Aud       stringList `json:"aud"`
	Exp       *float64   `json:"exp"`
	Nbf       *float64   `json:"nbf"`
	Iat       *float64   `json:"iat"`
	ClientID  string     `json:"client_id"`
	Azp       string     `json:"azp"`
	Scope     string     `json:"scope"`
	Scp       stringList `json:"scp"`
	Cnf       *cnf       `json:"cnf"`
	Active    *bool      `json:"active"`     // introspection only
	TokenType string     `json:"token_type"` // introspection only
}

// cnf is a token's confirmation (RFC 7800): the key it is bound to, by
// its JWK thumbprint (DPoP, RFC 9449 section 6) or its X.509
// certificate's (mutual TLS, RFC 8705 section 3.1).
type cnf struct {
	JKT     string `json:"jkt"`
	X5TS256 string `json:"x5t#S256"`
	// Others holds any other confirmation method: a token bound by a
	// method this side cannot check is not accepted as a bearer token.
	Others bool `json:"-"`
}

func (c *cnf) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for k, v := range m {
		var s string
		switch k {
		case "jkt":
			if err := json.Unmarshal(v, &s); err != nil || s == "" {
				return errors.New("cnf.jkt: want a string")
			}
			c.JKT = s
		case "x5t#S256":
			if err := json.Unmarshal(v, &s); err != nil || s == "" {
				return errors.New("cnf.x5t#S256: want a string")
			}
			c.X5TS256 = s
		default:
			c.Others = true
		}
	}
	return nil
}

// binding is what a token is bound to: nothing (a bearer token), a DPoP
// key's thumbprint, or a TLS client certificate's.
type binding struct {
	jkt, x5t string
}

// bindingOf reads the binding of a verified token's claims. A cnf with
// no method this side checks, or with two at once, refuses the token: it
// was meant for a key, and without checking one it would be a bearer
// token again.
func bindingOf(cs *claimSet) (binding, error) {
	if cs.Cnf == nil {
		return binding{}, nil
	}
	b := binding{jkt: cs.Cnf.JKT, x5t: cs.Cnf.X5TS256}
	if cs.Cnf.Others && b == (binding{}) {
		return binding{}, invalid("bound to a key by a method not supported")
	}
	if b.jkt != "" && b.x5t != "" {
		return binding{}, invalid("bound to two keys")
	}
	return b, nil
}

// stringList is a JSON string or array of strings (aud, scp).
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = stringList{s}
		return nil
	}
	if bytes.Equal(b, []byte("null")) {
		*l = nil
		return nil
	}
	var a []string
	if err := json.Unmarshal(b, &a); err != nil {
		return errors.New("want a string or an array of strings")
	}
	*l = a
	return nil
}

// numericDate turns a NumericDate into a time; ok is false for a value no
// clock reaches (negative, or past year 9999).
func numericDate(v float64) (time.Time, bool) {
	if v < 0 || v > 253402300799 || math.IsNaN(v) {
		return time.Time{}, false
	}
	sec, frac := math.Modf(v)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}

// check applies the rules both token forms share: the issuer, the
// audience (this resource, RFC 8707), exp and nbf within leeway. It
// returns the caller and its expiry. A JWT must name its issuer and its
// expiry; an introspection response may leave them out (the authorization
// server has just said the token is active), but not contradict them.
func (g *Guard) check(cs *claimSet, raw []byte, now time.Time, jwt bool) (*handlers.Caller, time.Time, error) {
	if cs.Iss != "" || jwt {
		if cs.Iss != g.issuer {
			return nil, time.Time{}, invalid("issued by another authorization server")
		}
	}
	if len(cs.Aud) == 0 {
		return nil, time.Time{}, invalid("no audience")
	}
	if !g.forUs(cs.Aud) {
		return nil, time.Time{}, invalid("issued for another resource")
	}
	var exp time.Time
	if cs.Exp != nil {
		t, ok := numericDate(*cs.Exp)
		if !ok {
			return nil, time.Time{}, invalid("bad exp")
		}
		if now.After(t.Add(g.leeway)) {
			return nil, time.Time{}, invalid("expired")
		}
		exp = t
	} else if jwt {
		return nil, time.Time{}, invalid("no exp")
	}
	if cs.Nbf != nil {
		t, ok := numericDate(*cs.Nbf)
		if !ok {
			return nil, time.Time{}, invalid("bad nbf")
		}
		if now.Add(g.leeway).Before(t) {
			return nil, time.Time{}, invalid("not yet valid")
		}
	}
	// A token issued in the future was not issued by a clock this one
	// agrees with; one that lasts longer than MaxTokenLifetime is one no
	// authorization server should mint (a stolen one would never
	// expire). Its lifetime is exp - iat, or without iat what is left.
	start := now
	if cs.Iat != nil {
		t, ok := numericDate(*cs.Iat)
		if !ok {
			return nil, time.Time{}, invalid("bad iat")
		}
		if t.After(now.Add(g.leeway)) {
			return nil, time.Time{}, invalid("issued in the future")
		}
		start = t
	}
	if g.opts.MaxTokenLifetime > 0 && !exp.IsZero() && exp.Sub(start) > g.opts.MaxTokenLifetime {
		return nil, time.Time{}, invalid("lifetime too long")
	}
	var all map[string]any
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, time.Time{}, invalid("malformed claims")
	}
	c := &handlers.Caller{Subject: cs.Sub, ClientID: cs.ClientID, Issuer: g.issuer, Audience: cs.Aud, Expiry: exp, Claims: all}
	if c.ClientID == "" {
		c.ClientID = cs.Azp
	}
	if c.Subject == "" && c.ClientID == "" {
		// Sessions, tasks and request state are bound to the caller's
		// principal (Caller.Principal): tokens that name no one would
		// all be the same principal, and share them.
		return nil, time.Time{}, invalid("no subject nor client id")
	}
	for s := range strings.FieldsSeq(cs.Scope) {
		c.Scopes = append(c.Scopes, s)
	}
	for _, s := range cs.Scp {
		for s := range strings.FieldsSeq(s) {
			c.Scopes = append(c.Scopes, s)
		}
	}
	return c, exp, nil
}

// forUs: one of aud is this resource.
func (g *Guard) forUs(aud []string) bool {
	for _, a := range aud {
		if a == g.resource || canonicalResource(a) == g.canonical {
			return true
		}
	}
	return false
}
