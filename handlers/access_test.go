package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// accessServer offers one item of each kind open to all, and one of each
// kind that needs the scope "admin" and the claim groups=ops.
func accessServer() *Server {
	ops := &Access{Scopes: []string{"admin"}, Claims: map[string][]string{"groups": {"ops"}}}
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddTool(Tool{Tool: mcp.Tool{Name: "open"}}, textTool("open"))
	s.AddTool(Tool{Tool: mcp.Tool{Name: "drop"}, Access: ops}, textTool("dropped"))
	prompt := func(context.Context, *Request, map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}
	s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: "hello"}}, prompt)
	s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: "runbook", Arguments: []mcp.PromptArgument{{Name: "a"}}}, Complete: map[string]CompletionHandler{"a": CompleteFrom("x")}, Access: ops}, prompt)
	read := func(_ context.Context, _ *Request, uri string, _ map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{URI: uri, Text: "x"}}, nil
	}
	s.AddResource(Resource{Resource: mcp.Resource{URI: "file:///readme", Name: "readme"}}, read)
	s.AddResource(Resource{Resource: mcp.Resource{URI: "file:///secrets", Name: "secrets"}, Access: ops}, read)
	s.AddResourceTemplate(ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "logs:///{day}", Name: "logs"}, Access: ops}, read)
	return s
}

func asCaller(req *Request, c *Caller) *Request { req.Caller = c; return req }

var (
	opsAdmin = &Caller{Subject: "ada", Scopes: []string{"read", "admin"}, Claims: map[string]any{"groups": []any{"dev", "ops"}}}
	opsRead  = &Caller{Subject: "bo", Scopes: []string{"read"}, Claims: map[string]any{"groups": []any{"ops"}}}
	devAdmin = &Caller{Subject: "cy", Scopes: []string{"read", "admin"}, Claims: map[string]any{"groups": "dev"}}
)

// Each caller's lists hold what its token allows, in every era: the
// items that need admin and the ops group are listed to ada alone, and
// to no request without a caller.
func TestAccessFiltersLists(t *testing.T) {
	s := accessServer()
	for _, v := range eras {
		for _, tc := range []struct {
			caller *Caller
			tools  string
		}{
			{nil, `open`}, {opsAdmin, `open drop`}, {opsRead, `open`}, {devAdmin, `open`},
		} {
			got := func(method, field, key string) string {
				a := runReq(t, s, asCaller(newRequest(method, v, `{}`), tc.caller))
				var res map[string][]map[string]any
				if err := json.Unmarshal([]byte(a.result), &res); err != nil {
					t.Fatalf("%s: %v", a, err)
				}
				var names []string
				for _, item := range res[field] {
					names = append(names, item[key].(string))
				}
				return strings.Join(names, " ")
			}
			full := tc.caller == opsAdmin
			want := map[bool][4]string{
				false: {tc.tools, "hello", "file:///readme", ""},
				true:  {tc.tools, "hello runbook", "file:///readme file:///secrets", "logs:///{day}"},
			}[full]
			gotAll := [4]string{
				got("tools/list", "tools", "name"),
				got("prompts/list", "prompts", "name"),
				got("resources/list", "resources", "uri"),
				got("resources/templates/list", "resourceTemplates", "uriTemplate"),
			}
			if gotAll != want {
				t.Errorf("%s, caller %v: lists %q, want %q", v, tc.caller.Principal(), gotAll, want)
			}
		}
	}
}

// A call of an item the caller may not use is refused: with the
// insufficient-scope error (naming the scopes to ask for) when only a
// scope is missing, and otherwise exactly as an item that does not exist.
func TestAccessRefusesUse(t *testing.T) {
	s := accessServer()
	for _, v := range eras {
		call := func(c *Caller, method, params string) answer {
			return runReq(t, s, asCaller(newRequest(method, v, params), c))
		}
		wantResult(t, call(opsAdmin, "tools/call", `{"name":"drop"}`), `{"content":[{"type":"text","text":"dropped"}]}`)
		scopeData := `{"error":"insufficient_scope","scope":"read admin"}`
		wantError(t, call(opsRead, "tools/call", `{"name":"drop"}`), jsonrpc.CodeInsufficientScope, `Insufficient scope: tool "drop" needs scope "admin"`, scopeData)
		wantError(t, call(opsRead, "prompts/get", `{"name":"runbook","arguments":{"a":"x"}}`), jsonrpc.CodeInsufficientScope, `Insufficient scope: prompt "runbook" needs scope "admin"`, scopeData)
		wantError(t, call(opsRead, "resources/read", `{"uri":"logs:///monday"}`), jsonrpc.CodeInsufficientScope, `Insufficient scope: resource "logs:///monday" needs scope "admin"`, scopeData)
		// Not of the group, or no caller at all: as unknown as a name
		// nobody registered.
		for _, c := range []*Caller{devAdmin, nil} {
			unknown := call(c, "tools/call", `{"name":"nothing"}`)
			if got := call(c, "tools/call", `{"name":"drop"}`); got.String() != strings.ReplaceAll(unknown.String(), "nothing", "drop") {
				t.Errorf("%s: %s calling drop: %s, want what an unknown tool gets: %s", v, c.Principal(), got, unknown)
			}
			unknown = call(c, "prompts/get", `{"name":"nothing","arguments":{"a":"x"}}`)
			if got := call(c, "prompts/get", `{"name":"runbook","arguments":{"a":"x"}}`); got.String() != strings.ReplaceAll(unknown.String(), "nothing", "runbook") {
				t.Errorf("%s: %s getting runbook: %s, want %s", v, c.Principal(), got, unknown)
			}
			unknown = call(c, "resources/read", `{"uri":"file:///nothing"}`)
			if got := call(c, "resources/read", `{"uri":"file:///secrets"}`); got.String() != strings.ReplaceAll(unknown.String(), "nothing", "secrets") {
				t.Errorf("%s: %s reading secrets: %s, want %s", v, c.Principal(), got, unknown)
			}
			unknown = call(c, "completion/complete", `{"ref":{"type":"ref/prompt","name":"nothing"},"argument":{"name":"a","value":""}}`)
			if got := call(c, "completion/complete", `{"ref":{"type":"ref/prompt","name":"runbook"},"argument":{"name":"a","value":""}}`); got.String() != strings.ReplaceAll(unknown.String(), "nothing", "runbook") {
				t.Errorf("%s: %s completing runbook: %s, want %s", v, c.Principal(), got, unknown)
			}
			// Issue 31 item 9: a hidden static resource completed as a
			// ref/resource answered an empty completion, where an unknown
			// URI gets "unknown": its existence leaked.
			unknown = call(c, "completion/complete", `{"ref":{"type":"ref/resource","uri":"file:///nothing"},"argument":{"name":"a","value":""}}`)
			if got := call(c, "completion/complete", `{"ref":{"type":"ref/resource","uri":"file:///secrets"},"argument":{"name":"a","value":""}}`); got.String() != strings.ReplaceAll(unknown.String(), "nothing", "secrets") {
				t.Errorf("%s: %s completing file:///secrets: %s, want %s", v, c.Principal(), got, unknown)
			}
		}
	}
}

// A page is filled with what the caller may see, and the cursor goes on
// past the items left out.
func TestAccessPages(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.SetPageSize(2)
	admin := &Access{Scopes: []string{"admin"}}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		var a *Access
		if n == "b" || n == "c" {
			a = admin
		}
		s.AddTool(Tool{Tool: mcp.Tool{Name: n}, Access: a}, textTool(n))
	}
	var names []string
	params := `{}`
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("the pages do not end")
		}
		a := runReq(t, s, asCaller(newRequest("tools/list", "2025-11-25", params), &Caller{Subject: "x"}))
		var res struct {
			Tools      []Tool `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal([]byte(a.result), &res); err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if res.NextCursor == "" {
			break
		}
		params = `{"cursor":"` + res.NextCursor + `"}`
	}
	if got := strings.Join(names, " "); got != "a d e" {
		t.Fatalf("listed %q, want a d e", got)
	}
}

func TestAccessJoin(t *testing.T) {
	a := &Access{Scopes: []string{"x"}, Claims: map[string][]string{"g": {"1", "2"}}}
	b := &Access{Scopes: []string{"x", "y"}, Claims: map[string][]string{"g": {"2", "3"}, "h": {"4"}}}
	j := a.Join(b)
	raw, _ := json.Marshal(j)
	if string(raw) != `{"scopes":["x","y"],"claims":{"g":["2"],"h":["4"]}}` {
		t.Fatalf("joined %s", raw)
	}
	if (*Access)(nil).Join(b) != b || a.Join(nil) != a {
		t.Fatal("joining nil is not the other")
	}
	none := (&Access{Claims: map[string][]string{"g": {"1"}}}).Join(&Access{Claims: map[string][]string{"g": {"2"}}})
	if none.Allows(&Caller{Claims: map[string]any{"g": []any{"1", "2"}}}) {
		t.Fatal("a claim no value of both satisfies let a caller in")
	}
}

func TestCallerHasClaim(t *testing.T) {
	c := &Caller{Claims: map[string]any{"s": "v", "a": []any{"x", 1.0}, "b": true, "n": 42.0}}
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"s", "v", true}, {"s", "w", false}, {"a", "x", true}, {"a", "1", false},
		{"b", "true", true}, {"n", "42", true}, {"missing", "", false},
	} {
		if got := c.HasClaim(tc.name, tc.value); got != tc.want {
			t.Errorf("HasClaim(%q, %q) = %v", tc.name, tc.value, got)
		}
	}
	if (*Caller)(nil).HasClaim("s", "v") || (*Caller)(nil).HasScope("x") || (*Caller)(nil).Principal() != "" {
		t.Error("a nil caller has something")
	}
}
