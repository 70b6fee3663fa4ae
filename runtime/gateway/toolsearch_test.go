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
	"github.com/mcprt/mcprt/handlers/mcp"
)

// found is what search_tools found, by name, for a caller.
func (g *testGateway) found(c *handlers.Caller, query string) []string {
	g.t.Helper()
	r := req("tools/call", `{"name":"search_tools","arguments":{"query":`+mustJSON(query)+`,"limit":50}}`, nil)
	r.Caller = c
	out, err := g.run(nil, r)
	if err != nil {
		g.t.Fatalf("search_tools %q: %v", query, err)
	}
	var res struct {
		Content           []mcp.Content `json:"content"`
		StructuredContent struct {
			Tools []handlers.Tool `json:"tools"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		g.t.Fatal(err)
	}
	var names []string
	for _, t := range res.StructuredContent.Tools {
		if len(t.InputSchema) == 0 {
			g.t.Errorf("%s found without its inputSchema", t.Name)
		}
		if !strings.Contains(res.Content[0].Text, t.Name) {
			g.t.Errorf("%s is not in the text: %s", t.Name, res.Content[0].Text)
		}
		names = append(names, t.Name)
	}
	return names
}

// With tool search, tools/list offers search_tools and call_tool and the
// pinned tools; search finds the rest, call_tool calls them as a direct
// call would, and a direct call still works.
func TestGatewayToolSearch(t *testing.T) {
	ref := serve("ref")
	g := unstarted(t, Options{ToolSearch: true, AlwaysList: []string{"ref__ech?"}}, ref)
	g.start()
	if got := g.names("tools/list", "tools", "name"); !slices.Equal(got, []string{"search_tools", "call_tool", "ref__echo"}) {
		t.Errorf("tools/list: %v", got)
	}
	if got := g.found(nil, "add two numbers"); len(got) == 0 || got[0] != "ref__add" {
		t.Errorf("add two numbers: %v", got)
	}
	if got := g.found(nil, "search tools"); slices.Contains(got, "search_tools") || slices.Contains(got, "call_tool") {
		t.Errorf("the search tools found themselves: %v", got)
	}
	if out := g.must("tools/call", `{"name":"call_tool","arguments":{"name":"ref__add","arguments":{"a":2,"b":3}}}`); !strings.Contains(out, `"sum":5`) {
		t.Errorf("call_tool ref__add: %s", out)
	}
	if out := g.must("tools/call", `{"name":"ref__add","arguments":{"a":2,"b":3}}`); !strings.Contains(out, `"sum":5`) {
		t.Errorf("direct ref__add: %s", out)
	}
	// Its arguments are checked as a direct call's are, and its progress
	// goes to the client's token.
	if out := g.must("tools/call", `{"name":"call_tool","arguments":{"name":"ref__add","arguments":{"a":"x"}}}`); !strings.Contains(out, `"isError":true`) {
		t.Errorf("call_tool with bad arguments: %s", out)
	}
	p := &peer{}
	r := req("tools/call", `{"name":"call_tool","arguments":{"name":"ref__sleep","arguments":{"ms":50}},"_meta":{"progressToken":"tok"}}`, p)
	r.ProgressToken = json.RawMessage(`"tok"`)
	if out, err := g.run(nil, r); err != nil || !strings.Contains(out, "slept") {
		t.Errorf("call_tool ref__sleep: %s %v", out, err)
	}
	if n := p.notifications(); len(n) == 0 || !strings.Contains(n[0], `"tok"`) {
		t.Errorf("progress of call_tool ref__sleep: %v", n)
	}
	var je *jsonrpc.Error
	if _, err := g.run(nil, req("tools/call", `{"name":"call_tool","arguments":{"name":"ref__nothing"}}`, nil)); !errors.As(err, &je) || !strings.Contains(je.Message, `Unknown tool: "ref__nothing"`) {
		t.Errorf("call_tool of an unknown tool: %v", err)
	}
	if _, err := g.run(nil, req("tools/call", `{"name":"call_tool","arguments":{"name":"call_tool","arguments":{}}}`, nil)); err == nil {
		t.Error("call_tool called itself")
	}
}

// search_tools never finds a tool the caller may not use, and call_tool
// does not call it.
func TestGatewayToolSearchAccess(t *testing.T) {
	open := serve("open")
	open.AllowTools = []string{"echo"}
	notes := serve("notes")
	notes.AllowTools = []string{"echo", "add"}
	notes.ToolAccess = map[string]*handlers.Access{"add": {Scopes: []string{"notes:write"}}}
	g := unstarted(t, Options{ToolSearch: true}, open, notes)
	g.start()
	writer := &handlers.Caller{Subject: "w", Scopes: []string{"notes:write"}}
	reader := &handlers.Caller{Subject: "r"}
	if got := g.found(writer, "add numbers"); !slices.Contains(got, "notes__add") {
		t.Errorf("writer: %v", got)
	}
	for _, c := range []*handlers.Caller{nil, reader} {
		if got := g.found(c, "add numbers sum"); slices.Contains(got, "notes__add") {
			t.Errorf("%v found notes__add: %v", c, got)
		}
		if got := g.found(c, "echo"); !slices.Contains(got, "notes__echo") || !slices.Contains(got, "open__echo") {
			t.Errorf("%v: echo %v", c, got)
		}
		r := req("tools/call", `{"name":"call_tool","arguments":{"name":"notes__add","arguments":{"a":1,"b":2}}}`, nil)
		r.Caller = c
		if out, err := g.run(nil, r); err == nil {
			t.Errorf("%v called notes__add through call_tool: %s", c, out)
		}
	}
}

// The index follows the backends' lists: a tool a backend adds later
// (list_changed) is found, and one it removes is no longer.
func TestGatewayToolSearchFollowsChanges(t *testing.T) {
	g := unstarted(t, Options{ToolSearch: true}, dynamic("dyn"))
	g.start()
	if got := g.found(nil, "extra"); len(got) != 0 {
		t.Fatalf("before grow: %v", got)
	}
	g.must("tools/call", `{"name":"call_tool","arguments":{"name":"dyn__grow"}}`)
	waitFor(t, "dyn__extra-1 found", func() bool { return slices.Contains(g.found(nil, "extra"), "dyn__extra-1") })
	if got := g.names("tools/list", "tools", "name"); !slices.Equal(got, []string{"search_tools", "call_tool"}) {
		t.Errorf("tools/list after grow: %v", got)
	}
	g.must("tools/call", `{"name":"dyn__shrink"}`)
	waitFor(t, "dyn__extra-1 gone", func() bool { return len(g.found(nil, "extra")) == 0 })
}

// Reload turns tool search on and off: tools/list follows.
func TestGatewayToolSearchReload(t *testing.T) {
	ref := serve("ref")
	ref.AllowTools = []string{"echo", "add"}
	g := start(t, ref)
	if got := g.names("tools/list", "tools", "name"); !slices.Equal(got, []string{"ref__echo", "ref__add"}) {
		t.Fatalf("tools/list: %v", got)
	}
	reload := func(cfg *Config) {
		t.Helper()
		if _, err := g.Reload(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
	}
	reload(&Config{Backends: []Backend{ref}, ToolSearch: true, AlwaysList: []string{"ref__add"}})
	if got := g.names("tools/list", "tools", "name"); !slices.Equal(got, []string{"ref__add", "search_tools", "call_tool"}) {
		t.Errorf("tools/list with search: %v", got)
	}
	reload(&Config{Backends: []Backend{ref}})
	if got := g.names("tools/list", "tools", "name"); !slices.Equal(got, []string{"ref__echo", "ref__add"}) {
		t.Errorf("tools/list without search: %v", got)
	}
}

func TestParseConfigToolSearch(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"toolSearch": true, "alwaysList": ["fs__read_*"], "mcpServers": {"a": {"command": "x"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.ToolSearch || !slices.Equal(cfg.AlwaysList, []string{"fs__read_*"}) || len(cfg.Warnings) != 0 {
		t.Errorf("%+v", cfg)
	}
	for file, want := range map[string]string{
		`{"toolSearch": "yes", "mcpServers": {"a": {"command": "x"}}}`:  `key "toolSearch": want true or false`,
		`{"alwaysList": "a", "mcpServers": {"a": {"command": "x"}}}`:    `key "alwaysList": want an array`,
		`{"alwaysList": ["[a"], "mcpServers": {"a": {"command": "x"}}}`: `key "alwaysList": "[a"`,
	} {
		if _, err := ParseConfig([]byte(file), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", file, err, want)
		}
	}
}

// runAsSession runs a request as the session does: offered to the
// method's Start first, then, handed back, to Run.
func (g *testGateway) runAsSession(r *handlers.Request) (string, error) {
	g.t.Helper()
	m, _ := g.Server().Method(r.Method)
	if m.Start != nil && m.Start(context.Background(), r, nil) {
		g.t.Fatalf("%s: Start took the call", r.Method)
	}
	return g.run(nil, r)
}

// A call_tool asking for a task is a task of the named tool, in either
// era, as the tool's direct call would be: call_tool's Start makes the
// request that call before the server looks at it.
func TestGatewayToolSearchTask(t *testing.T) {
	g, _ := taskGateway(t)
	g.configureSearch(&Config{ToolSearch: true})
	call := `{"name":"call_tool","arguments":{"name":"ts__slow_compute","arguments":{"seconds":0.1,"label":"L"}},"task":{}}`
	out, err := g.runAsSession(req("tools/call", call, nil))
	if err != nil {
		t.Fatal(err)
	}
	legacy := taskID(t, out)
	if out := g.must("tasks/result", `{"taskId":"`+legacy+`"}`); !strings.Contains(out, `computed \"L\" after 0.1s`) {
		t.Errorf("legacy tasks/result: %s", out)
	}
	out, err = g.runAsSession(modernReq("tools/call", call))
	if err != nil {
		t.Fatal(err)
	}
	taskID(t, out)
	// Without Start (a method run directly) the call is still made.
	if out := g.must("tools/call", `{"name":"call_tool","arguments":{"name":"ts__slow_compute","arguments":{"seconds":0,"label":"M"}}}`); !strings.Contains(out, `computed \"M\"`) {
		t.Errorf("call_tool without Start: %s", out)
	}
}

// A call_tool of a backend that could not start is answered as a direct
// call would be: an error naming the backend and why.
func TestGatewayToolSearchBackendDown(t *testing.T) {
	bad := Backend{Name: "bad", Command: "/nonexistent/mcprt-test-server"}
	g := unstarted(t, Options{ToolSearch: true}, bad)
	g.start()
	direct := g.must("tools/call", `{"name":"bad__x","arguments":{}}`)
	via := g.must("tools/call", `{"name":"call_tool","arguments":{"name":"bad__x","arguments":{}}}`)
	if !strings.Contains(via, `"isError":true`) || !strings.Contains(via, `backend \"bad\"`) || via != direct {
		t.Errorf("call_tool bad__x: %s\ndirect: %s", via, direct)
	}
}
