package jsonschema

import (
	"strings"
	"testing"
)

// TestHeaderParams: valid x-mcp-header annotations are found, with their
// paths; each constraint the specification sets makes a tool invalid.
func TestHeaderParams(t *testing.T) {
	b, err := HeaderParams([]byte(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"x-mcp-header":{"type":"string"},
		"opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}},
		"flag":{"type":"boolean","x-mcp-header":"Flag","default":{"x-mcp-header":"not a schema"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range b {
		got = append(got, x.Name+"="+strings.Join(x.Path, "."))
	}
	if strings.Join(got, " ") != "Flag=flag N=opts.n Region=region" {
		t.Errorf("bindings %v", got)
	}
	for name, schema := range map[string]string{
		"on the root":     `{"type":"string","x-mcp-header":"Root"}`,
		"under items":     `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"I"}}}}`,
		"under oneOf":     `{"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`,
		"under $defs":     `{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"D"}}}`,
		"empty":           `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`,
		"not a token":     `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`,
		"not a string":    `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}`,
		"a number":        `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
		"an object":       `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`,
		"twice, any case": `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Dup"},"b":{"type":"string","x-mcp-header":"dUP"}}}`,
		"a control char":  `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\r\nB"}}}`,
	} {
		if _, err := HeaderParams([]byte(schema)); err == nil {
			t.Errorf("%s: accepted %s", name, schema)
		}
	}
}

// TestEncodeHeaderValue: the Value Encoding examples of the 2026-07-28
// Streamable HTTP page.
func TestEncodeHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"us-west1":            "us-west1",
		"Hello, 世界":           "=?base64?SGVsbG8sIOS4lueVjA==?=",
		" padded ":            "=?base64?IHBhZGRlZCA=?=",
		"line1\nline2":        "=?base64?bGluZTEKbGluZTI=?=",
		"=?base64?literal?=":  "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
		"tab\tinside":         "tab\tinside",
		"file:///a/b.txt?x=1": "file:///a/b.txt?x=1",
		"":                    "",
	} {
		if got := EncodeHeaderValue(in); got != want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", in, got, want)
		}
		if back, ok := DecodeHeaderValue(want); !ok || back != in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", want, back, ok, in)
		}
	}
}

// TestDecodeHeaderValue: only a value with both sentinels is Base64, and
// then it must be well-formed (SEP-2243's test-case table).
func TestDecodeHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"=?base64?SGVsbG8=?=": "Hello",
		"=?base64?SGVsbG8=":   "=?base64?SGVsbG8=", // no suffix: literal
		"SGVsbG8=?=":          "SGVsbG8=?=",        // no prefix: literal
		"=?base64?=":          "=?base64?=",        // the sentinels overlap: literal
		"=?base64??=":         "",
	} {
		if got, ok := DecodeHeaderValue(in); !ok || got != want {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "caf\xc3\xa9", "a\nb"} {
		if got, ok := DecodeHeaderValue(in); ok {
			t.Errorf("DecodeHeaderValue(%q) = %q, accepted", in, got)
		}
	}
}
