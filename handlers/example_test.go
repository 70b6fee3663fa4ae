package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

type AddIn struct {
	A int `json:"a" description:"first addend"`
	B int `json:"b" description:"second addend"`
}

type AddOut struct {
	Sum int `json:"sum"`
}

type ShoutIn struct {
	Text string `json:"text" jsonschema:"minLength=1"`
}

type ShoutOut struct {
	Text string `json:"text"`
}

// A server with two typed tools: their input and output schemas come from
// the Go types. The session normally calls the methods; here we call
// tools/call directly.
func ExampleAddTool() {
	s := handlers.NewServer(mcp.Implementation{Name: "calc", Version: "1.0.0"}, "")
	handlers.AddTool(s, mcp.Tool{Name: "add", Description: "Adds two integers."},
		func(_ context.Context, _ *handlers.Request, in AddIn) (AddOut, error) {
			return AddOut{Sum: in.A + in.B}, nil
		})
	handlers.AddTool(s, mcp.Tool{Name: "shout", Description: "Upper-cases text."},
		func(_ context.Context, _ *handlers.Request, in ShoutIn) (ShoutOut, error) {
			return ShoutOut{Text: strings.ToUpper(in.Text) + "!"}, nil
		})

	call := func(version, params string) {
		m, _ := s.Method("tools/call")
		res, err := m.Run(context.Background(), &handlers.Request{
			Method: "tools/call", Params: json.RawMessage(params), Version: version,
		})
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		out, _ := json.Marshal(res)
		fmt.Println(string(out))
	}
	call("2025-11-25", `{"name":"add","arguments":{"a":2,"b":3}}`)
	call("2025-11-25", `{"name":"shout","arguments":{"text":"hello"}}`)
	// Clients before 2025-06-18 get the text only.
	call("2025-03-26", `{"name":"add","arguments":{"a":2,"b":3}}`)
	// Arguments that do not fit the schema: a tool error the model can
	// read (2025-11-25 on), a protocol error before.
	call("2025-11-25", `{"name":"add","arguments":{"a":2}}`)
	call("2025-06-18", `{"name":"shout","arguments":{"text":""}}`)
	// Output:
	// {"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}
	// {"content":[{"type":"text","text":"{\"text\":\"HELLO!\"}"}],"structuredContent":{"text":"HELLO!"}}
	// {"content":[{"type":"text","text":"{\"sum\":5}"}]}
	// {"content":[{"type":"text","text":"Invalid arguments for tool \"add\": arguments: missing required property \"b\""}],"isError":true}
	// error: jsonrpc -32602: Invalid params: Invalid arguments for tool "shout": arguments/text: must be at least 1 character long
}
