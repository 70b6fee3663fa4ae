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
