package jsonschema

import (
	"bytes"
	"encoding/json"
	"net/url"
	"testing"
)

// unescapePercent replaces url.PathUnescape (see its comment): it must agree
// with it, results and errors alike.
func TestUnescapePercentMatchesNetURL(t *testing.T) {
	for _, s := range []string{
		"", "/", "/$defs/a", "/a%20b", "/a%2Fb", "/%7e%7E", "/a+b", "/%", "/%2", "/%zz", "/%2g",
		"%41%42%43", "/caf%C3%A9", "/%c3%a9x", "/ok/%", "/%%41", "/%4", "/a%4/b", "/%F0%9F%98%80",
	} {
		want, wantErr := url.PathUnescape(s)
		got, err := unescapePercent(s)
		if got != want || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Errorf("unescapePercent(%q) = %q, %v; url.PathUnescape: %q, %v", s, got, err, want, wantErr)
		}
	}
}

// A percent-encoded $ref resolves as it did through net/url.
func TestCompileRefPercentEncoded(t *testing.T) {
	s, err := Compile([]byte(`{"$defs":{"a b":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a%20b"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte(`{"x":1}`)); err == nil {
		t.Error("x: 1 validated against a $ref to a string schema")
	}
	if _, err := Compile([]byte(`{"properties":{"x":{"$ref":"#/$defs/a%2"}}}`)); err == nil {
		t.Error("a malformed escape in $ref compiled")
	}
}

// writeString must write what a json.Encoder with SetEscapeHTML(false)
// writes (see its comment), for any string, valid UTF-8 or not.
func FuzzWriteString(f *testing.F) {
	for _, s := range []string{
		"", "plain", `a"b\c`, "a<b>&c", "\x00\x01\x1f\x7f", "\b\f\n\r\t", "tab\there",
		"caf\u00e9", "\u2028\u2029", "\xff", "a\xc3", "\xed\xa0\x80", "😀", "\ufffd", "x\u2027y\u202az",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		writeString(&got, s)
		if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(got.Bytes(), w) {
			t.Errorf("writeString(%q) = %s, json.Encoder: %s", s, got.Bytes(), w)
		}
	})
}
