package handlers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// listNames reads one page of a list method: the "name" of each item and
// the nextCursor.
func listNames(t *testing.T, s *Server, method, key, cursor string) ([]string, string) {
	t.Helper()
	params := `{}`
	if cursor != "" {
		params = `{"cursor":"` + cursor + `"}`
	}
	a := run(t, s, "2025-11-25", method, params)
	if a.err != nil {
		t.Fatalf("%s %s: %v", method, params, a.err)
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal([]byte(a.result), &res); err != nil {
		t.Fatal(err)
	}
	var items []struct{ Name string }
	if err := json.Unmarshal(res[key], &items); err != nil {
		t.Fatalf("%s: %v in %s", method, err, a.result)
	}
	var next string
	if raw, ok := res["nextCursor"]; ok {
		if err := json.Unmarshal(raw, &next); err != nil || next == "" {
			t.Fatalf("%s: bad nextCursor %s", method, raw)
		}
	}
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = it.Name
	}
	return names, next
}

func noContents(context.Context, *Request, string, map[string]string) ([]mcp.ResourceContents, error) {
	return nil, nil
}

func noPrompt(context.Context, *Request, map[string]string) (*mcp.GetPromptResult, error) {
	return nil, nil
}

// lists are the paginated methods, each with a way to add an item.
var lists = []struct {
	method, key string
	add         func(s *Server, name string)
	remove      func(s *Server, name string) bool
}{
	{"tools/list", "tools", func(s *Server, n string) { s.AddTool(Tool{Tool: mcp.Tool{Name: n}}, textTool(n)) }, (*Server).RemoveTool},
	{"resources/list", "resources", func(s *Server, n string) {
		s.AddResource(Resource{Resource: mcp.Resource{URI: "x:" + n, Name: n}}, noContents)
	},
		func(s *Server, n string) bool { return s.RemoveResource("x:" + n) }},
	{"resources/templates/list", "resourceTemplates", func(s *Server, n string) {
		s.AddResourceTemplate(ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "x:" + n + "/{v}", Name: n}}, noContents)
	}, func(s *Server, n string) bool { return s.RemoveResourceTemplate("x:" + n + "/{v}") }},
	{"prompts/list", "prompts", func(s *Server, n string) { s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: n}}, noPrompt) }, (*Server).RemovePrompt},
}

func TestPagination(t *testing.T) {
	for _, l := range lists {
		t.Run(l.method, func(t *testing.T) {
			s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
			s.SetPageSize(2)
			for _, n := range []string{"a", "b", "c", "d", "e"} {
				l.add(s, n)
			}
			var pages [][]string
			cursor := ""
			for {
				names, next := listNames(t, s, l.method, l.key, cursor)
				pages = append(pages, names)
				if next == "" {
					break
				}
				if len(pages) == 1 {
					// Added between pages: shifts nothing, shows up at the end.
					l.add(s, "f")
					// Removed between pages: the cursor still works.
					if !l.remove(s, "b") {
						t.Fatal("remove b")
					}
				}
				cursor = next
			}
			if got := fmt.Sprint(pages); got != "[[a b] [c d] [e f]]" {
				t.Fatalf("pages %s", got)
			}

			s.SetPageSize(0) // back to the default: one page
			if names, next := listNames(t, s, l.method, l.key, ""); strings.Join(names, "") != "acdef" || next != "" {
				t.Fatalf("default page size: %v next %q", names, next)
			}
		})
	}
}

func TestPaginationExactPages(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.SetPageSize(2)
	for _, n := range []string{"a", "b", "c", "d"} {
		s.AddTool(Tool{Tool: mcp.Tool{Name: n}}, textTool(n))
	}
	names, next := listNames(t, s, "tools/list", "tools", "")
	if next == "" {
		t.Fatalf("first page %v has no cursor", names)
	}
	// The last full page says it is the last: no empty page follows.
	if names, next = listNames(t, s, "tools/list", "tools", next); strings.Join(names, "") != "cd" || next != "" {
		t.Fatalf("second page %v next %q", names, next)
	}
	// The removal of every item after the cursor gives an empty last page.
	_, next = listNames(t, s, "tools/list", "tools", "")
	s.RemoveTool("c")
	s.RemoveTool("d")
	if names, next = listNames(t, s, "tools/list", "tools", next); len(names) != 0 || next != "" {
		t.Fatalf("after removal: %v next %q", names, next)
	}
}

func TestInvalidCursor(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.SetPageSize(1)
	for _, l := range lists {
		l.add(s, "a")
		l.add(s, "b")
	}
	_, toolsCursor := listNames(t, s, "tools/list", "tools", "")
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	letter := map[string]string{"tools/list": "t", "resources/list": "r", "resources/templates/list": "u", "prompts/list": "p"}
	for _, l := range lists {
		// The cursor of the second item is fine: this is the format.
		listNames(t, s, l.method, l.key, enc(letter[l.method]+"1"))
		for _, c := range []struct{ name, params string }{
			{"not base64", `{"cursor":"!!"}`},
			{"empty", `{"cursor":""}`},
			{"not a number", `{"cursor":"` + enc(letter[l.method]+"x") + `"}`},
			{"never handed out", `{"cursor":"` + enc(letter[l.method]+"99") + `"}`},
			{"zero", `{"cursor":"` + enc(letter[l.method]+"0") + `"}`},
			{"leading zero", `{"cursor":"` + enc(letter[l.method]+"01") + `"}`},
		} {
			wantError(t, run(t, s, "2025-11-25", l.method, c.params), jsonrpc.CodeInvalidParams, "Invalid params: invalid cursor", "")
		}
		wantError(t, run(t, s, "2026-07-28", l.method, `{"cursor":5}`), jsonrpc.CodeInvalidParams,
			"Invalid params: params must be an object with an optional string cursor", "")
		if l.method != "tools/list" {
			// One list's cursor is no good for another.
			wantError(t, run(t, s, "2025-11-25", l.method, `{"cursor":"`+toolsCursor+`"}`), jsonrpc.CodeInvalidParams, "Invalid params: invalid cursor", "")
		}
	}
	// A modern request's params carry _meta beside the cursor.
	names, _ := listNames(t, s, "tools/list", "tools", toolsCursor)
	a := run(t, s, "2026-07-28", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"cursor":"`+toolsCursor+`"}`)
	wantResult(t, a, `{"tools":[{"name":"`+names[0]+`","inputSchema":{"type":"object"}}]}`)
}
