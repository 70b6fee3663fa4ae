package resourceserver

import (
	"net/http"

	"github.com/mcprt/mcprt/handlers"
)

// Principal is the principal of r's caller, "" when Guard.Wrap did not
// let r through: a streamhttp.Options.Principal.
func Principal(r *http.Request) string {
	if c := handlers.CallerFrom(r.Context()); c != nil {
		return c.Principal()
	}
	return ""
}
