// Package jsonrpc is the JSON-RPC 2.0 wire format as mcprt speaks it on a
// newline-delimited stream: decoding one line into an envelope whose payload
// stays raw JSON, and appending responses and notifications to byte slices so
// that a result is marshalled exactly once.
//
// It is the leaf of mcprt's stack (test/layers): it imports only the
// standard library, and every other package may use it.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Standard JSON-RPC 2.0 error codes, and the MCP codes mcprt emits.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	// CodeServerBusy (implementation-defined, in JSON-RPC's server error
	// range): every request slot is taken and the queue behind them is
	// full. The request was not run; the client may retry it.
	CodeServerBusy = -32000

	// CodeResourceNotFound is the legacy-era (≤ 2025-11-25) code for an unknown resource.
	CodeResourceNotFound = -32002
	// CodeHeaderMismatch (2026-07-28, Streamable HTTP): the request's
	// headers disagree with its body, or a required one is missing.
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability (2026-07-28): the request needs a client
	// capability it did not declare.
	CodeMissingClientCapability = -32021
	// CodeUnsupportedProtocolVersion (2026-07-28): the request's
	// _meta protocol version is not served here.
	CodeUnsupportedProtocolVersion = -32022

	// CodeInsufficientScope (mcprt's, outside the range the specification
	// keeps, as 2026-07-28 asks of new codes): the caller's access token
	// lacks a scope the request needs; data.scope names the scopes to ask
	// for (handlers.Access). Over HTTP it comes with 403 and a
	// WWW-Authenticate insufficient_scope challenge, the MCP authorization
	// specification's step-up.
	CodeInsufficientScope = 403
)

// Error is a JSON-RPC error object. It is also a Go error, so method handlers
// can return one to choose the code the client sees.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string { return "jsonrpc " + strconv.Itoa(e.Code) + ": " + e.Message }

// Errorf-style constructors keep call sites short.
func newError(code int, msg string) *Error { return &Error{Code: code, Message: msg} }

// Kind says what a decoded line is.
type Kind uint8

const (
	KindRequest      Kind = iota + 1 // method and id
	KindNotification                 // method, no id
	KindResponse                     // result or error, with id
)

// Message is one decoded JSON-RPC message. ID, Params, Result and Error keep
// the raw bytes of the line: only the handler that needs them decodes them.
type Message struct {
	Kind   Kind
	ID     json.RawMessage // raw id (a JSON string or integer), nil for notifications
	Method string
	Params json.RawMessage // nil when absent
	Result json.RawMessage
	Error  json.RawMessage
}

type envelope struct {
	JSONRPC, ID, Method, Params, Result, Error json.RawMessage
}

// NullID is the id of a response to a message whose id could not be read.
var NullID = json.RawMessage("null")

// Decode parses one message (not a batch). On failure it returns an *Error
// (-32700 for text that is not JSON, -32600 for JSON that is not a valid
// message) and, where it could be read, the id to answer with.
func Decode(line []byte, m *Message) (id json.RawMessage, err *Error) {
	var env envelope
	valid, isObject := ValidMembers(line, func(k string, v []byte) bool {
		switch k {
		case "jsonrpc":
			env.JSONRPC = v
		case "id":
			env.ID = v
		case "method":
			env.Method = v
		case "params":
			env.Params = v
		case "result":
			env.Result = v
		case "error":
			env.Error = v
		}
		return true
	})
	if !valid {
		return NullID, &Error{Code: CodeParseError, Message: "Parse error"}
	}
	if !isObject {
		// Valid JSON (null included), but not an object.
		return NullID, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: a message must be a JSON object"}
	}
	id = NullID
	if env.ID != nil {
		if !validID(env.ID) {
			return NullID, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: id must be a string or an integer"}
		}
		id = env.ID
	}
	if !bytes.Equal(env.JSONRPC, []byte(`"2.0"`)) {
		return id, &Error{Code: CodeInvalidRequest, Message: `Invalid Request: jsonrpc must be "2.0"`}
	}
	*m = Message{ID: env.ID, Params: env.Params, Result: env.Result, Error: env.Error}
	if env.Method != nil {
		if len(env.Method) < 2 || env.Method[0] != '"' {
			return id, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method must be a string"}
		}
		// Method names are a small set, interned like member keys; the
		// rare escaped one goes through Unquote (taking m.Method's address
		// for encoding/json would put every Message on the heap).
		if name, ok := internPlain(env.Method[1 : len(env.Method)-1]); ok {
			m.Method = name
		} else if name, ok := Unquote(env.Method); ok {
			m.Method = name
		} else {
			return id, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: method must be a string"}
		}
		if env.Params != nil && !isObjectOrArray(env.Params) {
			return id, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: params must be an object or an array"}
		}
		if env.ID == nil {
			m.Kind = KindNotification
		} else {
			m.Kind = KindRequest
		}
		return id, nil
	}
	if env.ID != nil && (env.Result != nil || env.Error != nil) && (env.Result == nil) != (env.Error == nil) {
		m.Kind = KindResponse
		return id, nil
	}
	return id, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: neither a request, a notification nor a response"}
}

// validID accepts a JSON string or an integer. MCP forbids null ids; a
// fractional id would round-trip ambiguously, so it is rejected too.
func validID(raw json.RawMessage) bool {
	switch c := raw[0]; {
	case c == '"':
		// A whole string, since the line is valid JSON; it is echoed in the
		// response as is, so it must be UTF-8 (JSON text is).
		return utf8.Valid(raw)
	case c == '-' || (c >= '0' && c <= '9'):
		// A loop, not bytes.ContainsAny, which builds its set of bytes on
		// every call: that was 2% of a gateway's CPU, for ids of a few
		// digits.
		for _, b := range raw[1:] {
			if b == '.' || b == 'e' || b == 'E' {
				return false
			}
		}
		return true
	}
	return false
}

func isObjectOrArray(raw json.RawMessage) bool {
	return len(raw) > 0 && (raw[0] == '{' || raw[0] == '[')
}

// IsBatch reports whether a line is a JSON array (a JSON-RPC batch).
func IsBatch(line []byte) bool {
	for _, c := range line {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			return true
		}
		return false
	}
	return false
}

// AppendResult appends a success response. result must be one JSON value
// (MCP requires an object) and is copied as is: it was marshalled once.
func AppendResult(dst []byte, id json.RawMessage, result []byte) []byte {
	if id == nil {
		id = NullID
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendError appends an error response.
func AppendError(dst []byte, id json.RawMessage, e *Error) []byte {
	if id == nil {
		id = NullID
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = AppendString(dst, e.Message)
	if e.Data != nil {
		data, err := json.Marshal(e.Data)
		if err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, data...)
		}
	}
	return append(dst, "}}"...)
}

// AppendNotification appends a notification; params may be nil.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendString appends s as a JSON string literal, escaped exactly as
// encoding/json escapes it (HTML characters, U+2028 and U+2029 included,
// invalid UTF-8 replaced by U+FFFD), so output is identical to json.Marshal
// without its reflection and its second pass.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start, plain := 0, 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainByte(c) {
			i++
			// Eight plain bytes in a row: probably a long run, worth
			// skipping by words. Text dense in escapes or non-ASCII
			// letters never gets here, and pays nothing for it.
			if plain++; plain == 8 {
				i, plain = plainWords(s, i), 0
			}
			continue
		}
		plain = 0
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// PlainString reports whether AppendString writes s as it is between its
// quotes: nothing in it needs escaping. A writer can then send a large
// string without copying it into a buffer first.
func PlainString(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if plainByte(c) {
			i = max(plainWords(s, i), i+1)
			continue
		}
		if c < utf8.RuneSelf {
			return false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// plainByte reports whether AppendString copies c as it is.
func plainByte(c byte) bool { return copyAsIs[c] }

var copyAsIs = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// plainWords skips plain bytes (see plainByte) of s from i and returns
// where AppendString must look at bytes one by one again: at most fifteen
// bytes before the next byte that is not plain. A tool's text result is
// mostly plain, and a megabyte of it cost close to a millisecond a byte at
// a time.
//
// The first 64 bytes, and the last 256, are tested sixteen at a time,
// which ends the short runs of prose between a newline and a quote. Past
// them the run is probably long, and it is searched in windows (doubling, as in plainRun,
// so that work stays proportional to the run) with strings.IndexByte, which
// the runtime vectorizes, once for each of the five characters and a word
// test only for control characters and non-ASCII bytes: three times faster
// than testing every word for all seven kinds.
func plainWords(s string, i int) int {
	for k := 0; i+16 <= len(s) && (k < 4 || len(s)-i < 256); k++ {
		if (escapeWord(load64(s, i)) | escapeWord(load64(s, i+8))) != 0 {
			return i
		}
		i += 16
	}
	for n := 256; i+16 <= len(s); n = min(2*n, 64<<10) {
		w := s[i:min(i+n, len(s))]
		end := len(w)
		for _, c := range []byte{'"', '\\', '<', '>', '&'} {
			if k := strings.IndexByte(w[:end], c); k >= 0 {
				end = k
			}
		}
		if end = asciiRun(w[:end]); end < len(w) {
			return i + end
		}
		i += len(w)
	}
	return i
}

// escapeWord is non-zero when one of the eight bytes of x needs more than
// a copy. '"' (0x22) and '&' (0x26) differ only in bit 2, '<' (0x3c) and
// '>' (0x3e) only in bit 1, so setting that bit tests each pair at once;
// each test is the has-zero-byte trick (exact as a yes or no when no high
// bit is set, and a set high bit, a non-ASCII byte, answers yes anyway).
func escapeWord(x uint64) uint64 {
	quoteAmp := (x | ones*0x04) ^ (ones * 0x26)
	angles := (x | ones*0x02) ^ (ones * 0x3e)
	slash := x ^ (ones * '\\')
	return ((x - ones*0x20) | (quoteAmp - ones) | (angles - ones) | (slash - ones) | x) & highs
}

// load64 reads b[i:i+8] as a little-endian word (one load: the compiler
// merges the bytes).
func load64[T string | []byte](b T, i int) uint64 {
	b = b[i : i+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}
