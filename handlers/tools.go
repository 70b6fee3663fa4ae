package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/jsonschema"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// Tool is a tool as a server offers it: what tools/list shows (mcp.Tool)
// and how the server runs it.
type Tool struct {
	mcp.Tool
	// Timeout, if positive, replaces the session's request timeout for
	// calls of this tool: the call is answered with a timeout error and its
	// context cancelled once Timeout has passed.
	//
	// It is the tool's own bound on its handler, so it holds for a call
	// run as a task too, where no request timeout does: each run of the
	// handler on the task (a 2026-07-28 task runs it again after each
	// round of answers; the time waiting for them is not counted) has its
	// context cancelled once Timeout has passed, and the task fails with
	// a timeout error (-32603), whatever the handler returns then. A task
	// outlives request timeouts, not the bound its tool declares; its ttl
	// bounds only how long its record is kept.
	Timeout time.Duration `json:"-"`
	// Unchecked marks a tool whose schemas another party enforces, such
	// as the server a gateway forwards its calls to: InputSchema and
	// OutputSchema are listed as given but not compiled, and neither the
	// arguments (beyond being an object) nor the result are checked
	// against them. A schema this package cannot compile (an ECMA-262
	// pattern with a lookahead, say) is then no obstacle, and the other
	// party's validator, not this one, decides what fits.
	Unchecked bool `json:"-"`
	// Start, when set, is offered each call of the tool first, before
	// the handler (see ToolStarter).
	Start ToolStarter `json:"-"`
	// Access, when set, says which callers may see and use it (see
	// Access); nil: everyone.
	Access *Access `json:"-"`
	// Unlisted leaves the tool out of tools/list while tools/call still
	// serves it (Access still applies): for a server that offers a search
	// of its tools instead of their catalog, to clients that may still
	// call a name they learnt before (see Server.Tools).
	Unlisted bool `json:"-"`
	// AskBeforeTask, for a tool that runs as a task (Execution's
	// taskSupport, Server.ServeTasks), asks its questions in the request's
	// own rounds in 2026-07-28 (input_required results) and becomes a task
	// only in the round where Ask has every answer: the handler runs on the
	// request until then, and from the start again, with the answers, on
	// the task. Its handler must ask before anything else.
	AskBeforeTask bool `json:"-"`
	// Resumable, for a tool that runs as a task, declares that its call
	// may be run again from its arguments when the process running it
	// died: what it does is safe to do twice (idempotent, or it picks up
	// its own progress). With a durable task store (mcprt serve
	// -tasks-dir), a task of it that a crash or restart left working is
	// then run again by the next server on the store, once, instead of
	// failed (see tasks.Resumer). Its record keeps the call (arguments,
	// revision, client capabilities, the vouched-for Caller; no
	// credential). The run again has no client to talk to: in 2025-11-25
	// its progress, logs and questions to the client go nowhere (a
	// question fails); in 2026-07-28 its questions are input requests, as
	// before, answered with tasks/update.
	Resumable bool `json:"-"`
}

// ToolStarter starts a call of a tool without holding a handler actor
// while it runs: for a tool that waits on something else, such as a
// gateway's tool waiting for the server it forwards the call to. It runs
// on the session's goroutine, once the arguments are checked, so it must
// not block. It returns false to leave the call to the tool's handler, on
// a handler actor; or true once it has taken the call, which it must then
// settle exactly once, from any goroutine, through reply. ctx is cancelled
// as the handler's would be: when the client cancels the request, when its
// deadline passes, when the server shuts down, and once it is answered.
type ToolStarter func(ctx context.Context, req *Request, args json.RawMessage, reply ToolReply) bool

// ToolReply settles a call that a ToolStarter took. It is a small value,
// to keep beside whatever else the starter keeps for the call.
type ToolReply struct {
	t   *tool
	req *Request
	d   Deferred
}

// Done answers the call with what the tool's handler would have returned.
func (r ToolReply) Done(res *mcp.CallToolResult, err error) {
	r.d.Reply(r.t.answer(r.req, res, err))
}

// Fallback gives the call to the tool's handler, on a handler actor, as if
// the ToolStarter had not taken it.
func (r ToolReply) Fallback() { r.d.Fallback() }

// forVersion adapts t to what req's revision can carry.
func (t *Tool) forVersion(req *Request) *Tool {
	if since(req, mcp.Version20251125) {
		return t
	}
	c := *t
	c.Icons, c.Execution = nil, nil
	if !since(req, mcp.Version20250618) {
		c.Title, c.OutputSchema, c.Meta = "", nil, nil
	}
	if !since(req, mcp.Version20250326) {
		c.Annotations = nil
	}
	return &c
}

// ToolHandler runs a tool. args is the raw "arguments" object ({} when the
// client sent none), already validated against the tool's InputSchema.
// Returning an error yields a result with isError set and the error's text;
// returning a *jsonrpc.Error yields that protocol error. ctx is cancelled
// when the client cancels the request, when its deadline passes and when
// the server shuts down.
type ToolHandler func(ctx context.Context, req *Request, args json.RawMessage) (*mcp.CallToolResult, error)

type tool struct {
	Tool
	input   *jsonschema.Schema // nil for an Unchecked tool
	output  *jsonschema.Schema // nil without OutputSchema, or Unchecked
	handler ToolHandler
	headers []jsonschema.HeaderParam // its x-mcp-header annotations
	support string                   // execution.taskSupport
}

// AddTool registers (or replaces, by name) a tool. The schemas are compiled
// here, once; AddTool panics if a schema does not compile, if InputSchema
// is not of type object, if the name is not a valid tool name or if the
// handler is nil.
func (s *Server) AddTool(t Tool, h ToolHandler) {
	if h == nil {
		panic("handlers: AddTool needs a handler")
	}
	if !validToolName(t.Name) {
		panic(fmt.Sprintf("handlers: invalid tool name %q: use 1 to 128 of A-Z a-z 0-9 _ - .", t.Name))
	}
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if !isObjectSchema(t.InputSchema) {
		panic(fmt.Sprintf("handlers: tool %q: inputSchema must be a schema of \"type\":\"object\"", t.Name))
	}
	t.Meta, t.Execution = nullIsNone(t.Meta), nullIsNone(t.Execution)
	mustBeObject("tool", t.Name, "_meta", t.Meta)
	mustBeObject("tool", t.Name, "execution", t.Execution)
	tl := &tool{Tool: t, handler: h, support: taskSupport(t.Execution)}
	if t.Start != nil {
		s.starters.Store(true)
	}
	var err error
	if t.Unchecked {
		if !json.Valid(t.InputSchema) || t.OutputSchema != nil && !json.Valid(t.OutputSchema) {
			panic(fmt.Sprintf("handlers: tool %q: a schema is not valid JSON", t.Name))
		}
	} else if tl.input, err = jsonschema.Compile(t.InputSchema); err != nil {
		panic(fmt.Sprintf("handlers: tool %q: inputSchema: %v", t.Name, err))
	}
	if t.OutputSchema != nil && !t.Unchecked {
		if tl.output, err = jsonschema.Compile(t.OutputSchema); err != nil {
			panic(fmt.Sprintf("handlers: tool %q: outputSchema: %v", t.Name, err))
		}
	}
	// A tool whose annotations are invalid must be left out by HTTP
	// clients: refuse it here, unless it is passed through as it is.
	if tl.headers, err = jsonschema.HeaderParams(t.InputSchema); err != nil {
		if !t.Unchecked {
			panic(fmt.Sprintf("handlers: tool %q: inputSchema: %v", t.Name, err))
		}
		tl.headers = nil
	}
	s.mu.Lock()
	s.guard(t.Access)
	if t.Unlisted {
		s.guard(&noOne) // tools/list looks at each tool only when something is guarded
	}
	s.tools.put(t.Name, tl)
	s.offer(offerTools)
	s.mu.Unlock()
	s.changed(Change{Kind: ToolsChanged})
}

// ToolHeaderParams returns the x-mcp-header annotations of the tool's input
// schema (none for an unknown tool): a Streamable HTTP server checks the
// Mcp-Param headers of a 2026-07-28 tools/call against them.
func (s *Server) ToolHeaderParams(name string) []jsonschema.HeaderParam {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if t, ok := s.tools.get(name); ok {
		return t.headers
	}
	return nil
}

// RemoveTool unregisters a tool; it reports whether it existed.
func (s *Server) RemoveTool(name string) bool {
	s.mu.Lock()
	ok := s.tools.remove(name)
	s.mu.Unlock()
	if ok {
		s.changed(Change{Kind: ToolsChanged})
	}
	return ok
}

func validToolName(n string) bool {
	if len(n) == 0 || len(n) > 128 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func isObjectSchema(raw json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(raw, &s) == nil && s.Type == "object"
}

func (s *Server) listTools(ctx context.Context, req *Request) (any, error) {
	access := func(t *tool) *Access {
		if t.Unlisted {
			return &noOne
		}
		return t.Access
	}
	list, next, err := listPage(ctx, s, req, &s.tools, 't', access, func(t *tool, req *Request) *Tool { return t.Tool.forVersion(req) })
	if err != nil {
		return nil, err
	}
	return struct {
		Tools      []*Tool `json:"tools"`
		NextCursor string  `json:"nextCursor,omitempty"`
	}{list, next}, nil
}

type callToolParams struct {
	name      []byte // the name's JSON string literal
	Arguments json.RawMessage
}

// invalidArguments marks arguments that do not fit the tool. How the client
// is told depends on the revision (see invalidArgumentsAnswer).
type invalidArguments struct{ err error }

func (e *invalidArguments) Error() string { return e.err.Error() }

// invalidArgumentsAnswer tells the client its arguments do not fit. Up to
// 2025-06-18 that is a protocol error; from 2025-11-25 on it is a tool
// error, so that the model sees what was wrong and can try again.
func invalidArgumentsAnswer(req *Request, name string, err error) (any, error) {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		err = ve.WithRoot("arguments")
	}
	msg := fmt.Sprintf("Invalid arguments for tool %q: %v", name, err)
	if since(req, mcp.Version20251125) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(msg)}, IsError: true}, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + msg}
}

// toolCall finds the tool a tools/call names and reads its arguments. A
// request that names no tool, or holds arguments that do not fit, gets its
// answer instead (done).
func (s *Server) toolCall(req *Request) (t *tool, args json.RawMessage, done bool, res any, err error) {
	p, ok := readCallToolParams(req.Params)
	if !ok {
		return nil, nil, true, nil, invalidParams("tools/call needs a string name and an object of arguments")
	}
	if p.Arguments == nil || string(p.Arguments) == "null" {
		p.Arguments = json.RawMessage("{}")
	} else if p.Arguments[0] != '{' {
		return nil, nil, true, nil, invalidParams("arguments must be an object")
	}
	name, plain := p.name[1:len(p.name)-1], true
	if bytes.IndexByte(name, '\\') >= 0 || !utf8.Valid(name) {
		n, ok := jsonrpc.Unquote(p.name)
		if !ok {
			return nil, nil, true, nil, invalidParams("tools/call needs a string name and an object of arguments")
		}
		name, plain = []byte(n), false
	}
	s.mu.RLock()
	t, _ = s.tools.getBytes(name)
	s.mu.RUnlock()
	if t != nil && t.Access != nil {
		switch t.Access.verdict(req.Caller) {
		case unseen:
			t = nil // answered as a tool that does not exist
		case needsScope:
			return nil, nil, true, nil, insufficientScope("tool", t.Name, t.Access, req.Caller)
		}
	}
	if t == nil {
		if plain {
			name = bytes.Clone(name)
		}
		if fn := s.unknownTool.Load(); fn != nil {
			if res := (*fn)(string(name), req.Caller); res != nil {
				return nil, nil, true, res, nil
			}
		}
		return nil, nil, true, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Unknown tool: %q", name)}
	}
	// The arguments are a slice of params readCallToolParams checked.
	if t.input != nil { // nil for an Unchecked tool
		if err := t.input.ValidateWellFormed(p.Arguments); err != nil {
			res, err := invalidArgumentsAnswer(req, t.Name, err)
			return nil, nil, true, res, err
		}
	}
	return t, p.Arguments, false, nil, nil
}

func (s *Server) callTool(ctx context.Context, req *Request) (any, error) {
	t, args, done, res, err := s.toolCall(req)
	if done && t == nil && s.awaitLists(ctx) {
		// Not there yet, perhaps: look again once the offers are in.
		t, args, done, res, err = s.toolCall(req)
	}
	if done {
		return res, err
	}
	// A legacy call may ask for a task of a tool that has none: that is
	// an error, so it is looked at too.
	if ts := s.tasks.Load(); ts != nil && (t.support != "" || t.AskBeforeTask || !req.Modern) {
		if res, err, handled := s.taskCall(ctx, ts, t, req, args); handled {
			return res, err
		}
	}
	if t.Timeout > 0 {
		if req.Peer != nil {
			req.Peer.SetTimeout(t.Timeout) // the session answers and cancels ctx
		} else {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, t.Timeout)
			defer cancel()
		}
	}
	out, err := t.handler(ctx, req, args)
	return t.answer(req, out, err)
}

// startTool offers a tools/call to its tool's Start. Anything else (an
// unknown tool, arguments that do not fit, a tool without Start) is left
// to callTool, which answers it.
func (s *Server) startTool(ctx context.Context, req *Request, d Deferred) bool {
	t, args, done, _, _ := s.toolCall(req)
	if done || t.Start == nil || t.support != "" && s.tasks.Load() != nil {
		return false // a call that may become a task is callTool's to decide
	}
	if !t.Start(ctx, req, args, ToolReply{t: t, req: req, d: d}) {
		return false
	}
	if t.Timeout > 0 && req.Peer != nil {
		req.Peer.SetTimeout(t.Timeout)
	}
	return true
}

// answer turns what a tool's handler returned into the tools/call answer.
func (t *tool) answer(req *Request, res *mcp.CallToolResult, err error) (any, error) {
	if err != nil {
		var je *jsonrpc.Error
		var ia *invalidArguments
		var ce *CapabilityError
		switch {
		case errors.Is(err, mcp.ErrInputRequired):
			return nil, err // the session answers input_required
		case req.Modern && errors.As(err, &ce):
			return nil, err // the session answers -32021, as for any method
		case errors.As(err, &je):
			return nil, je
		case errors.As(err, &ia):
			return invalidArgumentsAnswer(req, t.Name, ia.err)
		}
		return &mcp.CallToolResult{Content: contentFor([]mcp.Content{mcp.TextContent(err.Error())}, req), IsError: true}, nil
	}
	return t.result(res, req)
}

// result checks a handler's result against the tool's output schema and
// shapes it for the request's revision. It leaves res untouched: a handler
// may return a shared value.
func (t *tool) result(res *mcp.CallToolResult, req *Request) (any, error) {
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	if res.Encoded() != nil {
		return res, nil // sent as it came: see mcp.EncodedResult
	}
	if res.StructuredContent == nil && res.Content != nil && (t.output == nil || res.IsError) {
		// Blocks only, each as every revision writes it: the result goes
		// out as the handler made it. It is read, never changed, so a
		// result the handler shares between calls stays safe.
		if c := contentFor(res.Content, req); len(c) == 0 || &c[0] == &res.Content[0] {
			return res, nil
		}
	}
	out := &mcp.CallToolResult{Content: res.Content, IsError: res.IsError, Meta: res.Meta}
	var structured json.RawMessage
	if res.StructuredContent != nil {
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("tool %q: structuredContent does not marshal: %w", t.Name, err)
		}
		if string(raw) != "null" { // a nil pointer or map is no content
			structured = raw
		}
	}
	if t.output != nil && !res.IsError {
		// A result that breaks the tool's own promise is a server bug, not
		// something the model can fix: -32603, with the details in the log.
		if structured == nil {
			return nil, fmt.Errorf("tool %q has an outputSchema but returned no structuredContent", t.Name)
		}
		// json.Marshal wrote it: well-formed, no need to check that again.
		if err := t.output.ValidateWellFormed(structured); err != nil {
			return nil, fmt.Errorf("tool %q: structuredContent does not match its outputSchema: %w", t.Name, err)
		}
	}
	if structured != nil && len(out.Content) == 0 {
		// Clients that do not read structuredContent still see the result.
		out.Content = []mcp.Content{mcp.TextContent(string(structured))}
	}
	if structured != nil && since(req, mcp.Version20250618) && (req.Modern || bytes.HasPrefix(structured, []byte("{"))) {
		out.StructuredContent = structured
	}
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	out.Content = contentFor(out.Content, req)
	return out, nil
}

// readCallToolParams reads name and arguments with a member scan rather
// than a reflective decode: this runs on every tools/call, and the
// arguments stay raw for validation and the handler.
func readCallToolParams(params json.RawMessage) (p callToolParams, ok bool) {
	// The name stays a literal: the tool is found without making a string
	// of it (escaped names, rare, are unquoted by the caller).
	valid, isObject := jsonrpc.ValidMembers(params, func(k string, v []byte) bool {
		switch k {
		case "name":
			p.name = v
		case "arguments":
			p.Arguments = v
		}
		return true
	})
	return p, valid && isObject && len(p.name) >= 2 && p.name[0] == '"'
}
