//go:build linux

package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/session/client"
)

// overrideServers is one reference server whose echo is renamed, reworded
// and has its text fixed, and whose add has b fixed.
func (f *gwFixture) overrideServers() map[string]any {
	return map[string]any{"ref": f.serve("ref", map[string]any{
		"allowTools": []string{"echo", "add"},
		"tools": map[string]any{
			"echo": map[string]any{"name": "greet", "title": "Greet", "description": "Says the team's greeting.", "fixed": map[string]any{"text": "hello from the config"}},
			"add":  map[string]any{"fixed": map[string]any{"b": 10}},
		},
	})}
}

// TestGatewayToolOverrides: mcprt gateway over stdio, in both eras: the
// client lists the override (new name, title, description, the schema
// without the fixed arguments), the backend gets the fixed arguments on
// each call, and a call that sets one is refused with -32602 naming it.
func TestGatewayToolOverrides(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	c := f.start(f.config(f.overrideServers()), Options{})
	c.Initialize("2025-11-25")
	tools := listAll(t, c, "tools/list", "tools")
	if got := namesOf(tools, "name"); !slices.Equal(got, []string{"ref__greet", "ref__add"}) {
		t.Fatalf("tools/list: %v", got)
	}
	for _, tl := range tools {
		schema, _ := json.Marshal(tl["inputSchema"])
		switch tl["name"] {
		case "ref__greet":
			if tl["title"] != "Greet" || tl["description"] != "Says the team's greeting." || strings.Contains(string(schema), "text") {
				t.Errorf("ref__greet: %v", tl)
			}
		case "ref__add":
			if strings.Contains(string(schema), `"b"`) || !strings.Contains(string(schema), `"a"`) {
				t.Errorf("ref__add's schema: %s", schema)
			}
		}
	}
	for _, m := range []map[string]any{nil, meta()} {
		call := func(name string, args map[string]any) map[string]any {
			p := toolsCall(name, args)
			if m != nil {
				p = withMeta(p, m)
			}
			return p
		}
		if r := wantResult(t, c.Call("tools/call", call("ref__greet", map[string]any{}))); !strings.Contains(string(r["content"]), "hello from the config") {
			t.Errorf("ref__greet (modern %v): %s", m != nil, r["content"])
		}
		if r := wantResult(t, c.Call("tools/call", call("ref__add", map[string]any{"a": 2}))); !strings.Contains(string(r["structuredContent"]), `"sum":12`) {
			t.Errorf("ref__add a=2 (modern %v): %s", m != nil, r["structuredContent"])
		}
		e := wantError(t, c.Call("tools/call", call("ref__add", map[string]any{"a": 2, "b": 3})), -32602)
		if !strings.Contains(e.Message, `argument "b"`) {
			t.Errorf("ref__add setting b (modern %v): %s", m != nil, e.Message)
		}
		wantError(t, c.Call("tools/call", call("ref__echo", map[string]any{"text": "x"})), -32602)
	}
}

// TestGatewayToolOverridesHTTP: the same over Streamable HTTP, through
// mcprt's client in both eras.
func TestGatewayToolOverridesHTTP(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	gw := f.startGatewayHTTP(f.config(f.overrideServers()))
	for _, era := range []client.Era{client.EraModern, client.EraLegacy} {
		c := connectHTTP(t, gw.url, client.Options{Era: era})
		tools, err := c.ListTools(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Name)
			if tl.Name == "ref__greet" && (tl.Title != "Greet" || strings.Contains(string(tl.InputSchema), "text")) {
				t.Errorf("%v: ref__greet: %+v", era, tl)
			}
		}
		if !slices.Equal(names, []string{"ref__greet", "ref__add"}) {
			t.Fatalf("%v: tools/list %v", era, names)
		}
		if got := callText(t, c, "ref__greet", map[string]any{}); got != "hello from the config" {
			t.Errorf("%v: ref__greet: %q", era, got)
		}
		if _, err := c.CallTool(testCtx(t), "ref__greet", map[string]any{"text": "mine"}); err == nil || !strings.Contains(err.Error(), `argument "text"`) {
			t.Errorf("%v: ref__greet setting text: %v, want -32602 naming it", era, err)
		}
	}
}
