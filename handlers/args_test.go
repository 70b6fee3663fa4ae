package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

var argsCases = []string{
	`{}`, `{"text":"hi"}`, `{"text":""}`, `{"text":"a\nb\u00e9\"q\""}`, `{"text":"caf` + "\xe9" + `"}`,
	`{"text":1}`, `{"text":null}`, `{"text":true}`, `{"text":["a"]}`, `{"text":{"text":"inner"}}`,
	`{"text":"first","text":"last"}`, `{"Text":"other case"}`, `{"t\u0065xt":"escaped key"}`,
	` { "other" : [1, {"text": "nested"}] , "text" : "spaced" } `,
	`{"n":3}`, `{"n":-3}`, `{"n":0}`, `{"n":3.0}`, `{"n":3e0}`, `{"n":"3"}`, `{"n":9223372036854775807}`,
	`{"n":9223372036854775808}`, `{"n":-9223372036854775808}`, `{"n":null}`, `{"n":1,"n":2}`,
	`{"b":true}`, `{"b":false}`, `{"b":"true"}`, `{"b":0}`, `{"b":null}`,
}

// reference reads one argument the way a handler did before StringArg:
// encoding/json, with the member picked by its exact name.
func reference(args, name string, v any) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &m) != nil {
		return false
	}
	raw, ok := m[name]
	if !ok || string(raw) == "null" {
		return false // encoding/json leaves the value untouched: no argument
	}
	return json.Unmarshal(raw, v) == nil
}

func TestArgsMatchEncodingJSON(t *testing.T) {
	for _, args := range argsCases {
		var wantS string
		wantOK := reference(args, "text", &wantS)
		if got, ok := handlers.StringArg(json.RawMessage(args), "text"); ok != wantOK || got != wantS {
			t.Errorf("StringArg(%s) = %q, %v; encoding/json: %q, %v", args, got, ok, wantS, wantOK)
		}
		var wantN int
		wantOK = reference(args, "n", &wantN)
		if got, ok := handlers.IntArg(json.RawMessage(args), "n"); ok != wantOK || got != wantN {
			t.Errorf("IntArg(%s) = %d, %v; encoding/json: %d, %v", args, got, ok, wantN, wantOK)
		}
		var wantB bool
		wantOK = reference(args, "b", &wantB)
		if got, ok := handlers.BoolArg(json.RawMessage(args), "b"); ok != wantOK || got != wantB {
			t.Errorf("BoolArg(%s) = %v, %v; encoding/json: %v, %v", args, got, ok, wantB, wantOK)
		}
	}
}

func FuzzStringArg(f *testing.F) {
	for _, c := range argsCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		// Arguments reach a handler as valid JSON; member names that are not
		// UTF-8 are left out, since encoding/json rewrites them as map keys.
		if !jsonrpc.Valid(args) || !utf8.Valid(args) {
			return
		}
		var want string
		wantOK := reference(string(args), "text", &want)
		if got, ok := handlers.StringArg(args, "text"); ok != wantOK || got != want {
			t.Fatalf("StringArg(%s) = %q, %v; encoding/json: %q, %v", args, got, ok, want, wantOK)
		}
	})
}

func BenchmarkStringArg(b *testing.B) {
	args := json.RawMessage(`{"text":"` + strings.Repeat("abcdefghijklmnopqrstuvwxyzABCDEF", 1<<15) + `"}`)
	b.Run("StringArg-1MiB", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(args)))
		for b.Loop() {
			if _, ok := handlers.StringArg(args, "text"); !ok {
				b.Fatal("no text")
			}
		}
	})
	b.Run("json.Unmarshal-1MiB", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(args)))
		for b.Loop() {
			var a struct{ Text *string }
			if json.Unmarshal(args, &a) != nil || a.Text == nil {
				b.Fatal("no text")
			}
		}
	})
}

// A raw tool reads the arguments it needs straight from the JSON the client
// sent, which the tool's schema has already checked. (The session normally
// calls the methods; here we call tools/call directly.)
func ExampleStringArg() {
	s := handlers.NewServer(mcp.Implementation{Name: "demo", Version: "1.0.0"}, "")
	s.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name:        "repeat",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"times":{"type":"integer","minimum":1},"shout":{"type":"boolean"}},"required":["text"]}`),
		},
	}, func(_ context.Context, _ *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		text, ok := handlers.StringArg(args, "text")
		if !ok {
			return nil, fmt.Errorf("repeat needs a string argument \"text\"")
		}
		times, ok := handlers.IntArg(args, "times")
		if !ok {
			times = 1 // optional
		}
		if shout, _ := handlers.BoolArg(args, "shout"); shout {
			text = strings.ToUpper(text)
		}
		return mcp.TextResult(strings.Repeat(text, times)), nil
	})

	m, _ := s.Method("tools/call")
	for _, params := range []string{
		`{"name":"repeat","arguments":{"text":"caf\u00e9 ","times":2}}`,
		`{"name":"repeat","arguments":{"text":"hi","shout":true}}`,
	} {
		res, _ := m.Run(context.Background(), &handlers.Request{Method: "tools/call", Params: json.RawMessage(params)})
		out, _ := json.Marshal(res)
		fmt.Println(string(out))
	}
	// Output:
	// {"content":[{"type":"text","text":"café café "}]}
	// {"content":[{"type":"text","text":"HI"}]}
}
