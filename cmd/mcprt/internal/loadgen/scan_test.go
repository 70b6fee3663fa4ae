package loadgen

import (
	"encoding/json"
	"strings"
	"testing"
)

var validityCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e10`, `-12.25E-3`, `true`, `false`, `null`,
	` { "a" : [ 1 , 2 , { "b" : null } ] } `,
	`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`"\u00e9\n\t\"\\\/"`, `"é"`, `{"a":1,"a":2}`,
	// Invalid.
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{a:1}`, `01`, `1.`, `.5`, `1e`, `-`, `+1`,
	`tru`, `nul`, `"abc`, "\"a\x01\"", `"\x"`, `"\u12"`, `"\u12g4"`, `{"a":1}}`, `[1 2]`, `{"a" 1}`,
	`1 2`, `{} {}`, `NaN`, `[`, `[[[]]`,
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validityCases {
		if got, want := valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("valid(%q) = %v, encoding/json says %v", c, got, want)
		}
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if valid([]byte(deep)) {
		t.Errorf("nesting past maxDepth accepted")
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range validityCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Count(s, "[")+strings.Count(s, "{") >= maxDepth {
			return // deliberately stricter than encoding/json
		}
		if got, want := valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("valid(%q) = %v, encoding/json says %v", s, got, want)
		}
	})
}
