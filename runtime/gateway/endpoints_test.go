package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers"
)

// on runs one method of srv (an endpoint's server) and returns its result
// as JSON, or its error.
func (g *testGateway) on(srv *handlers.Server, method, params string) (string, error) {
	g.t.Helper()
	m, ok := srv.Method(method)
	if !ok {
		return "", fmt.Errorf("%s: not offered", method)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	res, err := m.Run(ctx, req(method, params, nil))
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(res)
	return string(b), err
}

// listed is what srv's tools/list names.
func (g *testGateway) listed(srv *handlers.Server) []string {
	g.t.Helper()
	out, err := g.on(srv, "tools/list", `{}`)
	if err != nil {
		g.t.Fatal(err)
	}
	var res struct{ Tools []handlers.Tool }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		g.t.Fatal(err)
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

// An endpoint lists, finds and calls only what its patterns name; the
// rest is unknown there, as a tool that does not exist is. A reload
// changes it without touching the backend.
func TestGatewayEndpoints(t *testing.T) {
	ref := serve("ref")
	cfg := &Config{Backends: []Backend{ref}, Endpoints: map[string]Endpoint{
		"dev":  {Tools: []string{"ref__add", "ref__ech*"}},
		"find": {Tools: []string{"ref__add", "ref__sleep"}, ToolSearch: true},
	}}
	g := unstarted(t, Options{}, ref)
	if _, err := g.Reload(context.Background(), cfg); err == nil {
		t.Fatal("Reload before Start worked")
	}
	g.configureEndpoints(cfg) // as New does with it
	g.start()
	dev, find := g.Endpoint("dev"), g.Endpoint("find")
	if dev == nil || find == nil || g.Endpoint("nope") != nil {
		t.Fatalf("Endpoint: dev %v, find %v, nope %v", dev, find, g.Endpoint("nope"))
	}
	if got := g.listed(dev); !slices.Equal(got, []string{"ref__add", "ref__echo"}) {
		t.Errorf("dev lists %v", got)
	}
	if out, err := g.on(dev, "tools/call", `{"name":"ref__add","arguments":{"a":2,"b":3}}`); err != nil || !strings.Contains(out, `"sum":5`) {
		t.Errorf("dev calling ref__add: %s %v", out, err)
	}
	_, unknown := g.on(dev, "tools/call", `{"name":"ref__nothing_of_this_name","arguments":{}}`)
	_, hidden := g.on(dev, "tools/call", `{"name":"ref__sleep","arguments":{"ms":1}}`)
	if unknown == nil || hidden == nil || strings.Replace(hidden.Error(), "ref__sleep", "X", 1) != strings.Replace(unknown.Error(), "ref__nothing_of_this_name", "X", 1) {
		t.Errorf("dev calling ref__sleep: %v; calling a tool that does not exist: %v", hidden, unknown)
	}
	if out := g.must("tools/call", `{"name":"ref__sleep","arguments":{"ms":1}}`); !strings.Contains(out, "slept") {
		t.Errorf("the gateway's own endpoint calling ref__sleep: %s", out)
	}

	// Search on an endpoint finds its tools only.
	if got := g.listed(find); !slices.Equal(got, []string{"call_tool", "search_tools"}) {
		t.Errorf("find lists %v", got)
	}
	out, err := g.on(find, "tools/call", `{"name":"search_tools","arguments":{"query":"echo text, add numbers, sleep","limit":50}}`)
	if err != nil || strings.Contains(out, "ref__echo") || !strings.Contains(out, "ref__add") || !strings.Contains(out, "ref__sleep") {
		t.Errorf("find searching: %s %v", out, err)
	}
	if out, err := g.on(find, "tools/call", `{"name":"call_tool","arguments":{"name":"ref__echo","arguments":{"text":"x"}}}`); err == nil {
		t.Errorf("find calling ref__echo through call_tool: %s", out)
	}

	// A reload changes the endpoints, not the backend.
	pid := g.state("ref").PID
	cfg2 := &Config{Backends: []Backend{ref}, Endpoints: map[string]Endpoint{
		"dev": {Tools: []string{"ref__sleep"}},
		"new": {Tools: []string{"ref__echo"}},
	}}
	ch, err := g.Reload(context.Background(), cfg2)
	if err != nil || !slices.Equal(ch.Unchanged, []string{"ref"}) {
		t.Fatalf("Reload: %+v %v", ch, err)
	}
	if got := g.state("ref").PID; got != pid {
		t.Errorf("the backend's pid went from %d to %d", pid, got)
	}
	if g.Endpoint("dev") != dev || g.Endpoint("find") != nil || g.Endpoint("new") == nil {
		t.Errorf("after reload: dev %p (was %p), find %v, new %v", g.Endpoint("dev"), dev, g.Endpoint("find"), g.Endpoint("new"))
	}
	if got := g.listed(dev); !slices.Equal(got, []string{"ref__sleep"}) {
		t.Errorf("dev lists %v after reload", got)
	}
	if got := g.listed(find); len(got) != 0 {
		t.Errorf("the removed endpoint still lists %v", got)
	}
	if got := g.listed(g.Endpoint("new")); !slices.Equal(got, []string{"ref__echo"}) {
		t.Errorf("new lists %v", got)
	}
}

func TestParseEndpoints(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"mcpServers": {"a": {"command": "x"}},
		"endpoints": {"dev": {"tools": ["a__*"], "prompts": ["a__p"], "resources": ["file:///*"], "toolSearch": true,
		                      "access": {"scopes": ["dev"]}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Endpoint{Tools: []string{"a__*"}, Prompts: []string{"a__p"}, Resources: []string{"file:///*"}, ToolSearch: true, Access: &handlers.Access{Scopes: []string{"dev"}}}
	if got := cfg.Endpoints["dev"]; !slices.Equal(got.Tools, want.Tools) || !got.ToolSearch || got.Access == nil || got.Access.Scopes[0] != "dev" {
		t.Errorf("dev: %+v", got)
	}
	for _, tc := range []struct{ in, want string }{
		{`"endpoints": []`, "want an object of endpoints by name"},
		{`"endpoints": {"a/b": {}}`, "one path segment"},
		{`"endpoints": {"dev": {"tool": ["x"]}}`, `unknown key "tool"`},
		{`"endpoints": {"dev": {"tools": ["["]}}`, `pattern "["`},
		{`"endpoints": {"dev": {"toolSearch": "yes"}}`, `"dev"`},
	} {
		_, err := ParseConfig([]byte(`{"mcpServers": {"a": {"command": "x"}}, `+tc.in+`}`), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

// A subscription made on an endpoint is followed at the backend, and the
// resource's updates reach the endpoint's server; a resource the endpoint
// does not name is not there to read.
func TestGatewayEndpointSubscription(t *testing.T) {
	t.Parallel()
	c := conformance("c", "legacy")
	g := unstarted(t, Options{}, c)
	g.configureEndpoints(&Config{Endpoints: map[string]Endpoint{
		"watch": {Tools: []string{"c__test_update_watched_resource"}, Resources: []string{"test://watched-*"}},
	}})
	g.start()
	srv := g.Endpoint("watch")
	ch := updates(t, srv)
	srv.Subscription(watchedURI, true)
	waitFor(t, "the backend to follow the resource", func() bool { return g.state("c").Subscriptions == 1 })
	wantUpdate(t, ch, watchedURI)
	if out, err := g.on(srv, "tools/call", `{"name":"c__test_update_watched_resource","arguments":{}}`); err != nil {
		t.Fatalf("%s %v", out, err)
	}
	wantUpdate(t, ch, watchedURI)
	if out, err := g.on(srv, "resources/read", `{"uri":"`+watchedURI+`"}`); err != nil {
		t.Errorf("reading %s on the endpoint: %s %v", watchedURI, out, err)
	}
	var other string
	for _, r := range g.names("resources/list", "resources", "uri") {
		if r != watchedURI {
			other = r
		}
	}
	if other == "" {
		t.Fatal("the backend offers no other resource")
	}
	if out, err := g.on(srv, "resources/read", `{"uri":"`+other+`"}`); err == nil {
		t.Errorf("reading %s on the endpoint that does not name it: %s", other, out)
	}
	srv.Subscription(watchedURI, false)
	waitFor(t, "the backend to stop following", func() bool { return g.state("c").Subscriptions == 0 })
}
