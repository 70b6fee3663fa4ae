package session

import (
	"encoding/json"
	"slices"

	"github.com/mcprt/mcprt/session/jsonrpc"
)

// Protocol revisions mcprt serves.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"
)

// LegacyVersions are the initialize-era revisions, newest first.
var LegacyVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

// ModernVersions are the per-request-_meta revisions, newest first.
var ModernVersions = []string{Version20260728}

// supportedVersions lists every revision served, modern first: what
// server/discover and the -32022 error report.
var supportedVersions = append(slices.Clone(ModernVersions), LegacyVersions...)

// _meta keys of 2026-07-28.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// logLevels are RFC 5424's, as MCP names them.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// requestParams is the part of any request's params the session reads: the
// rest stays raw for the handler.
type requestParams struct {
	// From _meta.
	version, clientCaps, logLevel, progressToken json.RawMessage
	// 2026-07-28 retries of an input_required round: params members.
	inputResponses, requestState json.RawMessage
}

// read fills rp from params in one scan (params are valid JSON: they come
// from a line Decode accepted). It reports false if _meta is not an object.
func (rp *requestParams) read(params json.RawMessage) bool {
	ok := true
	jsonrpc.Members(params, func(k string, v []byte) bool {
		switch k {
		case "_meta":
			ok = string(v) == "null" || jsonrpc.Members(v, rp.setMeta)
		case "inputResponses":
			rp.inputResponses = v
		case "requestState":
			rp.requestState = v
		}
		return true
	})
	return ok
}

func (rp *requestParams) setMeta(k string, v []byte) bool {
	switch k {
	case metaProtocolVersion:
		rp.version = v
	case metaClientCapabilities:
		rp.clientCaps = v
	case metaLogLevel:
		rp.logLevel = v
	case "progressToken":
		rp.progressToken = v
	}
	return true
}

type initializeParams struct {
	ProtocolVersion *string         `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
}

type cancelledParams struct {
	RequestID json.RawMessage `json:"requestId"`
	Reason    string          `json:"reason"`
}
