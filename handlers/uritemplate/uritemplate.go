package uritemplate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Template is a parsed RFC 6570 URI Template. A Template is immutable once
// parsed and safe for concurrent use by multiple goroutines.
type Template struct {
	raw   string
	parts []part
	names []string      // distinct variable names, in order of first appearance
	dup   bool          // some variable name occurs more than once
	query *querySection // non-nil when the template ends in a query section (see match.go)
}

// part is either a literal (expr == nil) or an expression.
type part struct {
	lit  string // literal text, already encoded as expand writes it
	expr *expression
}

type expression struct {
	op   *operator
	vars []varspec
}

type varspec struct {
	name    string
	explode bool
	prefix  int // 0: no prefix modifier
}

// operator is one row of the table in RFC 6570 Appendix A.
type operator struct {
	char     byte   // 0 for simple string expansion
	first    string // written before the first defined variable
	sep      string // written between defined variables
	named    bool   // name=value pairs
	ifemp    string // written after the name when the value is empty
	reserved bool   // allow reserved characters and pct-triplets (U+R)
}

var (
	opSimple   = &operator{0, "", ",", false, "", false}
	opReserved = &operator{'+', "", ",", false, "", true}
	opFragment = &operator{'#', "#", ",", false, "", true}
	opLabel    = &operator{'.', ".", ".", false, "", false}
	opPath     = &operator{'/', "/", "/", false, "", false}
	opParam    = &operator{';', ";", ";", true, "", false}
	opQuery    = &operator{'?', "?", "&", true, "=", false}
	opCont     = &operator{'&', "&", "&", true, "=", false}
)

func operatorFor(c byte) *operator {
	switch c {
	case '+':
		return opReserved
	case '#':
		return opFragment
	case '.':
		return opLabel
	case '/':
		return opPath
	case ';':
		return opParam
	case '?':
		return opQuery
	case '&':
		return opCont
	}
	return nil
}

// parseError describes a malformed template. Offset is the byte offset in the
// template at which the problem was detected.
type parseError struct {
	Template string
	Offset   int
	Msg      string
}

func (e *parseError) Error() string {
	return fmt.Sprintf("uritemplate: %s at offset %d in %q", e.Msg, e.Offset, e.Template)
}

// Parse parses an RFC 6570 URI Template (levels 1 to 4).
//
// Expressions may use the operators +, #, ., /, ;, ? and &, comma-separated
// variable lists, the explode modifier (*) and the prefix modifier (:N with
// 1 <= N <= 9999). The operators reserved for future extensions (=, ,, !, @
// and |), unclosed or nested braces, a stray '}', empty expressions, empty or
// malformed variable names and malformed prefixes are errors (*Error).
//
// Literal characters outside expressions are accepted as written; characters
// not allowed in a URI are percent-encoded by expand (RFC 6570 section 3.1).
func Parse(s string) (*Template, error) {
	t := &Template{raw: s}
	seen := make(map[string]bool)
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, part{lit: encode(lit.String(), true)})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch c := s[i]; c {
		case '}':
			return nil, &parseError{s, i, "unmatched '}'"}
		case '{':
			n := strings.IndexByte(s[i+1:], '}')
			if n < 0 {
				return nil, &parseError{s, i, "unclosed expression"}
			}
			body := s[i+1 : i+1+n]
			if j := strings.IndexByte(body, '{'); j >= 0 {
				return nil, &parseError{s, i + 1 + j, "'{' inside expression"}
			}
			e, err := parseExpression(s, i+1, body)
			if err != nil {
				return nil, err
			}
			flush()
			t.parts = append(t.parts, part{expr: e})
			for _, v := range e.vars {
				if seen[v.name] {
					t.dup = true
					continue
				}
				seen[v.name] = true
				t.names = append(t.names, v.name)
			}
			i += n + 2
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	t.query = buildQuerySection(t.parts)
	return t, nil
}

// mustParse is like Parse but panics if the template is malformed. It is
// meant for templates that are constants of the program.
func mustParse(s string) *Template {
	t, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return t
}

func parseExpression(tmpl string, off int, body string) (*expression, error) {
	if body == "" {
		return nil, &parseError{tmpl, off, "empty expression"}
	}
	e := &expression{op: opSimple}
	switch c := body[0]; c {
	case '+', '#', '.', '/', ';', '?', '&':
		e.op = operatorFor(c)
		body = body[1:]
		off++
	case '=', ',', '!', '@', '|':
		return nil, &parseError{tmpl, off, fmt.Sprintf("reserved operator %q", c)}
	}
	for {
		spec, rest, more := strings.Cut(body, ",")
		v, err := parseVarspec(tmpl, off, spec)
		if err != nil {
			return nil, err
		}
		e.vars = append(e.vars, v)
		if !more {
			return e, nil
		}
		off += len(spec) + 1
		body = rest
	}
}

func parseVarspec(tmpl string, off int, spec string) (varspec, error) {
	v := varspec{name: spec}
	if name, ok := strings.CutSuffix(spec, "*"); ok {
		v.name, v.explode = name, true
	} else if name, digits, ok := strings.Cut(spec, ":"); ok {
		v.name = name
		if len(digits) == 0 || len(digits) > 4 || digits[0] == '0' {
			return v, &parseError{tmpl, off + len(name), fmt.Sprintf("invalid prefix %q", ":"+digits)}
		}
		for i := 0; i < len(digits); i++ {
			if !isDigit(digits[i]) {
				return v, &parseError{tmpl, off + len(name), fmt.Sprintf("invalid prefix %q", ":"+digits)}
			}
		}
		v.prefix, _ = strconv.Atoi(digits)
	}
	if err := checkName(v.name); err != "" {
		return v, &parseError{tmpl, off, err}
	}
	return v, nil
}

// checkName validates varname = varchar *( ["."] varchar ),
// varchar = ALPHA / DIGIT / "_" / pct-encoded.
func checkName(n string) string {
	if n == "" {
		return "empty variable name"
	}
	for i := 0; i < len(n); i++ {
		switch c := n[i]; {
		case isAlpha(c) || isDigit(c) || c == '_':
		case c == '%':
			if i+2 >= len(n) || !isHex(n[i+1]) || !isHex(n[i+2]) {
				return fmt.Sprintf("invalid percent-encoding in variable name %q", n)
			}
			i += 2
		case c == '.':
			if i == 0 || i == len(n)-1 || n[i-1] == '.' {
				return fmt.Sprintf("misplaced '.' in variable name %q", n)
			}
		default:
			return fmt.Sprintf("invalid character %q in variable name %q", c, n)
		}
	}
	return ""
}

// String returns the template as it was given to Parse.
func (t *Template) String() string { return t.raw }

// Vars returns the distinct variable names of the template in order of first
// appearance. The caller may modify the returned slice.
func (t *Template) Vars() []string {
	return append([]string(nil), t.names...)
}

// value kinds
const (
	kindString = iota
	kindList
	kindPairs
)

type value struct {
	kind  int
	s     string
	list  []string
	pairs [][2]string
}

// lookup returns the value of name and whether it is defined. Missing keys,
// nil, and empty lists or maps are undefined (RFC 6570 section 2.3).
func lookup(vars map[string]any, name string) (value, bool, error) {
	raw, ok := vars[name]
	if !ok || raw == nil {
		return value{}, false, nil
	}
	switch x := raw.(type) {
	case string:
		return value{kind: kindString, s: x}, true, nil
	case []string:
		return value{kind: kindList, list: x}, len(x) > 0, nil
	case [][2]string:
		return value{kind: kindPairs, pairs: x}, len(x) > 0, nil
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		pairs := make([][2]string, len(keys))
		for i, k := range keys {
			pairs[i] = [2]string{k, x[k]}
		}
		return value{kind: kindPairs, pairs: pairs}, len(pairs) > 0, nil
	case bool:
		return value{kind: kindString, s: strconv.FormatBool(x)}, true, nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr, float32, float64:
		return value{kind: kindString, s: fmt.Sprint(x)}, true, nil
	case fmt.Stringer:
		return value{kind: kindString, s: x.String()}, true, nil
	}
	return value{}, false, fmt.Errorf("uritemplate: unsupported value type %T for variable %q", raw, name)
}

// expand expands the template with the given variables (RFC 6570 section 3).
//
// A value may be a string, a []string (list), a map[string]string
// (associative array, expanded in sorted key order) or a [][2]string
// (associative array as ordered key/value pairs). For convenience booleans,
// integers, floats and fmt.Stringers are expanded as their string form.
// Missing variables, nil, and empty lists and maps are undefined and skipped
// as the RFC prescribes. Other value types, and a prefix modifier on a list
// or map value, are errors.
func (t *Template) expand(vars map[string]any) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.expr == nil {
			b.WriteString(p.lit)
			continue
		}
		if err := p.expr.expand(&b, vars); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func (e *expression) expand(b *strings.Builder, vars map[string]any) error {
	op := e.op
	first := true
	for _, v := range e.vars {
		val, ok, err := lookup(vars, v.name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if first {
			b.WriteString(op.first)
			first = false
		} else {
			b.WriteString(op.sep)
		}
		if val.kind == kindString {
			s := val.s
			if v.prefix > 0 {
				s = truncate(s, v.prefix)
			}
			if op.named {
				b.WriteString(v.name)
				if s == "" {
					b.WriteString(op.ifemp)
					continue
				}
				b.WriteByte('=')
			}
			b.WriteString(encode(s, op.reserved))
			continue
		}
		if v.prefix > 0 {
			return fmt.Errorf("uritemplate: prefix modifier on composite value of variable %q", v.name)
		}
		if !v.explode {
			if op.named {
				b.WriteString(v.name)
				b.WriteByte('=')
			}
			if val.kind == kindList {
				for i, item := range val.list {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(encode(item, op.reserved))
				}
			} else {
				for i, kv := range val.pairs {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(encode(kv[0], op.reserved))
					b.WriteByte(',')
					b.WriteString(encode(kv[1], op.reserved))
				}
			}
			continue
		}
		if val.kind == kindList {
			for i, item := range val.list {
				if i > 0 {
					b.WriteString(op.sep)
				}
				if op.named {
					b.WriteString(v.name)
					if item == "" {
						b.WriteString(op.ifemp)
						continue
					}
					b.WriteByte('=')
				}
				b.WriteString(encode(item, op.reserved))
			}
			continue
		}
		for i, kv := range val.pairs {
			if i > 0 {
				b.WriteString(op.sep)
			}
			b.WriteString(encode(kv[0], op.reserved))
			if op.named && kv[1] == "" {
				b.WriteString(op.ifemp)
				continue
			}
			b.WriteByte('=')
			b.WriteString(encode(kv[1], op.reserved))
		}
	}
	return nil
}

// truncate returns the first n Unicode characters of s.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

const upperHex = "0123456789ABCDEF"

// encode percent-encodes every byte of s that is not unreserved; with
// reserved set, reserved characters and existing pct-encoded triplets are
// kept too (RFC 6570 section 3.2.1, "U" and "U+R").
func encode(s string, reserved bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isUnreserved(c), reserved && isReserved(c):
			b.WriteByte(c)
		case reserved && c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteString(s[i : i+3])
			i += 2
		default:
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		}
	}
	return b.String()
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isUnreserved(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

func isReserved(c byte) bool {
	return strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0
}
