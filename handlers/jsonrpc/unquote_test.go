package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

var unquoteCases = []string{
	`""`, `"plain"`, `"é✓ 日本"`, `"\u00e9\n\t\"\\\/"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\udc00x"`,
	"\"\xff\xfe bad\"", "\"\xed\xa0\x80\"", "\"ok\xc3\"", "\"a\x01b\"", "\"\x7f\"", `"\x"`, `"\u00g0"`,
	`"`, `"unterminated`, `"a"b"`, `"\"`, ` "a"`, `"a" `, `null`, `1`, `{}`, `["a"]`, ``, `''`,
	`"` + strings.Repeat("abcdefgh", 9) + `é"`, `"` + strings.Repeat("abcdefgh", 9) + "\x1f\"",
	`"` + strings.Repeat("abcdefgh", 9) + "\xff\"", `"` + strings.Repeat("é", 40) + "\x1f\"",
}

// checkUnquote compares Unquote with json.Unmarshal into a string, which
// defines it, on any input.
func checkUnquote(t *testing.T, lit []byte) {
	t.Helper()
	got, ok := Unquote(lit)
	var want string
	err := json.Unmarshal(lit, &want)
	wantOK := err == nil && len(lit) >= 2 && lit[0] == '"' && lit[len(lit)-1] == '"'
	if ok != wantOK || got != want && ok {
		t.Fatalf("Unquote(%q) = %q, %v; encoding/json: %q, %v (err %v)", lit, got, ok, want, wantOK, err)
	}
}

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, c := range unquoteCases {
		checkUnquote(t, []byte(c))
	}
}

// TestUnquotePositions: the word-at-a-time scan sees a control character,
// a non-ASCII byte, an escape or a stray quote wherever it falls.
func TestUnquotePositions(t *testing.T) {
	for n := 1; n < 100; n++ {
		for p := 0; p < n; p++ {
			for _, c := range []string{"\x00", "\x1f", " ", "\x7f", "\x80", "\xff", "é", "\u2028", `"`, `\n`, `\`} {
				body := []byte(strings.Repeat("a", n))
				lit := append(append(append(append([]byte{'"'}, body[:p]...), c...), body[p+1:]...), '"')
				checkUnquote(t, lit)
			}
		}
	}
}

func FuzzUnquote(f *testing.F) {
	for _, c := range unquoteCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkUnquote(t, b)
		// The same bytes as a string body, so that most inputs reach the
		// fast path and its checks rather than being rejected at once.
		checkUnquote(t, append(append([]byte{'"'}, b...), '"'))
	})
}

func BenchmarkUnquote(b *testing.B) {
	big := strings.Repeat("abcdefghijklmnopqrstuvwxyzABCDEF", 1<<15) // 1 MiB
	for _, bc := range []struct{ name, s string }{
		{"ascii-12B", "hello, world"},
		{"ascii-1MiB", big},
		{"utf8-1MiB", strings.Repeat("héllo, wörld ✓ ", 1<<16)},
		{"escaped-1MiB", strings.Repeat("line\n\"quoted\"\t", 1<<16)},
	} {
		lit, _ := json.Marshal(bc.s)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(lit)))
			for b.Loop() {
				if _, ok := Unquote(lit); !ok {
					b.Fatal("not a string")
				}
			}
		})
		b.Run(bc.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(lit)))
			for b.Loop() {
				var s string
				if err := json.Unmarshal(lit, &s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
