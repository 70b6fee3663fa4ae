package jsonschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Schema is a compiled JSON Schema. It is immutable and safe for concurrent
// use.
type Schema struct {
	root *node
}

// type bits
const (
	tNull uint8 = 1 << iota
	tBoolean
	tObject
	tArray
	tNumber
	tString
	tInteger
)

var typeBits = map[string]uint8{
	"null": tNull, "boolean": tBoolean, "object": tObject, "array": tArray,
	"number": tNumber, "string": tString, "integer": tInteger,
}

var typeOrder = []string{"object", "array", "string", "integer", "number", "boolean", "null"}

func typeList(bits uint8) string {
	var names []string
	for _, n := range typeOrder {
		if bits&typeBits[n] != 0 {
			names = append(names, n)
		}
	}
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

type namedNode struct {
	name string
	n    *node
}

type patternNode struct {
	src string
	re  *regexp.Regexp
	n   *node
}

type dependent struct {
	prop string
	req  []string
}

// node is one compiled (sub)schema.
type node struct {
	ptr string // location in the schema document, for error messages

	boolean bool // a true/false schema
	value   bool // its value

	types uint8 // 0: any type

	enum     []any
	enumText string
	hasConst bool
	constVal any
	constTxt string

	props        []namedNode // sorted by name
	propIndex    map[string]*node
	required     []string
	additional   *node
	patternProps []patternNode
	propNames    *node
	minProps     int
	maxProps     int
	dependentReq []dependent

	prefix      []*node
	items       *node
	minItems    int
	maxItems    int
	unique      bool
	contains    *node
	minContains int
	maxContains int

	minimum, maximum, exclMin, exclMax, multOf *number

	minLen, maxLen int
	pattern        *regexp.Regexp
	patternSrc     string

	allOf, anyOf, oneOf []*node
	not                 *node
	ifN, thenN, elseN   *node

	ref    *node
	refStr string
}

// Compile parses and compiles schema. Local references ("#",
// "#/$defs/Name", "#/definitions/Name", any "#/json/pointer") are resolved;
// any other $ref is an error, and nothing is ever fetched.
func Compile(schema json.RawMessage) (*Schema, error) {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("jsonschema: invalid schema JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("jsonschema: invalid schema JSON: trailing data after the schema")
	}
	c := &compiler{doc: doc, byPtr: map[string]*node{}}
	if m, ok := doc.(map[string]any); ok {
		if id, ok := m["$id"].(string); ok {
			c.rootID, _, _ = strings.Cut(id, "#")
		}
	}
	root, err := c.compile("", doc)
	if err != nil {
		return nil, err
	}
	if err := checkCycles(c.byPtr); err != nil {
		return nil, err
	}
	return &Schema{root: root}, nil
}

type compiler struct {
	doc    any
	byPtr  map[string]*node
	rootID string
}

func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func schemaErr(ptr, format string, args ...any) error {
	loc := ptr
	if loc == "" {
		loc = "(root)"
	}
	return fmt.Errorf("jsonschema: schema %s: %s", loc, fmt.Sprintf(format, args...))
}

func (c *compiler) compile(ptr string, v any) (*node, error) {
	if n, ok := c.byPtr[ptr]; ok {
		return n, nil
	}
	n := &node{ptr: ptr, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1,
		minContains: -1, maxContains: -1, minLen: -1, maxLen: -1}
	c.byPtr[ptr] = n
	switch v := v.(type) {
	case bool:
		n.boolean, n.value = true, v
		return n, nil
	case map[string]any:
		if err := c.compileObject(n, ptr, v); err != nil {
			return nil, err
		}
		return n, nil
	}
	return nil, schemaErr(ptr, "a schema must be an object or a boolean")
}

func (c *compiler) sub(ptr string, v any) (*node, error) { return c.compile(ptr, v) }

func (c *compiler) subList(ptr string, v any) ([]*node, error) {
	arr, ok := v.([]any)
	if !ok || len(arr) == 0 {
		return nil, schemaErr(ptr, "must be a non-empty array of schemas")
	}
	out := make([]*node, len(arr))
	for i, e := range arr {
		s, err := c.sub(ptr+"/"+strconv.Itoa(i), e)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func schemaMap(ptr string, v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, schemaErr(ptr, "must be an object")
	}
	return m, nil
}

func count(ptr string, v any) (int, error) {
	n, ok := v.(json.Number)
	if ok {
		if info, valid := analyzeNumber(string(n)); valid && info.integral && !strings.HasPrefix(string(n), "-") {
			f, err := n.Float64()
			if err == nil && f <= 1<<31 {
				return int(f), nil
			}
			return 1 << 31, nil
		}
	}
	return 0, schemaErr(ptr, "must be a non-negative integer")
}

func num(ptr string, v any) (*number, error) {
	if jn, ok := v.(json.Number); ok {
		if n, ok := numberFromLiteral(string(jn)); ok {
			return &n, nil
		}
	}
	return nil, schemaErr(ptr, "must be a number")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// compileObject compiles the object schema m, found at ptr, into n. It
// goes through the keywords in named steps, in a fixed order, so that of a
// schema's several faults the same one is reported every time: what the
// schema refers to ($defs, $ref), the assertions on any instance (type,
// enum, const), then those on objects, the size bounds of every kind,
// dependentRequired, those on arrays, numbers and strings, and last the
// combinators. Keywords it does not know are ignored, as the specification
// asks; those it knows and cannot honour ($dynamicRef, $recursiveRef) are
// errors.
func (c *compiler) compileObject(n *node, ptr string, m map[string]any) error {
	for _, step := range [...]func(*compiler, *node, schemaPtr, map[string]any) error{
		(*compiler).compileRefs,
		(*compiler).compileAnyType,
		(*compiler).compileProperties,
		(*compiler).compileCounts,
		(*compiler).compileDependentRequired,
		(*compiler).compileItems,
		(*compiler).compileNumbers,
		(*compiler).compileStringPattern,
		(*compiler).compileCombinators,
	} {
		if err := step(c, n, schemaPtr(ptr), m); err != nil {
			return err
		}
	}
	return nil
}

// schemaPtr is the JSON pointer of a schema object in its document.
type schemaPtr string

// at is the pointer of the schema's keyword k.
func (p schemaPtr) at(k string) string { return string(p) + "/" + escapeToken(k) }

// compileRefs refuses the dynamic references, compiles $defs and
// definitions (so that each is compiled, and its faults found, even when
// nothing refers to it), and resolves $ref.
func (c *compiler) compileRefs(n *node, p schemaPtr, m map[string]any) error {
	for _, k := range []string{"$dynamicRef", "$recursiveRef"} {
		if _, ok := m[k]; ok {
			return schemaErr(p.at(k), "%s is not supported", k)
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		if v, ok := m[k]; ok {
			defs, err := schemaMap(p.at(k), v)
			if err != nil {
				return err
			}
			for _, name := range sortedKeys(defs) {
				if _, err := c.sub(p.at(k)+"/"+escapeToken(name), defs[name]); err != nil {
					return err
				}
			}
		}
	}
	if v, ok := m["$ref"]; ok {
		s, ok := v.(string)
		if !ok {
			return schemaErr(p.at("$ref"), "must be a string")
		}
		n.refStr = s
		var err error
		if n.ref, err = c.resolve(p.at("$ref"), s); err != nil {
			return err
		}
	}
	return nil
}

// compileAnyType compiles the keywords that apply to an instance of any
// type: type, enum and const.
func (c *compiler) compileAnyType(n *node, p schemaPtr, m map[string]any) error {
	if v, ok := m["type"]; ok {
		switch t := v.(type) {
		case string:
			b, ok := typeBits[t]
			if !ok {
				return schemaErr(p.at("type"), "unknown type %q", t)
			}
			n.types = b
		case []any:
			if len(t) == 0 {
				return schemaErr(p.at("type"), "must not be empty")
			}
			for _, e := range t {
				s, _ := e.(string)
				b, ok := typeBits[s]
				if !ok {
					return schemaErr(p.at("type"), "unknown type %v", e)
				}
				n.types |= b
			}
		default:
			return schemaErr(p.at("type"), "must be a string or an array of strings")
		}
	}
	if v, ok := m["enum"]; ok {
		arr, ok := v.([]any)
		if !ok {
			return schemaErr(p.at("enum"), "must be an array")
		}
		n.enum = make([]any, len(arr))
		texts := make([]string, 0, len(arr))
		for i, e := range arr {
			n.enum[i] = normalize(e)
			if i < 20 {
				texts = append(texts, compactText(e))
			}
		}
		n.enumText = strings.Join(texts, ", ")
		if len(arr) > 20 {
			n.enumText += fmt.Sprintf(", ... (%d values)", len(arr))
		}
	}
	if v, ok := m["const"]; ok {
		n.hasConst, n.constVal, n.constTxt = true, normalize(v), compactText(v)
	}
	return nil
}

// compileProperties compiles what an object's members must be:
// properties, required, additionalProperties, patternProperties and
// propertyNames.
func (c *compiler) compileProperties(n *node, p schemaPtr, m map[string]any) error {
	var err error
	if v, ok := m["properties"]; ok {
		props, err := schemaMap(p.at("properties"), v)
		if err != nil {
			return err
		}
		n.propIndex = make(map[string]*node, len(props))
		for _, name := range sortedKeys(props) {
			s, err := c.sub(p.at("properties")+"/"+escapeToken(name), props[name])
			if err != nil {
				return err
			}
			n.props = append(n.props, namedNode{name, s})
			n.propIndex[name] = s
		}
	}
	if v, ok := m["required"]; ok {
		arr, ok := v.([]any)
		if !ok {
			return schemaErr(p.at("required"), "must be an array of strings")
		}
		for _, e := range arr {
			s, ok := e.(string)
			if !ok {
				return schemaErr(p.at("required"), "must be an array of strings")
			}
			n.required = append(n.required, s)
		}
	}
	if v, ok := m["additionalProperties"]; ok {
		if n.additional, err = c.sub(p.at("additionalProperties"), v); err != nil {
			return err
		}
	}
	if v, ok := m["patternProperties"]; ok {
		pp, err := schemaMap(p.at("patternProperties"), v)
		if err != nil {
			return err
		}
		for _, src := range sortedKeys(pp) {
			at := p.at("patternProperties") + "/" + escapeToken(src)
			re, err := compilePattern(src)
			if err != nil {
				return schemaErr(at, "%v", err)
			}
			s, err := c.sub(at, pp[src])
			if err != nil {
				return err
			}
			n.patternProps = append(n.patternProps, patternNode{src, re, s})
		}
	}
	if v, ok := m["propertyNames"]; ok {
		if n.propNames, err = c.sub(p.at("propertyNames"), v); err != nil {
			return err
		}
	}
	return nil
}

// compileCounts compiles the size bounds of objects, arrays, strings and
// contains matches, each a non-negative integer.
func (c *compiler) compileCounts(n *node, p schemaPtr, m map[string]any) error {
	for k, dst := range map[string]*int{"minProperties": &n.minProps, "maxProperties": &n.maxProps,
		"minItems": &n.minItems, "maxItems": &n.maxItems, "minLength": &n.minLen, "maxLength": &n.maxLen,
		"minContains": &n.minContains, "maxContains": &n.maxContains} {
		if v, ok := m[k]; ok {
			var err error
			if *dst, err = count(p.at(k), v); err != nil {
				return err
			}
		}
	}
	return nil
}

// compileDependentRequired compiles dependentRequired: the members an
// object must have when it has a given one.
func (c *compiler) compileDependentRequired(n *node, p schemaPtr, m map[string]any) error {
	v, ok := m["dependentRequired"]
	if !ok {
		return nil
	}
	dr, err := schemaMap(p.at("dependentRequired"), v)
	if err != nil {
		return err
	}
	for _, prop := range sortedKeys(dr) {
		arr, ok := dr[prop].([]any)
		if !ok {
			return schemaErr(p.at("dependentRequired"), "values must be arrays of strings")
		}
		d := dependent{prop: prop}
		for _, e := range arr {
			s, ok := e.(string)
			if !ok {
				return schemaErr(p.at("dependentRequired"), "values must be arrays of strings")
			}
			d.req = append(d.req, s)
		}
		n.dependentReq = append(n.dependentReq, d)
	}
	return nil
}

// compileItems compiles what an array's elements must be: prefixItems,
// items (in the tuple form of drafts up to 2019, "items": [...] with
// additionalItems), uniqueItems and contains.
func (c *compiler) compileItems(n *node, p schemaPtr, m map[string]any) error {
	var err error
	if v, ok := m["prefixItems"]; ok {
		if n.prefix, err = c.subList(p.at("prefixItems"), v); err != nil {
			return err
		}
	}
	if v, ok := m["items"]; ok {
		if _, isArr := v.([]any); isArr {
			if n.prefix, err = c.subList(p.at("items"), v); err != nil {
				return err
			}
			if ai, ok := m["additionalItems"]; ok {
				if n.items, err = c.sub(p.at("additionalItems"), ai); err != nil {
					return err
				}
			}
		} else if n.items, err = c.sub(p.at("items"), v); err != nil {
			return err
		}
	}
	if v, ok := m["uniqueItems"]; ok {
		b, ok := v.(bool)
		if !ok {
			return schemaErr(p.at("uniqueItems"), "must be a boolean")
		}
		n.unique = b
	}
	if v, ok := m["contains"]; ok {
		if n.contains, err = c.sub(p.at("contains"), v); err != nil {
			return err
		}
	}
	return nil
}

// compileNumbers compiles the bounds of numbers: minimum, maximum,
// exclusiveMinimum, exclusiveMaximum and multipleOf (> 0). A boolean
// exclusiveMinimum or exclusiveMaximum is draft-04's: true makes minimum
// or maximum exclusive.
func (c *compiler) compileNumbers(n *node, p schemaPtr, m map[string]any) error {
	var draft04Min, draft04Max bool
	for k, dst := range map[string]**number{"minimum": &n.minimum, "maximum": &n.maximum,
		"exclusiveMinimum": &n.exclMin, "exclusiveMaximum": &n.exclMax, "multipleOf": &n.multOf} {
		v, ok := m[k]
		if !ok {
			continue
		}
		if b, isBool := v.(bool); isBool && (k == "exclusiveMinimum" || k == "exclusiveMaximum") {
			if k == "exclusiveMinimum" {
				draft04Min = b
			} else {
				draft04Max = b
			}
			continue
		}
		var err error
		if *dst, err = num(p.at(k), v); err != nil {
			return err
		}
	}
	if n.multOf != nil && (n.multOf.info.zero || strings.HasPrefix(n.multOf.lit, "-")) {
		return schemaErr(p.at("multipleOf"), "must be > 0")
	}
	// After the loop, which meets the keywords in no set order: minimum
	// and maximum are in place by now.
	if draft04Min {
		n.exclMin, n.minimum = n.minimum, nil
	}
	if draft04Max {
		n.exclMax, n.maximum = n.maximum, nil
	}
	return nil
}

// compileStringPattern compiles pattern, in Go's RE2 syntax.
func (c *compiler) compileStringPattern(n *node, p schemaPtr, m map[string]any) error {
	v, ok := m["pattern"]
	if !ok {
		return nil
	}
	s, ok := v.(string)
	if !ok {
		return schemaErr(p.at("pattern"), "must be a string")
	}
	var err error
	if n.pattern, err = compilePattern(s); err != nil {
		return schemaErr(p.at("pattern"), "%v", err)
	}
	n.patternSrc = s
	return nil
}

// compileCombinators compiles allOf, anyOf, oneOf, not and
// if/then/else.
func (c *compiler) compileCombinators(n *node, p schemaPtr, m map[string]any) error {
	var err error
	if v, ok := m["allOf"]; ok {
		if n.allOf, err = c.subList(p.at("allOf"), v); err != nil {
			return err
		}
	}
	if v, ok := m["anyOf"]; ok {
		if n.anyOf, err = c.subList(p.at("anyOf"), v); err != nil {
			return err
		}
	}
	if v, ok := m["oneOf"]; ok {
		if n.oneOf, err = c.subList(p.at("oneOf"), v); err != nil {
			return err
		}
	}
	for k, dst := range map[string]**node{"not": &n.not, "if": &n.ifN, "then": &n.thenN, "else": &n.elseN} {
		if v, ok := m[k]; ok {
			if *dst, err = c.sub(p.at(k), v); err != nil {
				return err
			}
		}
	}
	return nil
}

// compilePattern compiles an ECMA-262 pattern with Go's RE2 syntax.
func compilePattern(src string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("invalid pattern %q (Go RE2 syntax): %v", src, err)
	}
	return re, nil
}

// resolve compiles the target of a local reference.
func (c *compiler) resolve(ptr, ref string) (*node, error) {
	frag, isLocal := strings.CutPrefix(ref, "#")
	if !isLocal && c.rootID != "" {
		if rest, ok := strings.CutPrefix(ref, c.rootID+"#"); ok {
			frag, isLocal = rest, true
		} else if ref == c.rootID {
			frag, isLocal = "", true
		}
	}
	if !isLocal {
		return nil, schemaErr(ptr, "$ref %q is not a local reference (\"#/...\"); remote references are not supported", ref)
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return nil, schemaErr(ptr, "$ref %q: anchors are not supported, use a JSON pointer (\"#/$defs/Name\")", ref)
	}
	dec, err := unescapePercent(frag)
	if err != nil {
		return nil, schemaErr(ptr, "$ref %q: %v", ref, err)
	}
	cur := c.doc
	canon := ""
	if dec != "" {
		for _, tok := range strings.Split(dec[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch v := cur.(type) {
			case map[string]any:
				next, ok := v[tok]
				if !ok {
					return nil, schemaErr(ptr, "$ref %q does not resolve", ref)
				}
				cur = next
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(v) {
					return nil, schemaErr(ptr, "$ref %q does not resolve", ref)
				}
				cur = v[i]
			default:
				return nil, schemaErr(ptr, "$ref %q does not resolve", ref)
			}
			canon += "/" + escapeToken(tok)
		}
	}
	return c.sub(canon, cur)
}

// unescapePercent decodes the %XX escapes of a URI fragment, as
// url.PathUnescape does: a '%' not followed by two hex digits is an error.
// It is here rather than a call into net/url because that one call linked
// net/url and net/netip into every server, and net/netip's package
// initialisation runs at every process start, before main.
func unescapePercent(s string) (string, error) {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			bad := s[i:]
			if len(bad) > 3 {
				bad = bad[:3]
			}
			return "", fmt.Errorf("invalid URL escape %s", strconv.Quote(bad))
		}
		b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
		i += 2
	}
	return string(b), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// checkCycles rejects schemas that would recurse forever at one instance
// location, such as {"$defs":{"a":{"$ref":"#/$defs/a"}}}.
func checkCycles(nodes map[string]*node) error {
	const (
		white = iota
		grey
		black
	)
	color := map[*node]int{}
	var visit func(n *node) error
	visit = func(n *node) error {
		switch color[n] {
		case grey:
			return schemaErr(n.ptr, "circular reference that never consumes input")
		case black:
			return nil
		}
		color[n] = grey
		var next []*node
		next = append(next, n.allOf...)
		next = append(next, n.anyOf...)
		next = append(next, n.oneOf...)
		for _, s := range []*node{n.ref, n.not, n.ifN, n.thenN, n.elseN} {
			if s != nil {
				next = append(next, s)
			}
		}
		for _, s := range next {
			if err := visit(s); err != nil {
				return err
			}
		}
		color[n] = black
		return nil
	}
	ptrs := make([]string, 0, len(nodes))
	for p := range nodes {
		ptrs = append(ptrs, p)
	}
	sort.Strings(ptrs)
	for _, p := range ptrs {
		if err := visit(nodes[p]); err != nil {
			return err
		}
	}
	return nil
}

// normalize converts schema literal values so equality checks are cheap:
// numbers become number.
func normalize(v any) any {
	switch v := v.(type) {
	case json.Number:
		if n, ok := numberFromLiteral(string(v)); ok {
			return n
		}
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}

func compactText(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
