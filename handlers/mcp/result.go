package mcp

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// CallToolResult is a tool's answer (tools/call). A failure of the tool
// itself (as opposed to a malformed request) is a result with IsError set,
// so the model can see it and correct itself.
type CallToolResult struct {
	Content []Content `json:"content"`
	// StructuredContent is the result as a JSON value (a JSON object, for
	// clients before 2026-07-28), sent from 2025-06-18 on. When the tool
	// has an OutputSchema, it must match it. A result that was read
	// (UnmarshalJSON) holds it as a json.RawMessage.
	StructuredContent any  `json:"structuredContent,omitempty"`
	IsError           bool `json:"isError,omitempty"`
	// Meta is the result's _meta, a JSON object sent as it is (nil: none).
	Meta json.RawMessage `json:"_meta,omitempty"`

	// encoded is the whole result, when it came encoded (EncodedResult).
	encoded json.RawMessage
}

// EncodedResult returns a result that is already JSON, such as another
// server's answer that a gateway relays: a server sends it as it is,
// neither decoded nor shaped for the client's revision nor checked against
// the tool's output schema. raw must be a well-formed JSON object that
// every revision the server speaks can read (text blocks, isError); the
// fields of the result it returns are left empty.
func EncodedResult(raw json.RawMessage) *CallToolResult {
	return &CallToolResult{encoded: raw}
}

// Encoded returns the JSON of a result EncodedResult made, and nil for any
// other result.
func (r *CallToolResult) Encoded() json.RawMessage { return r.encoded }

// TextResult returns a result holding one text block.
func TextResult(text string) *CallToolResult {
	// The block lives in the same allocation as the result.
	b := &struct {
		r CallToolResult
		c [1]Content
	}{}
	b.c[0] = TextContent(text)
	b.r.Content = b.c[:]
	return &b.r
}

// AppendJSON appends the result as json.Marshal would write it. Results of
// text blocks only, the common case, are written directly, without
// reflection and without the second pass encoding/json makes over what a
// MarshalJSON method returns; so are those whose structured content is
// JSON as json.Marshal writes it (a typed tool's, which the server
// marshalled once already). Others go through json.Marshal.
func (r *CallToolResult) AppendJSON(dst []byte) ([]byte, error) {
	if r.encoded != nil {
		return append(dst, r.encoded...), nil
	}
	structured, plain := r.plainStructured()
	fast := plain && r.Content != nil && r.Meta == nil
	n := 32 + len(structured)
	for i := range r.Content {
		c := &r.Content[i]
		if c.Type != "text" || c.Annotations != nil || c.Meta != nil {
			fast = false
			break
		}
		n += len(c.Text) + 24
	}
	if !fast {
		b, err := json.Marshal((*plainResult)(r))
		return append(dst, b...), err
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, `{"content":[`...)
	for i := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"text","text":`...)
		dst = jsonrpc.AppendString(dst, r.Content[i].Text)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if structured != nil {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, structured...)
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), nil
}

// plainResult is CallToolResult without its methods, for encoding/json.
type plainResult CallToolResult

// MarshalJSON implements json.Marshaler, for an EncodedResult's sake.
func (r *CallToolResult) MarshalJSON() ([]byte, error) {
	if r.encoded != nil {
		return r.encoded, nil
	}
	return json.Marshal((*plainResult)(r))
}

// UnmarshalJSON reads a result, keeping its structured content as the
// json.RawMessage it came as (nil when absent or null): a client or a
// gateway passes it on or decodes it into a type of its own.
func (r *CallToolResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Content           []Content       `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		Meta              json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = CallToolResult{Content: w.Content, IsError: w.IsError, Meta: nullIsNone(w.Meta)}
	if len(w.StructuredContent) > 0 && string(w.StructuredContent) != "null" {
		r.StructuredContent = w.StructuredContent
	}
	return nil
}

// AppendJSONParts is AppendJSON for a result of a single text block of at
// least min bytes that needs no escaping (jsonrpc.PlainString): head and
// tail are the JSON before and after that text, so that a writer can send
// the text itself rather than a copy of it (see wire.Out). ok is false for
// any other result, which AppendJSON writes whole.
func (r *CallToolResult) AppendJSONParts(dst []byte, min int) (head []byte, text string, tail []byte, ok bool) {
	if len(r.Content) != 1 || r.StructuredContent != nil || r.encoded != nil || r.Meta != nil {
		return dst, "", nil, false
	}
	c := &r.Content[0]
	if c.Type != "text" || c.Annotations != nil || c.Meta != nil || len(c.Text) < min || !jsonrpc.PlainString(c.Text) {
		return dst, "", nil, false
	}
	head = append(dst, `{"content":[{"type":"text","text":"`...)
	tail = append(make([]byte, 0, 32), `"}]`...)
	if r.IsError {
		tail = append(tail, `,"isError":true`...)
	}
	return head, c.Text, append(tail, '}'), true
}

// plainStructured returns StructuredContent's bytes, with plain true, when
// json.Marshal would copy them unchanged: a json.RawMessage that is valid,
// compact and escaped as encoding/json escapes (what json.Marshal wrote,
// such as the structured content of a typed tool). No structured content is
// plain too; anything else is not.
func (r *CallToolResult) plainStructured() (raw json.RawMessage, plain bool) {
	if r.StructuredContent == nil {
		return nil, true
	}
	raw, ok := r.StructuredContent.(json.RawMessage)
	if !ok || !marshalShaped(raw) {
		return nil, false
	}
	return raw, true
}

// marshalShaped reports whether b is JSON as json.Marshal writes it: valid,
// without whitespace outside strings, and with <, >, &, U+2028 and U+2029
// escaped. Each check is a byte search (bytes.IndexByte) rather than a
// loop over every byte: a megabyte of structured content is checked in
// well under a millisecond, next to the several json.Marshal took.
func marshalShaped(b []byte) bool {
	if len(b) == 0 || !jsonrpc.Valid(b) {
		return false
	}
	// Valid JSON has these only inside strings, where json.Marshal escapes them.
	if bytes.IndexByte(b, '<') >= 0 || bytes.IndexByte(b, '>') >= 0 || bytes.IndexByte(b, '&') >= 0 {
		return false
	}
	for i := 0; ; i++ {
		j := bytes.IndexByte(b[i:], 0xE2) // U+2028 and U+2029 are E2 80 A8 and E2 80 A9
		if j < 0 {
			break
		}
		i += j
		if i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9) {
			return false
		}
	}
	// Whitespace outside strings: check what lies between them, skipping
	// each string to its closing quote (one not escaped).
	for i := 0; i < len(b); {
		q := bytes.IndexByte(b[i:], '"')
		between := b[i:]
		if q >= 0 {
			between = b[i : i+q]
		}
		for _, c := range between {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				return false
			}
		}
		if q < 0 {
			break
		}
		i += q + 1
		for {
			e := bytes.IndexByte(b[i:], '"')
			if e < 0 {
				return false // not reached: b is valid
			}
			i += e
			n := 0
			for k := i - 1; b[k] == '\\'; k-- {
				n++
			}
			i++
			if n%2 == 0 {
				break
			}
		}
	}
	return true
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	// Role is "user" or "assistant".
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// GetPromptResult is a prompt filled in with its arguments (prompts/get).
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	// Meta is the result's _meta, a JSON object sent as it is (nil: none).
	Meta json.RawMessage `json:"_meta,omitempty"`
}
