package handlers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// Access says which callers may see and use a tool, prompt, resource or
// resource template: those whose access token carries every one of Scopes
// and, for each claim named in Claims, one of its values (Caller.HasClaim:
// a string claim equal to it, or an array claim holding it). A nil Access
// lets everyone in.
//
// An item a caller may not use is left out of its lists. Using it anyway
// is refused as the specification has it: a caller whose claims match but
// whose token lacks a scope gets CodeInsufficientScope, whose data.scope
// names the scopes to ask for (its own and the missing ones), and over
// HTTP a 403 with the insufficient_scope challenge, so that its client can
// step up; any other caller is told what it would be told of an item that
// does not exist ("Unknown tool", "Resource not found"), so nothing leaks.
//
// A request without a Caller (stdio; HTTP without OAuth) meets no Access:
// items with one are for callers an authorization server vouched for.
type Access struct {
	// Scopes the caller's token must all carry.
	Scopes []string `json:"scopes,omitempty"`
	// Claims maps a claim's name (a top-level claim of the token, such as
	// "groups" or "email") to the values it may have; one must match.
	Claims map[string][]string `json:"claims,omitempty"`
}

// Join returns an Access that demands both a's and b's (either may be
// nil): the scopes of both, and for a claim both name, a value both
// accept.
func (a *Access) Join(b *Access) *Access {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	j := &Access{Scopes: slices.Clone(a.Scopes)}
	for _, s := range b.Scopes {
		if !slices.Contains(j.Scopes, s) {
			j.Scopes = append(j.Scopes, s)
		}
	}
	if len(a.Claims)+len(b.Claims) > 0 {
		j.Claims = map[string][]string{}
		for k, v := range a.Claims {
			j.Claims[k] = slices.Clone(v)
		}
		for k, v := range b.Claims {
			if old, ok := j.Claims[k]; ok {
				v = slices.DeleteFunc(slices.Clone(v), func(x string) bool { return !slices.Contains(old, x) })
				if v == nil {
					v = []string{} // no value satisfies both
				}
			}
			j.Claims[k] = slices.Clone(v)
		}
	}
	return j
}

// verdict is what an Access says of a caller.
type verdict uint8

const (
	allowed    verdict = iota
	unseen             // not for this caller: as if the item did not exist
	needsScope         // for this caller, with a token of more scopes
)

func (a *Access) verdict(c *Caller) verdict {
	if a == nil {
		return allowed
	}
	if c == nil {
		return unseen
	}
	for name, values := range a.Claims {
		if !slices.ContainsFunc(values, func(v string) bool { return c.HasClaim(name, v) }) {
			return unseen
		}
	}
	if !c.HasScopes(a.Scopes) {
		return needsScope
	}
	return allowed
}

// Allows reports whether c may see and use what a guards.
func (a *Access) Allows(c *Caller) bool { return a.verdict(c) == allowed }

// insufficientScope is the error of a request whose caller lacks some of
// a.Scopes. data.scope is the scopes to ask for: the caller's and the
// missing ones (so that a client asking again loses none, as the MCP
// authorization specification recommends).
func insufficientScope(kind, name string, a *Access, c *Caller) *jsonrpc.Error {
	scopes := slices.Clone(c.Scopes)
	for _, s := range a.Scopes {
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInsufficientScope,
		Message: fmt.Sprintf("Insufficient scope: %s %q needs scope %q", kind, name, strings.Join(a.Scopes, " ")),
		Data:    map[string]string{"error": "insufficient_scope", "scope": strings.Join(scopes, " ")},
	}
}

// MayRead reports whether c may read the resource at uri, as
// resources/read decides: false when the resource, or else the first
// template that matches uri, has an Access that does not let c in; true
// for a URI nothing here serves. The session consults it for
// subscriptions, so that a caller hears no updates of what it may not
// read.
func (s *Server) MayRead(uri string, c *Caller) bool {
	if !s.guarded.Load() {
		return true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r, ok := s.resources.get(uri); ok {
		return r.Access.Allows(c)
	}
	for _, e := range s.templates.list {
		if _, ok := e.val.parsed.Match(uri); ok {
			return e.val.Access.Allows(c)
		}
	}
	return true
}
