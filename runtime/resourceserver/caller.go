package resourceserver

import (
	"context"
	"net/http"

	"github.com/mcprt/mcprt/handlers"
)

// Caller is who a verified access token speaks for: what a handler may
// decide on. It is handlers.Caller, so that the session hands it to
// handlers as Request.Caller (see handlers.Caller for its fields). It is
// shared between the requests that present the same token (cached), so
// it must not be changed.
type Caller = handlers.Caller

// Principal is the principal of r's caller, "" when Guard.Wrap did not
// let r through: a streamhttp.Options.Principal.
func Principal(r *http.Request) string {
	if c := CallerFrom(r.Context()); c != nil {
		return c.Principal()
	}
	return ""
}

// WithCaller returns ctx carrying c (handlers.WithCaller).
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return handlers.WithCaller(ctx, c)
}

// CallerFrom returns the caller ctx carries (a request's context, after
// Guard.Wrap let it through, or the context of a handler serving an MCP
// request that came in such a request: streamhttp passes the HTTP
// request's values on, see session.In.Values), or nil. In a handler,
// Request.Caller is the same value.
func CallerFrom(ctx context.Context) *Caller { return handlers.CallerFrom(ctx) }
