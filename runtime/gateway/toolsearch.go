package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime/gateway/internal/toolsearch"
)

// The tools the gateway offers in place of its catalog with tool search.
const (
	searchToolsName = "search_tools"
	callToolName    = "call_tool"
)

// Search limits: search_tools' default and largest limit.
const (
	defaultSearchLimit = 5
	maxSearchLimit     = 50
)

// search is the tool search of one of the gateway's servers (its own,
// Options.ToolSearch and Config's "toolSearch"; or an endpoint's,
// Endpoint.ToolSearch): whether it is on, which tools stay listed, and
// the index of what that server offers, rebuilt on the first search after
// its tools changed (backends came, went or sent list_changed).
type search struct {
	srv   *handlers.Server
	ready <-chan struct{} // searches wait for it, as tools/list does

	// settings is read by apply (each tool's Unlisted) and written by
	// configureSearch.
	settings atomic.Pointer[searchSettings]
	stale    atomic.Bool // set by the server's ToolsChanged

	mu    sync.Mutex
	index *toolsearch.Index
	tools []handlers.Tool // the index's docs, in its order
}

type searchSettings struct {
	on   bool
	pins []string // tool names or path.Match patterns kept in tools/list
}

// unlisted says whether a tool the gateway names ext is left out of
// tools/list: with search on, unless it is pinned.
func (sr *search) unlisted(ext string) bool {
	s := sr.settings.Load()
	if s == nil || !s.on {
		return false
	}
	for _, p := range s.pins {
		if ok, _ := path.Match(p, ext); ok || p == ext {
			return false
		}
	}
	return true
}

// searchReserved says whether a backend's tool may not take name: the
// gateway's own search tools have it while search is on.
func (sr *search) reserved(name string) bool {
	s := sr.settings.Load()
	return s != nil && s.on && (name == searchToolsName || name == callToolName)
}

// configureSearch turns tool search on or off and sets the pinned tools,
// from Options and the configuration (either turns it on; the pins of
// both count). When that changes what is listed, every backend's tools
// are registered again, so that their Unlisted follows.
func (g *Gateway) configureSearch(cfg *Config) {
	s := &searchSettings{on: g.opts.ToolSearch, pins: slices.Clone(g.opts.AlwaysList)}
	if cfg != nil {
		s.on = s.on || cfg.ToolSearch
		s.pins = append(s.pins, cfg.AlwaysList...)
	}
	old := g.search.settings.Swap(s)
	if old != nil && old.on == s.on && slices.Equal(old.pins, s.pins) {
		return
	}
	if old == nil { // New: nothing registered yet
		if s.on {
			g.search.addTools()
		}
		return
	}
	if old.on && !s.on {
		g.search.removeTools()
	}
	// The backends first: one that offered a tool named as a search tool
	// (without a prefix) withdraws it, and only then is the gateway's own
	// put in its place, which the withdrawal would otherwise remove.
	for _, b := range g.all() {
		b.relist()
	}
	if s.on {
		g.search.addTools()
	}
	g.resyncEndpoints() // their pins are these
}

// relist registers the backend's tools again as they last were, so that a
// change of the search settings reaches them.
func (b *backend) relist() {
	if b.status().State == Failed {
		b.markUnavailable()
		return
	}
	b.regMu.Lock()
	defer b.regMu.Unlock()
	if b.reg.last != nil && !b.removed.Load() {
		b.apply(b.reg.last, "")
	}
}

// searchOutput is search_tools' output schema: the tools found, each a
// full tool definition as tools/list would give it.
const searchOutput = `{"type":"object","properties":{"tools":{"type":"array","description":"the tools found, best first, as tools/list gives them","items":{"type":"object","properties":{"name":{"type":"string"},"inputSchema":{"type":"object"}},"required":["name","inputSchema"]}}},"required":["tools"]}`

var yes = true

func (sr *search) removeTools() {
	sr.srv.RemoveTool(searchToolsName)
	sr.srv.RemoveTool(callToolName)
}

func (sr *search) addTools() {
	sr.srv.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name:  searchToolsName,
			Title: "Search tools",
			Description: "Finds the tools for a task among all the tools this server offers (they are not all listed, " +
				"to spare your context): describe what you want to do in a few words, e.g. \"read a file\" or " +
				"\"remember a fact about a person\". Returns the best matches first, each with its full definition " +
				"(name, description, inputSchema). Call one with " + callToolName + ".",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what you want to do, in words"},"limit":{"type":"integer","minimum":1,"maximum":50,"description":"how many tools to return at most (default 5)"}},"required":["query"]}`),
			OutputSchema: json.RawMessage(searchOutput),
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: &yes, IdempotentHint: &yes, OpenWorldHint: new(bool)},
		},
	}, sr.searchTools)
	sr.srv.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name:  callToolName,
			Title: "Call a tool",
			Description: "Calls one of this server's tools by name, found with " + searchToolsName +
				", with its arguments (an object that fits the tool's inputSchema); returns what the tool returns.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the tool's name, as search_tools gave it"},"arguments":{"type":"object","description":"the tool's arguments"}},"required":["name"]}`),
		},
		Unchecked: true, // the tool called checks its own arguments
		Start:     startNamedTool,
	}, sr.callNamedTool)
}

// searchIndex returns the index of the tools the server offers (but the
// search tools), built again if they changed since it was last built.
func (sr *search) searchIndex() (*toolsearch.Index, []handlers.Tool) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if sr.index == nil || sr.stale.Swap(false) {
		tools := slices.DeleteFunc(sr.srv.Tools(), func(t handlers.Tool) bool {
			return t.Name == searchToolsName || t.Name == callToolName
		})
		docs := make([]toolsearch.Doc, len(tools))
		for i, t := range tools {
			docs[i] = toolsearch.Doc{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
		}
		sr.index, sr.tools = toolsearch.New(docs), tools
	}
	return sr.index, sr.tools
}

// searchTools is search_tools: the tools the caller may use (Access, as
// tools/list shows them), ranked for the query.
func (sr *search) searchTools(ctx context.Context, req *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, fmt.Errorf("search_tools: %v", err)
	}
	if in.Limit <= 0 {
		in.Limit = defaultSearchLimit
	}
	in.Limit = min(in.Limit, maxSearchLimit)
	// As tools/list does: the backends still starting get their moment.
	select {
	case <-sr.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	index, tools := sr.searchIndex()
	hits := index.Search(in.Query, in.Limit, func(i int) bool { return tools[i].Access.Allows(req.Caller) })
	found := make([]handlers.Tool, len(hits))
	var text strings.Builder
	if len(hits) == 0 {
		fmt.Fprintf(&text, "No tool matches %q; try other words.", in.Query)
	}
	for i, h := range hits {
		t := tools[h.Doc]
		found[i] = t
		fmt.Fprintf(&text, "%d. %s", i+1, t.Name)
		if t.Title != "" {
			fmt.Fprintf(&text, " (%s)", t.Title)
		}
		fmt.Fprintf(&text, ": %s\n   inputSchema: %s\n", strings.TrimSpace(t.Description), compactJSON(t.InputSchema))
	}
	if len(hits) > 0 {
		fmt.Fprintf(&text, "Call one with %s {\"name\": …, \"arguments\": {…}}.", callToolName)
	}
	structured, err := json.Marshal(struct {
		Tools []handlers.Tool `json:"tools"`
	}{found})
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(text.String())}, StructuredContent: json.RawMessage(structured)}, nil
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 {
		return "{}"
	}
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// startNamedTool is call_tool's Start, which the session offers the call
// before anything else is done with it. For a legacy request it makes the
// request the named tool's own tools/call (its params put in place of
// call_tool's) and hands it back, so that the server's tools/call serves
// it as it would the client's direct call from its start: a 2025-11-25
// params.task is the named tool's to take or refuse, where call_tool
// itself would refuse it. A 2026-07-28 request is left to callNamedTool:
// its requestState is signed over the params the client sent (call_tool's),
// which must then be the request's when it is answered, and its task is
// the named tool's there already. Params that name no tool are left to
// callNamedTool too, which says what is wrong.
func startNamedTool(_ context.Context, req *handlers.Request, args json.RawMessage, _ handlers.ToolReply) bool {
	if req.Modern {
		return false
	}
	if params, err := namedToolParams(req, args); err == nil {
		req.Params = params
	}
	return false
}

// namedToolParams makes the params of a tools/call of the tool call_tool's
// arguments name: its name and arguments, and the request's other params
// (_meta: a progress token, the 2026-07-28 era's fields, a trace; task;
// inputResponses and requestState), as they came.
func namedToolParams(req *handlers.Request, args json.RawMessage) (json.RawMessage, error) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(args, &in); err != nil || in.Name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `call_tool needs {"name": a tool's name, "arguments": {…}}`}
	}
	if in.Name == callToolName || in.Name == searchToolsName {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("call_tool calls the tools search_tools finds, not %q", in.Name)}
	}
	if len(in.Arguments) == 0 || string(in.Arguments) == "null" {
		in.Arguments = json.RawMessage("{}")
	}
	params := append(jsonrpc.AppendString([]byte(`{"name":`), in.Name), `,"arguments":`...)
	params = append(params, in.Arguments...)
	jsonrpc.Members(req.Params, func(k string, v []byte) bool {
		if k != "name" && k != "arguments" {
			params = append(append(jsonrpc.AppendString(append(params, ','), k), ':'), v...)
		}
		return true
	})
	return append(params, '}'), nil
}

// callNamedTool is call_tool's handler, for a call its Start did not see
// (a server's method run directly, as an embedder or a test may): the
// named tool's call made through the server's tools/call all the same,
// with its params in the request while it runs, and call_tool's put back
// before it is answered. A 2025-11-25 params.task is refused before it
// gets here (call_tool itself is no task tool): only the Start path
// serves it.
func (sr *search) callNamedTool(ctx context.Context, req *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
	params, err := namedToolParams(req, args)
	if err != nil {
		return nil, err
	}
	call, ok := sr.srv.Method("tools/call")
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "call_tool: the server has no tools/call"}
	}
	// The request is the handler's alone while it runs: nothing else
	// reads its params meanwhile, and they are put back before it ends.
	orig := req.Params
	req.Params = params
	res, err := call.Run(ctx, req)
	req.Params = orig
	switch r := res.(type) {
	case nil:
		return nil, err
	case *mcp.CallToolResult:
		return r, err
	}
	// Another answer of tools/call (a task created): sent as it is.
	raw, merr := json.Marshal(res)
	if merr != nil {
		return nil, merr
	}
	return mcp.EncodedResult(raw), err
}

// watch marks the index stale on every change of the server's tools,
// until stop.
func (sr *search) watch() (stop func()) {
	return sr.srv.Watch(func(c handlers.Change) {
		if c.Kind == handlers.ToolsChanged {
			sr.stale.Store(true)
		}
	})
}

// searchKeys are the configuration's top-level keys of tool search.
var searchKeys = map[string]bool{"toolSearch": true, "alwaysList": true}

// parseSearchKeys reads "toolSearch" (a boolean) and "alwaysList" (tool
// names or path.Match patterns, as the gateway names the tools).
func parseSearchKeys(top map[string]json.RawMessage, cfg *Config) []error {
	var errs []error
	if v, ok := top["toolSearch"]; ok {
		if err := json.Unmarshal(v, &cfg.ToolSearch); err != nil {
			errs = append(errs, &ConfigError{Key: "toolSearch", Problem: fmt.Sprintf("want true or false, got %s", clip(v))})
		}
	}
	if v, ok := top["alwaysList"]; ok {
		if err := json.Unmarshal(v, &cfg.AlwaysList); err != nil {
			errs = append(errs, &ConfigError{Key: "alwaysList", Problem: fmt.Sprintf("want an array of tool names or patterns, got %s", clip(v))})
		}
		for _, p := range cfg.AlwaysList {
			if _, err := path.Match(p, ""); err != nil {
				errs = append(errs, &ConfigError{Key: "alwaysList", Problem: fmt.Sprintf("%q: %v", p, err)})
			}
		}
	}
	return errs
}
