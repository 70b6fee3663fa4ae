package client

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestSSEReader: the event-stream format as servers write it: any line
// ending, comments, multi-line data, other event types, retry, and events
// cut off by the end of the stream.
func TestSSEReader(t *testing.T) {
	stream := ": keep-alive\r\n\r\n" +
		"id: 1\ndata:\n\n" + // a priming event: no data
		"event: message\r\ndata: {\"a\":1}\r\n\r\n" +
		"data: {\"b\":\rdata: 2}\r\r" + // lone CRs; two data lines joined by LF
		"event: other\ndata: {\"skip\":1}\n\n" +
		"retry: 2500\ndata:{\"c\":3}\n\n" +
		"data: {\"cut\":1}\n" // no blank line: dropped
	for name, r := range map[string]io.Reader{
		"whole":      strings.NewReader(stream),
		"byte-wise":  iotest.OneByteReader(strings.NewReader(stream)),
		"half-reads": iotest.HalfReader(strings.NewReader(stream)),
	} {
		t.Run(name, func(t *testing.T) {
			sr := newSSEReader(r, 1<<10)
			var got []string
			for {
				data, err := sr.next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(data))
			}
			want := []string{`{"a":1}`, "{\"b\":\n2}", `{"c":3}`}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("events %q, want %q", got, want)
			}
			if sr.retry != 2500*time.Millisecond {
				t.Errorf("retry %v", sr.retry)
			}
		})
	}
	sr := newSSEReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 50)
	if _, err := sr.next(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("an over-long event: %v", err)
	}
	sr = newSSEReader(strings.NewReader(strings.Repeat("data: 0123456789\n", 10)+"\n"), 50)
	if _, err := sr.next(); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("an event over-long by its lines: %v", err)
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
		if got := encodeHeaderValue(in); got != want {
			t.Errorf("encodeHeaderValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParamBindings: valid x-mcp-header annotations are found, with their
// paths; each constraint the specification sets makes a tool invalid.
func TestParamBindings(t *testing.T) {
	b, err := paramBindings([]byte(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"x-mcp-header":{"type":"string"},
		"opts":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}},
		"flag":{"type":"boolean","x-mcp-header":"Flag","default":{"x-mcp-header":"not a schema"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range b {
		got = append(got, x.header+"="+strings.Join(x.path, "."))
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
		if _, err := paramBindings([]byte(schema)); err == nil {
			t.Errorf("%s: accepted %s", name, schema)
		}
	}
}

// TestSetParamHeaders: values are mirrored as the specification converts
// them; absent, null and non-primitive values get no header.
func TestSetParamHeaders(t *testing.T) {
	c := &Client{cache: map[string]any{mTools: []Tool{{Name: "t", InputSchema: []byte(`{"type":"object","properties":{
		"s":{"type":"string","x-mcp-header":"S"},
		"i":{"type":"integer","x-mcp-header":"I"},
		"b":{"type":"boolean","x-mcp-header":"B"},
		"o":{"type":"object","properties":{"deep":{"type":"integer","x-mcp-header":"Deep"}}},
		"n":{"type":"string","x-mcp-header":"Null"},
		"a":{"type":"string","x-mcp-header":"Absent"}}}`)}}}}
	h := http.Header{}
	c.setParamHeaders(h, []byte(`{"name":"t","arguments":{"s":"naïve","i":-7.0,"b":false,"o":{"deep":9007199254740991},"n":null}}`))
	want := http.Header{
		"Mcp-Param-S":    {"=?base64?bmHDr3Zl?="},
		"Mcp-Param-I":    {"-7"},
		"Mcp-Param-B":    {"false"},
		"Mcp-Param-Deep": {"9007199254740991"},
	}
	if len(h) != len(want) {
		t.Errorf("headers %v, want %v", h, want)
	}
	for k, v := range want {
		if h.Get(k) != v[0] {
			t.Errorf("%s: %q, want %q", k, h.Get(k), v[0])
		}
	}
	for raw, want := range map[string]string{`1.5`: "", `"x"`: "x", `true`: "true", `[1]`: "", `1e3`: "1000"} {
		got, ok := headerText([]byte(raw))
		if got != want || ok != (want != "") {
			t.Errorf("headerText(%s) = %q %v", raw, got, ok)
		}
	}
}
