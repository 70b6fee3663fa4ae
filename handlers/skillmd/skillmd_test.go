package skillmd

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestParseLikeYAML: frontmatters of the shapes skill manifests use read
// as the YAML library of the conformance suite (npm yaml 2, core schema)
// reads them: the want column is its output for each.
func TestParseLikeYAML(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"name: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n",
			`{"name":"pdf-processing","description":"Extract, fill, and assemble PDF documents"}`},
		{"name: a\ndescription: \"quoted: with colon\"\nlicense: 'it''s MIT'\nversion: 1.0\ncount: 42\nhex: 0x1F\nflag: true\nnothing: ~\ndate: 2024-01-01\n",
			`{"name":"a","description":"quoted: with colon","license":"it's MIT","version":1,"count":42,"hex":31,"flag":true,"nothing":null,"date":"2024-01-01"}`},
		{"name: a\ndescription: >\n  Folded text\n  over lines\n\n  with a break\nliteral: |-\n  line one\n    indented\n  line three\n",
			`{"name":"a","description":"Folded text over lines\nwith a break\n","literal":"line one\n  indented\nline three"}`},
		{"name: a\ndescription: A long plain\n  description that wraps\n  onto lines # and a comment\nmetadata:\n  author: acme\n  version: \"2\"\nallowed-tools:\n  - bash\n  - \"read file\"\ntags: [a, \"b c\", 3]\nempty: {}\n",
			`{"name":"a","description":"A long plain description that wraps onto lines","metadata":{"author":"acme","version":"2"},"allowed-tools":["bash","read file"],"tags":["a","b c",3],"empty":{}}`},
		{"name: a\ndescription: x\nitems:\n- one\n- two: 2\n  three: 3\nnested:\n  deeper:\n    key: value\n",
			`{"name":"a","description":"x","items":["one",{"two":2,"three":3}],"nested":{"deeper":{"key":"value"}}}`},
	} {
		raw, body, err := Parse("---\n" + c.yaml + "---\n\nBody.\n")
		if err != nil {
			t.Errorf("%q: %v", c.yaml, err)
			continue
		}
		var got, want any
		_ = json.Unmarshal(raw, &got)
		_ = json.Unmarshal([]byte(c.want), &want)
		if !reflect.DeepEqual(got, want) || body != "\nBody.\n" {
			t.Errorf("%q:\n got %s\nwant %s (body %q)", c.yaml, raw, c.want, body)
		}
	}
}

// TestParseRefuses: what is not a frontmatter, or uses YAML this subset
// does not read, is an error, never a different reading.
func TestParseRefuses(t *testing.T) {
	for _, text := range []string{
		"no frontmatter\n",
		"---\nname: a\n",                    // not closed
		"---\n- a\n- b\n---\n",              // not a mapping
		"---\nname: &x a\nother: *x\n---\n", // anchors and aliases
		"---\nname: !!str a\n---\n",         // tags
		"---\n? complex\n: key\n---\n",      // complex keys
		"---\nname: a\nname: b\n---\n",      // a key twice
		"---\nname: [a, [b]]\n---\n",        // nested flow
		"---\nname: \"open\n---\n",          // unterminated
		"---\nname: a\n  bad: indent\n---\n",
	} {
		if raw, _, err := Parse(text); err == nil {
			t.Errorf("%q: read as %s", text, raw)
		}
	}
}

func TestDigest(t *testing.T) {
	if d := Digest([]byte("abc")); d != "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" || !strings.HasPrefix(d, "sha256:") {
		t.Errorf("Digest: %s", d)
	}
}
