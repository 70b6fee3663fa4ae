package trace

import (
	"strconv"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// The attribute names of the OpenTelemetry conventions for MCP
// (semantic-conventions-genai, docs/gen-ai/mcp.md).
const (
	AttrMethod          = "mcp.method.name"
	AttrToolName        = "gen_ai.tool.name"
	AttrPromptName      = "gen_ai.prompt.name"
	attrOperationName   = "gen_ai.operation.name"
	attrRequestID       = "jsonrpc.request.id"
	AttrResourceURI     = "mcp.resource.uri"
	AttrStatusCode      = "rpc.response.status_code"
	AttrErrorType       = "error.type"
	AttrProtocolVersion = "mcp.protocol.version"
	AttrSessionID       = "mcp.session.id"
	AttrTransport       = "network.transport"
	// ErrorTool is error.type for a tool result with isError.
	ErrorTool = "tool_error"
)

// FromMeta reads the trace context of a request's _meta members, each a
// raw JSON value (nil when absent). A traceparent that is missing or
// malformed gives the zero SpanContext: the request starts a new trace,
// as W3C says a receiver does.
func FromMeta(traceparent, tracestate, baggage []byte) SpanContext {
	if traceparent == nil {
		return SpanContext{}
	}
	tp, ok := jsonrpc.Unquote(traceparent)
	if !ok {
		return SpanContext{}
	}
	c, err := parseTraceparent(tp)
	if err != nil {
		return SpanContext{}
	}
	if tracestate != nil {
		c.State, _ = jsonrpc.Unquote(tracestate)
	}
	if baggage != nil {
		c.Baggage, _ = jsonrpc.Unquote(baggage)
	}
	return c
}

// Describe names s by the conventions, {mcp.method.name} {target}, and
// gives it the attributes read from the request: its method, id, and
// the tool's or prompt's name (the target), or the resource's URI when
// withURI (opt-in: URIs make for many series).
func Describe(s *Span, method string, id []byte, params []byte, withURI bool) {
	s.Attrs = append(s.Attrs, String(AttrMethod, method))
	if len(id) > 0 {
		s.Attrs = append(s.Attrs, String(attrRequestID, idText(id)))
	}
	s.Name = method
	var key, attr string
	switch method {
	case "tools/call":
		key, attr = "name", AttrToolName
		s.Attrs = append(s.Attrs, String(attrOperationName, "execute_tool"))
	case "prompts/get":
		key, attr = "name", AttrPromptName
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		if withURI {
			key, attr = "uri", AttrResourceURI
		}
	}
	if key == "" || params == nil {
		return
	}
	if raw, ok := jsonrpc.Member(params, key); ok {
		if v, ok := jsonrpc.Unquote(raw); ok {
			s.Attrs = append(s.Attrs, String(attr, v))
			if attr != AttrResourceURI {
				s.Name = method + " " + v
			}
		}
	}
}

// Outcome records how the request ended: code is its JSON-RPC error code
// (0: a result), isError a tool result's isError.
func Outcome(s *Span, code int, isError bool) {
	switch {
	case code != 0:
		c := strconv.Itoa(code)
		s.Attrs = append(s.Attrs, String(AttrStatusCode, c))
		s.SetError(c)
	case isError:
		s.SetError(ErrorTool)
	}
}

// idText is a JSON-RPC id as the attribute has it: a string's text, a
// number's digits.
func idText(id []byte) string {
	if id[0] == '"' {
		if v, ok := jsonrpc.Unquote(id); ok {
			return v
		}
	}
	return string(id)
}
