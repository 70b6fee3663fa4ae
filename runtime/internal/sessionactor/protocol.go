package sessionactor

import (
	"encoding/json"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/trace"
)

// supportedVersions lists every revision served, modern first: what
// server/discover and the -32022 error report.
var supportedVersions = mcp.SupportedVersions()

// The _meta keys of 2026-07-28 and the log levels are the vocabulary's.
const (
	metaProtocolVersion    = mcp.MetaProtocolVersion
	metaClientCapabilities = mcp.MetaClientCapabilities
	metaClientInfo         = mcp.MetaClientInfo
	metaLogLevel           = mcp.MetaLogLevel
	metaServerInfo         = mcp.MetaServerInfo
	// The one key only the server reads: it stays here.
	metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

var logLevels = mcp.LogLevels

// requestParams is the part of any request's params the session reads: the
// rest stays raw for the handler.
type requestParams struct {
	// From _meta.
	version, clientCaps, logLevel, progressToken json.RawMessage
	// The W3C trace context (SEP-414), read only when tracing.
	traceparent, tracestate, baggage json.RawMessage
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
	case trace.MetaTraceparent:
		rp.traceparent = v
	case trace.MetaTracestate:
		rp.tracestate = v
	case trace.MetaBaggage:
		rp.baggage = v
	}
	return true
}

// malformed says what makes a 2026-07-28 request's _meta malformed: a
// required member missing or of the wrong type (nil when none is). The
// specification's answer is -32602, with HTTP 400 on Streamable HTTP; an
// unknown version is not malformed (that is -32022).
func (rp *requestParams) malformed() *jsonrpc.Error {
	switch v := rp.version; {
	case v == nil:
		// Most likely a hand-written request (curl): say what the body
		// needs, by its keys.
		return errInvalidParams(`_meta["` + metaProtocolVersion + `"] is required: a 2026-07-28 request carries, in params._meta, "` +
			metaProtocolVersion + `", "` + metaClientCapabilities + `" and "` + metaClientInfo + `"`)
	case len(v) < 2 || v[0] != '"':
		return errInvalidParams(`_meta["` + metaProtocolVersion + `"] must be a string`)
	}
	if c := rp.clientCaps; len(c) == 0 || c[0] != '{' {
		return errInvalidParams(`_meta["` + metaClientCapabilities + `"] is required and must be an object`)
	}
	return nil
}

// parse fills rp from a request's params, which must be an object (or
// absent) whose _meta, if any, is an object: the error says which is not.
// Only what routing needs is read; the rest stays raw for the handler.
func (rp *requestParams) parse(params json.RawMessage) *jsonrpc.Error {
	if params == nil {
		return nil
	}
	if params[0] != '{' {
		return errInvalidParams("params must be an object")
	}
	if !rp.read(params) {
		return errInvalidParams("_meta must be an object")
	}
	return nil
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
