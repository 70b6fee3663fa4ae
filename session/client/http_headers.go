package client

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcprt/mcprt/session/jsonrpc"
)

// encodeHeaderValue is a value as 2026-07-28 puts it in an Mcp-Name or
// Mcp-Param header: as is when it is plain ASCII (visible characters,
// space and tab, no space at either end), otherwise, or when it looks like
// the sentinel itself, =?base64?…?= around its UTF-8 in base64.
func encodeHeaderValue(s string) string {
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

// paramBinding mirrors the argument at path into the header
// Mcp-Param-<header>.
type paramBinding struct {
	path   []string
	header string
}

// maxSafeInteger is 2^53-1, past which an x-mcp-header integer is not
// allowed (JavaScript's safe range).
const maxSafeInteger = 1<<53 - 1

// paramBindings reads the x-mcp-header annotations of a tool's input
// schema, and says what makes them invalid: an annotation must name a
// header token, unique regardless of case, on a string, integer or boolean
// property reached from the root through properties alone.
func paramBindings(schema json.RawMessage) ([]paramBinding, error) {
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
	slices.SortFunc(w.out, func(a, b paramBinding) int { return strings.Compare(a.header, b.header) })
	return w.out, nil
}

type schemaWalk struct {
	seen map[string]bool // header names, lower case
	out  []paramBinding
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
		w.out = append(w.out, paramBinding{path: path, header: name})
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

// validTools leaves out, with a warning, the tools whose x-mcp-header
// annotations are invalid: a 2026-07-28 client over HTTP must not offer
// them.
func (c *Client) validTools(tools []Tool) []Tool {
	return slices.DeleteFunc(tools, func(t Tool) bool {
		_, err := paramBindings(t.InputSchema)
		if err != nil {
			c.log.Warn("tools/list: leaving out a tool whose x-mcp-header annotations are invalid",
				slog.String("tool", t.Name), slog.String("reason", err.Error()))
		}
		return err != nil
	})
}

// setParamHeaders adds the Mcp-Param headers of a 2026-07-28 tools/call,
// from the schema of the tool as last listed. A value that is absent or
// null gets no header.
func (c *Client) setParamHeaders(h http.Header, params []byte) {
	name := stringParam(params, "name")
	c.mu.Lock()
	tools, _ := c.cache[mTools].([]Tool)
	var schema json.RawMessage
	for _, t := range tools {
		if t.Name == name {
			schema = t.InputSchema
			break
		}
	}
	c.mu.Unlock()
	bindings, err := paramBindings(schema)
	if err != nil || len(bindings) == 0 {
		return
	}
	args, _ := jsonrpc.Member(params, "arguments")
	for _, b := range bindings {
		v, ok := args, len(args) > 0
		for _, key := range b.path {
			if !ok {
				break
			}
			v, ok = jsonrpc.Member(v, key)
		}
		if !ok {
			continue
		}
		if s, ok := headerText(v); ok {
			h.Set(hdrParamPrefix+b.header, encodeHeaderValue(s))
		}
	}
}

// headerText is a primitive JSON value as a header carries it: a string as
// is, an integer in decimal, a boolean as true or false. Anything else
// (null, a fraction, an object) gets no header.
func headerText(raw []byte) (string, bool) {
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
