package jsonschema

import (
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
