package jsonschema

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

var fastSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
	`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"integer","minimum":0}},"required":["a","b"],"additionalProperties":false}`,
	`{"type":"object","properties":{"s":{"type":"string","maxLength":3},"e":{"enum":["x","y"]},"o":{"type":"object","properties":{"n":{"type":["null","boolean"]}}}}}`,
	`{"type":"object","additionalProperties":{"type":"string"},"minProperties":1}`,
	`{"anyOf":[{"type":"string"},{"type":"object","required":["k"]}]}`,
	`{"type":"object","properties":{"x":{"type":"integer","exclusiveMinimum":-3,"maximum":10,"exclusiveMaximum":9},"y":{"type":"number","minimum":0.5},"z":{"type":"integer","multipleOf":2},"w":{"type":"string"}},"required":["x","w","z"]}`,
	`true`, `false`, `{}`,
}

// FuzzFastValid: the raw fast path never accepts what the full validator
// rejects.
func FuzzFastValid(f *testing.F) {
	for _, in := range []string{`{"text":"hi"}`, `{"text":1}`, `{}`, `{"a":1,"b":2}`, `{"a":1,"b":-2}`, `{"a":1,"b":2,"c":3}`, `{"x":-2,"w":"","z":4}`, `{"x":9,"w":"a","z":3,"y":0.4}`, `{"x":-3,"w":"","z":0}`, `{"x":1.0,"w":"","z":2}`, `{"x":-0,"z":-8,"w":"w","x":12}`,
		`{"s":"abcd","e":"z","o":{"n":null}}`, `{"s":"ab","e":"x","o":{"n":1}}`, `{"k":"v"}`, `"str"`, `[1]`, `null`, `{"text":"a","text":2}`} {
		f.Add([]byte(in))
	}
	schemas := make([]*Schema, len(fastSchemas))
	for i, s := range fastSchemas {
		var err error
		if schemas[i], err = Compile(json.RawMessage(s)); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		raw := bytes.TrimSpace(in)
		if len(raw) == 0 || !jsonrpc.Valid(raw) {
			return
		}
		for i, s := range schemas {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var v any
			if dec.Decode(&v) != nil {
				return
			}
			full := s.validateValue(v)
			if fastValid(s.root, raw) && full != nil {
				t.Fatalf("schema %s: fast path accepted %s, full validator says %v", fastSchemas[i], raw, full)
			}
			if got := s.ValidateWellFormed(raw); (got == nil) != (full == nil) {
				t.Fatalf("schema %s, %s: ValidateWellFormed = %v, ValidateValue = %v", fastSchemas[i], raw, got, full)
			}
			if got := s.Validate(raw); (got == nil) != (full == nil) {
				t.Fatalf("schema %s, %s: Validate = %v, ValidateValue = %v", fastSchemas[i], raw, got, full)
			}
		}
	})
}

// TestFastValidAllocates: the schemas of the common tools (a required
// string, a bounded integer) are checked without allocating.
func TestFastValidAllocates(t *testing.T) {
	for _, c := range []struct{ schema, args string }{
		{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, `{"text":"hi"}`},
		{`{"type":"object","properties":{"us":{"type":"integer","minimum":0}},"required":["us"]}`, `{"us":1000}`},
	} {
		s, err := Compile(json.RawMessage(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		raw := []byte(c.args)
		if !fastValid(s.root, raw) {
			t.Fatalf("%s: %s not accepted by the fast path", c.schema, raw)
		}
		if n := testing.AllocsPerRun(100, func() { fastValid(s.root, raw) }); n != 0 {
			t.Errorf("%s: %v allocations per check, want 0", c.schema, n)
		}
	}
}
