package resourceserver

import (
	"context"
	"net/http"

	"github.com/mcprt/mcprt/handlers"
)

// Principal is the principal of r's caller, "" when Guard.Wrap did not
// let r through: a streamhttp.Options.Principal.
func Principal(r *http.Request) string {
	if c := CallerFrom(r.Context()); c != nil {
		return c.Principal()
	}
	return ""
}

// WithCaller returns ctx carrying c (handlers.WithCaller).
func WithCaller(ctx context.Context, c *handlers.Caller) context.Context {
	return handlers.WithCaller(ctx, c)
}

// CallerFrom returns the caller ctx carries (a request's context, after
// Guard.Wrap let it through, or the context of a handler serving an MCP
// request that came in such a request: streamhttp passes the HTTP
// request's values on, see session.In.Values), or nil. In a handler,
// Request.Caller is the same value.
func CallerFrom(ctx context.Context) *handlers.Caller { return handlers.CallerFrom(ctx) }
