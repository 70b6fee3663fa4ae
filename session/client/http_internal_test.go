package client

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonschema"
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
		got, ok := jsonschema.HeaderText([]byte(raw))
		if got != want || ok != (want != "") {
			t.Errorf("jsonschema.HeaderText(%s) = %q %v", raw, got, ok)
		}
	}
}
