package client

import (
	"net/http"
	"testing"

	"github.com/mcprt/mcprt/handlers/jsonschema"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// TestSetParamHeaders: values are mirrored as the specification converts
// them; absent, null and non-primitive values get no header.
func TestSetParamHeaders(t *testing.T) {
	c := &Client{cache: map[string]any{mTools: []mcp.Tool{{Name: "t", InputSchema: []byte(`{"type":"object","properties":{
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
