package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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

var errNotObject = errors.New("not a JSON object")

// parseResponse validates line as one JSON object and fills r.
func parseResponse(line []byte, r *response) error {
	*r = response{}
	s := scanner{b: line}
	i := s.ws(0)
	if i >= len(line) || line[i] != '{' {
		if valid(line) {
			return errNotObject
		}
		return errSyntax
	}
	e, err := s.object(i, func(key []byte, v int) (int, error) {
		switch string(key) {
		case "id":
			e, err := s.value(v)
			if err != nil {
				return e, err
			}
			r.rawID = line[v:e]
			r.hasID = string(r.rawID) != "null"
			r.id, r.idOK = parseID(r.rawID)
			return e, nil
		case "method":
			r.method = true
		case "result":
			return s.result(v, r)
		case "error":
			return s.errorObject(v, r)
		}
		return -1, nil
	})
	if err != nil {
		return err
	}
	if s.ws(e) != len(line) {
		return errSyntax
	}
	return nil
}

// parseID reads a non-negative decimal id without allocating.
func parseID(raw []byte) (int64, bool) {
	if len(raw) == 0 || len(raw) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range raw {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func (s *scanner) result(v int, r *response) (int, error) {
	if v >= len(s.b) || s.b[v] != '{' {
		e, err := s.value(v)
		r.result = s.b[v:min(e, len(s.b))]
		return e, err
	}
	e, err := s.object(v, func(key []byte, v int) (int, error) {
		switch string(key) {
		case "isError":
			e, err := s.value(v)
			r.toolError = err == nil && string(s.b[v:e]) == "true"
			return e, err
		case "content":
			if v < len(s.b) && s.b[v] == '[' {
				return s.array(v, func(n, v int) (int, error) {
					if n != 0 || v >= len(s.b) || s.b[v] != '{' {
						return -1, nil
					}
					return s.object(v, func(key []byte, v int) (int, error) {
						if string(key) != "text" || v >= len(s.b) || s.b[v] != '"' {
							return -1, nil
						}
						e, _, err := s.str(v)
						r.text = s.b[v:e]
						return e, err
					})
				})
			}
		}
		return -1, nil
	})
	if err == nil {
		r.result = s.b[v:e]
	}
	return e, err
}

func (s *scanner) errorObject(v int, r *response) (int, error) {
	if v >= len(s.b) || s.b[v] != '{' {
		e, err := s.value(v)
		r.errObj = s.b[v:min(e, len(s.b))]
		return e, err
	}
	e, err := s.object(v, func(key []byte, v int) (int, error) {
		switch string(key) {
		case "code":
			e, err := s.value(v)
			if err == nil {
				r.errCode, _ = strconv.ParseInt(string(s.b[v:e]), 10, 64)
			}
			return e, err
		case "message":
			if v < len(s.b) && s.b[v] == '"' {
				e, _, err := s.str(v)
				r.errMsg = s.b[v:e]
				return e, err
			}
		}
		return -1, nil
	})
	if err == nil {
		r.errObj = s.b[v:e]
	}
	return e, err
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
		msg, _ := unquote(r.errMsg)
		return fmt.Errorf("JSON-RPC error %d %q", r.errCode, clip(msg, 200))
	case r.result == nil:
		return errors.New("a response with neither result nor error")
	case r.result[0] != '{':
		return fmt.Errorf("result is not an object: %s", clip(string(r.result), 80))
	case r.toolError:
		msg, _ := unquote(r.text)
		return fmt.Errorf("the tool reported an error (isError): %q", clip(msg, 200))
	case x.text == nil:
		return nil
	case r.text == nil:
		return errors.New("the result has no content[0].text")
	case bytes.Equal(r.text, x.text):
		return nil
	}
	got, ok1 := unquote(r.text)
	want, _ := unquote(x.text)
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
