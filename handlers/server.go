package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/mcprt/mcprt/session/jsonrpc"
)

// Implementation names a server or client, as in initialize's serverInfo
// and 2026-07-28's _meta serverInfo.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Tool describes a tool as tools/list shows it.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema, when set, describes structuredContent (2025-06-18 and later).
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
}

// ToolAnnotations are hints about a tool's behaviour; clients treat them as untrusted.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Content is one block of a tool result.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// TextContent returns a text block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// CallToolResult is a tool's answer. A failure of the tool itself (as
// opposed to a malformed request) is a result with IsError set, so the model
// can see it and correct itself.
type CallToolResult struct {
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError,omitempty"`
}

// TextResult returns a result holding one text block.
func TextResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{TextContent(text)}}
}

// ToolHandler runs a tool. args is the raw "arguments" object ({} when the
// client sent none). Returning an error yields a result with isError set and
// the error's text; returning a *jsonrpc.Error yields that protocol error.
// ctx is cancelled when the client cancels the request, when its deadline
// passes and when the server shuts down.
type ToolHandler func(ctx context.Context, req *Request, args json.RawMessage) (*CallToolResult, error)

type tool struct {
	Tool
	handler ToolHandler
}

// Server is the registry of what a server offers. Its methods are safe for
// concurrent use.
type Server struct {
	info         Implementation
	instructions string

	mu    sync.RWMutex
	tools map[string]*tool
	order []string // tool names in registration order: tools/list is deterministic
}

// NewServer returns an empty server with the given identity.
func NewServer(info Implementation, instructions string) *Server {
	return &Server{info: info, instructions: instructions, tools: map[string]*tool{}}
}

// Info returns the server's identity.
func (s *Server) Info() Implementation { return s.info }

// Instructions returns the guidance given to clients at initialize and server/discover.
func (s *Server) Instructions() string { return s.instructions }

// AddTool registers (or replaces) a tool. A nil InputSchema means a tool
// without arguments.
func (s *Server) AddTool(t Tool, h ToolHandler) {
	if t.Name == "" || h == nil {
		panic("handlers: AddTool needs a name and a handler")
	}
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tools[t.Name]; !ok {
		s.order = append(s.order, t.Name)
	}
	s.tools[t.Name] = &tool{Tool: t, handler: h}
}

// RemoveTool unregisters a tool; it reports whether it existed.
func (s *Server) RemoveTool(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tools[name]; !ok {
		return false
	}
	delete(s.tools, name)
	s.order = slices.DeleteFunc(s.order, func(n string) bool { return n == name })
	return true
}

// Capabilities returns the server capabilities to advertise, derived from
// what is registered.
func (s *Server) Capabilities() map[string]any {
	caps := map[string]any{}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.tools) > 0 {
		caps["tools"] = map[string]any{}
	}
	return caps
}

// Method is one server method as the session dispatches it.
type Method struct {
	Run MethodFunc
	// Cacheable marks results that carry ttlMs and cacheScope in 2026-07-28.
	Cacheable bool
}

// MethodFunc runs one request and returns its result (marshalled with
// encoding/json, it must be a JSON object) or an error (a *jsonrpc.Error is
// sent as is; any other error becomes -32603 with a generic message).
type MethodFunc func(ctx context.Context, req *Request) (any, error)

// Method returns the implementation of a server method, if the server
// offers it. Methods of capabilities the server does not have are absent.
func (s *Server) Method(name string) (Method, bool) {
	s.mu.RLock()
	hasTools := len(s.tools) > 0
	s.mu.RUnlock()
	switch name {
	case "tools/list":
		if hasTools {
			return Method{Run: s.listTools, Cacheable: true}, true
		}
	case "tools/call":
		if hasTools {
			return Method{Run: s.callTool}, true
		}
	}
	return Method{}, false
}

func (s *Server) listTools(ctx context.Context, req *Request) (any, error) {
	s.mu.RLock()
	list := make([]*Tool, 0, len(s.order))
	for _, n := range s.order {
		list = append(list, &s.tools[n].Tool)
	}
	s.mu.RUnlock()
	return struct {
		Tools []*Tool `json:"tools"`
	}{list}, nil
}

type callToolParams struct {
	Name      *string         `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func (s *Server) callTool(ctx context.Context, req *Request) (any, error) {
	var p callToolParams
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Name == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: tools/call needs a string name and an object of arguments"}
	}
	if p.Arguments == nil || string(p.Arguments) == "null" {
		p.Arguments = json.RawMessage("{}")
	} else if p.Arguments[0] != '{' {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: arguments must be an object"}
	}
	s.mu.RLock()
	t := s.tools[*p.Name]
	s.mu.RUnlock()
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Unknown tool: %q", *p.Name)}
	}
	res, err := t.handler(ctx, req, p.Arguments)
	if err != nil {
		if _, ok := err.(*jsonrpc.Error); ok {
			return nil, err
		}
		return &CallToolResult{Content: []Content{TextContent(err.Error())}, IsError: true}, nil
	}
	if res == nil {
		res = &CallToolResult{}
	}
	if res.Content == nil {
		res.Content = []Content{}
	}
	return res, nil
}
