package uritemplate

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// rfcVars are the variables of RFC 6570 sections 1.2 and 3.2. The
// associative array keys is given as ordered pairs so expansions are
// deterministic.
var rfcVars = map[string]any{
	"count":      []string{"one", "two", "three"},
	"dom":        []string{"example", "com"},
	"dub":        "me/too",
	"hello":      "Hello World!",
	"half":       "50%",
	"var":        "value",
	"who":        "fred",
	"base":       "http://example.com/home/",
	"path":       "/foo/bar",
	"list":       []string{"red", "green", "blue"},
	"keys":       [][2]string{{"semi", ";"}, {"dot", "."}, {"comma", ","}},
	"v":          "6",
	"x":          "1024",
	"y":          "768",
	"empty":      "",
	"empty_keys": [][2]string{},
	"undef":      nil,
}

type expandCase struct{ tmpl, want string }

// Section 1.2: examples by level.
var rfcSection12 = []expandCase{
	// Level 1
	{"{var}", "value"},
	{"{hello}", "Hello%20World%21"},
	// Level 2
	{"{+var}", "value"},
	{"{+hello}", "Hello%20World!"},
	{"{+path}/here", "/foo/bar/here"},
	{"here?ref={+path}", "here?ref=/foo/bar"},
	{"X{#var}", "X#value"},
	{"X{#hello}", "X#Hello%20World!"},
	// Level 3
	{"map?{x,y}", "map?1024,768"},
	{"{x,hello,y}", "1024,Hello%20World%21,768"},
	{"{+x,hello,y}", "1024,Hello%20World!,768"},
	{"{+path,x}/here", "/foo/bar,1024/here"},
	{"{#x,hello,y}", "#1024,Hello%20World!,768"},
	{"{#path,x}/here", "#/foo/bar,1024/here"},
	{"X{.var}", "X.value"},
	{"X{.x,y}", "X.1024.768"},
	{"{/var}", "/value"},
	{"{/var,x}/here", "/value/1024/here"},
	{"{;x,y}", ";x=1024;y=768"},
	{"{;x,y,empty}", ";x=1024;y=768;empty"},
	{"{?x,y}", "?x=1024&y=768"},
	{"{?x,y,empty}", "?x=1024&y=768&empty="},
	{"?fixed=yes{&x}", "?fixed=yes&x=1024"},
	{"{&x,y,empty}", "&x=1024&y=768&empty="},
	// Level 4
	{"{var:3}", "val"},
	{"{var:30}", "value"},
	{"{list}", "red,green,blue"},
	{"{list*}", "red,green,blue"},
	{"{keys}", "semi,%3B,dot,.,comma,%2C"},
	{"{keys*}", "semi=%3B,dot=.,comma=%2C"},
	{"{+path:6}/here", "/foo/b/here"},
	{"{+list}", "red,green,blue"},
	{"{+list*}", "red,green,blue"},
	{"{+keys}", "semi,;,dot,.,comma,,"},
	{"{+keys*}", "semi=;,dot=.,comma=,"},
	{"{#path:6}/here", "#/foo/b/here"},
	{"{#list}", "#red,green,blue"},
	{"{#list*}", "#red,green,blue"},
	{"{#keys}", "#semi,;,dot,.,comma,,"},
	{"{#keys*}", "#semi=;,dot=.,comma=,"},
	{"X{.var:3}", "X.val"},
	{"X{.list}", "X.red,green,blue"},
	{"X{.list*}", "X.red.green.blue"},
	{"X{.keys}", "X.semi,%3B,dot,.,comma,%2C"},
	{"X{.keys*}", "X.semi=%3B.dot=..comma=%2C"},
	{"{/var:1,var}", "/v/value"},
	{"{/list}", "/red,green,blue"},
	{"{/list*}", "/red/green/blue"},
	{"{/list*,path:4}", "/red/green/blue/%2Ffoo"},
	{"{/keys}", "/semi,%3B,dot,.,comma,%2C"},
	{"{/keys*}", "/semi=%3B/dot=./comma=%2C"},
	{"{;hello:5}", ";hello=Hello"},
	{"{;list}", ";list=red,green,blue"},
	{"{;list*}", ";list=red;list=green;list=blue"},
	{"{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"},
	{"{;keys*}", ";semi=%3B;dot=.;comma=%2C"},
	{"{?var:3}", "?var=val"},
	{"{?list}", "?list=red,green,blue"},
	{"{?list*}", "?list=red&list=green&list=blue"},
	{"{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"},
	{"{?keys*}", "?semi=%3B&dot=.&comma=%2C"},
	{"{&var:3}", "&var=val"},
	{"{&list}", "&list=red,green,blue"},
	{"{&list*}", "&list=red&list=green&list=blue"},
	{"{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"},
	{"{&keys*}", "&semi=%3B&dot=.&comma=%2C"},
}

// Section 3.2: the expression expansion tables (3.2.2 to 3.2.9).
var rfcSection32 = []expandCase{
	// 3.2.2 Simple String Expansion
	{"{var}", "value"},
	{"{hello}", "Hello%20World%21"},
	{"{half}", "50%25"},
	{"O{empty}X", "OX"},
	{"O{undef}X", "OX"},
	{"{x,y}", "1024,768"},
	{"{x,hello,y}", "1024,Hello%20World%21,768"},
	{"?{x,empty}", "?1024,"},
	{"?{x,undef}", "?1024"},
	{"?{undef,y}", "?768"},
	{"{var:3}", "val"},
	{"{var:30}", "value"},
	{"{list}", "red,green,blue"},
	{"{list*}", "red,green,blue"},
	{"{keys}", "semi,%3B,dot,.,comma,%2C"},
	{"{keys*}", "semi=%3B,dot=.,comma=%2C"},
	// 3.2.3 Reserved Expansion
	{"{+var}", "value"},
	{"{+hello}", "Hello%20World!"},
	{"{+half}", "50%25"},
	{"{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"},
	{"{+base}index", "http://example.com/home/index"},
	{"O{+empty}X", "OX"},
	{"O{+undef}X", "OX"},
	{"{+path}/here", "/foo/bar/here"},
	{"here?ref={+path}", "here?ref=/foo/bar"},
	{"up{+path}{var}/here", "up/foo/barvalue/here"},
	{"{+x,hello,y}", "1024,Hello%20World!,768"},
	{"{+path,x}/here", "/foo/bar,1024/here"},
	{"{+path:6}/here", "/foo/b/here"},
	{"{+list}", "red,green,blue"},
	{"{+list*}", "red,green,blue"},
	{"{+keys}", "semi,;,dot,.,comma,,"},
	{"{+keys*}", "semi=;,dot=.,comma=,"},
	// 3.2.4 Fragment Expansion
	{"{#var}", "#value"},
	{"{#hello}", "#Hello%20World!"},
	{"{#half}", "#50%25"},
	{"foo{#empty}", "foo#"},
	{"foo{#undef}", "foo"},
	{"{#x,hello,y}", "#1024,Hello%20World!,768"},
	{"{#path,x}/here", "#/foo/bar,1024/here"},
	{"{#path:6}/here", "#/foo/b/here"},
	{"{#list}", "#red,green,blue"},
	{"{#list*}", "#red,green,blue"},
	{"{#keys}", "#semi,;,dot,.,comma,,"},
	{"{#keys*}", "#semi=;,dot=.,comma=,"},
	// 3.2.5 Label Expansion with Dot-Prefix
	{"{.who}", ".fred"},
	{"{.who,who}", ".fred.fred"},
	{"{.half,who}", ".50%25.fred"},
	{"www{.dom*}", "www.example.com"},
	{"X{.var}", "X.value"},
	{"X{.empty}", "X."},
	{"X{.undef}", "X"},
	{"X{.var:3}", "X.val"},
	{"X{.list}", "X.red,green,blue"},
	{"X{.list*}", "X.red.green.blue"},
	{"X{.keys}", "X.semi,%3B,dot,.,comma,%2C"},
	{"X{.keys*}", "X.semi=%3B.dot=..comma=%2C"},
	{"X{.empty_keys}", "X"},
	{"X{.empty_keys*}", "X"},
	// 3.2.6 Path Segment Expansion
	{"{/who}", "/fred"},
	{"{/who,who}", "/fred/fred"},
	{"{/half,who}", "/50%25/fred"},
	{"{/who,dub}", "/fred/me%2Ftoo"},
	{"{/var}", "/value"},
	{"{/var,empty}", "/value/"},
	{"{/var,undef}", "/value"},
	{"{/var,x}/here", "/value/1024/here"},
	{"{/var:1,var}", "/v/value"},
	{"{/list}", "/red,green,blue"},
	{"{/list*}", "/red/green/blue"},
	{"{/list*,path:4}", "/red/green/blue/%2Ffoo"},
	{"{/keys}", "/semi,%3B,dot,.,comma,%2C"},
	{"{/keys*}", "/semi=%3B/dot=./comma=%2C"},
	// 3.2.7 Path-Style Parameter Expansion
	{"{;who}", ";who=fred"},
	{"{;half}", ";half=50%25"},
	{"{;empty}", ";empty"},
	{"{;v,empty,who}", ";v=6;empty;who=fred"},
	{"{;v,bar,who}", ";v=6;who=fred"},
	{"{;x,y}", ";x=1024;y=768"},
	{"{;x,y,empty}", ";x=1024;y=768;empty"},
	{"{;x,y,undef}", ";x=1024;y=768"},
	{"{;hello:5}", ";hello=Hello"},
	{"{;list}", ";list=red,green,blue"},
	{"{;list*}", ";list=red;list=green;list=blue"},
	{"{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"},
	{"{;keys*}", ";semi=%3B;dot=.;comma=%2C"},
	// 3.2.8 Form-Style Query Expansion
	{"{?who}", "?who=fred"},
	{"{?half}", "?half=50%25"},
	{"{?x,y}", "?x=1024&y=768"},
	{"{?x,y,empty}", "?x=1024&y=768&empty="},
	{"{?x,y,undef}", "?x=1024&y=768"},
	{"{?var:3}", "?var=val"},
	{"{?list}", "?list=red,green,blue"},
	{"{?list*}", "?list=red&list=green&list=blue"},
	{"{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"},
	{"{?keys*}", "?semi=%3B&dot=.&comma=%2C"},
	// 3.2.9 Form-Style Query Continuation
	{"{&who}", "&who=fred"},
	{"{&half}", "&half=50%25"},
	{"?fixed=yes{&x}", "?fixed=yes&x=1024"},
	{"{&x,y,empty}", "&x=1024&y=768&empty="},
	{"{&var:3}", "&var=val"},
	{"{&list}", "&list=red,green,blue"},
	{"{&list*}", "&list=red&list=green&list=blue"},
	{"{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"},
	{"{&keys*}", "&semi=%3B&dot=.&comma=%2C"},
}

func runExpandCases(t *testing.T, cases []expandCase) {
	t.Helper()
	for _, c := range cases {
		tmpl, err := Parse(c.tmpl)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.tmpl, err)
			continue
		}
		got, err := tmpl.expand(rfcVars)
		if err != nil {
			t.Errorf("%q.Expand: %v", c.tmpl, err)
			continue
		}
		if got != c.want {
			t.Errorf("%q.Expand = %q, want %q", c.tmpl, got, c.want)
		}
	}
}

func TestExpandRFC6570Section1_2(t *testing.T) { runExpandCases(t, rfcSection12) }
func TestExpandRFC6570Section3_2(t *testing.T) { runExpandCases(t, rfcSection32) }

func TestExpandValueTypes(t *testing.T) {
	cases := []struct {
		tmpl string
		vars map[string]any
		want string
	}{
		{"{?keys}", map[string]any{"keys": map[string]string{"b": "2", "a": "1", "c": "3"}}, "?keys=a,1,b,2,c,3"},
		{"{?keys*}", map[string]any{"keys": map[string]string{"b": "2", "a": "1"}}, "?a=1&b=2"},
		{"{;keys*}", map[string]any{"keys": [][2]string{{"a", ""}, {"b", "x"}}}, ";a;b=x"},
		{"{?list*}", map[string]any{"list": []string{"a", ""}}, "?list=a&list="},
		{"{;list*}", map[string]any{"list": []string{"a", ""}}, ";list=a;list"},
		{"{id}/{n}/{f}/{ok}", map[string]any{"id": 42, "n": int64(-7), "f": 1.5, "ok": true}, "42/-7/1.5/true"},
		{"{a}{b}{c}", map[string]any{"a": []string{}, "b": map[string]string{}, "c": nil}, ""},
		{"x{/missing}{?also}", nil, "x"},
		{"{x}", map[string]any{"x": "é/ü"}, "%C3%A9%2F%C3%BC"},
		{"{+x}", map[string]any{"x": "a%2Fb%zz"}, "a%2Fb%25zz"},
		{"{x:2}", map[string]any{"x": "héllo"}, "h%C3%A9"},
		{"a b|c{x}", map[string]any{"x": "1"}, "a%20b%7Cc1"},
		{"file:///{+path}", map[string]any{"path": "docs/read me.md"}, "file:///docs/read%20me.md"},
		{"db://tables/{table}{?limit,offset}", map[string]any{"table": "users", "limit": 10}, "db://tables/users?limit=10"},
		{"repo://{owner}/{repo}/issues/{id}", map[string]any{"owner": "mcprt", "repo": "mcp rt", "id": "7"}, "repo://mcprt/mcp%20rt/issues/7"},
	}
	for _, c := range cases {
		got, err := mustParse(c.tmpl).expand(c.vars)
		if err != nil {
			t.Errorf("%q.Expand(%v): %v", c.tmpl, c.vars, err)
			continue
		}
		if got != c.want {
			t.Errorf("%q.Expand(%v) = %q, want %q", c.tmpl, c.vars, got, c.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	cases := []struct {
		tmpl string
		vars map[string]any
	}{
		{"{x}", map[string]any{"x": struct{}{}}},
		{"{x}", map[string]any{"x": []int{1}}},
		{"{list:3}", map[string]any{"list": []string{"a"}}},
		{"{keys:3}", map[string]any{"keys": map[string]string{"a": "b"}}},
	}
	for _, c := range cases {
		if got, err := mustParse(c.tmpl).expand(c.vars); err == nil {
			t.Errorf("%q.Expand(%v) = %q, want error", c.tmpl, c.vars, got)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ tmpl, msg string }{
		{"{var", "unclosed"},
		{"file:///{path", "unclosed"},
		{"{", "unclosed"},
		{"foo}", "unmatched"},
		{"{a}}", "unmatched"},
		{"{a{b}}", "'{' inside"},
		{"{}", "empty expression"},
		{"{=var}", "reserved operator"},
		{"{,var}", "reserved operator"},
		{"{!var}", "reserved operator"},
		{"{@var}", "reserved operator"},
		{"{|var}", "reserved operator"},
		{"{$var}", "invalid character"},
		{"{-var}", "invalid character"},
		{"{var:}", "invalid prefix"},
		{"{var:0}", "invalid prefix"},
		{"{var:012}", "invalid prefix"},
		{"{var:10000}", "invalid prefix"},
		{"{var:x}", "invalid prefix"},
		{"{var:-1}", "invalid prefix"},
		{"{var:3*}", "invalid character"},
		{"{var*:3}", "invalid character"},
		{"{+}", "empty variable name"},
		{"{?}", "empty variable name"},
		{"{a,}", "empty variable name"},
		{"{,}", "reserved operator"},
		{"{a,,b}", "empty variable name"},
		{"{*}", "empty variable name"},
		{"{:3}", "empty variable name"},
		{"{.}", "empty variable name"},
		{"{a b}", "invalid character"},
		{"{a.}", "misplaced '.'"},
		{"{.a..b}", "misplaced '.'"},
		{"{a%2}", "percent-encoding"},
		{"{a%zz}", "percent-encoding"},
	}
	for _, c := range cases {
		tmpl, err := Parse(c.tmpl)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want error", c.tmpl, tmpl.parts)
			continue
		}
		var perr *parseError
		if !errors.As(err, &perr) {
			t.Errorf("Parse(%q) error %v is %T, want *Error", c.tmpl, err, err)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("Parse(%q) error %q does not mention %q", c.tmpl, err, c.msg)
		}
		if perr.Template != c.tmpl || perr.Offset < 0 || perr.Offset > len(c.tmpl) {
			t.Errorf("Parse(%q) error fields %+v", c.tmpl, perr)
		}
	}
}

func TestParseValid(t *testing.T) {
	for _, s := range []string{
		"", "plain", "http://example.com/~x?a=b#c",
		"{a.b}", "{a_b.c1}", "{%41b}", "{var:9999}", "{var:1}",
		"{+a,b*,c:5}", "{#a}", "{.a}", "{/a*}", "{;a}", "{?a,b}", "{&a}",
		"file:///{path}", "file:///{+path}", "repo://{owner}/{repo}/issues/{id}",
		"db://tables/{table}{?limit,offset}", "users://{id}/profile",
	} {
		tmpl, err := Parse(s)
		if err != nil {
			t.Errorf("Parse(%q): %v", s, err)
			continue
		}
		if tmpl.String() != s {
			t.Errorf("Parse(%q).String() = %q", s, tmpl.String())
		}
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParse(\"{bad\") did not panic")
		}
	}()
	mustParse("{bad")
}

func TestVars(t *testing.T) {
	cases := []struct {
		tmpl string
		want []string
	}{
		{"static", nil},
		{"repo://{owner}/{repo}/issues/{id}", []string{"owner", "repo", "id"}},
		{"db://tables/{table}{?limit,offset}", []string{"table", "limit", "offset"}},
		{"{/list*,path:4}{.who,who}{?x,list}", []string{"list", "path", "who", "x"}},
		{"{+a}{#b}{;c}{&d}{e:3}", []string{"a", "b", "c", "d", "e"}},
	}
	for _, c := range cases {
		tmpl := mustParse(c.tmpl)
		got := tmpl.Vars()
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q.Vars() = %q, want %q", c.tmpl, got, c.want)
		}
		if len(got) > 0 {
			got[0] = "mutated"
			if tmpl.Vars()[0] == "mutated" {
				t.Errorf("%q.Vars() returned internal slice", c.tmpl)
			}
		}
	}
}
