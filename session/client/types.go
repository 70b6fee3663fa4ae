package client

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// Era is the family of protocol revisions a session speaks.
type Era int

const (
	// EraAuto probes server/discover and falls back to initialize, as the
	// 2026-07-28 stdio transport recommends for dual-era clients.
	EraAuto Era = iota
	// EraLegacy speaks an initialize-era revision (2024-11-05 .. 2025-11-25):
	// initialize, then notifications/initialized, then requests.
	EraLegacy
	// EraModern speaks 2026-07-28: no handshake, the protocol version and the
	// client capabilities ride in every request's _meta.
	EraModern
)

// String is the name the CLI uses: auto, legacy or modern.
func (e Era) String() string {
	switch e {
	case EraAuto:
		return "auto"
	case EraLegacy:
		return "legacy"
	case EraModern:
		return "modern"
	}
	return fmt.Sprintf("Era(%d)", int(e))
}

// VersionEra is the era of a protocol revision this client speaks, and
// false for one it does not.
func VersionEra(version string) (Era, bool) {
	switch {
	case slices.Contains(mcp.ModernVersions, version):
		return EraModern, true
	case slices.Contains(mcp.LegacyVersions, version):
		return EraLegacy, true
	}
	return EraAuto, false
}

// Notification is one notification the server sent. Params is the raw
// params object (nil when absent).
type Notification struct {
	Method string
	Params json.RawMessage
}

// Progress is one notifications/progress for a request that asked for it.
// Total is 0 when the server did not say.
type Progress struct {
	Progress float64
	Total    float64
	Message  string
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	Contents []mcp.ResourceContents `json:"contents"`
	Meta     json.RawMessage        `json:"_meta,omitempty"`
}

// CompletionRef names what completion/complete completes: a prompt
// (Type "ref/prompt", Name) or a resource template (Type "ref/resource",
// URI).
type CompletionRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteParams are the params of completion/complete.
type CompleteParams struct {
	Ref      CompletionRef    `json:"ref"`
	Argument CompleteArgument `json:"argument"`
	// Context carries the values of arguments already chosen (2025-06-18
	// and later); nil sends none.
	Context *CompleteContext `json:"context,omitempty"`
}

// CompleteContext is the context of a completion/complete request.
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteArgument is the argument being completed and its partial value.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ListKind names one of the lists the client caches and refreshes when the
// server says it changed.
type ListKind string

// The cached lists, named after their notifications/<kind>/list_changed.
const (
	ListTools     ListKind = "tools"
	ListResources ListKind = "resources"
	ListPrompts   ListKind = "prompts"
)

// Defaults for zero Options fields.
const (
	defaultTimeout      = 60 * time.Second
	defaultProbeTimeout = 5 * time.Second
	defaultCloseGrace   = 2 * time.Second
	defaultTermGrace    = 2 * time.Second
	defaultMaxLine      = 64 << 20 // as mcprt serve's input limit
	defaultStderrLines  = 10
	defaultLogLimit     = 10
	defaultLogWindow    = 5 * time.Second
)
