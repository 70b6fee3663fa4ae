package gateway

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
)

func TestParseConfigAccess(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"mcpServers": {
		"notes": {"command": "n", "access": {"scopes": ["notes:read", "notes:read"], "claims": {"groups": "staff", "tier": ["gold", "silver"]}},
		          "toolAccess": {"delete_*": {"scopes": ["notes:admin"]}, "delete_all": {"claims": {"groups": ["ops"]}}}},
		"open": {"command": "o"}
	}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	n, o := cfg.Backends[0], cfg.Backends[1]
	wantAccess := &handlers.Access{Scopes: []string{"notes:read"}, Claims: map[string][]string{"groups": {"staff"}, "tier": {"gold", "silver"}}}
	if got, _ := json.Marshal(n.Access); string(got) != mustJSON(wantAccess) {
		t.Errorf("access %s, want %s", got, mustJSON(wantAccess))
	}
	for tool, want := range map[string]string{
		"read":       `{"scopes":["notes:read"],"claims":{"groups":["staff"],"tier":["gold","silver"]}}`,
		"delete_one": `{"scopes":["notes:read","notes:admin"],"claims":{"groups":["staff"],"tier":["gold","silver"]}}`,
		// Both keys match: the one group both accept is none.
		"delete_all": `{"scopes":["notes:read","notes:admin"],"claims":{"groups":[],"tier":["gold","silver"]}}`,
	} {
		if got := mustJSON(n.toolAccess(tool)); got != want {
			t.Errorf("toolAccess(%q) = %s, want %s", tool, got, want)
		}
	}
	if o.Access != nil || o.toolAccess("x") != nil {
		t.Errorf("a backend without access keys: %+v", o)
	}

	for _, tc := range []struct{ file, want string }{
		{`{"access": ["a"]}`, `key "access": want {"scopes"`},
		{`{"access": {"scope": ["a"]}}`, `key "access": want {"scopes"`},
		{`{"access": {}}`, `key "access": names no scope and no claim`},
		{`{"access": {"scopes": ["a b"]}}`, `key "access": scope "a b" is not a scope token`},
		{`{"access": {"claims": {"g": []}}}`, `key "access": claim "g": want a string or a non-empty array of strings`},
		{`{"access": {"claims": {"g": 1}}}`, `claim "g"`},
		{`{"toolAccess": {"[": {"scopes": ["a"]}}}`, `key "toolAccess[\"[\"]": "[" is not a valid pattern`},
		{`{"toolAccess": {"x": {"scopes": 1}}}`, `key "toolAccess[\"x\"]": want {"scopes"`},
		{`{"toolAccess": []}`, `key "toolAccess": want an object`},
	} {
		file := `{"mcpServers": {"a": ` + tc.file[:len(tc.file)-1] + `, "command": "x"}}}`
		_, err := ParseConfig([]byte(file), nil)
		var ce *ConfigError
		if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one with %q", tc.file, err, tc.want)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Behind one gateway, each caller sees the tools, prompts and resources
// its token allows, backend by backend and tool by tool, and a call of a
// tool it may not use is refused: for a missing scope with the
// insufficient-scope error, otherwise as an unknown tool.
func TestGatewayAccessPerCaller(t *testing.T) {
	open := serve("open")
	open.AllowTools = []string{"echo"}
	notes := serve("notes")
	notes.AllowTools = []string{"echo", "add"}
	notes.Access = &handlers.Access{Scopes: []string{"notes:read"}}
	notes.ToolAccess = map[string]*handlers.Access{"add": {Scopes: []string{"notes:write"}}}
	g := start(t, open, notes)

	reader := &handlers.Caller{Subject: "r", Scopes: []string{"notes:read"}}
	writer := &handlers.Caller{Subject: "w", Scopes: []string{"notes:read", "notes:write"}}
	as := func(c *handlers.Caller, method, params string) (string, error) {
		r := req(method, params, nil)
		r.Caller = c
		return g.run(nil, r)
	}
	names := func(c *handlers.Caller, method, field, key string) string {
		out, err := as(c, method, `{}`)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var res map[string][]map[string]any
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, item := range res[field] {
			got = append(got, item[key].(string))
		}
		return strings.Join(got, " ")
	}
	for _, tc := range []struct {
		caller *handlers.Caller
		tools  string
	}{
		{nil, "open__echo"},
		{&handlers.Caller{Subject: "x"}, "open__echo"},
		{reader, "open__echo notes__echo"},
		{writer, "open__echo notes__echo notes__add"},
	} {
		if got := names(tc.caller, "tools/list", "tools", "name"); got != tc.tools {
			t.Errorf("%q: tools %q, want %q", tc.caller.Principal(), got, tc.tools)
		}
		prompts := strings.Fields(names(tc.caller, "prompts/list", "prompts", "name"))
		if slices.Contains(prompts, "notes__review") != (tc.caller == reader || tc.caller == writer) || !slices.Contains(prompts, "open__review") {
			t.Errorf("%q: prompts %q", tc.caller.Principal(), prompts)
		}
	}
	if out, err := as(writer, "tools/call", `{"name":"notes__add","arguments":{"a":2,"b":3}}`); err != nil || !strings.Contains(out, `"sum":5`) {
		t.Errorf("writer calling notes__add: %s %v", out, err)
	}
	var je *jsonrpc.Error
	if _, err := as(reader, "tools/call", `{"name":"notes__add","arguments":{"a":2,"b":3}}`); !errors.As(err, &je) ||
		je.Code != jsonrpc.CodeInsufficientScope || mustJSON(je.Data) != `{"error":"insufficient_scope","scope":"notes:read notes:write"}` {
		t.Errorf("reader calling notes__add: %v, want the insufficient-scope error", err)
	}
	_, unknownErr := as(nil, "tools/call", `{"name":"notes__nothing"}`)
	if _, err := as(nil, "tools/call", `{"name":"notes__echo","arguments":{"text":"x"}}`); err == nil || unknownErr == nil ||
		err.Error() != strings.ReplaceAll(unknownErr.Error(), "notes__nothing", "notes__echo") {
		t.Errorf("nobody calling notes__echo: %v, want what an unknown tool gets: %v", err, unknownErr)
	}
}

// A backend that never came up is named, with why, only to a caller its
// access would show the backend's tools to; any other caller gets what an
// unknown tool gets, which names nothing.
func TestGatewayDownBackendHiddenByAccess(t *testing.T) {
	gone := Backend{Name: "gone", Command: "/nonexistent/mcprt-no-such-server",
		Access: &handlers.Access{Scopes: []string{"gone:read"}}}
	g := start(t, serve("open"), gone)
	as := func(c *handlers.Caller) (string, error) {
		r := req("tools/call", `{"name":"gone__echo","arguments":{"text":"x"}}`, nil)
		r.Caller = c
		return g.run(nil, r)
	}
	for _, c := range []*handlers.Caller{nil, {Subject: "x", Scopes: []string{"other"}}} {
		out, err := as(c)
		if err == nil || !strings.Contains(err.Error(), `Unknown tool: "gone__echo"`) || strings.Contains(out+err.Error(), "gone\"") {
			t.Errorf("%q: %s %v, want only Unknown tool", c.Principal(), out, err)
		}
	}
	out, err := as(&handlers.Caller{Subject: "r", Scopes: []string{"gone:read"}})
	if err != nil || !strings.Contains(out, "could not start") || !strings.Contains(out, "gone") {
		t.Errorf("a caller who may see it: %s %v, want why the backend is down", out, err)
	}
}
