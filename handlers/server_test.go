package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// eras are the revisions a server answers in, oldest first.
var eras = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"}

// fakePeer records what a handler sends through its Request. The embedded
// Peer (nil) stands in for the methods these tests do not use.
type fakePeer struct {
	Peer
	mu       sync.Mutex
	notes    []string // method + " " + params JSON
	timeouts []time.Duration
}

func (p *fakePeer) Notify(method string, params any) bool {
	raw, _ := json.Marshal(params)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, method+" "+string(raw))
	return true
}

func (p *fakePeer) SetTimeout(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timeouts = append(p.timeouts, d)
}

func newRequest(method, version, params string) *Request {
	return &Request{Method: method, Params: json.RawMessage(params), Version: version, Modern: version == "2026-07-28"}
}

// answer is what the session would send: the result's JSON or the error.
type answer struct {
	result string
	err    error
}

func (a answer) String() string {
	if a.err != nil {
		return "error " + a.err.Error()
	}
	return a.result
}

// run calls method through Server.Method as the session does and marshals
// the result with encoding/json.
func run(t *testing.T, s *Server, version, method, params string) answer {
	t.Helper()
	return runReq(t, s, newRequest(method, version, params))
}

func runReq(t *testing.T, s *Server, req *Request) answer {
	t.Helper()
	m, ok := s.Method(req.Method)
	if !ok {
		t.Fatalf("%s: method absent", req.Method)
	}
	res, err := m.Run(context.Background(), req)
	if err != nil {
		return answer{err: err}
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("%s: result does not marshal: %v", req.Method, err)
	}
	if len(raw) == 0 || raw[0] != '{' {
		t.Fatalf("%s: result is not a JSON object: %s", req.Method, raw)
	}
	return answer{result: string(raw)}
}

// wantResult fails unless a is a result with exactly this JSON.
func wantResult(t *testing.T, a answer, want string) {
	t.Helper()
	if a.err != nil {
		t.Fatalf("got %v, want result %s", a, want)
	}
	if a.result != want {
		t.Fatalf("got  %s\nwant %s", a.result, want)
	}
}

// wantError fails unless a is the protocol error with this code, message
// and data (JSON; "" for none).
func wantError(t *testing.T, a answer, code int, message, data string) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(a.err, &je) {
		t.Fatalf("got %v, want protocol error %d", a, code)
	}
	gotData := ""
	if je.Data != nil {
		raw, _ := json.Marshal(je.Data)
		gotData = string(raw)
	}
	if je.Code != code || je.Message != message || gotData != data {
		t.Fatalf("got error %d %q data %s\nwant      %d %q data %s", je.Code, je.Message, gotData, code, message, data)
	}
}

// wantInternal fails unless a is an error the session turns into a generic
// -32603 (not a *jsonrpc.Error) whose text contains part.
func wantInternal(t *testing.T, a answer, part string) {
	t.Helper()
	var je *jsonrpc.Error
	if a.err == nil || errors.As(a.err, &je) {
		t.Fatalf("got %v, want a plain (internal) error", a)
	}
	if !strings.Contains(a.err.Error(), part) {
		t.Fatalf("error %q does not mention %q", a.err, part)
	}
}

func textTool(text string) ToolHandler {
	return func(context.Context, *Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult(text), nil
	}
}

func TestCapabilitiesFollowRegistrations(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	caps := func() string {
		raw, _ := json.Marshal(s.Capabilities())
		return string(raw)
	}
	if got := caps(); got != `{}` {
		t.Fatalf("empty server: %s", got)
	}
	for _, m := range []string{"tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read", "prompts/list", "prompts/get", "completion/complete"} {
		if _, ok := s.Method(m); ok {
			t.Errorf("empty server offers %s", m)
		}
	}
	s.AddTool(Tool{Tool: mcp.Tool{Name: "a"}}, textTool("a"))
	if got := caps(); got != `{"tools":{"listChanged":true}}` {
		t.Fatalf("with a tool: %s", got)
	}
	if _, ok := s.Method("resources/list"); ok {
		t.Error("resources/list offered without resources")
	}
	s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: "p"}}, func(context.Context, *Request, map[string]string) (*mcp.GetPromptResult, error) { return nil, nil })
	s.AddResource(Resource{Resource: mcp.Resource{URI: "x:a", Name: "a"}}, func(context.Context, *Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return nil, nil
	})
	if got := caps(); got != `{"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}` {
		t.Fatalf("without completions: %s", got)
	}
	s.AddResourceTemplate(ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "x:{v}", Name: "v"}, Complete: map[string]CompletionHandler{"v": CompleteFrom("a")}},
		func(context.Context, *Request, string, map[string]string) ([]mcp.ResourceContents, error) {
			return nil, nil
		})
	if got := caps(); got != `{"completions":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}` {
		t.Fatalf("all: %s", got)
	}
	// A client told of a capability keeps finding its methods.
	s.RemoveTool("a")
	if _, ok := s.Method("tools/list"); !ok {
		t.Error("tools/list gone with the last tool")
	}
	wantResult(t, run(t, s, "2025-11-25", "tools/list", `{}`), `{"tools":[]}`)
}

func TestMethodsCacheable(t *testing.T) {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddTool(Tool{Tool: mcp.Tool{Name: "a"}}, textTool("a"))
	s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: "p", Arguments: []mcp.PromptArgument{{Name: "x"}}}, Complete: map[string]CompletionHandler{"x": CompleteFrom("y")}},
		func(context.Context, *Request, map[string]string) (*mcp.GetPromptResult, error) { return nil, nil })
	s.AddResource(Resource{Resource: mcp.Resource{URI: "x:a", Name: "a"}}, func(context.Context, *Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return nil, nil
	})
	want := map[string]bool{
		"tools/list": true, "tools/call": false,
		"resources/list": true, "resources/templates/list": true, "resources/read": true,
		"prompts/list": true, "prompts/get": false,
		"completion/complete": false,
	}
	for name, cacheable := range want {
		m, ok := s.Method(name)
		if !ok || m.Run == nil {
			t.Errorf("%s: absent", name)
			continue
		}
		if m.Cacheable != cacheable {
			t.Errorf("%s: Cacheable %v, want %v", name, m.Cacheable, cacheable)
		}
	}
	for _, name := range []string{"resources/subscribe", "ping", "initialize", "logging/setLevel", "nope"} {
		if _, ok := s.Method(name); ok {
			t.Errorf("%s: offered", name)
		}
	}
}

func TestInfoAndInstructions(t *testing.T) {
	info := mcp.Implementation{Name: "n", Title: "T", Version: "2"}
	s := NewServer(info, "Use it.")
	if !reflect.DeepEqual(s.Info(), info) || s.Instructions() != "Use it." {
		t.Fatalf("Info %+v, Instructions %q", s.Info(), s.Instructions())
	}
}
