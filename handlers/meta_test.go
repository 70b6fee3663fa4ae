package handlers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// TestMetaPerEra: every item and result that the specification gives a
// _meta carries the one it was given, byte for byte, from 2025-06-18 on
// (items) or in every revision (results); a tool's execution goes out from
// 2025-11-25 on.
func TestMetaPerEra(t *testing.T) {
	const (
		toolMeta = `{"ui":{"resourceUri":"ui://app/main.html","visibility":["model","app"]},"com.example/n":12345678901234567890}`
		appMeta  = `{"ui":{"csp":{"connectDomains":["https://api.example.com"]},"prefersBorder":true}}`
		itemMeta = `{"com.example/tag":"x"}`
		execRaw  = `{"taskSupport":"optional"}`
	)
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddTool(Tool{Tool: mcp.Tool{Name: "app", Meta: json.RawMessage(toolMeta), Execution: json.RawMessage(execRaw)}},
		func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
			text := mcp.TextContent("hi")
			text.Meta = json.RawMessage(itemMeta)
			return &mcp.CallToolResult{
				Content: []mcp.Content{text, mcp.EmbeddedResource(mcp.ResourceContents{URI: "ui://app/x", Text: "x", Meta: json.RawMessage(appMeta)})},
				Meta:    json.RawMessage(itemMeta),
			}, nil
		})
	s.AddTool(Tool{Tool: mcp.Tool{Name: "plain"}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("p")}, Meta: json.RawMessage(itemMeta)}, nil
	})
	s.AddResource(Resource{Resource: mcp.Resource{URI: "ui://app/main.html", Name: "main", MimeType: "text/html;profile=mcp-app", Meta: json.RawMessage(appMeta)}},
		func(_ context.Context, req *Request, _ string, _ map[string]string) ([]mcp.ResourceContents, error) {
			req.SetResultMeta(json.RawMessage(itemMeta))
			return []mcp.ResourceContents{{Text: "<html></html>", Meta: json.RawMessage(appMeta)}}, nil
		})
	s.AddResourceTemplate(ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "ui://app/{page}", Name: "pages", Meta: json.RawMessage(itemMeta)}},
		func(context.Context, *Request, string, map[string]string) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{{Text: "page"}}, nil
		})
	s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: "p", Meta: json.RawMessage(itemMeta)}}, func(context.Context, *Request, map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("m")}}, Meta: json.RawMessage(itemMeta)}, nil
	})

	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			items := v >= "2025-06-18"
			has := func(what, got, part string, want bool) {
				t.Helper()
				if strings.Contains(got, part) != want {
					t.Errorf("%s: want %s present=%v in %s", what, part, want, got)
				}
			}
			tools := run(t, s, v, "tools/list", `{}`).result
			has("tools/list", tools, `"_meta":`+toolMeta, items)
			has("tools/list", tools, `"execution":`+execRaw, v >= "2025-11-25")
			call := run(t, s, v, "tools/call", `{"name":"app"}`).result
			has("tools/call", call, `{"type":"text","text":"hi","_meta":`+itemMeta+`}`, items)
			has("tools/call", call, `"text":"x","_meta":`+appMeta, items)
			has("tools/call", call, `],"_meta":`+itemMeta+`}`, true) // the result's: every revision
			has("tools/call plain", run(t, s, v, "tools/call", `{"name":"plain"}`).result, `"_meta":`+itemMeta, true)
			has("resources/list", run(t, s, v, "resources/list", `{}`).result, `"_meta":`+appMeta, items)
			has("resources/templates/list", run(t, s, v, "resources/templates/list", `{}`).result, `"_meta":`+itemMeta, items)
			read := run(t, s, v, "resources/read", `{"uri":"ui://app/main.html"}`).result
			has("resources/read", read, `"text":"\u003chtml\u003e\u003c/html\u003e","_meta":`+appMeta, items)
			has("resources/read", read, `}],"_meta":`+itemMeta+`}`, true)
			has("prompts/list", run(t, s, v, "prompts/list", `{}`).result, `"_meta":`+itemMeta, items)
			has("prompts/get", run(t, s, v, "prompts/get", `{"name":"p"}`).result, `"_meta":`+itemMeta, true)
		})
	}
}

// TestMetaMustBeObject: a _meta or execution that is not a JSON object is
// refused at registration, as a bad schema is; null is none.
func TestMetaMustBeObject(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	read := func(context.Context, *Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return nil, nil
	}
	get := func(context.Context, *Request, map[string]string) (*mcp.GetPromptResult, error) { return nil, nil }
	for name, add := range map[string]func(){
		"tool _meta": func() { s.AddTool(Tool{Tool: mcp.Tool{Name: "x", Meta: json.RawMessage(`[1]`)}}, textTool("x")) },
		"tool execution": func() {
			s.AddTool(Tool{Tool: mcp.Tool{Name: "x", Execution: json.RawMessage(`"optional"`)}}, textTool("x"))
		},
		"resource _meta": func() {
			s.AddResource(Resource{Resource: mcp.Resource{URI: "a:b", Name: "b", Meta: json.RawMessage(`1`)}}, read)
		},
		"template _meta": func() {
			s.AddResourceTemplate(ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "a:{b}", Name: "b", Meta: json.RawMessage(`"x"`)}}, read)
		},
		"prompt _meta":    func() { s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: "p", Meta: json.RawMessage(`true`)}}, get) },
		"tool _meta json": func() { s.AddTool(Tool{Tool: mcp.Tool{Name: "x", Meta: json.RawMessage(`{`)}}, textTool("x")) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: accepted", name)
				}
			}()
			add()
		}()
	}
	s.AddTool(Tool{Tool: mcp.Tool{Name: "n", Meta: json.RawMessage(`null`)}}, textTool("x"))
	if got := run(t, s, "2025-11-25", "tools/list", `{}`).result; strings.Contains(got, "_meta") {
		t.Errorf("a null _meta was listed: %s", got)
	}
}

// TestExtensions: a server's extensions are in its capabilities; a
// handler reads the client's own from the request's capabilities.
func TestExtensions(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.SetExtension("io.modelcontextprotocol/ui", nil)
	s.SetExtension("com.example/x", json.RawMessage(`{"v":1}`))
	got, _ := json.Marshal(s.Capabilities()["extensions"])
	if want := `{"com.example/x":{"v":1},"io.modelcontextprotocol/ui":{}}`; string(got) != want {
		t.Errorf("extensions %s, want %s", got, want)
	}
	if !s.RemoveExtension("com.example/x") || s.RemoveExtension("com.example/x") {
		t.Error("RemoveExtension")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("SetExtension took settings that are not an object")
			}
		}()
		s.SetExtension("com.example/bad", json.RawMessage(`[]`))
	}()
	req := &Request{ClientCapabilities: json.RawMessage(`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]},"com.example/n":null}}`)}
	if settings, ok := req.ClientExtension("io.modelcontextprotocol/ui"); !ok || string(settings) != `{"mimeTypes":["text/html;profile=mcp-app"]}` {
		t.Errorf("ClientExtension(ui) = %s, %v", settings, ok)
	}
	for _, id := range []string{"com.example/n", "com.example/absent"} {
		if _, ok := req.ClientExtension(id); ok {
			t.Errorf("ClientExtension(%s) = ok", id)
		}
	}
	for _, caps := range []string{`{}`, ``} {
		if _, ok := (&Request{ClientCapabilities: json.RawMessage(caps)}).ClientExtension("io.modelcontextprotocol/ui"); ok {
			t.Errorf("ClientExtension with capabilities %q = ok", caps)
		}
	}
}

// TestAddMethod: an extension's method is found as the core ones are; a
// core one cannot be replaced.
func TestAddMethod(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	if _, ok := s.Method("x/y"); ok {
		t.Fatal("x/y before AddMethod")
	}
	s.AddMethod("x/y", func(context.Context, *Request) (any, error) { return map[string]int{"n": 1}, nil }, true)
	m, ok := s.Method("x/y")
	if !ok || !m.Cacheable {
		t.Fatalf("x/y: %+v %v", m, ok)
	}
	for _, core := range []string{"tools/call", "ping", "initialize"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("AddMethod replaced %s", core)
				}
			}()
			s.AddMethod(core, m.Run, false)
		}()
	}
}
