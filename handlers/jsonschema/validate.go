package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// ValidationError reports why an instance does not match a schema.
//
// Path and Message describe the first failure. When there were several,
// Errors lists all of them (the first included, at most maxErrors); it is
// nil when there was only one.
type ValidationError struct {
	// Path is a JSON pointer into the instance ("" for the instance itself,
	// "/items/0/name" for a nested value).
	Path string
	// Message is a short, model-readable sentence such as "must be >= 1".
	Message string
	// Errors holds every failure when there was more than one.
	Errors []*ValidationError
	// Root, if set, names the instance in Error(): with Root "arguments",
	// Error() reads "arguments/count: must be >= 1". See WithRoot.
	Root string
	// Truncated is set when validation stopped collecting failures.
	Truncated bool

	expected uint8 // for type failures: the expected types
}

// maxErrors bounds how many failures one validation collects.
const maxErrors = 10

// Error renders the failure(s) as one line, for example
// `arguments/count: must be >= 1; arguments: unexpected property "x"`.
func (e *ValidationError) Error() string {
	if len(e.Errors) <= 1 {
		return e.sentence(e.Root)
	}
	parts := make([]string, 0, len(e.Errors)+1)
	for _, sub := range e.Errors {
		parts = append(parts, sub.sentence(e.Root))
	}
	if e.Truncated {
		parts = append(parts, "(further errors omitted)")
	}
	return strings.Join(parts, "; ")
}

func (e *ValidationError) sentence(root string) string {
	loc := root + e.Path
	if root == "" {
		loc = strings.TrimPrefix(e.Path, "/")
	}
	if loc == "" {
		return e.Message
	}
	return loc + ": " + e.Message
}

// WithRoot sets Root (used by Error to name the instance) and returns e.
func (e *ValidationError) WithRoot(root string) *ValidationError {
	e.Root = root
	return e
}

// Validate checks a JSON document against the schema. Numbers are decoded
// with json.Decoder.UseNumber, so large integers are compared exactly. It
// returns nil or a *ValidationError; a document that is not valid JSON is
// reported as a *ValidationError too.
func (s *Schema) Validate(instance json.RawMessage) error {
	if raw := bytes.TrimSpace(instance); len(raw) > 0 && jsonrpc.Valid(raw) {
		return s.ValidateWellFormed(raw)
	}
	return s.validateDecoded(instance)
}

// ValidateWellFormed is Validate for an instance already known to be one
// well-formed JSON value (jsonrpc.Valid, or a member of a document that
// passed it), without checking that again: the arguments of a tools/call
// are a slice of params the caller has just checked.
func (s *Schema) ValidateWellFormed(instance json.RawMessage) error {
	if raw := bytes.TrimSpace(instance); len(raw) > 0 && fastValid(s.root, raw) {
		return nil
	}
	return s.validateDecoded(instance)
}

// validateDecoded decodes the instance and runs the full validator, which
// reports every failure (and malformed JSON) precisely.
func (s *Schema) validateDecoded(instance json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(instance))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &ValidationError{Message: "invalid JSON: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &ValidationError{Message: "invalid JSON: unexpected data after the value"}
	}
	return s.validateValue(v)
}

// validateValue checks a value as produced by encoding/json decoding into an
// any (map[string]any, []any, string, float64 or json.Number, bool, nil).
// Go integer types are accepted as numbers too. It returns nil or a
// *ValidationError.
func (s *Schema) validateValue(v any) error {
	st := state{limit: maxErrors}
	if st.validate(s.root, v, nil) {
		return nil
	}
	first := st.errs[0]
	out := &ValidationError{Path: first.Path, Message: first.Message, Truncated: st.truncated}
	if len(st.errs) > 1 {
		out.Errors = st.errs
	}
	return out
}

// path is the instance location, built only when a failure is reported.
type path struct {
	parent *path
	key    string
	idx    int // -1 for object keys
}

func (p *path) String() string {
	if p == nil {
		return ""
	}
	var segs []string
	for q := p; q != nil; q = q.parent {
		if q.idx >= 0 {
			segs = append(segs, strconv.Itoa(q.idx))
		} else {
			segs = append(segs, escapeToken(q.key))
		}
	}
	var b strings.Builder
	for i := len(segs) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(segs[i])
	}
	return b.String()
}

type state struct {
	errs      []*ValidationError
	limit     int
	truncated bool
	depth     int
}

func (st *state) full() bool { return len(st.errs) >= st.limit }

func (st *state) fail(p *path, msg string) {
	if st.full() {
		st.truncated = true
		return
	}
	st.errs = append(st.errs, &ValidationError{Path: p.String(), Message: msg})
}

func (st *state) failf(p *path, format string, args ...any) {
	st.fail(p, fmt.Sprintf(format, args...))
}

// matches runs n on v in a scratch state that stops at the first failure.
func (st *state) matches(n *node, v any, p *path) bool {
	sub := state{limit: 1, depth: st.depth}
	return sub.validate(n, v, p)
}

// firstError runs n on v and returns its first failure, or nil.
func (st *state) firstError(n *node, v any, p *path) *ValidationError {
	sub := state{limit: 1, depth: st.depth}
	if sub.validate(n, v, p) {
		return nil
	}
	return sub.errs[0]
}

func instanceType(v any) (uint8, bool) {
	switch v.(type) {
	case nil:
		return tNull, true
	case bool:
		return tBoolean, true
	case string:
		return tString, true
	case map[string]any:
		return tObject, true
	case []any:
		return tArray, true
	}
	if isNumberValue(v) {
		return tNumber, true
	}
	return 0, false
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// validate reports whether v matches n, recording failures.
func (st *state) validate(n *node, v any, p *path) bool {
	start := len(st.errs)
	if n.boolean {
		if !n.value {
			st.fail(p, "no value is allowed here")
		}
		return n.value
	}
	st.depth++
	defer func() { st.depth-- }()
	if st.depth > 2000 {
		st.fail(p, "value is nested too deeply")
		return false
	}

	it, ok := instanceType(v)
	if !ok {
		st.failf(p, "unsupported Go value of type %T", v)
		return false
	}
	var nv number
	isNum := it == tNumber
	if isNum {
		if nv, ok = toNumber(v); !ok {
			st.failf(p, "invalid number %v", v)
			return false
		}
	}

	if n.types != 0 {
		okType := n.types&it != 0
		if !okType && isNum && n.types&tInteger != 0 && nv.info.integral {
			okType = true
		}
		if !okType {
			got := typeList(it)
			if isNum && nv.info.integral {
				got = "integer"
			}
			if st.full() {
				st.truncated = true
			} else {
				st.errs = append(st.errs, &ValidationError{Path: p.String(),
					Message: "must be " + typeList(n.types) + ", got " + got, expected: n.types})
			}
			return false // other keywords would only add noise
		}
	}

	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			if equal(e, v) {
				found = true
				break
			}
		}
		if !found {
			st.fail(p, "must be one of "+n.enumText)
		}
	}
	if n.hasConst && !equal(n.constVal, v) {
		st.fail(p, "must be equal to "+n.constTxt)
	}

	switch it {
	case tObject:
		st.validateObject(n, v.(map[string]any), p)
	case tArray:
		st.validateArray(n, v.([]any), p)
	case tString:
		st.validateString(n, v.(string), p)
	case tNumber:
		st.validateNumber(n, nv, p)
	}
	if st.full() {
		return false
	}

	if n.ref != nil {
		st.validate(n.ref, v, p)
	}
	for _, s := range n.allOf {
		st.validate(s, v, p)
	}
	if len(n.anyOf) > 0 {
		matched := false
		for _, s := range n.anyOf {
			if st.matches(s, v, p) {
				matched = true
				break
			}
		}
		if !matched {
			st.failAlternatives(n.anyOf, "anyOf", v, p)
		}
	}
	if len(n.oneOf) > 0 {
		var hits []string
		for i, s := range n.oneOf {
			if st.matches(s, v, p) {
				hits = append(hits, "#"+strconv.Itoa(i))
			}
		}
		switch len(hits) {
		case 0:
			st.failAlternatives(n.oneOf, "oneOf", v, p)
		case 1:
		default:
			st.failf(p, "must match exactly one oneOf alternative, but matched %d (%s)", len(hits), strings.Join(hits, ", "))
		}
	}
	if n.not != nil && st.matches(n.not, v, p) {
		st.fail(p, "must not match the \"not\" schema")
	}
	if n.ifN != nil {
		if st.matches(n.ifN, v, p) {
			if n.thenN != nil {
				st.validate(n.thenN, v, p)
			}
		} else if n.elseN != nil {
			st.validate(n.elseN, v, p)
		}
	}
	return len(st.errs) == start && !st.truncated
}

// failAlternatives explains an anyOf/oneOf with no matching alternative: a
// merged type message when every alternative rejected the type, otherwise
// the failure of the alternative that got furthest.
func (st *state) failAlternatives(alts []*node, kw string, v any, p *path) {
	var expected uint8
	allType := true
	var best *ValidationError
	bestIdx := 0
	for i, s := range alts {
		e := st.firstError(s, v, p)
		if e == nil {
			continue
		}
		if e.expected != 0 && e.Path == p.String() {
			expected |= e.expected
		} else {
			allType = false
		}
		if best == nil || len(e.Path) > len(best.Path) {
			best, bestIdx = e, i
		}
	}
	if best == nil {
		st.failf(p, "must match %s", kw)
		return
	}
	if allType && expected != 0 {
		it, _ := instanceType(v)
		got := typeList(it)
		if nv, ok := toNumber(v); ok && nv.info.integral {
			got = "integer"
		}
		st.fail(p, "must be "+typeList(expected)+", got "+got)
		return
	}
	loc := best.Path
	if loc == "" {
		loc = "(root)"
	}
	if best.Path == p.String() {
		st.failf(p, "must match one of the %s alternatives (closest, #%d: %s)", kw, bestIdx, best.Message)
	} else {
		st.failf(p, "must match one of the %s alternatives (closest, #%d: %s: %s)", kw, bestIdx, loc, best.Message)
	}
}

func (st *state) validateObject(n *node, obj map[string]any, p *path) {
	for _, r := range n.required {
		if _, ok := obj[r]; !ok {
			st.failf(p, "missing required property %q", r)
		}
	}
	if n.minProps >= 0 && len(obj) < n.minProps {
		st.fail(p, "must have at least "+plural(n.minProps, "property", "properties"))
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		st.fail(p, "must have at most "+plural(n.maxProps, "property", "properties"))
	}
	for _, d := range n.dependentReq {
		if _, ok := obj[d.prop]; ok {
			for _, r := range d.req {
				if _, ok := obj[r]; !ok {
					st.failf(p, "property %q requires property %q", d.prop, r)
				}
			}
		}
	}
	for _, np := range n.props {
		if val, ok := obj[np.name]; ok {
			st.validate(np.n, val, &path{parent: p, key: np.name, idx: -1})
			if st.full() {
				return
			}
		}
	}

	// Keys not covered by properties: patternProperties, then
	// additionalProperties. Sorted so reports are deterministic.
	var extra []string
	needKeys := n.additional != nil || len(n.patternProps) > 0 || n.propNames != nil
	if needKeys {
		for k := range obj {
			if n.propIndex[k] == nil || n.propNames != nil {
				extra = append(extra, k)
			}
		}
		sort.Strings(extra)
	}
	for _, k := range extra {
		kp := &path{parent: p, key: k, idx: -1}
		if n.propNames != nil {
			if e := st.firstError(n.propNames, k, p); e != nil {
				st.failf(p, "property name %q is invalid: %s", k, e.Message)
			}
			if n.propIndex[k] != nil {
				continue
			}
		}
		matched := false
		for _, pp := range n.patternProps {
			if pp.re.MatchString(k) {
				matched = true
				st.validate(pp.n, obj[k], kp)
			}
		}
		if matched || n.additional == nil {
			continue
		}
		if n.additional.boolean && !n.additional.value {
			st.failf(p, "unexpected property %q%s", k, n.allowedList())
		} else {
			st.validate(n.additional, obj[k], kp)
		}
		if st.full() {
			return
		}
	}
}

// allowedList names the declared properties, to help the caller fix a typo.
func (n *node) allowedList() string {
	if len(n.props) == 0 {
		return " (no properties are allowed)"
	}
	names := make([]string, 0, len(n.props))
	for i, np := range n.props {
		if i == 20 {
			names = append(names, "...")
			break
		}
		names = append(names, strconv.Quote(np.name))
	}
	return " (allowed: " + strings.Join(names, ", ") + ")"
}

func (st *state) validateArray(n *node, arr []any, p *path) {
	if n.minItems >= 0 && len(arr) < n.minItems {
		st.fail(p, "must contain at least "+plural(n.minItems, "item", "items"))
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		st.fail(p, "must contain at most "+plural(n.maxItems, "item", "items"))
	}
	for i, e := range arr {
		var s *node
		if i < len(n.prefix) {
			s = n.prefix[i]
		} else {
			s = n.items
		}
		if s == nil {
			continue
		}
		ip := &path{parent: p, idx: i}
		if s.boolean && !s.value {
			st.fail(p, "must contain at most "+plural(len(n.prefix), "item", "items"))
			break
		}
		st.validate(s, e, ip)
		if st.full() {
			return
		}
	}
	if n.unique {
		if i, j, dup := findDuplicate(arr); dup {
			st.failf(p, "items must be unique, but items %d and %d are equal", i, j)
		}
	}
	if n.contains != nil {
		c := 0
		for i, e := range arr {
			if st.matches(n.contains, e, &path{parent: p, idx: i}) {
				c++
			}
		}
		minC := 1
		if n.minContains >= 0 {
			minC = n.minContains
		}
		if c < minC {
			st.fail(p, "must contain at least "+plural(minC, "item", "items")+" matching \"contains\"")
		}
		if n.maxContains >= 0 && c > n.maxContains {
			st.fail(p, "must contain at most "+plural(n.maxContains, "item", "items")+" matching \"contains\"")
		}
	}
}

func (st *state) validateString(n *node, s string, p *path) {
	if n.minLen >= 0 || n.maxLen >= 0 {
		l := utf8.RuneCountInString(s)
		if n.minLen >= 0 && l < n.minLen {
			st.fail(p, "must be at least "+plural(n.minLen, "character", "characters")+" long")
		}
		if n.maxLen >= 0 && l > n.maxLen {
			st.fail(p, "must be at most "+plural(n.maxLen, "character", "characters")+" long")
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		st.failf(p, "must match pattern %q", n.patternSrc)
	}
}

func (st *state) validateNumber(n *node, v number, p *path) {
	if n.minimum != nil && cmpNumber(v, *n.minimum) < 0 {
		st.fail(p, "must be >= "+n.minimum.lit)
	}
	if n.maximum != nil && cmpNumber(v, *n.maximum) > 0 {
		st.fail(p, "must be <= "+n.maximum.lit)
	}
	if n.exclMin != nil && cmpNumber(v, *n.exclMin) <= 0 {
		st.fail(p, "must be > "+n.exclMin.lit)
	}
	if n.exclMax != nil && cmpNumber(v, *n.exclMax) >= 0 {
		st.fail(p, "must be < "+n.exclMax.lit)
	}
	if n.multOf != nil && !multipleOf(v, *n.multOf) {
		st.fail(p, "must be a multiple of "+n.multOf.lit)
	}
}

// equal is JSON equality: numbers compare by value (1 == 1.0), objects by
// their members. Schema-side values may hold number (see normalize).
func equal(a, b any) bool {
	an, aIsNum := asNumber(a)
	bn, bIsNum := asNumber(b)
	if aIsNum || bIsNum {
		return aIsNum && bIsNum && cmpNumber(an, bn) == 0
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			return false
		}
		for i := range a {
			if !equal(a[i], bs[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !equal(av, bv) {
				return false
			}
		}
		return true
	}
	return false
}

func asNumber(v any) (number, bool) {
	if n, ok := v.(number); ok {
		return n, true
	}
	if isNumberValue(v) {
		return toNumber(v)
	}
	return number{}, false
}

// findDuplicate finds two equal items by bucketing on a canonical key (in
// which equal values always agree) and confirming with equal.
func findDuplicate(arr []any) (int, int, bool) {
	if len(arr) < 2 {
		return 0, 0, false
	}
	seen := make(map[string][]int, len(arr))
	var buf []byte
	for j, e := range arr {
		buf = canonKey(buf[:0], e)
		k := string(buf)
		for _, i := range seen[k] {
			if equal(arr[i], e) {
				return i, j, true
			}
		}
		seen[k] = append(seen[k], j)
	}
	return 0, 0, false
}

func canonKey(buf []byte, v any) []byte {
	if n, ok := asNumber(v); ok {
		buf = append(buf, '#')
		return strconv.AppendFloat(buf, n.f, 'g', -1, 64)
	}
	switch v := v.(type) {
	case nil:
		return append(buf, 'n')
	case bool:
		if v {
			return append(buf, 't')
		}
		return append(buf, 'f')
	case string:
		buf = append(buf, 's')
		return strconv.AppendQuote(buf, v)
	case []any:
		buf = append(buf, '[')
		for _, e := range v {
			buf = canonKey(buf, e)
			buf = append(buf, ',')
		}
		return append(buf, ']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf = append(buf, '{')
		for _, k := range keys {
			buf = strconv.AppendQuote(buf, k)
			buf = append(buf, ':')
			buf = canonKey(buf, v[k])
			buf = append(buf, ',')
		}
		return append(buf, '}')
	}
	return append(buf, '?')
}
