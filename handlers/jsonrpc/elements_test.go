package jsonrpc

import (
	"strings"
	"testing"
)

func TestElements(t *testing.T) {
	for _, tc := range []struct {
		arr  string
		want []string
		ok   bool
	}{
		{`[]`, nil, true},
		{` [ ] `, nil, true},
		{`[1]`, []string{`1`}, true},
		{`[ {"a":[1,"]"]} , "x\"]" ,null,[[]],-1.5e3 ]`, []string{`{"a":[1,"]"]}`, `"x\"]"`, `null`, `[[]]`, `-1.5e3`}, true},
		{`{"a":1}`, nil, false},
		{`"[1]"`, nil, false},
		{``, nil, false},
	} {
		var got []string
		ok := Elements([]byte(tc.arr), func(v []byte) bool {
			got = append(got, string(v))
			return true
		})
		if ok != tc.ok || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: %q, %v; want %q, %v", tc.arr, got, ok, tc.want, tc.ok)
		}
	}
	n := 0
	Elements([]byte(`[1,2,3]`), func([]byte) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("fn returned false and was called %d times", n)
	}
}
