package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// ToolOverride fits one of a backend's tools to the gateway's clients
// (Backend.Tools, a backend's "tools" key): teams rename a third-party
// server's tools, reword them for their agents, and pin arguments the
// agent must not choose (a repository, an account).
type ToolOverride struct {
	// Name replaces the backend's name of the tool; the backend's prefix
	// goes before it as before any ("" keeps the backend's).
	Name string
	// Title and Description replace the backend's ("" keeps them).
	Title       string
	Description string
	// Fixed arguments are set on every call, whatever the client sent,
	// and are left out of the offered inputSchema (its properties and
	// required): the client cannot see them, and a call that sets one
	// is refused (-32602, naming it) rather than silently overridden.
	Fixed map[string]json.RawMessage
}

var overrideKeys = []string{"name", "title", "description", "fixed"}

// overrides reads a backend's "tools": {"<the backend's tool name>":
// {"name", "title", "description", "fixed": {"arg": value}}}.
func (p *entryParser) overrides() {
	v, ok := p.m["tools"]
	if !ok {
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil || m == nil {
		p.fail("tools", `want an object of the backend's tool names to {"name": …, "title": …, "description": …, "fixed": {…}}, got %s`, clip(v))
		return
	}
	p.b.Tools = map[string]*ToolOverride{}
	renamed := map[string]string{}
	for _, tool := range slices.Sorted(maps.Keys(m)) {
		key := "tools[" + strconv.Quote(tool) + "]"
		if tool == "" {
			p.fail(key, "a tool's name is empty")
			continue
		}
		var raw map[string]json.RawMessage
		if err := json.Unmarshal(m[tool], &raw); err != nil || raw == nil {
			p.fail(key, `want {"name": …, "title": …, "description": …, "fixed": {…}}, got %s`, clip(m[tool]))
			continue
		}
		o := &ToolOverride{}
		bad := false
		for _, k := range slices.Sorted(maps.Keys(raw)) {
			if !slices.Contains(overrideKeys, k) {
				p.fail(key+"."+k, "unknown key (want %s)", strings.Join(overrideKeys, ", "))
				bad = true
			}
		}
		str := func(k string, into *string) {
			if rv, ok := raw[k]; ok {
				if json.Unmarshal(rv, into) != nil {
					p.fail(key+"."+k, "want a string, got %s", clip(rv))
					bad = true
				}
			}
		}
		str("name", &o.Name)
		str("title", &o.Title)
		str("description", &o.Description)
		if _, ok := raw["name"]; ok && (o.Name == "" || len(o.Name) > 64 || sanitizeName(o.Name) != o.Name) {
			p.fail(key+".name", "%q: use 1 to 64 of A-Z a-z 0-9 _ - . (a tool name)", o.Name)
			bad = true
		}
		if o.Name != "" {
			// Two tools of one name: one of them would not be offered,
			// which depends on what the backend lists first.
			if other, ok := renamed[o.Name]; ok {
				p.fail(key+".name", "%q is also the new name of tool %q", o.Name, other)
				bad = true
			}
			renamed[o.Name] = tool
		}
		if fv, ok := raw["fixed"]; ok {
			if json.Unmarshal(fv, &o.Fixed) != nil || o.Fixed == nil {
				p.fail(key+".fixed", `want an object of argument names to their values, got %s`, clip(fv))
				bad = true
			}
			for _, a := range slices.Sorted(maps.Keys(o.Fixed)) {
				if a == "" {
					p.fail(key+".fixed", "an argument's name is empty")
					bad = true
				}
			}
		}
		if len(raw) == 0 {
			p.fail(key, "overrides nothing: give name, title, description or fixed")
			bad = true
		}
		if !bad {
			p.b.Tools[tool] = o
		}
	}
}

// offeredName is the name the tool is offered under, before the prefix.
func (o *ToolOverride) offeredName(tool string) string {
	if o == nil || o.Name == "" {
		return tool
	}
	return o.Name
}

// fit puts the override's title, description and schema on t, as the
// backend listed it.
func (o *ToolOverride) fit(t handlers.Tool) (handlers.Tool, error) {
	if o == nil {
		return t, nil
	}
	if o.Title != "" {
		t.Title = o.Title
	}
	if o.Description != "" {
		t.Description = o.Description
	}
	if len(o.Fixed) > 0 {
		s, err := withoutArgs(t.InputSchema, o.Fixed)
		if err != nil {
			return t, err
		}
		t.InputSchema = s
	}
	return t, nil
}

// withoutArgs removes the named arguments from an inputSchema's
// properties and required, keeping every other keyword as it was: the
// schema stays what the backend wrote, less what the client may not set.
// "required" emptied is left out (an empty array is valid, but older
// validators refused it).
func withoutArgs(schema json.RawMessage, args map[string]json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return schema, nil
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(schema, &s); err != nil || s == nil {
		return nil, fmt.Errorf("its inputSchema is not a JSON object, so its fixed arguments cannot be taken out of it")
	}
	if raw, ok := s["properties"]; ok {
		var props map[string]json.RawMessage
		if err := json.Unmarshal(raw, &props); err != nil {
			return nil, fmt.Errorf("its inputSchema's properties is not an object")
		}
		for a := range args {
			delete(props, a)
		}
		if s["properties"], _ = json.Marshal(props); props == nil {
			s["properties"] = json.RawMessage("{}")
		}
	}
	if raw, ok := s["required"]; ok {
		var req []string
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("its inputSchema's required is not an array of names")
		}
		req = slices.DeleteFunc(req, func(a string) bool { _, fixed := args[a]; return fixed })
		if len(req) == 0 {
			delete(s, "required")
		} else {
			s["required"], _ = json.Marshal(req)
		}
	}
	return json.Marshal(s)
}

// withFixed is the arguments a client sent with the fixed ones set, or
// a -32602 error naming the first fixed argument the client set itself.
// The client's members go on as they came.
func (o *ToolOverride) withFixed(ext string, args json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	var set string
	ok := jsonrpc.Members(trimmed, func(k string, _ []byte) bool {
		if _, fixed := o.Fixed[k]; fixed {
			set = k
			return false
		}
		return true
	})
	if set != "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
			"Invalid params: argument %q of tool %q is fixed by the gateway's configuration: leave it out", set, ext)}
	}
	if !ok || trimmed[0] != '{' {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: the arguments of tool %q must be an object", ext)}
	}
	out := make([]byte, 0, len(trimmed)+64)
	out = append(out, trimmed[:len(trimmed)-1]...) // without its '}'
	empty := bytes.Equal(bytes.TrimSpace(trimmed[1:len(trimmed)-1]), nil)
	for _, k := range slices.Sorted(maps.Keys(o.Fixed)) {
		if !empty {
			out = append(out, ',')
		}
		empty = false
		out = append(append(jsonrpc.AppendString(out, k), ':'), o.Fixed[k]...)
	}
	out = append(out, '}')
	if !utf8.Valid(out) {
		out = bytes.ToValidUTF8(out, []byte("\uFFFD"))
	}
	return out, nil
}

// handler wraps a tool's handler with the fixed arguments.
func (o *ToolOverride) handler(ext string, h handlers.ToolHandler) handlers.ToolHandler {
	if o == nil || len(o.Fixed) == 0 {
		return h
	}
	return func(ctx context.Context, req *handlers.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
		args, err := o.withFixed(ext, args)
		if err != nil {
			return nil, err
		}
		return h(ctx, req, args)
	}
}

// starter wraps a tool's Start with the fixed arguments; a call that sets
// one is left to the handler, which refuses it.
func (o *ToolOverride) starter(ext string, s handlers.ToolStarter) handlers.ToolStarter {
	if o == nil || len(o.Fixed) == 0 {
		return s
	}
	return func(ctx context.Context, req *handlers.Request, args json.RawMessage, reply handlers.ToolReply) bool {
		args, err := o.withFixed(ext, args)
		if err != nil {
			return false
		}
		return s(ctx, req, args, reply)
	}
}

// unmatchedOverrides warns of overrides that name no tool the backend
// listed: a misspelt name would otherwise leave a tool unfixed, its
// arguments free, with nothing said.
func (b *backend) unmatchedOverrides(tools []handlers.Tool) {
	for _, name := range slices.Sorted(maps.Keys(b.cfg.Tools)) {
		if !slices.ContainsFunc(tools, func(t handlers.Tool) bool { return t.Name == name }) {
			b.g.log.Warn("gateway: an override names a tool the backend does not offer", "backend", b.name, "tool", name)
		}
	}
}
