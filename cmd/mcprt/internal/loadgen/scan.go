package loadgen

import (
	"encoding/json"
	"errors"
)

// The load generator must check every response without becoming the
// bottleneck it measures: the client shares the machine's cores with the
// server. encoding/json would cost more than a fast server spends on the
// whole call, so responses are checked by this single-pass validating
// scanner, which only records where the few members the checks need begin
// and end.

var errSyntax = errors.New("invalid JSON")

// maxDepth bounds nesting so that a hostile server cannot make the client
// recurse without limit.
const maxDepth = 512

type scanner struct {
	b     []byte
	depth int
}

func (s *scanner) ws(i int) int {
	for i < len(s.b) {
		switch s.b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// value validates the JSON value starting at b[i] (no leading space) and
// returns the index just past it.
func (s *scanner) value(i int) (int, error) {
	if i >= len(s.b) {
		return i, errSyntax
	}
	switch c := s.b[i]; {
	case c == '{':
		return s.object(i, nil)
	case c == '[':
		return s.array(i, nil)
	case c == '"':
		e, _, err := s.str(i)
		return e, err
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number(i)
	case c == 't':
		return s.literal(i, "true")
	case c == 'f':
		return s.literal(i, "false")
	case c == 'n':
		return s.literal(i, "null")
	}
	return i, errSyntax
}

func (s *scanner) literal(i int, lit string) (int, error) {
	if len(s.b)-i < len(lit) || string(s.b[i:i+len(lit)]) != lit {
		return i, errSyntax
	}
	return i + len(lit), nil
}

// str validates the string starting at b[i] == '"' and returns the index
// past its closing quote and whether it holds escapes.
func (s *scanner) str(i int) (end int, escaped bool, err error) {
	i++
	for i < len(s.b) {
		c := s.b[i]
		switch {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(s.b) {
				return i, escaped, errSyntax
			}
			switch s.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(s.b)-i < 6 || !isHex(s.b[i+2]) || !isHex(s.b[i+3]) || !isHex(s.b[i+4]) || !isHex(s.b[i+5]) {
					return i, escaped, errSyntax
				}
				i += 6
			default:
				return i, escaped, errSyntax
			}
		case c < 0x20:
			return i, escaped, errSyntax
		default:
			i++
		}
	}
	return i, escaped, errSyntax
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number(i int) (int, error) {
	b := s.b
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && isDigit(b[i]):
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return i, errSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, errSyntax
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, errSyntax
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, nil
}

// memberFunc sees one member of an object: key is the raw key without its
// quotes (escapes left in), v the index where the value starts. It returns
// the index past the value if it scanned it itself, or -1 to have it
// scanned generically.
type memberFunc func(key []byte, v int) (int, error)

// object validates the object at b[i] == '{', calling f (if not nil) for
// each member, and returns the index past it.
func (s *scanner) object(i int, f memberFunc) (int, error) {
	if s.depth++; s.depth > maxDepth {
		return i, errSyntax
	}
	defer func() { s.depth-- }()
	i = s.ws(i + 1)
	if i < len(s.b) && s.b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s.b) || s.b[i] != '"' {
			return i, errSyntax
		}
		ke, _, err := s.str(i)
		if err != nil {
			return ke, err
		}
		key := s.b[i+1 : ke-1]
		i = s.ws(ke)
		if i >= len(s.b) || s.b[i] != ':' {
			return i, errSyntax
		}
		v := s.ws(i + 1)
		e := -1
		if f != nil {
			if e, err = f(key, v); err != nil {
				return e, err
			}
		}
		if e < 0 {
			if e, err = s.value(v); err != nil {
				return e, err
			}
		}
		i = s.ws(e)
		if i >= len(s.b) {
			return i, errSyntax
		}
		switch s.b[i] {
		case ',':
			i = s.ws(i + 1)
		case '}':
			return i + 1, nil
		default:
			return i, errSyntax
		}
	}
}

// elementFunc is memberFunc for arrays: n is the element's position.
type elementFunc func(n, v int) (int, error)

// array validates the array at b[i] == '[', calling f (if not nil) for each
// element, and returns the index past it.
func (s *scanner) array(i int, f elementFunc) (int, error) {
	if s.depth++; s.depth > maxDepth {
		return i, errSyntax
	}
	defer func() { s.depth-- }()
	i = s.ws(i + 1)
	if i < len(s.b) && s.b[i] == ']' {
		return i + 1, nil
	}
	for n := 0; ; n++ {
		e := -1
		var err error
		if f != nil {
			if e, err = f(n, i); err != nil {
				return e, err
			}
		}
		if e < 0 {
			if e, err = s.value(i); err != nil {
				return e, err
			}
		}
		i = s.ws(e)
		if i >= len(s.b) {
			return i, errSyntax
		}
		switch s.b[i] {
		case ',':
			i = s.ws(i + 1)
		case ']':
			return i + 1, nil
		default:
			return i, errSyntax
		}
	}
}

// valid reports whether b is exactly one JSON value, with optional
// surrounding space.
func valid(b []byte) bool {
	s := scanner{b: b}
	e, err := s.value(s.ws(0))
	return err == nil && s.ws(e) == len(b)
}

// unquote decodes a JSON string literal that the scanner accepted.
func unquote(lit []byte) (string, bool) {
	var v string
	if err := json.Unmarshal(lit, &v); err != nil {
		return "", false
	}
	return v, true
}
