package handlers

import "encoding/json"

// Request is one client request as a handler sees it. It is read-only.
type Request struct {
	Method string
	// Params is the raw params object ({} when the client sent none).
	Params json.RawMessage
	// Version is the protocol revision the request is served in: the one
	// negotiated by initialize, or the request's own _meta version.
	Version string
	// Modern is true for 2026-07-28 (stateless, per-request _meta) requests.
	Modern bool
	// ClientCapabilities are the client's declared capabilities: from
	// initialize (legacy) or from this request's _meta (2026-07-28).
	ClientCapabilities json.RawMessage
}
