package uritemplate

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
)

type matchCase struct {
	tmpl, uri string
	want      map[string]string // nil: no match
}

func runMatchCases(t *testing.T, cases []matchCase) {
	t.Helper()
	for _, c := range cases {
		got, ok := mustParse(c.tmpl).Match(c.uri)
		switch {
		case c.want == nil && ok:
			t.Errorf("%q.Match(%q) = %v, want no match", c.tmpl, c.uri, got)
		case c.want != nil && !ok:
			t.Errorf("%q.Match(%q): no match, want %v", c.tmpl, c.uri, c.want)
		case c.want != nil && !reflect.DeepEqual(got, c.want):
			t.Errorf("%q.Match(%q) = %v, want %v", c.tmpl, c.uri, got, c.want)
		}
	}
}

type m = map[string]string

func TestMatchMCPTemplates(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"file:///{path}", "file:///README.md", m{"path": "README.md"}},
		{"file:///{path}", "file:///read%20me.md", m{"path": "read me.md"}},
		{"file:///{path}", "file:///docs/README.md", nil},
		{"file:///{path}", "file:///", nil},
		{"file:///{path}", "file:///a?b", nil},
		{"file:///{path}", "file:///a,b", nil},
		{"file:///{path}", "file://x", nil},
		{"file:///{path}", "http:///x", nil},
		{"file:///{+path}", "file:///docs/api/README.md", m{"path": "docs/api/README.md"}},
		{"file:///{+path}", "file:///a,b/c%20d", m{"path": "a,b/c d"}},
		{"file:///{+path}", "file:///", nil},
		{"file:///{+path}", "file:///a?x=1", nil},
		{"file:///{+path}", "file:///a#frag", nil},
		{"file:///{+path}", "file:///bad%zz", nil},
		{"repo://{owner}/{repo}/issues/{id}", "repo://mcprt/mcprt/issues/42", m{"owner": "mcprt", "repo": "mcprt", "id": "42"}},
		{"repo://{owner}/{repo}/issues/{id}", "repo://a/b/issues/", nil},
		{"repo://{owner}/{repo}/issues/{id}", "repo://a/b/c/issues/1", nil},
		{"repo://{owner}/{repo}/issues/{id}", "repo://a/b/issues/1/2", nil},
		{"repo://{owner}/{repo}/issues/{id}", "repo://a/b/pulls/1", nil},
		{"db://tables/{table}{?limit,offset}", "db://tables/users", m{"table": "users"}},
		{"db://tables/{table}{?limit,offset}", "db://tables/users?", m{"table": "users"}},
		{"db://tables/{table}{?limit,offset}", "db://tables/users?limit=10", m{"table": "users", "limit": "10"}},
		{"db://tables/{table}{?limit,offset}", "db://tables/users?limit=10&offset=20", m{"table": "users", "limit": "10", "offset": "20"}},
		{"db://tables/{table}{?limit,offset}", "db://tables/users?offset=20&limit=10", m{"table": "users", "limit": "10", "offset": "20"}},
		{"db://tables/{table}{?limit,offset}", "db://tables/users?offset=20&sort=name&limit=10", m{"table": "users", "limit": "10", "offset": "20"}},
		{"db://tables/{table}{?limit,offset}", "db://tables/users?limit", m{"table": "users", "limit": ""}},
		{"db://tables/{table}{?limit,offset}", "db://tables/my%20table?limit=a%26b", m{"table": "my table", "limit": "a&b"}},
		{"db://tables/{table}{?limit,offset}", "db://tables/?limit=1", nil},
		{"db://tables/{table}{?limit,offset}", "db://tables/a/b?limit=1", nil},
		{"db://tables/{table}{?limit,offset}", "db://tables/users?limit=%zz", nil},
		{"db://tables/{table}{?limit,offset}", "db://tables/users#frag", nil},
		{"users://{id}/profile", "users://123/profile", m{"id": "123"}},
		{"users://{id}/profile", "users:///profile", nil},
		{"users://{id}/profile", "users://1/2/profile", nil},
		{"users://{id}/profile", "users://123/profile/", nil},
		{"static://config", "static://config", m{}},
		{"static://config", "static://config2", nil},
	})
}

func TestMatchOperators(t *testing.T) {
	runMatchCases(t, []matchCase{
		// simple lists split on ','
		{"{x,y}", "1024,768", m{"x": "1024", "y": "768"}},
		{"map?{x,y}", "map?1024,768", m{"x": "1024", "y": "768"}},
		{"{x,y}", "1024", m{"x": "1024"}},
		{"{x,y}", "1,2,3", nil},
		{"{x,list*}", "1,2,3", m{"x": "1", "list": "2,3"}},
		{"{list*}", "red,green,blue", m{"list": "red,green,blue"}},
		{"{list}", "red,green,blue", nil},
		{"?{x,empty}", "?1024,", m{"x": "1024", "empty": ""}},
		{"{hello}", "Hello%20World%21", m{"hello": "Hello World!"}},
		{"{half}", "50%25", m{"half": "50%"}},
		{"{var:3}", "val", m{"var": "val"}},
		// reserved
		{"{+path}/here", "/foo/bar/here", m{"path": "/foo/bar"}},
		{"here?ref={+path}", "here?ref=/foo/bar", m{"path": "/foo/bar"}},
		{"{+path,x}/here", "/foo/bar,1024/here", m{"path": "/foo/bar", "x": "1024"}},
		{"{+base}index", "http://example.com/home/index", m{"base": "http://example.com/home/"}},
		{"{+path}/{name}", "a/b/c", m{"path": "a/b", "name": "c"}},
		// fragment
		{"X{#var}", "X#value", m{"var": "value"}},
		{"X{#var}", "X", m{}},
		{"foo{#empty}", "foo#", m{"empty": ""}},
		{"{#path,x}/here", "#/foo/bar,1024/here", m{"path": "/foo/bar", "x": "1024"}},
		{"{#hello}", "#Hello%20World!", m{"hello": "Hello World!"}},
		// label
		{"X{.var}", "X.value", m{"var": "value"}},
		{"X{.x,y}", "X.1024.768", m{"x": "1024", "y": "768"}},
		{"X{.var}", "X", m{}},
		{"X{.empty}", "X.", m{"empty": ""}},
		{"www{.dom*}", "www.example.com", m{"dom": "example,com"}},
		{"file{.ext}", "file.tar.gz", m{"ext": "tar.gz"}},
		{"{.who,who}", ".fred.fred", m{"who": "fred"}},
		{"{.who,who}", ".fred.barney", nil},
		{"X{.var}", "X.a/b", nil},
		// path segments
		{"{/var,x}/here", "/value/1024/here", m{"var": "value", "x": "1024"}},
		{"{/who,dub}", "/fred/me%2Ftoo", m{"who": "fred", "dub": "me/too"}},
		{"{/list*}", "/red/green/blue", m{"list": "red/green/blue"}},
		{"{/list*,path:4}", "/red/green/blue/%2Ffoo", m{"list": "red/green/blue", "path": "/foo"}},
		{"{/var,empty}", "/value/", m{"var": "value", "empty": ""}},
		{"{/var}", "/a/b", nil},
		{"x{/var}", "x", m{}},
		{"{/a}{/b}", "/x", m{"a": "x"}},
		{"{/a}{/b}", "/x/y", m{"a": "x", "b": "y"}},
		{"file://{/path*}{.ext}", "file:///usr/lib/libc.so", m{"path": "usr/lib/libc", "ext": "so"}},
		// path-style parameters
		{"{;x,y}", ";x=1024;y=768", m{"x": "1024", "y": "768"}},
		{"{;x,y}", ";y=768;x=1024", m{"x": "1024", "y": "768"}},
		{"{;v,empty,who}", ";v=6;empty;who=fred", m{"v": "6", "empty": "", "who": "fred"}},
		{"{;list*}", ";list=red;list=green;list=blue", m{"list": "red,green,blue"}},
		{"{;x}/here", ";x=1/here", m{"x": "1"}},
		{"{;x}/here", ";x=1;other=2/here", m{"x": "1"}},
		// query, order-insensitive, extras allowed
		{"{?x,y}", "?x=1024&y=768", m{"x": "1024", "y": "768"}},
		{"{?x,y}", "?y=768&x=1024", m{"x": "1024", "y": "768"}},
		{"{?x,y,empty}", "?x=1024&y=768&empty=", m{"x": "1024", "y": "768", "empty": ""}},
		{"{?list*}", "?list=red&list=green&list=blue", m{"list": "red,green,blue"}},
		{"{?list}", "?list=red,green,blue", m{"list": "red,green,blue"}},
		{"{?x}{&y}", "?y=2&x=1", m{"x": "1", "y": "2"}},
		{"?fixed=yes{&x}", "?fixed=yes&x=1024", m{"x": "1024"}},
		{"?fixed=yes{&x}", "?x=1024&fixed=yes", m{"x": "1024"}},
		{"?fixed=yes{&x}", "?fixed=yes", m{}},
		{"?fixed=yes{&x}", "?fixed=no&x=1", nil},
		{"?fixed=yes{&x}", "?x=1", nil},
		{"/s{?q}{#frag}", "/s?q=a#top", m{"q": "a", "frag": "top"}},
		{"/s{?q}{#frag}", "/s#top", m{"frag": "top"}},
		{"{&x,y,empty}", "&x=1024&y=768&empty=", m{"x": "1024", "y": "768", "empty": ""}},
		{"/search?q={q}", "/search?q=go", m{"q": "go"}},
		// leftmost-shortest
		{"{a}-{b}", "x-y-z", m{"a": "x", "b": "y-z"}},
		{"{a}{b}", "xyz", m{"a": "x", "b": "yz"}},
		{"{+a}/{+b}", "1/2/3", m{"a": "1", "b": "2/3"}},
		// repeated variables must agree
		{"{x}/{x}", "a/a", m{"x": "a"}},
		{"{x}/{x}", "a/b", nil},
		{"{x}{?x}", "a?x=a", m{"x": "a"}},
		{"{x}{?x}", "a?x=b", nil},
		{"{/var:1,var}", "/v/value", m{"var": "value"}},
		{"{/var:1,var}", "/x/value", nil},
		{"{/var,var:2}", "/value/va", m{"var": "value"}},
		// literals are compared in their encoded form
		{"a b/{x}", "a%20b/1", m{"x": "1"}},
	})
}

// TestMatchRoundTrip expands templates and matches the result back: values
// without reserved characters come back unchanged.
func TestMatchRoundTrip(t *testing.T) {
	cases := []struct {
		tmpl string
		vars map[string]any
		want map[string]string // nil: same as vars
	}{
		{"file:///{path}", map[string]any{"path": "README.md"}, nil},
		{"file:///{path}", map[string]any{"path": "hello world ünïcode~_-."}, nil},
		{"file:///{+path}", map[string]any{"path": "docs/api/v1/index.html"}, nil},
		{"repo://{owner}/{repo}/issues/{id}", map[string]any{"owner": "mcprt", "repo": "mcp-rt", "id": "12345"}, nil},
		{"repo://{owner}/{repo}/issues/{id}", map[string]any{"owner": "a b", "repo": "c%d", "id": "x/y"}, nil},
		{"db://tables/{table}{?limit,offset}", map[string]any{"table": "users", "limit": "10", "offset": "20"}, nil},
		{"db://tables/{table}{?limit,offset}", map[string]any{"table": "users", "offset": "20"}, nil},
		{"db://tables/{table}{?limit,offset}", map[string]any{"table": "users"}, nil},
		{"db://tables/{table}{?limit,offset}", map[string]any{"table": "t", "limit": "a&b=c"}, nil},
		{"users://{id}/profile", map[string]any{"id": "42"}, nil},
		{"{x,y}", map[string]any{"x": "1024", "y": "768"}, nil},
		{"{x}{/y}{.z}", map[string]any{"x": "a", "y": "b", "z": "c"}, nil},
		{"{/a,b,c}", map[string]any{"a": "1", "b": "2", "c": "3"}, nil},
		{"{/path*}", map[string]any{"path": []string{"usr", "local", "bin"}}, map[string]string{"path": "usr/local/bin"}},
		{"{?list*}", map[string]any{"list": []string{"a", "b"}}, map[string]string{"list": "a,b"}},
		{"{;a,b}", map[string]any{"a": "1", "b": ""}, nil},
		{"{?q,page}{#section}", map[string]any{"q": "go lang", "page": "2", "section": "intro"}, nil},
		{"mcp://{server}/tools/{tool}{?version}", map[string]any{"server": "local", "tool": "search", "version": "1.2"}, nil},
		{"{+base}{name}.json", map[string]any{"base": "api/v1/", "name": "item"}, nil},
	}
	for _, c := range cases {
		tmpl := mustParse(c.tmpl)
		uri, err := tmpl.expand(c.vars)
		if err != nil {
			t.Errorf("%q.Expand: %v", c.tmpl, err)
			continue
		}
		want := c.want
		if want == nil {
			want = map[string]string{}
			for k, v := range c.vars {
				want[k] = v.(string)
			}
		}
		got, ok := tmpl.Match(uri)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: Expand = %q, Match = %v, %v; want %v", c.tmpl, uri, got, ok, want)
		}
	}
}

// TestMatchRFCRoundTrip matches the RFC 6570 section 1.2 and 3.2 expansions
// back against their templates. Every expansion matches its own template
// except the documented exceptions in rfcNoMatch.
func TestMatchRFCRoundTrip(t *testing.T) {
	for _, c := range append(append([]expandCase{}, rfcSection12...), rfcSection32...) {
		_, ok := mustParse(c.tmpl).Match(c.want)
		if want := !rfcNoMatch[c.tmpl]; ok != want {
			t.Errorf("%q.Match(%q) matched = %v, want %v", c.tmpl, c.want, ok, want)
		}
	}
}

// rfcNoMatch lists the RFC examples whose expansion does not match back:
// a non-exploded list or associative array in a simple expression contains
// raw ',' separators, and simple/reserved variables must be non-empty.
var rfcNoMatch = map[string]bool{
	"{list}": true, "{keys}": true,
	"O{empty}X": true, "O{undef}X": true, "O{+empty}X": true, "O{+undef}X": true,
}

func TestMatchConcurrent(t *testing.T) {
	tmpl := mustParse("repo://{owner}/{repo}/issues/{id}{?state}")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				id := fmt.Sprint(g*1000 + i)
				uri, err := tmpl.expand(map[string]any{"owner": "o", "repo": "r", "id": id, "state": "open"})
				if err != nil {
					t.Error(err)
					return
				}
				got, ok := tmpl.Match(uri)
				if !ok || got["id"] != id || got["state"] != "open" {
					t.Errorf("Match(%q) = %v, %v", uri, got, ok)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestMatchPathological(t *testing.T) {
	// Many adjacent expressions over a long non-matching input must not
	// blow up (failure states are memoized).
	tmpl := mustParse("{a}{b}{c}{d}{e}{f}{g}{h}!")
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'x'
	}
	if _, ok := tmpl.Match(string(long)); ok {
		t.Fatal("unexpected match")
	}
}

func FuzzParseExpandMatch(f *testing.F) {
	for _, c := range rfcSection32 {
		f.Add(c.tmpl, c.want)
	}
	f.Add("db://tables/{table}{?limit,offset}", "db://tables/x?limit=1")
	f.Fuzz(func(t *testing.T, tmpl, uri string) {
		tp, err := Parse(tmpl)
		if err != nil {
			return
		}
		if tp.String() != tmpl {
			t.Fatalf("String() = %q, want %q", tp.String(), tmpl)
		}
		vars := map[string]any{}
		for _, n := range tp.Vars() {
			vars[n] = "v"
		}
		if _, err := tp.expand(vars); err != nil {
			t.Fatalf("Expand: %v", err)
		}
		tp.Match(uri)
	})
}
