package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
)

// registered is what the reference server registered, by kind, as its list
// methods return it: the names the help and the readme must show.
func registered(t *testing.T, s *handlers.Server) (tools, others []string) {
	t.Helper()
	o, err := offersOf(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range o.Tools {
		tools = append(tools, x.Name)
	}
	for _, x := range o.Resources {
		others = append(others, x.URI)
	}
	for _, x := range o.Templates {
		others = append(others, x.URITemplate)
	}
	for _, x := range o.Prompts {
		others = append(others, x.Name)
	}
	// The reference server offers every kind; a list that came back empty
	// would make the checks below vacuous.
	if len(o.Tools) == 0 || len(o.Resources) == 0 || len(o.Templates) == 0 || len(o.Prompts) == 0 {
		t.Fatalf("the reference server lists %d tools, %d resources, %d templates, %d prompts",
			len(o.Tools), len(o.Resources), len(o.Templates), len(o.Prompts))
	}
	return tools, others
}

// readReadme reads the readme resource of s through resources/read.
func readReadme(t *testing.T, s *handlers.Server) string {
	t.Helper()
	m, ok := s.Method("resources/read")
	if !ok {
		t.Fatal("no resources/read")
	}
	res, err := m.Run(context.Background(), &handlers.Request{Method: "resources/read", Params: json.RawMessage(`{"uri":"mcprt://reference/readme"}`), Version: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	var r struct{ Contents []struct{ Text string } }
	if err := json.Unmarshal(b, &r); err != nil || len(r.Contents) != 1 {
		t.Fatalf("readme: %s, %v", b, err)
	}
	return r.Contents[0].Text
}

// mcprt serve --help lists every tool the reference server registered, and
// every resource, template and prompt.
func TestServeHelpListsTheRegistry(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"serve", "--help"}, streams{Stdout: &stdout, Stderr: &stderr})
	if code != runtime.ExitOK || stderr.Len() != 0 {
		t.Fatalf("serve --help: exit %d, stderr %q", code, stderr.String())
	}
	out := stdout.String()
	tools, others := registered(t, referenceServer())
	for _, name := range tools {
		if !strings.Contains(out, "\n  "+name+" {") {
			t.Errorf("serve --help does not list tool %q:\n%s", name, out)
		}
	}
	for _, name := range others {
		if !strings.Contains(out, "\n  "+name) {
			t.Errorf("serve --help does not list %q:\n%s", name, out)
		}
	}
}

// The readme resource lists every tool, resource, template and prompt,
// including one registered after the server was built: it is made from
// the registry when read.
func TestReadmeListsTheRegistry(t *testing.T) {
	s := referenceServer()
	s.AddTool(handlers.Tool{Name: "added-later", Description: "Registered by the test."},
		func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
			return handlers.TextResult(""), nil
		})
	readme := readReadme(t, s)
	if !strings.HasPrefix(readme, "# mcprt reference server\n") {
		t.Errorf("readme does not start with its title:\n%s", readme)
	}
	tools, others := registered(t, s)
	for _, name := range tools {
		if !strings.Contains(readme, "\n- `"+name+" {") {
			t.Errorf("readme does not list tool %q:\n%s", name, readme)
		}
	}
	for _, name := range others {
		if !strings.Contains(readme, "\n- `"+name) {
			t.Errorf("readme does not list %q:\n%s", name, readme)
		}
	}
	if !strings.Contains(readme, "- `added-later {}`: Registered by the test.\n") {
		t.Errorf("readme lacks the tool added later:\n%s", readme)
	}
}

// offersOf reads every page of a list, and the text shows arguments in
// the schema's order, optional ones marked.
func TestOffersOf(t *testing.T) {
	s := handlers.NewServer(mcp.Implementation{Name: "t", Version: "0"}, "")
	s.SetPageSize(2)
	noop := func(context.Context, *handlers.Request, json.RawMessage) (*handlers.CallToolResult, error) {
		return handlers.TextResult(""), nil
	}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		s.AddTool(handlers.Tool{Name: name, Description: "Tool " + name + ". More words."}, noop)
	}
	s.AddTool(handlers.Tool{Name: "z", InputSchema: json.RawMessage(`{"type":"object","properties":{"zeta":{},"alpha":{"type":"string"}},"required":["alpha"]}`)}, noop)
	o, err := offersOf(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Tools) != 6 || len(o.Resources)+len(o.Templates)+len(o.Prompts) != 0 {
		t.Fatalf("offers %+v", o)
	}
	want := "Tools:\n  a {}              Tool a.\n  b {}              Tool b.\n  c {}              Tool c.\n  d {}              Tool d.\n  e {}              Tool e.\n  z {zeta?, alpha}\n"
	if got := o.text(); got != want {
		t.Errorf("text:\n%q\nwant\n%q", got, want)
	}
}
