package jsonschema

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// maxSafeInteger is 2^53-1, past which an x-mcp-header integer is not
// allowed (JavaScript's safe range).
const maxSafeInteger = 1<<53 - 1

// HeaderParam is one x-mcp-header annotation of a tool's input schema
// (2026-07-28, Streamable HTTP): the argument at Path is mirrored into the
// HTTP header Mcp-Param-<Name>, which the client must send and the server
// must check against the body.
type HeaderParam struct {
	Path []string // property names from the arguments object down
	Name string   // the header is Mcp-Param-<Name>
}

// HeaderParams reads the x-mcp-header annotations of a tool's input
// schema, sorted by name, and says what makes them invalid: an annotation
// must name a header token, unique regardless of case, on a string,
// integer or boolean property reached from the root through properties
// alone. A schema that is not JSON has none.
func HeaderParams(schema json.RawMessage) ([]HeaderParam, error) {
	if len(schema) == 0 || !bytes.Contains(schema, []byte("x-mcp-header")) {
		return nil, nil
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, nil // not ours to judge: the schema is passed on as is
	}
	w := schemaWalk{seen: map[string]bool{}}
	w.walk(root, nil, true)
	if w.err != nil {
		return nil, w.err
	}
	slices.SortFunc(w.out, func(a, b HeaderParam) int { return strings.Compare(a.Name, b.Name) })
	return w.out, nil
}

type schemaWalk struct {
	seen map[string]bool // header names, lower case
	out  []HeaderParam
	err  error
}

// walk visits a schema at path; reachable says whether the chain from the
// root is properties keys only.
func (w *schemaWalk) walk(node any, path []string, reachable bool) {
	if w.err != nil {
		return
	}
	switch n := node.(type) {
	case []any: // allOf, anyOf, oneOf, prefixItems
		for _, e := range n {
			w.walk(e, path, false)
		}
		return
	case map[string]any:
		for key, val := range n {
			switch key {
			case "x-mcp-header":
				w.annotation(n, val, path, reachable)
			case "properties":
				if props, ok := val.(map[string]any); ok {
					for name, sub := range props {
						w.walk(sub, append(slices.Clip(path), name), reachable)
					}
				}
			case "$defs", "definitions", "patternProperties", "dependentSchemas":
				if defs, ok := val.(map[string]any); ok {
					for _, sub := range defs {
						w.walk(sub, path, false)
					}
				}
			case "enum", "const", "default", "examples":
				// values, not schemas
			default:
				w.walk(val, path, false)
			}
		}
	}
}

func (w *schemaWalk) annotation(schema map[string]any, val any, path []string, reachable bool) {
	where := "the schema root"
	if len(path) > 0 {
		where = "property " + strings.Join(path, ".")
	}
	name, _ := val.(string)
	typ, _ := schema["type"].(string)
	switch {
	case len(path) == 0 || !reachable:
		w.err = fmt.Errorf("x-mcp-header at %s: only properties reached through properties alone may carry it", where)
	case name == "" || strings.IndexFunc(name, func(r rune) bool { return !isTokenChar(r) }) >= 0:
		w.err = fmt.Errorf("x-mcp-header %v of %s is not an HTTP header name token", val, where)
	case w.seen[strings.ToLower(name)]:
		w.err = fmt.Errorf("x-mcp-header %q of %s is used twice", name, where)
	case typ != "string" && typ != "integer" && typ != "boolean":
		w.err = fmt.Errorf("x-mcp-header %q of %s: the property must be a string, integer or boolean, not %v", name, where, schema["type"])
	default:
		w.seen[strings.ToLower(name)] = true
		w.out = append(w.out, HeaderParam{Path: path, Name: name})
	}
}

// isTokenChar is RFC 9110's tchar.
func isTokenChar(r rune) bool {
	switch {
	case r >= '0' && r <= '9', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// HeaderText is a primitive JSON value as an Mcp-Param header carries it: a
// string as is, an integer in decimal (2.0 is 2), a boolean as true or
// false. Anything else (null, a fraction, an object) has no header.
func HeaderText(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		return jsonrpc.Unquote(raw)
	case 't', 'f':
		s := string(raw)
		return s, s == "true" || s == "false"
	case 'n', '{', '[':
		return "", false
	}
	if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return strconv.FormatInt(i, 10), true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
		return "", false
	}
	return strconv.FormatInt(int64(f), 10), true
}

// EncodeHeaderValue is a value as 2026-07-28 puts it in an Mcp-Name or
// Mcp-Param header: as is when it is plain ASCII (visible characters,
// space and tab, no space at either end), otherwise, or when it looks like
// the sentinel itself, =?base64?…?= around its UTF-8 in base64.
func EncodeHeaderValue(s string) string {
	plain := !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")) &&
		strings.TrimSpace(s) == s
	for i := 0; plain && i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// DecodeHeaderValue undoes EncodeHeaderValue; ok is false for a value
// that is neither plain ASCII nor a well-formed =?base64?…?=. Only a value
// with both sentinels is Base64: one that starts with "=?base64?" and does
// not end with "?=" (or the reverse) is plain text, as the specification's
// sentinel pattern has it.
func DecodeHeaderValue(v string) (s string, ok bool) {
	const prefix, suffix = "=?base64?", "?="
	if len(v) < len(prefix)+len(suffix) || !strings.HasPrefix(v, prefix) || !strings.HasSuffix(v, suffix) {
		for i := 0; i < len(v); i++ {
			if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
				return "", false
			}
		}
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(v[len(prefix) : len(v)-len(suffix)])
	if err != nil {
		return "", false
	}
	return string(b), true
}
