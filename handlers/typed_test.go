package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

type searchIn struct {
	Query string `json:"query" description:"What to look for." jsonschema:"minLength=1"`
	Limit int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=10"`
	Sort  string `json:"sort,omitempty" enum:"relevance,date"`
}

type searchOut struct {
	Hits  []string `json:"hits"`
	Total int      `json:"total"`
}

func TestTypedToolSchemas(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	AddTool(s, Tool{Tool: mcp.Tool{Name: "search", Description: "Searches."}}, func(_ context.Context, _ *Request, in searchIn) (searchOut, error) {
		return searchOut{}, nil
	})
	wantResult(t, run(t, s, "2025-06-18", "tools/list", `{}`), `{"tools":[{"name":"search","description":"Searches.",`+
		`"inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"What to look for.","minLength":1},"limit":{"type":"integer","minimum":1,"maximum":10},"sort":{"type":"string","enum":["relevance","date"]}},"required":["query"],"additionalProperties":false},`+
		`"outputSchema":{"type":"object","properties":{"hits":{"type":["array","null"],"items":{"type":"string"}},"total":{"type":"integer"}},"required":["hits","total"],"additionalProperties":false}}]}`)
	// Explicit schemas win over derived ones.
	AddTool(s, Tool{Tool: mcp.Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(`{"type":"object"}`)}},
		func(_ context.Context, _ *Request, in searchIn) (searchOut, error) { return searchOut{}, nil })
	wantResult(t, run(t, s, "2025-06-18", "tools/list", `{}`), `{"tools":[{"name":"search","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}]}`)
}

func TestTypedToolCall(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	var seen searchIn
	AddTool(s, Tool{Tool: mcp.Tool{Name: "search"}}, func(_ context.Context, _ *Request, in searchIn) (searchOut, error) {
		seen = in
		switch in.Query {
		case "fail":
			return searchOut{}, errors.New("index offline")
		case "protocol":
			return searchOut{}, &jsonrpc.Error{Code: -32001, Message: "custom"}
		}
		return searchOut{Hits: []string{in.Query + "!"}, Total: 1}, nil
	})
	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			want := `{"content":[{"type":"text","text":"{\"hits\":[\"go!\"],\"total\":1}"}],"structuredContent":{"hits":["go!"],"total":1}}`
			if v < "2025-06-18" {
				want = `{"content":[{"type":"text","text":"{\"hits\":[\"go!\"],\"total\":1}"}]}`
			}
			wantResult(t, run(t, s, v, "tools/call", `{"name":"search","arguments":{"query":"go","limit":3,"sort":"date"}}`), want)
			if seen != (searchIn{Query: "go", Limit: 3, Sort: "date"}) {
				t.Fatalf("handler got %+v", seen)
			}
			wantResult(t, run(t, s, v, "tools/call", `{"name":"search","arguments":{"query":"fail"}}`), `{"content":[{"type":"text","text":"index offline"}],"isError":true}`)
			wantError(t, run(t, s, v, "tools/call", `{"name":"search","arguments":{"query":"protocol"}}`), -32001, "custom", "")

			bad := run(t, s, v, "tools/call", `{"name":"search","arguments":{"query":"","sort":"name"}}`)
			const msg = `Invalid arguments for tool "search": arguments/query: must be at least 1 character long; arguments/sort: must be one of "relevance", "date"`
			if v >= "2025-11-25" {
				raw, _ := json.Marshal(msg)
				wantResult(t, bad, `{"content":[{"type":"text","text":`+string(raw)+`}],"isError":true}`)
			} else {
				wantError(t, bad, jsonrpc.CodeInvalidParams, "Invalid params: "+msg, "")
			}
		})
	}
}

func TestTypedToolDynamicOutput(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	AddTool(s, Tool{Tool: mcp.Tool{Name: "dyn"}}, func(_ context.Context, _ *Request, in map[string]any) (any, error) {
		switch in["kind"] {
		case "text":
			return "plain", nil
		case "result":
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.ImageContent([]byte{1}, "image/png")}}, nil
		case "object":
			return map[string]int{"n": 1}, nil
		}
		return nil, nil
	})
	wantResult(t, run(t, s, "2025-11-25", "tools/list", `{}`), `{"tools":[{"name":"dyn","inputSchema":{"type":"object"}}]}`)
	for _, c := range []struct{ kind, want string }{
		{"text", `{"content":[{"type":"text","text":"plain"}]}`},
		{"result", `{"content":[{"type":"image","data":"AQ==","mimeType":"image/png"}]}`},
		{"object", `{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}`},
		{"none", `{"content":[]}`},
	} {
		wantResult(t, run(t, s, "2025-11-25", "tools/call", `{"name":"dyn","arguments":{"kind":"`+c.kind+`"}}`), c.want)
	}
}

func TestTypedToolNilPointerOutput(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	AddTool(s, Tool{Tool: mcp.Tool{Name: "ptr"}}, func(context.Context, *Request, struct{}) (*searchOut, error) { return nil, nil })
	wantInternal(t, run(t, s, "2025-11-25", "tools/call", `{"name":"ptr"}`), "returned no structuredContent")
}

func TestTypedToolRejects(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	for _, c := range []struct {
		name string
		add  func()
		want string
	}{
		{"scalar In", func() {
			AddTool(s, Tool{Tool: mcp.Tool{Name: "a"}}, func(context.Context, *Request, int) (searchOut, error) { return searchOut{}, nil })
		}, "In (int) must be a struct or map type"},
		{"slice Out", func() {
			AddTool(s, Tool{Tool: mcp.Tool{Name: "a"}}, func(context.Context, *Request, searchIn) ([]string, error) { return nil, nil })
		}, "Out ([]string) must be a struct or map type"},
		{"underivable In", func() {
			AddTool(s, Tool{Tool: mcp.Tool{Name: "a"}}, func(context.Context, *Request, struct{ C chan int }) (searchOut, error) { return searchOut{}, nil })
		}, "In:"},
		{"bad tag", func() {
			AddTool(s, Tool{Tool: mcp.Tool{Name: "a"}}, func(context.Context, *Request, struct {
				N int `json:"n" jsonschema:"minLength=x"`
			}) (searchOut, error) {
				return searchOut{}, nil
			})
		}, "In:"},
		{"nil handler", func() { AddTool[Tool, searchIn, searchOut](s, Tool{Tool: mcp.Tool{Name: "a"}}, nil) }, "needs a handler"},
		{"bad name", func() {
			AddTool(s, Tool{Tool: mcp.Tool{Name: "a/b"}}, func(context.Context, *Request, searchIn) (searchOut, error) { return searchOut{}, nil })
		}, "invalid tool name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				v := recover()
				if msg, _ := v.(string); !strings.Contains(msg, c.want) {
					t.Fatalf("panic %v, want one mentioning %q", v, c.want)
				}
			}()
			c.add()
		})
	}
}
