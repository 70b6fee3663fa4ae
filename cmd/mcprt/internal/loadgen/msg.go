package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// Protocol revisions the generator speaks.
const (
	// DefaultLegacyVersion is what initialize asks for by default: the
	// revision the shared baseline harness uses, so figures compare.
	DefaultLegacyVersion = "2025-06-18"
	// ModernVersion is the stateless revision, with _meta on every request.
	ModernVersion = "2026-07-28"
)

const clientName = "mcprt-bench"

// metaObject is the _meta value 2026-07-28 requires on every request.
func metaObject(version string) []byte {
	v, _ := json.Marshal(version)
	return fmt.Appendf(nil, `{"io.modelcontextprotocol/protocolVersion":%s,"io.modelcontextprotocol/clientCapabilities":{}}`, v)
}

// request is a request whose only varying part is its id: the generator
// writes prefix, the id, suffix. Building one costs an append and an itoa.
type request struct {
	suffix []byte // after the id, with the closing brace and '\n'
}

const idPrefix = `{"jsonrpc":"2.0","id":`

// newRequest builds the template of method with params (nil: none) and, in
// the modern era, _meta merged into params. params must be a compact JSON
// object.
func newRequest(method string, params []byte, meta []byte) request {
	m, _ := json.Marshal(method)
	b := append([]byte(`,"method":`), m...)
	switch {
	case meta != nil:
		b = append(b, `,"params":{"_meta":`...)
		b = append(b, meta...)
		if len(params) > 2 { // not "{}"
			b = append(b, ',')
			b = append(b, params[1:]...)
		} else {
			b = append(b, '}')
		}
	case params != nil:
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	b = append(b, "}\n"...)
	return request{suffix: b}
}

func (q request) append(dst []byte, id int64) []byte {
	dst = append(dst, idPrefix...)
	dst = strconv.AppendInt(dst, id, 10)
	return append(dst, q.suffix...)
}

// toolCallParams returns the compact params of tools/call name(args).
func toolCallParams(name string, args []byte) []byte {
	n, _ := json.Marshal(name)
	b := append([]byte(`{"name":`), n...)
	b = append(b, `,"arguments":`...)
	b = append(b, args...)
	return append(b, '}')
}

// response is what the checks need of one line from the server. Slices
// point into the line.
type response struct {
	hasID     bool
	id        int64 // valid when idOK
	idOK      bool  // the id is an integer the generator could have sent
	rawID     []byte
	method    bool   // a request or notification from the server, not a response
	result    []byte // raw result, nil when absent
	errObj    []byte // raw error, nil when absent
	errCode   int64
	errMsg    []byte // raw literal
	toolError bool   // result.isError is true
	text      []byte // raw literal of result.content[0].text, nil when absent
}

// Every response is checked without encoding/json, which would cost more
// than a fast server spends on the whole call, and the client shares the
// machine's cores with the server it measures. The runtime's own scanner
// does it instead: jsonrpc.Valid checks the line's grammar exactly as
// json.Valid does, a word at a time, then jsonrpc.Members finds the few
// members the checks need, as sub-slices of the line. Neither recurses, and
// Valid refuses more than 10,000 levels of nesting, as encoding/json does:
// a hostile server costs the client no stack.

var (
	errSyntax    = errors.New("invalid JSON")
	errNotObject = errors.New("not a JSON object")
)

// parseResponse validates line as one JSON object and fills r. Where a
// member is duplicated the last one counts, as with encoding/json.
func parseResponse(line []byte, r *response) error {
	*r = response{}
	if !jsonrpc.Valid(line) {
		return errSyntax
	}
	if !jsonrpc.Members(line, r.member) {
		return errNotObject
	}
	return nil
}

// member takes one top-level member of a response.
func (r *response) member(key string, val []byte) bool {
	switch key {
	case "id":
		r.rawID = val
		r.hasID = string(val) != "null"
		r.id, r.idOK = parseID(val)
	case "method":
		r.method = true
	case "result":
		r.result, r.toolError, r.text = val, false, nil
		jsonrpc.Members(val, r.resultMember) // false, and nothing seen, unless an object
	case "error":
		r.errObj, r.errCode, r.errMsg = val, 0, nil
		jsonrpc.Members(val, r.errorMember)
	}
	return true
}

func (r *response) resultMember(key string, val []byte) bool {
	switch key {
	case "isError":
		r.toolError = string(val) == "true"
	case "content":
		r.text = nil
		if val[0] == '[' {
			// content[0], when an object. Members scans one object from
			// the start of its argument and stops at its closing brace,
			// so the elements after it are never looked at.
			i := 1
			for i < len(val) && (val[i] == ' ' || val[i] == '\t' || val[i] == '\r' || val[i] == '\n') {
				i++
			}
			jsonrpc.Members(val[i:], r.contentMember)
		}
	}
	return true
}

func (r *response) contentMember(key string, val []byte) bool {
	if key == "text" {
		r.text = nil
		if val[0] == '"' {
			r.text = val
		}
	}
	return true
}

func (r *response) errorMember(key string, val []byte) bool {
	switch key {
	case "code":
		r.errCode, _ = strconv.ParseInt(string(val), 10, 64)
	case "message":
		r.errMsg = nil
		if val[0] == '"' {
			r.errMsg = val
		}
	}
	return true
}

// parseID reads a non-negative decimal id without allocating.
func parseID(raw []byte) (int64, bool) {
	if len(raw) == 0 || len(raw) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// expect says what a correct answer to the timed call looks like.
type expect struct {
	// text, when set, is the JSON literal result.content[0].text must
	// equal (compared as bytes first, then as decoded strings, since a
	// server may escape differently).
	text []byte
}

// check verifies a response to the timed call.
func (x *expect) check(r *response) error {
	switch {
	case r.errObj != nil:
		msg, _ := jsonrpc.Unquote(r.errMsg)
		return fmt.Errorf("JSON-RPC error %d %q", r.errCode, clip(msg, 200))
	case r.result == nil:
		return errors.New("a response with neither result nor error")
	case r.result[0] != '{':
		return fmt.Errorf("result is not an object: %s", clip(string(r.result), 80))
	case r.toolError:
		msg, _ := jsonrpc.Unquote(r.text)
		return fmt.Errorf("the tool reported an error (isError): %q", clip(msg, 200))
	case x.text == nil:
		return nil
	case r.text == nil:
		return errors.New("the result has no content[0].text")
	case bytes.Equal(r.text, x.text):
		return nil
	}
	got, ok1 := jsonrpc.Unquote(r.text)
	want, _ := jsonrpc.Unquote(x.text)
	if ok1 && got == want {
		return nil
	}
	return fmt.Errorf("wrong text: %d bytes back, %d sent: %q", len(got), len(want), clip(got, 60))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
