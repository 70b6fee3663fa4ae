package mcp

import "testing"

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
		if got := EncodeHeaderValue(in); got != want {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q", in, got, want)
		}
		if back, ok := DecodeHeaderValue(want); !ok || back != in {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", want, back, ok, in)
		}
	}
}

// TestDecodeHeaderValue: only a value with both sentinels is Base64, and
// then it must be well-formed (SEP-2243's test-case table).
func TestDecodeHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"=?base64?SGVsbG8=?=": "Hello",
		"=?base64?SGVsbG8=":   "=?base64?SGVsbG8=", // no suffix: literal
		"SGVsbG8=?=":          "SGVsbG8=?=",        // no prefix: literal
		"=?base64?=":          "=?base64?=",        // the sentinels overlap: literal
		"=?base64??=":         "",
	} {
		if got, ok := DecodeHeaderValue(in); !ok || got != want {
			t.Errorf("DecodeHeaderValue(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "caf\xc3\xa9", "a\nb"} {
		if got, ok := DecodeHeaderValue(in); ok {
			t.Errorf("DecodeHeaderValue(%q) = %q, accepted", in, got)
		}
	}
}
