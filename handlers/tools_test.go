package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

func TestListToolsPerEra(t *testing.T) {
	yes := true
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddTool(Tool{
		Tool: mcp.Tool{
			Name:         "rich",
			Title:        "Rich",
			Description:  "Has everything.",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: &yes},
			Icons:        []mcp.Icon{{Src: "data:,x", MimeType: "image/png"}},
		},
		Timeout: time.Second,
	}, textTool("x"))
	s.AddTool(Tool{Tool: mcp.Tool{Name: "plain"}}, textTool("x"))
	const plain = `{"name":"plain","inputSchema":{"type":"object"}}`
	want := map[string]string{
		"2024-11-05": `{"tools":[{"name":"rich","description":"Has everything.","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}},` + plain + `]}`,
		"2025-03-26": `{"tools":[{"name":"rich","description":"Has everything.","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"annotations":{"readOnlyHint":true}},` + plain + `]}`,
		"2025-06-18": `{"tools":[{"name":"rich","title":"Rich","description":"Has everything.","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},` + plain + `]}`,
		"2025-11-25": `{"tools":[{"name":"rich","title":"Rich","description":"Has everything.","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"icons":[{"src":"data:,x","mimeType":"image/png"}]},` + plain + `]}`,
	}
	want["2026-07-28"] = want["2025-11-25"]
	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			wantResult(t, run(t, s, v, "tools/list", `{}`), want[v])
		})
	}
}

func TestCallToolProtocolErrors(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddTool(Tool{Tool: mcp.Tool{Name: "echo"}}, textTool("x"))
	s.AddTool(Tool{Tool: mcp.Tool{Name: "refuses"}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return nil, fmt.Errorf("wrapped: %w", &jsonrpc.Error{Code: -32042, Message: "go elsewhere"})
	})
	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			for _, c := range []struct{ params, message string }{
				{`{}`, "Invalid params: tools/call needs a string name and an object of arguments"},
				{`{"name":7}`, "Invalid params: tools/call needs a string name and an object of arguments"},
				{`[]`, "Invalid params: tools/call needs a string name and an object of arguments"},
				{`{"name":"echo","arguments":"text"}`, "Invalid params: arguments must be an object"},
				{`{"name":"echo","arguments":[1]}`, "Invalid params: arguments must be an object"},
				{`{"name":"nope","arguments":{}}`, `Unknown tool: "nope"`},
				{`{"name":"n\u00f6pe"}`, `Unknown tool: "nöpe"`},
				{`{"name":"caf` + "\xe9" + `"}`, `Unknown tool: "caf` + "\ufffd" + `"`}, // invalid UTF-8 reads as U+FFFD, as encoding/json has it
				{`{"name":"echo","name":null}`, "Invalid params: tools/call needs a string name and an object of arguments"},
			} {
				wantError(t, run(t, s, v, "tools/call", c.params), jsonrpc.CodeInvalidParams, c.message, "")
			}
			wantError(t, run(t, s, v, "tools/call", `{"name":"refuses"}`), -32042, "go elsewhere", "")
			wantResult(t, run(t, s, v, "tools/call", `{"name":"echo","arguments":null}`), `{"content":[{"type":"text","text":"x"}]}`)
			// An escaped name is the name it spells.
			wantResult(t, run(t, s, v, "tools/call", `{"name":"ech\u006f"}`), `{"content":[{"type":"text","text":"x"}]}`)
		})
	}
}

func TestCallToolFailureIsAResult(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddTool(Tool{Tool: mcp.Tool{Name: "fail"}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return nil, errors.New("disk <full>")
	})
	s.AddTool(Tool{Tool: mcp.Tool{Name: "nil"}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) { return nil, nil })
	for _, v := range eras {
		wantResult(t, run(t, s, v, "tools/call", `{"name":"fail"}`), `{"content":[{"type":"text","text":"disk \u003cfull\u003e"}],"isError":true}`)
		wantResult(t, run(t, s, v, "tools/call", `{"name":"nil"}`), `{"content":[]}`)
	}
}

func TestCallToolInputValidationPerEra(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	called := 0
	s.AddTool(Tool{
		Tool: mcp.Tool{
			Name:        "count",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"],"additionalProperties":false}`),
		},
	}, func(_ context.Context, _ *Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		called++
		return mcp.TextResult(string(args)), nil
	})
	const bad = `{"name":"count","arguments":{"n":0,"x":true}}`
	const msg = `Invalid arguments for tool \"count\": arguments/n: must be \u003e= 1; arguments: unexpected property \"x\" (allowed: \"n\")`
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18"} {
		wantError(t, run(t, s, v, "tools/call", bad), jsonrpc.CodeInvalidParams,
			`Invalid params: Invalid arguments for tool "count": arguments/n: must be >= 1; arguments: unexpected property "x" (allowed: "n")`, "")
	}
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		wantResult(t, run(t, s, v, "tools/call", bad), `{"content":[{"type":"text","text":"`+msg+`"}],"isError":true}`)
	}
	wantError(t, run(t, s, "2025-06-18", "tools/call", `{"name":"count"}`), jsonrpc.CodeInvalidParams,
		`Invalid params: Invalid arguments for tool "count": arguments: missing required property "n"`, "")
	if called != 0 {
		t.Fatalf("handler ran %d times on invalid arguments", called)
	}
	wantResult(t, run(t, s, "2025-06-18", "tools/call", `{"name":"count","arguments":{"n":2}}`), `{"content":[{"type":"text","text":"{\"n\":2}"}]}`)
}

func TestCallToolStructuredContentPerEra(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	out := json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`)
	s.AddTool(Tool{Tool: mcp.Tool{Name: "mirrored", OutputSchema: out}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: map[string]int{"sum": 3}}, nil
	})
	s.AddTool(Tool{Tool: mcp.Tool{Name: "own-text", OutputSchema: out}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("three")}, StructuredContent: map[string]int{"sum": 3}}, nil
	})
	s.AddTool(Tool{Tool: mcp.Tool{Name: "array"}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: []int{1, 2}}, nil
	})
	for _, c := range []struct{ version, mirrored, ownText, array string }{
		{"2024-11-05", `{"content":[{"type":"text","text":"{\"sum\":3}"}]}`, `{"content":[{"type":"text","text":"three"}]}`, `{"content":[{"type":"text","text":"[1,2]"}]}`},
		{"2025-03-26", `{"content":[{"type":"text","text":"{\"sum\":3}"}]}`, `{"content":[{"type":"text","text":"three"}]}`, `{"content":[{"type":"text","text":"[1,2]"}]}`},
		{"2025-06-18", `{"content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3}}`, `{"content":[{"type":"text","text":"three"}],"structuredContent":{"sum":3}}`, `{"content":[{"type":"text","text":"[1,2]"}]}`},
		{"2025-11-25", `{"content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3}}`, `{"content":[{"type":"text","text":"three"}],"structuredContent":{"sum":3}}`, `{"content":[{"type":"text","text":"[1,2]"}]}`},
		// 2026-07-28 allows any JSON value as structuredContent.
		{"2026-07-28", `{"content":[{"type":"text","text":"{\"sum\":3}"}],"structuredContent":{"sum":3}}`, `{"content":[{"type":"text","text":"three"}],"structuredContent":{"sum":3}}`, `{"content":[{"type":"text","text":"[1,2]"}],"structuredContent":[1,2]}`},
	} {
		t.Run(c.version, func(t *testing.T) {
			wantResult(t, run(t, s, c.version, "tools/call", `{"name":"mirrored"}`), c.mirrored)
			wantResult(t, run(t, s, c.version, "tools/call", `{"name":"own-text"}`), c.ownText)
			wantResult(t, run(t, s, c.version, "tools/call", `{"name":"array"}`), c.array)
		})
	}
}

func TestCallToolOutputSchemaViolationIsInternal(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	out := json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`)
	shared := &mcp.CallToolResult{StructuredContent: map[string]string{"sum": "three"}}
	s.AddTool(Tool{Tool: mcp.Tool{Name: "wrong", OutputSchema: out}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return shared, nil
	})
	s.AddTool(Tool{Tool: mcp.Tool{Name: "none", OutputSchema: out}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult("forgot"), nil
	})
	s.AddTool(Tool{Tool: mcp.Tool{Name: "failing", OutputSchema: out}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("no luck")}, IsError: true}, nil
	})
	for _, v := range eras {
		// Also for revisions that never see structuredContent: the tool is broken.
		wantInternal(t, run(t, s, v, "tools/call", `{"name":"wrong"}`), `structuredContent does not match its outputSchema: sum: must be number, got string`)
		wantInternal(t, run(t, s, v, "tools/call", `{"name":"none"}`), `has an outputSchema but returned no structuredContent`)
		wantResult(t, run(t, s, v, "tools/call", `{"name":"failing"}`), `{"content":[{"type":"text","text":"no luck"}],"isError":true}`)
	}
	if len(shared.Content) != 0 {
		t.Fatalf("the handler's result was modified: %+v", shared)
	}
}

func TestContentPerEra(t *testing.T) {
	prio := 0.0
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddTool(Tool{Tool: mcp.Tool{Name: "mixed"}}, func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		text := mcp.TextContent("hi")
		text.Annotations = &mcp.Annotations{Audience: []string{"user"}, Priority: &prio, LastModified: "2026-01-02T03:04:05Z"}
		return &mcp.CallToolResult{Content: []mcp.Content{
			text,
			mcp.ImageContent([]byte{1, 2, 3}, "image/png"),
			mcp.AudioContent([]byte("RIFF"), "audio/wav"),
			mcp.ResourceLink(mcp.Resource{URI: "file:///a.txt", Name: "a", Title: "A", MimeType: "text/plain", Icons: []mcp.Icon{{Src: "data:,i"}}}),
			mcp.EmbeddedResource(mcp.ResourceContents{URI: "file:///b.bin", Blob: []byte{0xff}}),
		}}, nil
	})
	const (
		text     = `{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0,"lastModified":"2026-01-02T03:04:05Z"}}`
		textOld  = `{"type":"text","text":"hi","annotations":{"audience":["user"],"priority":0}}`
		image    = `{"type":"image","data":"AQID","mimeType":"image/png"}`
		audio    = `{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}`
		embedded = `{"type":"resource","resource":{"uri":"file:///b.bin","blob":"/w=="}}`
		linkText = `{"type":"text","text":"a \u003cfile:///a.txt\u003e"}`
	)
	want := map[string]string{
		"2024-11-05": `{"content":[` + textOld + `,` + image + `,{"type":"text","text":"[audio/wav audio left out: not supported by protocol 2024-11-05]"},` + linkText + `,` + embedded + `]}`,
		"2025-03-26": `{"content":[` + textOld + `,` + image + `,` + audio + `,` + linkText + `,` + embedded + `]}`,
		"2025-06-18": `{"content":[` + text + `,` + image + `,` + audio + `,{"type":"resource_link","uri":"file:///a.txt","name":"a","title":"A","mimeType":"text/plain"},` + embedded + `]}`,
		"2025-11-25": `{"content":[` + text + `,` + image + `,` + audio + `,{"type":"resource_link","uri":"file:///a.txt","name":"a","title":"A","mimeType":"text/plain","icons":[{"src":"data:,i"}]},` + embedded + `]}`,
	}
	want["2026-07-28"] = want["2025-11-25"]
	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			wantResult(t, run(t, s, v, "tools/call", `{"name":"mixed"}`), want[v])
		})
	}
}

func TestContentMarshal(t *testing.T) {
	for _, c := range []struct {
		c    mcp.Content
		want string
	}{
		{mcp.TextContent(""), `{"type":"text","text":""}`},
		{mcp.ImageContent(nil, "image/gif"), `{"type":"image","data":"","mimeType":"image/gif"}`},
		{mcp.EmbeddedResource(mcp.ResourceContents{URI: "x:a", MimeType: "text/plain"}), `{"type":"resource","resource":{"uri":"x:a","mimeType":"text/plain","text":""}}`},
	} {
		raw, err := json.Marshal(c.c)
		if err != nil || string(raw) != c.want {
			t.Errorf("got %s (%v), want %s", raw, err, c.want)
		}
	}
	for _, c := range []mcp.Content{{Type: "video"}, {Type: "resource_link"}, {Type: "resource"}} {
		if raw, err := json.Marshal(c); err == nil {
			t.Errorf("%+v marshalled to %s", c, raw)
		}
	}
}

func TestContentRoundTrip(t *testing.T) {
	prio := 1.0
	for _, c := range []mcp.Content{
		{Type: "text", Text: "hi", Annotations: &mcp.Annotations{Audience: []string{"assistant"}, Priority: &prio}},
		mcp.ImageContent([]byte{1, 2}, "image/png"),
		mcp.AudioContent([]byte{}, "audio/wav"),
		mcp.ResourceLink(mcp.Resource{URI: "x:a", Name: "a", MimeType: "text/plain", Annotations: &mcp.Annotations{LastModified: "2026-01-01T00:00:00Z"}}),
		mcp.EmbeddedResource(mcp.ResourceContents{URI: "x:b", Blob: []byte{}}),
		mcp.EmbeddedResource(mcp.ResourceContents{URI: "x:c", MimeType: "text/plain", Text: "c"}),
	} {
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var back mcp.Content
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if !reflect.DeepEqual(back, c) {
			t.Errorf("%s came back as %+v, want %+v", raw, back, c)
		}
	}
	var c mcp.Content
	if err := json.Unmarshal([]byte(`{"text":"no type"}`), &c); err == nil {
		t.Error("a block without a type was accepted")
	}
}

func TestToolTimeout(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddTool(Tool{Tool: mcp.Tool{Name: "slow"}, Timeout: 20 * time.Millisecond}, func(ctx context.Context, _ *Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Second):
			return mcp.TextResult("too late"), nil
		}
	})
	s.AddTool(Tool{Tool: mcp.Tool{Name: "quick"}}, textTool("ok"))

	// With a session, the session owns the deadline.
	peer := &fakePeer{}
	req := newRequest("tools/call", "2025-11-25", `{"name":"quick"}`)
	req.Peer = peer
	runReq(t, s, req)
	if len(peer.timeouts) != 0 {
		t.Fatalf("a tool without Timeout set %v", peer.timeouts)
	}
	peer2 := &fakePeer{}
	req = newRequest("tools/call", "2025-11-25", `{"name":"slow"}`)
	req.Peer = peer2
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stands in for the session's timer having fired
	m, _ := s.Method("tools/call")
	if _, err := m.Run(ctx, req); err != nil {
		t.Fatal(err)
	}
	if len(peer2.timeouts) != 1 || peer2.timeouts[0] != 20*time.Millisecond {
		t.Fatalf("SetTimeout calls: %v", peer2.timeouts)
	}

	// Without one (a Request built by hand), the context carries it.
	start := time.Now()
	a := run(t, s, "2025-11-25", "tools/call", `{"name":"slow"}`)
	wantResult(t, a, `{"content":[{"type":"text","text":"context deadline exceeded"}],"isError":true}`)
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("timeout took %v", d)
	}
}

func TestAddToolRejects(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	for _, c := range []struct {
		name string
		tool Tool
		h    ToolHandler
		want string
	}{
		{"no handler", Tool{Tool: mcp.Tool{Name: "a"}}, nil, "needs a handler"},
		{"empty name", Tool{Tool: mcp.Tool{Name: ""}}, textTool("x"), "invalid tool name"},
		{"space in name", Tool{Tool: mcp.Tool{Name: "a b"}}, textTool("x"), "invalid tool name"},
		{"long name", Tool{Tool: mcp.Tool{Name: strings.Repeat("a", 129)}}, textTool("x"), "invalid tool name"},
		{"array schema", Tool{Tool: mcp.Tool{Name: "a", InputSchema: json.RawMessage(`{"type":"array"}`)}}, textTool("x"), `"type":"object"`},
		{"bad schema", Tool{Tool: mcp.Tool{Name: "a", InputSchema: json.RawMessage(`{"type":"object","minProperties":"x"}`)}}, textTool("x"), "inputSchema"},
		{"bad output schema", Tool{Tool: mcp.Tool{Name: "a", OutputSchema: json.RawMessage(`{"$ref":"http://example.com/s"}`)}}, textTool("x"), "outputSchema"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				v := recover()
				if msg, _ := v.(string); !strings.Contains(msg, c.want) {
					t.Fatalf("panic %v, want one mentioning %q", v, c.want)
				}
			}()
			s.AddTool(c.tool, c.h)
		})
	}
	if _, ok := s.Method("tools/list"); ok {
		t.Fatal("a rejected tool was registered")
	}
	s.AddTool(Tool{Tool: mcp.Tool{Name: strings.Repeat("a", 128)}}, textTool("x"))
	s.AddTool(Tool{Tool: mcp.Tool{Name: "A-z_0.9"}}, textTool("x"))
}

func TestReplaceToolKeepsPlace(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddTool(Tool{Tool: mcp.Tool{Name: "a"}}, textTool("1"))
	s.AddTool(Tool{Tool: mcp.Tool{Name: "b"}}, textTool("1"))
	s.AddTool(Tool{Tool: mcp.Tool{Name: "a", Description: "new"}}, textTool("2"))
	wantResult(t, run(t, s, "2025-11-25", "tools/list", `{}`),
		`{"tools":[{"name":"a","description":"new","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]}`)
	wantResult(t, run(t, s, "2025-11-25", "tools/call", `{"name":"a"}`), `{"content":[{"type":"text","text":"2"}]}`)
	if !s.RemoveTool("a") || s.RemoveTool("a") {
		t.Fatal("RemoveTool: want true then false")
	}
	wantError(t, run(t, s, "2025-11-25", "tools/call", `{"name":"a"}`), jsonrpc.CodeInvalidParams, `Unknown tool: "a"`, "")
}

// BenchmarkCallTool measures what the handlers add to a call of a small
// tool: params decoding, argument validation, result shaping.
func BenchmarkCallTool(b *testing.B) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddTool(Tool{
		Tool: mcp.Tool{
			Name:        "echo",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		},
	}, func(_ context.Context, _ *Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return mcp.TextResult(a.Text), nil
	})
	m, _ := s.Method("tools/call")
	params := json.RawMessage(`{"name":"echo","arguments":{"text":"hello, world"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Run(context.Background(), &Request{Method: "tools/call", Params: params, Version: "2025-11-25"}); err != nil {
			b.Fatal(err)
		}
	}
}

// A handler that needs the client's input in 2026-07-28 returns
// mcp.ErrInputRequired; it must reach the session untouched, which answers
// input_required, rather than become a tool error.
func TestInputRequiredPassesThrough(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	ask := func(ctx context.Context, req *Request) (string, error) {
		res, err := req.Elicit(ctx, "Name?", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`))
		if err != nil {
			return "", err
		}
		return fmt.Sprint(res.Content["name"]), nil
	}
	s.AddTool(Tool{Tool: mcp.Tool{Name: "raw"}}, func(ctx context.Context, req *Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		name, err := ask(ctx, req)
		if err != nil {
			return nil, err
		}
		return mcp.TextResult(name), nil
	})
	AddTool(s, Tool{Tool: mcp.Tool{Name: "typed"}}, func(ctx context.Context, req *Request, _ struct{}) (any, error) {
		return ask(ctx, req)
	})
	s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: "p"}}, func(ctx context.Context, req *Request, _ map[string]string) (*mcp.GetPromptResult, error) {
		_, err := ask(ctx, req)
		return nil, err
	})
	s.AddResource(Resource{Resource: mcp.Resource{URI: "x:r", Name: "r"}}, func(ctx context.Context, req *Request, _ string, _ map[string]string) ([]mcp.ResourceContents, error) {
		_, err := ask(ctx, req)
		return nil, err
	})
	for _, c := range []struct{ method, params string }{
		{"tools/call", `{"name":"raw"}`},
		{"tools/call", `{"name":"typed"}`},
		{"prompts/get", `{"name":"p"}`},
		{"resources/read", `{"uri":"x:r"}`},
	} {
		req := newRequest(c.method, "2026-07-28", c.params)
		req.ClientCapabilities = json.RawMessage(`{"elicitation":{}}`)
		if a := runReq(t, s, req); !errors.Is(a.err, mcp.ErrInputRequired) {
			t.Errorf("%s %s: %v, want mcp.ErrInputRequired", c.method, c.params, a)
		}
		// The retry carries the answer.
		req = newRequest(c.method, "2026-07-28", c.params)
		req.ClientCapabilities = json.RawMessage(`{"elicitation":{}}`)
		req.InputResponses = map[string]json.RawMessage{"q1": json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`)}
		if c.method == "tools/call" {
			wantResult(t, runReq(t, s, req), `{"content":[{"type":"text","text":"Ada"}]}`)
		}
	}
}

// TestCallToolResultAppendJSON: the direct encoding is byte for byte what
// json.Marshal writes, on the fast path and off it.
func TestCallToolResultAppendJSON(t *testing.T) {
	for _, r := range []*mcp.CallToolResult{
		mcp.TextResult("plain"),
		mcp.TextResult("<esc> & \"q\" \n ✓ \u2028 \xff"),
		{Content: []mcp.Content{mcp.TextContent("a"), mcp.TextContent("b")}, IsError: true},
		{Content: []mcp.Content{}},
		{},
		{Content: []mcp.Content{mcp.TextContent("s")}, StructuredContent: map[string]int{"n": 1}},
		{Content: []mcp.Content{mcp.ImageContent([]byte{1, 2}, "image/png")}},
	} {
		want, werr := json.Marshal(r)
		got, gerr := r.AppendJSON([]byte("prefix:"))
		if (werr == nil) != (gerr == nil) || string(got) != "prefix:"+string(want) {
			t.Errorf("AppendJSON = %s (%v), want prefix:%s (%v)", got, gerr, want, werr)
		}
	}
}

// TestCallToolResultAppendJSONParts: head, text and tail together are what
// AppendJSON writes, for exactly the results whose one text block is long
// enough and needs no escaping.
func TestCallToolResultAppendJSONParts(t *testing.T) {
	long := strings.Repeat("plain text, ", 10)
	for _, c := range []struct {
		r     *mcp.CallToolResult
		split bool
	}{
		{mcp.TextResult(long), true},
		{&mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(long)}, IsError: true}, true},
		{mcp.TextResult("short"), false},
		{mcp.TextResult(long + "<"), false},
		{mcp.TextResult(long + "\n"), false},
		{mcp.TextResult(long + "\u2028"), false},
		{mcp.TextResult(long + "é✓"), true},
		{&mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(long), mcp.TextContent(long)}}, false},
		{&mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(long)}, StructuredContent: map[string]int{"n": 1}}, false},
		{&mcp.CallToolResult{Content: []mcp.Content{mcp.ImageContent([]byte(long), "image/png")}}, false},
	} {
		want, err := c.r.AppendJSON([]byte("prefix:"))
		if err != nil {
			t.Fatal(err)
		}
		head, text, tail, ok := c.r.AppendJSONParts([]byte("prefix:"), 64)
		if ok != c.split {
			t.Errorf("%.40s…: split %v, want %v", want, ok, c.split)
			continue
		}
		if !ok {
			if string(head) != "prefix:" {
				t.Errorf("not split, but dst became %q", head)
			}
			continue
		}
		if got := string(head) + text + string(tail); got != string(want) {
			t.Errorf("parts = %s, want %s", got, want)
		}
	}
}
