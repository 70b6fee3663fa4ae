package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// benchEcho is the reference server's echo tool.
func benchEcho(_ context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
	var a struct{ Text *string }
	if err := json.Unmarshal(args, &a); err != nil || a.Text == nil {
		return nil, fmt.Errorf("echo needs a string argument \"text\"")
	}
	return mcp.TextResult(*a.Text), nil
}

func benchServer() *handlers.Server {
	s := handlers.NewServer(mcp.Implementation{Name: "bench", Version: "1"}, "")
	s.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name:        "echo",
			Description: "Returns its text argument unchanged.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		},
	}, benchEcho)
	// Without a schema the handlers have no arguments to validate: the
	// difference between the two is the validation's cost.
	s.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "echo-noschema", Description: "echo, no input schema"}}, benchEcho)
	for i := range 8 {
		s.AddTool(handlers.Tool{
			Tool: mcp.Tool{
				Name:        fmt.Sprintf("tool%d", i),
				Description: "A tool that is listed and never called.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":0}}}`),
			},
		}, benchEcho)
	}
	return s
}

// BenchmarkToolsCall runs tools/call through Server.Method("tools/call").Run,
// as a handler actor does, without the session. "+marshal" adds the
// json.Marshal of the result that the session does next, so the two
// together are the handler-side cost of a call.
func BenchmarkToolsCall(b *testing.B) {
	s := benchServer()
	m, ok := s.Method("tools/call")
	if !ok {
		b.Fatal("no tools/call")
	}
	text64K := strings.Repeat("abcdefgh", 8<<10)
	for _, bc := range []struct {
		name    string
		params  string
		marshal bool
	}{
		{"echo", `{"name":"echo","arguments":{"text":"hello, world"}}`, false},
		{"echo+marshal", `{"name":"echo","arguments":{"text":"hello, world"}}`, true},
		{"echo-noschema", `{"name":"echo-noschema","arguments":{"text":"hello, world"}}`, false},
		{"echo-64KiB+marshal", `{"name":"echo","arguments":{"text":"` + text64K + `"}}`, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.params)))
			ctx := context.Background()
			params := json.RawMessage(bc.params)
			for b.Loop() {
				req := &handlers.Request{Method: "tools/call", Params: params, Version: "2025-06-18"}
				res, err := m.Run(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if bc.marshal {
					if _, err := json.Marshal(res); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkToolsList: ten tools listed and marshalled.
func BenchmarkToolsList(b *testing.B) {
	s := benchServer()
	m, ok := s.Method("tools/list")
	if !ok {
		b.Fatal("no tools/list")
	}
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		res, err := m.Run(ctx, &handlers.Request{Method: "tools/list", Params: json.RawMessage(`{}`), Version: "2025-06-18"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(res); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAccess: the cost of handlers.Access per request, against
// BenchmarkToolsList and BenchmarkToolsCall/echo: the same ten tools, half
// of them (echo among them) needing a scope the caller has, listed (five
// left out for a caller without it) and called.
func BenchmarkAccess(b *testing.B) {
	s := handlers.NewServer(mcp.Implementation{Name: "bench", Version: "1"}, "")
	admin := &handlers.Access{Scopes: []string{"admin"}}
	s.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name:        "echo",
			Description: "Returns its text argument unchanged.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		},
		Access: admin,
	}, benchEcho)
	s.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "echo-noschema", Description: "echo, no input schema"}}, benchEcho)
	for i := range 8 {
		var a *handlers.Access
		if i%2 == 0 {
			a = admin
		}
		s.AddTool(handlers.Tool{
			Tool: mcp.Tool{
				Name:        fmt.Sprintf("tool%d", i),
				Description: "A tool that is listed and never called.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":0}}}`),
			},
			Access: a,
		}, benchEcho)
	}
	allowed := &handlers.Caller{Subject: "a", Scopes: []string{"read", "admin"}}
	reader := &handlers.Caller{Subject: "r", Scopes: []string{"read"}}
	list, _ := s.Method("tools/list")
	call, _ := s.Method("tools/call")
	ctx := context.Background()
	for _, bc := range []struct {
		name   string
		m      handlers.Method
		params string
		caller *handlers.Caller
	}{
		{"list/all", list, `{}`, allowed},
		{"list/half", list, `{}`, reader},
		{"call/echo", call, `{"name":"echo","arguments":{"text":"hello, world"}}`, allowed},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			params := json.RawMessage(bc.params)
			for b.Loop() {
				res, err := bc.m.Run(ctx, &handlers.Request{Method: "tools/x", Params: params, Version: "2025-06-18", Caller: bc.caller})
				if err != nil {
					b.Fatal(err)
				}
				if strings.HasPrefix(bc.name, "list") {
					if _, err := json.Marshal(res); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
