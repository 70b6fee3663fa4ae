package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/jsonschema"
)

func TestParseConfigToolOverrides(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"mcpServers": {"ref": {"command": "r", "tools": {
		"echo": {"name": "say", "title": "Say", "description": "Says it.", "fixed": {"text": "hi", "n": {"a": [1]}}},
		"add": {"fixed": {}}
	}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.Backends[0].Tools["echo"]
	if o == nil || o.Name != "say" || o.Title != "Say" || o.Description != "Says it." ||
		string(o.Fixed["text"]) != `"hi"` || string(o.Fixed["n"]) != `{"a": [1]}` {
		t.Errorf("echo's override: %+v", o)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %v", cfg.Warnings)
	}
	for _, tc := range []struct{ tools, want string }{
		{`[]`, `key "tools": want an object`},
		{`{"echo": 1}`, `key "tools[\"echo\"]": want {"name"`},
		{`{"echo": {}}`, `key "tools[\"echo\"]": overrides nothing`},
		{`{"echo": {"nmae": "x"}}`, `key "tools[\"echo\"].nmae": unknown key`},
		{`{"echo": {"name": "a b"}}`, `key "tools[\"echo\"].name": "a b": use 1 to 64`},
		{`{"echo": {"name": ""}}`, `key "tools[\"echo\"].name": "": use 1 to 64`},
		{`{"echo": {"title": 2}}`, `key "tools[\"echo\"].title": want a string`},
		{`{"echo": {"fixed": ["text"]}}`, `key "tools[\"echo\"].fixed": want an object`},
		{`{"a": {"name": "x"}, "b": {"name": "x"}}`, `key "tools[\"b\"].name": "x" is also the new name of tool "a"`},
	} {
		file := `{"mcpServers": {"ref": {"command": "r", "tools": ` + tc.tools + `}}}`
		_, err := ParseConfig([]byte(file), nil)
		var ce *ConfigError
		if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), `backend "ref": `+tc.want) {
			t.Errorf("%s: error %v, want one with %q", tc.tools, err, tc.want)
		}
	}
}

// Fixed arguments leave the schema's properties and required, and what
// is left is still a JSON Schema that validates the calls a client may
// make.
func TestOverrideSchemaStaysValid(t *testing.T) {
	fixed := map[string]json.RawMessage{"repo": json.RawMessage(`"acme/app"`), "only": json.RawMessage(`1`)}
	for _, tc := range []struct{ in, want string }{
		{`{"type":"object","properties":{"repo":{"type":"string"},"q":{"type":"string"}},"required":["repo","q"],"additionalProperties":false}`,
			`{"additionalProperties":false,"properties":{"q":{"type":"string"}},"required":["q"],"type":"object"}`},
		{`{"type":"object","properties":{"only":{"type":"integer"}},"required":["only"]}`,
			`{"properties":{},"type":"object"}`},
		{`{"type":"object"}`, `{"type":"object"}`},
		{``, ``},
	} {
		got, err := withoutArgs(json.RawMessage(tc.in), fixed)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s %v, want %s", tc.in, got, err, tc.want)
			continue
		}
		if tc.want == "" {
			continue
		}
		s, err := jsonschema.Compile(got)
		if err != nil {
			t.Errorf("%s: the schema left does not compile: %v", got, err)
			continue
		}
		if err := s.Validate(json.RawMessage(`{"q":"x"}`)); err != nil && strings.Contains(tc.in, `"q"`) {
			t.Errorf("%s: a call without the fixed arguments is refused: %v", got, err)
		}
	}
	for _, bad := range []string{`[]`, `{"properties":[]}`, `{"required":{"a":1}}`} {
		if _, err := withoutArgs(json.RawMessage(bad), fixed); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// An override is what the client sees: the new name (with the prefix),
// title, description and schema; search finds it by them; the backend
// gets the fixed arguments on every call, by Start or by the handler;
// a call that sets one is refused, naming it.
func TestGatewayToolOverrides(t *testing.T) {
	ref := serve("ref")
	ref.AllowTools = []string{"echo", "add"}
	ref.Tools = map[string]*ToolOverride{
		"echo": {Name: "shout", Title: "Shout", Description: "Shouts the fixed greeting into the void.", Fixed: map[string]json.RawMessage{"text": json.RawMessage(`"fixed hello"`)}},
		"add":  {Fixed: map[string]json.RawMessage{"b": json.RawMessage(`10`)}},
	}
	g := start(t, ref)
	var list struct{ Tools []handlers.Tool }
	if err := json.Unmarshal([]byte(g.must("tools/list", `{}`)), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		switch tl.Name {
		case "ref__shout":
			if tl.Title != "Shout" || !strings.HasPrefix(tl.Description, "Shouts") || compactJSON(tl.InputSchema) != `{"properties":{},"type":"object"}` {
				t.Errorf("ref__shout: %+v %s", tl, tl.InputSchema)
			}
		case "ref__add":
			if strings.Contains(string(tl.InputSchema), `"b"`) {
				t.Errorf("ref__add's schema still offers b: %s", tl.InputSchema)
			}
		}
	}
	if !slices.Equal(names, []string{"ref__shout", "ref__add"}) {
		t.Fatalf("tools/list: %v", names)
	}

	if out := g.must("tools/call", `{"name":"ref__shout","arguments":{}}`); !strings.Contains(out, "fixed hello") {
		t.Errorf("ref__shout: %s", out)
	}
	if out := g.must("tools/call", `{"name":"ref__add","arguments":{"a":2}}`); !strings.Contains(out, `"sum":12`) {
		t.Errorf("ref__add a=2: %s", out)
	}
	// By Start, as the session offers a call first.
	m, _ := g.Server().Method("tools/call")
	d := &caught{done: make(chan struct{})}
	if !m.Start(context.Background(), req("tools/call", `{"name":"ref__add","arguments":{"a":1}}`, nil), d) {
		t.Fatal("Start did not take ref__add")
	}
	<-d.done
	if got, _ := json.Marshal(d.res); d.err != nil || !strings.Contains(string(got), `"sum":11`) {
		t.Errorf("ref__add by Start: %s %v", got, d.err)
	}
	// Setting a fixed argument: refused, by Start's fallback and the handler alike.
	_, err := g.run(nil, req("tools/call", `{"name":"ref__add","arguments":{"a":1,"b":2}}`, nil))
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, `argument "b"`) || !strings.Contains(je.Message, "ref__add") {
		t.Errorf("ref__add setting b: %v, want -32602 naming b", err)
	}
	d = &caught{done: make(chan struct{})}
	if m.Start(context.Background(), req("tools/call", `{"name":"ref__add","arguments":{"a":1,"b":2}}`, nil), d) {
		<-d.done
		if !errors.As(d.err, &je) || je.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("ref__add setting b, by Start: %v", d.err)
		}
	}
	// The backend's own names are unknown.
	if _, err := g.run(nil, req("tools/call", `{"name":"ref__echo","arguments":{"text":"x"}}`, nil)); err == nil || !strings.Contains(err.Error(), "Unknown tool") {
		t.Errorf("ref__echo: %v, want Unknown tool", err)
	}

	g.configureSearch(&Config{ToolSearch: true})
	if got := g.found(nil, "shout greeting void"); len(got) == 0 || got[0] != "ref__shout" {
		t.Errorf("search for the new description: %v", got)
	}
}

// caught is a Start's reply, caught.
type caught struct {
	res  any
	err  error
	done chan struct{}
}

func (d *caught) Reply(res any, err error) { d.res, d.err = res, err; close(d.done) }
func (d *caught) Fallback()                { d.err = errors.New("fell back"); close(d.done) }

// A reload that changes an override puts the new one in place: the
// backend is restarted with its entry, and the old name goes.
func TestGatewayToolOverrideReload(t *testing.T) {
	ref := serve("ref")
	ref.AllowTools = []string{"echo"}
	ref.Tools = map[string]*ToolOverride{"echo": {Name: "first"}}
	g := start(t, ref)
	if got := g.names("tools/list", "tools", "name"); !slices.Equal(got, []string{"ref__first"}) {
		t.Fatalf("tools/list: %v", got)
	}
	next := ref
	next.Tools = map[string]*ToolOverride{"echo": {Name: "second", Fixed: map[string]json.RawMessage{"text": json.RawMessage(`"two"`)}}}
	ch, err := g.Reload(t.Context(), &Config{Backends: []Backend{next}})
	if err != nil || !slices.Equal(ch.Restarted, []string{"ref"}) {
		t.Fatalf("reload: %+v %v", ch, err)
	}
	waitFor(t, "ref__second", func() bool { return slices.Equal(g.names("tools/list", "tools", "name"), []string{"ref__second"}) })
	if out := g.must("tools/call", `{"name":"ref__second","arguments":{}}`); !strings.Contains(out, "two") {
		t.Errorf("ref__second: %s", out)
	}
}
