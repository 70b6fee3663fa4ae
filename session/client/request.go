package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// The request line is built by appending, as handlers/jsonrpc builds the
// server's responses: the caller's params are copied as they are, and the
// members the client adds (the 2026-07-28 _meta, a progressToken, the
// inputResponses and requestState of a retry) are spliced in, rather than
// the params being decoded into a map and the map encoded again. For a
// gateway forwarding tool calls, encoding/json's round trip and the _meta
// maps were most of the work of a call.

// member is one member of a JSON object: its key and its raw value.
type member struct {
	key string
	val json.RawMessage
}

func hasKey(ms []member, key string) bool {
	for i := range ms {
		if ms[i].key == key {
			return true
		}
	}
	return false
}

// paramsOf encodes a request's params: a JSON object, or nil for none (nil,
// or a value that encodes as null). A json.RawMessage is used as it is,
// once checked, and compacted only if it has line breaks (the stdio
// transport is one message per line); anything else goes through
// json.Marshal.
func paramsOf(method string, params any) ([]byte, error) {
	var raw []byte
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		if len(p) == 0 {
			return nil, nil
		}
		if !jsonrpc.Valid(p) {
			_, err := json.Marshal(p) // says what is wrong
			return nil, fmt.Errorf("%s: encoding params: %w", method, err)
		}
		raw = p
		if bytes.IndexByte(raw, '\n') >= 0 || bytes.IndexByte(raw, '\r') >= 0 {
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return nil, fmt.Errorf("%s: encoding params: %w", method, err)
			}
			raw = b.Bytes()
		}
	default:
		b, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("%s: encoding params: %w", method, err)
		}
		raw = b
	}
	switch t := bytes.TrimSpace(raw); {
	case string(t) == "null":
		return nil, nil
	case t[0] != '{':
		return nil, fmt.Errorf("%s: params must be a JSON object", method)
	}
	return raw, nil
}

// appendRequest appends a request line (without its line break): params
// (a JSON object from paramsOf, or nil) with the members of extra in place
// of any of the same keys, and, when meta is not empty, with meta's members
// in params._meta, in place of any of the same keys there. Params that end
// up empty are left out, as encoding an empty map with omitempty did.
func appendRequest(dst []byte, id int64, method string, params []byte, extra, meta []member) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, `,"method":`...)
	dst = appendName(dst, method)
	mark := len(dst)
	dst = append(dst, `,"params":`...)
	at := len(dst)
	dst = appendObject(dst, params, extra, meta)
	if t := bytes.TrimSpace(dst[at:]); len(bytes.TrimSpace(t[1:len(t)-1])) == 0 {
		dst = dst[:mark] // {}
	}
	return append(dst, '}')
}

// appendObject appends obj (a JSON object, or nil for {}) with extra and
// meta spliced in, as appendRequest says.
func appendObject(dst, obj []byte, extra, meta []member) []byte {
	if len(extra) == 0 && len(meta) == 0 {
		if obj == nil {
			return append(dst, "{}"...)
		}
		return append(dst, obj...)
	}
	if obj != nil && !clashes(obj, extra, meta) {
		// The usual case, no key of obj replaced: obj is copied as it is,
		// the new members in place of its closing brace.
		body := trimRightSpace(obj)
		body = body[:len(body)-1]
		dst = append(dst, body...)
		n := 1
		if len(bytes.TrimSpace(body)) == 1 { // {
			n = 0
		}
		return appendMembers(dst, n, extra, meta)
	}
	dst = append(dst, '{')
	n := 0
	var oldMeta []byte
	if obj != nil {
		jsonrpc.Members(obj, func(k string, v []byte) bool {
			switch {
			case k == "_meta" && len(meta) > 0:
				oldMeta = v // the last one, as encoding/json keeps
			case hasKey(extra, k):
			default:
				dst = appendMember(dst, n, k, v)
				n++
			}
			return true
		})
	}
	if len(oldMeta) == 0 || oldMeta[0] != '{' {
		oldMeta = nil // not an object: replaced
	}
	if len(meta) == 0 {
		return appendMembers(dst, n, extra, nil)
	}
	for _, m := range extra {
		dst = appendMember(dst, n, m.key, m.val)
		n++
	}
	if n > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"_meta":`...)
	dst = appendObject(dst, oldMeta, meta, nil)
	return append(dst, '}')
}

// trimRightSpace is b without the JSON whitespace it ends with: a loop,
// not bytes.TrimRight, which builds its set of bytes on every call (a
// third of appendRequest's time for a gateway's tools/call).
func trimRightSpace(b []byte) []byte {
	for len(b) > 0 {
		switch b[len(b)-1] {
		case ' ', '\t', '\r', '\n':
			b = b[:len(b)-1]
		default:
			return b
		}
	}
	return b
}

// clashes reports whether obj has a key that extra replaces, or a _meta
// that meta's members go into.
func clashes(obj []byte, extra, meta []member) bool {
	// Without a backslash every key of obj is spelt as it reads, so a key
	// none of whose names appears anywhere in obj is not there: a search
	// of the bytes rather than a walk of the members (a gateway adds
	// _meta.progressToken to every call it forwards, and the walk was 3%
	// of its CPU). A name found (a key, or inside a value) gets the walk.
	if bytes.IndexByte(obj, '\\') < 0 {
		found := len(meta) > 0 && bytes.Contains(obj, metaKey)
		for _, m := range extra {
			found = found || bytes.Contains(obj, []byte(m.key))
		}
		if !found {
			return false
		}
	}
	clash := false
	jsonrpc.Members(obj, func(k string, _ []byte) bool {
		clash = k == "_meta" && len(meta) > 0 || hasKey(extra, k)
		return !clash
	})
	return clash
}

var metaKey = []byte("_meta")

// appendMembers appends extra's members, then meta's as _meta (unless
// meta is empty), and the closing brace; n is how many members precede.
func appendMembers(dst []byte, n int, extra, meta []member) []byte {
	for _, m := range extra {
		dst = appendMember(dst, n, m.key, m.val)
		n++
	}
	if len(meta) > 0 {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `"_meta":{`...)
		for i, m := range meta {
			dst = appendMember(dst, i, m.key, m.val)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func appendMember(dst []byte, n int, key string, val []byte) []byte {
	if n > 0 {
		dst = append(dst, ',')
	}
	dst = appendName(dst, key)
	dst = append(dst, ':')
	return append(dst, val...)
}

// appendName appends a method name or a member's key as a JSON string:
// those every call of a forwarding gateway's carries, quoted once here,
// and any other through jsonrpc.AppendString (whose scan was a fifth of
// appendRequest's time for them).
func appendName(dst []byte, s string) []byte {
	switch s {
	case "tools/call":
		return append(dst, `"tools/call"`...)
	case "progressToken":
		return append(dst, `"progressToken"`...)
	}
	return jsonrpc.AppendString(dst, s)
}

// eraMeta is the _meta every 2026-07-28 request carries, for version: the
// protocol version, the client's capabilities and info, and the log level
// if one is set. It depends on nothing that changes after Connect, so it
// is encoded once (per version: the probe may try more than one).
type eraMeta struct {
	version string
	members []member
}

func (c *Client) metaFor(version string) []member {
	if m := c.meta.Load(); m != nil && m.version == version {
		return m.members
	}
	ms := []member{
		{mcp.MetaProtocolVersion, mustMarshal(version)},
		{mcp.MetaClientCapabilities, c.clientCapsFor(version)},
		{mcp.MetaClientInfo, mustMarshal(c.opts.ClientInfo)},
	}
	if c.opts.LogLevel != "" {
		ms = append(ms, member{mcp.MetaLogLevel, mustMarshal(c.opts.LogLevel)})
	}
	c.meta.Store(&eraMeta{version, ms})
	return ms
}

// extEraMeta is the _meta of requests that declare extensions of their
// own (WithExtensions).
type extEraMeta struct {
	version, ext string
	members      []member
}

// metaWith is metaFor with ext, when it is a JSON object, as the client's
// capabilities.extensions.
func (c *Client) metaWith(version string, ext json.RawMessage) []member {
	if ext == nil {
		return c.metaFor(version)
	}
	if m := c.extMeta.Load(); m != nil && m.version == version && m.ext == string(ext) {
		return m.members
	}
	base := c.metaFor(version)
	if len(ext) == 0 || ext[0] != '{' || !json.Valid(ext) {
		return base // not an object: the Options' own
	}
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(c.clientCapsFor(version), &caps)
	caps["extensions"] = ext
	ms := make([]member, len(base))
	for i, m := range base {
		if m.key == mcp.MetaClientCapabilities {
			m.val = mustMarshal(caps)
		}
		ms[i] = m
	}
	c.extMeta.Store(&extEraMeta{version, string(ext), ms})
	return ms
}

// inputRequired reports whether a 2026-07-28 result has the resultType
// input_required; ok is false when the result is not an object (null
// aside, which encoding/json let through as an empty one) or its
// resultType not a string. Only the top level is scanned, and nothing is
// copied.
func inputRequired(raw []byte) (yes, ok bool) {
	ok = true
	isObject := jsonrpc.Members(raw, func(k string, v []byte) bool {
		if k != "resultType" {
			return true
		}
		switch {
		case string(v) == `"input_required"`:
			yes = true
		case string(v) == "null":
			yes = false
		case len(v) > 0 && v[0] == '"':
			yes = false // "complete", or another
			if bytes.IndexByte(v, '\\') >= 0 {
				s, _ := jsonrpc.Unquote(v)
				yes = s == "input_required"
			}
		default:
			ok = false
		}
		return true
	})
	if !isObject {
		return false, string(bytes.TrimSpace(raw)) == "null"
	}
	return yes, ok
}

// pendingPool recycles the pending entries and their channels: one of
// each per request was a third of the call path's allocations. An entry
// goes back once its request's one reply was received, or once the
// request was taken out of c.pending by its own caller (nobody else can
// send to it then).
var pendingPool = sync.Pool{New: func() any { return &pending{ch: make(chan reply, 1)} }}
