package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestMembersMatchesEncodingJSON: for any valid object, Members sees the
// same members (last duplicate wins, keys unescaped) as encoding/json.
func TestMembersMatchesEncodingJSON(t *testing.T) {
	inputs := []string{
		`{}`, ` { } `,
		`{"a":1}`,
		`{"a":"x\"}y","b":[1,{"c":"]"}],"d":{"e":[[]]},"f":null,"g":true,"h":-1.5e3}`,
		"{\n\t\"a\" :\r\n 1 , \"b\" : \"2\" }",
		`{"\u0069d":7,"id":8}`,
		`{"id":1,"id":2}`,
		`{"k\\":"v\\","z":"\\\""}`,
		`{"ünï":"cødé","a b":[]}`,
	}
	for _, in := range inputs {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got := map[string]json.RawMessage{}
		if !Members([]byte(in), func(k string, v []byte) bool { got[k] = v; return true }) {
			t.Fatalf("%s: not an object", in)
		}
		if len(got) != len(want) {
			t.Errorf("%s: got %d members, want %d", in, len(got), len(want))
		}
		for k, w := range want {
			if !bytes.Equal(got[k], w) {
				t.Errorf("%s: member %q = %s, want %s", in, k, got[k], w)
			}
		}
	}
	for _, in := range []string{`[]`, `null`, `"x"`, `1`} {
		if Members([]byte(in), func(string, []byte) bool { return true }) {
			t.Errorf("%s: reported as an object", in)
		}
	}
	if v, ok := Member([]byte(`{"a":{"b":2},"b":3}`), "b"); !ok || string(v) != "3" {
		t.Errorf("Member = %s %v", v, ok)
	}
	if _, ok := Member([]byte(`{"a":{"b":2}}`), "b"); ok {
		t.Error("Member found a nested key")
	}
}

// TestSkipStringPositions: the member scan finds the end of a string
// whatever the position of its escapes and of its closing quote relative
// to words and search windows, and is not stopped by control characters or
// other bytes.
func TestSkipStringPositions(t *testing.T) {
	sizes := []int{0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 79, 80, 81, 207, 208, 209, 463, 465, 1000, 4200}
	for _, n := range sizes {
		for p := 0; p < n; p++ {
			for _, c := range []string{`\"`, `\\`, `\n`, `\u0022`, "\x01", "é", "\xff"} {
				body := bytes.Repeat([]byte("a"), n)
				body = append(append(append([]byte{}, body[:p]...), c...), body[p:]...)
				lit := append(append([]byte{'"'}, body...), `"`...)
				doc := append(append([]byte(nil), lit...), `,"next"`...)
				if got := skipString(doc, 0); got != len(lit) {
					t.Fatalf("skipString(%.60q...) = %d, want %d", doc, got, len(lit))
				}
			}
		}
	}
	// Cut off inside the string (not valid JSON): the end of the input.
	for _, doc := range []string{`"`, `"abc`, `"abc\`, `"abcdefghijklmnopqrstuvwxyz\`, `"abcdefghijklmnopq\"`} {
		if got := skipString([]byte(doc), 0); got != len(doc) {
			t.Errorf("skipString(%q) = %d, want %d", doc, got, len(doc))
		}
	}
}

// TestMembersInternedKeys: interned keys are the keys, whatever else went
// through the cache before (colliding slots, long keys, escaped keys), and
// the common case allocates nothing.
func TestMembersInternedKeys(t *testing.T) {
	keys := func(obj string) []string {
		var ks []string
		Members([]byte(obj), func(k string, _ []byte) bool { ks = append(ks, k); return true })
		return ks
	}
	for i := range 5000 { // far more distinct keys than slots
		k := fmt.Sprintf("k%d", i)
		if got := keys(`{"` + k + `":1,"id":2}`); len(got) != 2 || got[0] != k || got[1] != "id" {
			t.Fatalf("keys %q, want [%s id]", got, k)
		}
	}
	if got := keys(`{"caf` + "\xe9" + `":1}`); got[0] != "caf\ufffd" {
		t.Fatalf("key %q: invalid UTF-8 must read as U+FFFD, as encoding/json has it", got[0])
	}
	long := strings.Repeat("x", maxInternedKey+1)
	if got := keys(`{"` + long + `":1,"a\u0062":2}`); got[0] != long || got[1] != "ab" {
		t.Fatalf("keys %q", got)
	}
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`)
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		Members(line, func(k string, _ []byte) bool { n += len(k); return true })
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per scan of a line with common keys, want 0", allocs)
	}
}
