package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

var validCases = []string{
	``, ` `, `{}`, `[]`, `{"a":1}`, `{"a":1,}`, `[1,]`, `[,1]`, `{"a" 1}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`,
	`"x"`, `"\u00e9\n\t\"\\\/"`, `"\u00g0"`, `"\x"`, "\"a\x01\"", "\"\xff\xfe\"", `"unterminated`,
	`0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-`, `1e`, `-1.25e-10`, `2.`, `00`,
	`true`, `tru`, `truex`, `false`, `null`, `nul`, `nulll`, `[true,false,null]`,
	`{"a":[1,{"b":[]}],"c":{}}`, `[[[[]]]]`, `[[[[]]]`, `]`, `}`, `{"a":1}}`, `[1] [2]`, `1 2`,
	" {\"a\" : [ 1 , 2 ] } \n", `{"a":"b"]`, `["a":1]`, `{"":""}`, `[-]`, `[1e1.5]`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.60q) = %v, json.Valid = %v", c, got, want)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid = %v", b, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("abcdefgh", 8192) + `"}}}`)
	b.Run("mcprt", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			Valid(line)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			json.Valid(line)
		}
	})
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&</a>", "\x00\x01\b\f\n\r\t\x1f", "\u2028\u2029é✓", "\xff\xfe bad", "\\/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendString(%q) = %s, json.Marshal = %s", s, got, want)
		}
	})
}

// TestPlainRunPositions: the scan stops at every special byte wherever it
// falls in a word or a search window, and at no other.
func TestPlainRunPositions(t *testing.T) {
	var sizes []int
	for n := 0; n < 40; n++ {
		sizes = append(sizes, n)
	}
	// Past the first words, across the first window boundaries (16+64,
	// 16+64+128, ...).
	sizes = append(sizes, 81, 209, 465, 1000, 4200)
	for _, n := range sizes {
		for p := 0; p < n; p++ {
			for _, c := range []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x21, 0x5b, 0x5d, 0x7f, 0x80, 0xff, 'a'} {
				b := []byte(strings.Repeat("a", n))
				b[p] = c
				want := n
				for i, x := range b {
					if x < 0x20 || x == '"' || x == '\\' {
						want = i
						break
					}
				}
				if got := plainRun(b, 0); got != want {
					t.Fatalf("plainRun(%q) = %d, want %d", b, got, want)
				}
				lit := append(append([]byte{'"'}, b...), '"')
				if got, want := Valid(lit), json.Valid(lit); got != want {
					t.Fatalf("Valid(%q) = %v, json.Valid = %v", lit, got, want)
				}
			}
		}
	}
}

// validMembersCases adds to validCases what is particular to checking an
// object's members while reading them.
var validMembersCases = append([]string{
	`{"a":1}x`, `{"a":1} `, ` {"a":1}`, `{"a":1,"b":`, `{"a":1,"b"}`, `{"a" : 1 , "b" : [2] }`,
	`{"k\u0065y":1,"k\\":2}`, `{1:2}`, `{"a":1,,"b":2}`, `{"a":tru}`, "{\"a\":\"\x01\"}",
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
}, validCases...)

type member struct{ k, v string }

// checkValidMembers compares ValidMembers with Valid followed by Members.
func checkValidMembers(t *testing.T, b []byte, stopAfter int) {
	t.Helper()
	var got []member
	valid, isObject := ValidMembers(b, func(k string, v []byte) bool {
		got = append(got, member{k, string(v)})
		return len(got) < stopAfter
	})
	if want := Valid(b); valid != want {
		t.Fatalf("ValidMembers(%.80q): valid %v, Valid %v", b, valid, want)
	}
	if !valid {
		return
	}
	var want []member
	wantObject := Members(b, func(k string, v []byte) bool {
		want = append(want, member{k, string(v)})
		return len(want) < stopAfter
	})
	if isObject != wantObject || len(got) != len(want) {
		t.Fatalf("ValidMembers(%.80q): object %v, %d members; Members: %v, %d", b, isObject, len(got), wantObject, len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("ValidMembers(%.80q): member %d is %q, Members says %q", b, i, got[i], want[i])
		}
	}
}

func TestValidMembers(t *testing.T) {
	for _, c := range validMembersCases {
		for _, stop := range []int{1, 1 << 30} {
			checkValidMembers(t, []byte(c), stop)
		}
	}
}

func FuzzValidMembers(f *testing.F) {
	for _, c := range validMembersCases {
		f.Add([]byte(c), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, stop uint8) {
		checkValidMembers(t, b, int(stop)+1)
	})
}

func FuzzPlainString(f *testing.F) {
	for _, s := range []string{"", "plain", strings.Repeat("abcdefgh", 100), strings.Repeat("x", 300) + "<", "é✓ ok", "\u2028", "a\"b", "\xff", "tab\there", strings.Repeat("y", 70000) + "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := string(AppendString(nil, s)) == `"`+s+`"`
		if got := PlainString(s); got != want {
			t.Fatalf("PlainString(%.80q) = %v, AppendString copies it as it is: %v", s, got, want)
		}
	})
}
