package gateway

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

// FuzzRelayText: what relayText passes on as it came from a backend (any
// JSON the client's decode let through, in UTF-8 as the client makes it) is a result of text blocks only,
// valid UTF-8, with no key twice, that every JSON reader reads as the
// gateway's own decode of the backend's result reads: the bytes reach the
// gateway's client unchecked. And textResult, the scan that stands in for
// that decode, reads the same as the decode.
func FuzzRelayText(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"text","text":"a"},{"text":"b\u00e9\n\"","type":"text"}],"isError":true}`,
		`{"resultType":"complete","content":[{"type":"text","text":"x"}],"_meta":{"x":1},"isError":true}`,
		`{"content":[{"type":"text","text":"x","text":"y"}]}`,
		`{"content":[{"type":"text","type":"image","text":"x"}]}`,
		`{"content":[],"isError":false,"isError":true}`,
		` { "content" : [ ] } `,
		`{"content":[{"type":"text","text":"a\\\"}]}\\"}],"isError":true}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD")) // as the client hands it on
		// The scan that stands in for the decode reads what it reads.
		if fast, ok := textResult(raw); ok {
			full, err := toolResult(raw)
			if err != nil {
				t.Fatalf("%s: textResult took it, toolResult: %v", raw, err)
			}
			if a, b := encode(t, fast), encode(t, full); a != b {
				t.Fatalf("%s: the scan reads %s, the decode %s", raw, a, b)
			}
		}
		// The byte-for-byte shortcut takes only what the scan takes, as
		// it is.
		if isError, ok := oneTextBlock(raw); ok {
			r, sok := scanTextResult(raw, nil)
			if !sok || r.theirs || r.isError != isError {
				t.Fatalf("%s: oneTextBlock takes it (isError %v), scanTextResult %v %+v", raw, isError, sok, r)
			}
		}
		out, isError, ok := relayText(raw)
		if !ok {
			return
		}
		if full, err := toolResult(raw); err == nil && isError != full.IsError {
			t.Fatalf("%s: relayText says isError %v, the decode %v", raw, isError, full.IsError)
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("%s relayed as %s: not valid UTF-8 JSON", raw, out)
		}
		if dup := duplicateKey(out); dup != "" {
			t.Fatalf("%s relayed as %s: key %q twice, which readers may take either of", raw, out, dup)
		}
		keys := map[string]bool{}
		jsonrpc.Members(out, func(k string, _ []byte) bool { keys[k] = true; return true })
		for k := range keys {
			if k != "content" && k != "isError" {
				t.Fatalf("%s relayed as %s: key %q", raw, out, k)
			}
		}
		relayed, err := toolResult(out)
		if err != nil {
			t.Fatalf("%s relayed as %s: %v", raw, out, err)
		}
		full, err := toolResult(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if a, b := encode(t, relayed), encode(t, full); a != b {
			t.Fatalf("%s relayed as %s, which reads as %s; the result reads as %s", raw, out, a, b)
		}
	})
}

// duplicateKey returns a key that some object in the JSON value v holds
// more than once, or "".
func duplicateKey(v []byte) string {
	v = bytes.TrimSpace(v)
	dup := ""
	switch {
	case len(v) > 0 && v[0] == '{':
		seen := map[string]bool{}
		jsonrpc.Members(v, func(k string, val []byte) bool {
			if seen[k] {
				dup = k
				return false
			}
			seen[k] = true
			dup = duplicateKey(val)
			return dup == ""
		})
	case len(v) > 0 && v[0] == '[':
		jsonrpc.Elements(v, func(val []byte) bool {
			dup = duplicateKey(val)
			return dup == ""
		})
	}
	return dup
}

// The fuzz target's own checker finds what it says it finds.
func TestDuplicateKey(t *testing.T) {
	for v, want := range map[string]string{
		`{"a":1,"b":{"a":2},"c":[{"x":1},{"x":2}]}`: "",
		`{"a":1,"a":2}`:             "a",
		`{"c":[{"x":1,"x":2}]}`:     "x",
		`{"o":{"k":{"z":1},"k":2}}`: "k",
		`[{"a":[1,{"b":2}],"b":3}]`: "",
	} {
		if got := duplicateKey([]byte(v)); got != want {
			t.Errorf("duplicateKey(%s) = %q, want %q", v, got, want)
		}
	}
}

// FuzzPassMeta: what passMeta gives the backend of a client's params is
// nothing, or a JSON object with no key twice, none of progressToken and
// the reserved prefixes, and every other member of the client's _meta
// with the value a reader of the client's params reads.
func FuzzPassMeta(f *testing.F) {
	for _, s := range []string{
		`{"name":"t","_meta":{"traceparent":"00-ab","progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"_meta":{"a":1,"a":2,"b":{"c":3}}}`,
		`{"_meta":{"dev.mcp/x":1,"x.y/z":2}}`,
		`{"_meta":1}`,
		`{"_meta":{"a":1},"_meta":{"b":2}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		if !json.Valid(params) {
			return
		}
		out := passMeta(params)
		// The reference: the last _meta, as JSON readers mostly take a
		// key given twice (encoding/json would merge two objects).
		var last []byte
		jsonrpc.Members(params, func(k string, v []byte) bool {
			if k == "_meta" {
				last = v
			}
			return true
		})
		var p struct{ Meta map[string]json.RawMessage }
		decoded := last != nil && json.Unmarshal(last, &p.Meta) == nil
		if out == nil {
			if decoded {
				for k := range p.Meta {
					if k != "progressToken" && !reservedMetaKey(k) {
						t.Fatalf("%s: nothing passed, but %q is the client's", params, k)
					}
				}
			}
			return
		}
		if !json.Valid(out) || out[0] != '{' {
			t.Fatalf("%s passes %s: not a JSON object", params, out)
		}
		if dup := duplicateKey(out); dup != "" {
			t.Fatalf("%s passes %s: key %q twice", params, out, dup)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s passes %s: %v", params, out, err)
		}
		if !decoded {
			return // the client's _meta is not an object of members encoding/json reads
		}
		for k, v := range got {
			if k == "progressToken" || reservedMetaKey(k) {
				t.Fatalf("%s passes %s: %q is the client's hop's", params, out, k)
			}
			if want, ok := p.Meta[k]; !ok || !bytes.Equal(compact(v), compact(want)) {
				t.Fatalf("%s passes %s: %q is %s, the client's is %s", params, out, k, v, want)
			}
		}
		for k := range p.Meta {
			if _, ok := got[k]; !ok && k != "progressToken" && !reservedMetaKey(k) {
				t.Fatalf("%s passes %s: %q is left out", params, out, k)
			}
		}
	})
}

func compact(v []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// FuzzParseConfig: any file is either refused with an error or gives
// backends that New and Reload take; nothing panics (a reload reads the
// file while the gateway serves).
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"a": {"command": "x", "args": ["serve"], "env": {"K": "v", "N": 1}, "timeout": "1s", "hideTools": ["rm*"]}}}`,
		`{"servers": {"r": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${T:-x}"}}}}`,
		`// comment
		{"mcpServers": {"a": {"command": "x", "prefix": "", "lazy": true, "allowTools": ["a"],},}}`,
		`{"mcpServers": {"a": {"command": "${HOME}/x", "cwd": "${NOPE:-/tmp}", "protocol": "2025-06-18", "maxRestarts": -1}}}`,
		`{"mcpServers": {"a": {"type": "sse", "url": "x"}, "b": {"command": ""}}}`,
	} {
		f.Add([]byte(s))
	}
	env := map[string]string{"HOME": "/root", "T": "secret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data, lookup)
		if err != nil {
			if cfg != nil && len(cfg.Backends) > 0 {
				t.Fatalf("%q: an error, and backends %+v", data, cfg.Backends)
			}
			return
		}
		if _, err := checkBackends(cfg); err != nil {
			t.Fatalf("%q parses, but New would refuse it: %v", data, err)
		}
	})
}
