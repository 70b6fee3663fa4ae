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

// rawOut marshals to JSON that is not compact, as a MarshalJSON method may:
// encoding/json compacts it, and so must the result.
type rawOut struct{}

func (rawOut) MarshalJSON() ([]byte, error) { return []byte(`{ "spaced" : [ 1 , "<&>" ] }`), nil }

// TestTypedResultAppendJSON: the results of typed tools, whose structured
// content AppendJSON copies as the server marshalled it, are byte for byte
// what json.Marshal writes, in every revision; and a structuredContent put
// in the result's place afterwards is encoded by encoding/json again.
func TestTypedResultAppendJSON(t *testing.T) {
	s := handlers.NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	handlers.AddTool(s, mcp.Tool{Name: "echo"}, func(_ context.Context, _ *handlers.Request, in benchTextIn) (benchTextOut, error) {
		return benchTextOut(in), nil
	})
	handlers.AddTool(s, mcp.Tool{Name: "raw"}, func(context.Context, *handlers.Request, struct{}) (any, error) {
		return rawOut{}, nil
	})
	handlers.AddTool(s, mcp.Tool{Name: "fails"}, func(context.Context, *handlers.Request, struct{}) (benchTextOut, error) {
		return benchTextOut{}, fmt.Errorf("it failed <here>")
	})
	m, _ := s.Method("tools/call")
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		for _, params := range []string{
			`{"name":"echo","arguments":{"text":"plain"}}`,
			`{"name":"echo","arguments":{"text":"<esc> & \"q\" \n ✓ \u2028 \ud800 ` + "\xff" + `"}}`,
			`{"name":"raw","arguments":{}}`,
			`{"name":"fails","arguments":{}}`,
		} {
			res, err := m.Run(context.Background(), &handlers.Request{Method: "tools/call", Params: json.RawMessage(params), Version: version})
			if err != nil {
				t.Fatalf("%s %s: %v", version, params, err)
			}
			r := res.(*mcp.CallToolResult)
			want, _ := json.Marshal(r)
			if got, err := r.AppendJSON([]byte("prefix:")); err != nil || string(got) != "prefix:"+string(want) {
				t.Errorf("%s %s: AppendJSON = %s (%v), want prefix:%s", version, params, got, err, want)
			}
			if r.StructuredContent == nil {
				continue
			}
			r.StructuredContent = json.RawMessage(`{ "replaced" : "<" }`)
			want, _ = json.Marshal(r)
			if got, err := r.AppendJSON(nil); err != nil || string(got) != string(want) {
				t.Errorf("%s %s, replaced: AppendJSON = %s (%v), want %s", version, params, got, err, want)
			}
		}
	}
}

type benchTextIn struct {
	Text string `json:"text"`
}

type benchTextOut struct {
	Text string `json:"text"`
}

// BenchmarkTypedToolsCall: tools/call of typed tools (AddTool), from the
// params to the result's bytes (AppendJSON, as the session writes them):
// "add" is a small structured result, "echo-1MiB" a typed echo of 1 MiB,
// whose text crosses the input decode, the output schema check and the
// result's two copies (structuredContent and its text mirror).
func BenchmarkTypedToolsCall(b *testing.B) {
	s := handlers.NewServer(mcp.Implementation{Name: "bench", Version: "1"}, "")
	handlers.AddTool(s, mcp.Tool{Name: "add"}, func(_ context.Context, _ *handlers.Request, in AddIn) (AddOut, error) {
		return AddOut{Sum: in.A + in.B}, nil
	})
	handlers.AddTool(s, mcp.Tool{Name: "echo"}, func(_ context.Context, _ *handlers.Request, in benchTextIn) (benchTextOut, error) {
		return benchTextOut(in), nil
	})
	m, _ := s.Method("tools/call")
	big := strings.Repeat("abcdefghijklmnopqrstuvwxyzABCDEF", 1<<15)
	for _, bc := range []struct{ name, params string }{
		{"add", `{"name":"add","arguments":{"a":2,"b":3}}`},
		{"echo-1MiB", `{"name":"echo","arguments":{"text":"` + big + `"}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.params)))
			ctx := context.Background()
			params := json.RawMessage(bc.params)
			var out []byte
			for b.Loop() {
				res, err := m.Run(ctx, &handlers.Request{Method: "tools/call", Params: params, Version: "2025-06-18"})
				if err != nil {
					b.Fatal(err)
				}
				if out, err = res.(*mcp.CallToolResult).AppendJSON(out[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
