package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/uritemplate"
	"github.com/mcprt/mcprt/session/client"
)

// lists are what a backend offers, as it listed them.
type lists struct {
	tools       []handlers.Tool
	prompts     []handlers.Prompt
	resources   []handlers.Resource
	templates   []handlers.ResourceTemplate
	completions bool
	extensions  map[string]json.RawMessage // capabilities.extensions
}

// registered is what a backend's lists put in the gateway's server.
type registered struct {
	tools     map[string]string // gateway name -> the backend's name
	prompts   map[string]string
	resources map[string]bool // URIs
	templates map[string]bool // URI templates
	last      *lists
}

// maxPages bounds the pages of one list, against a server whose cursors
// never end.
const maxPages = 1000

// fetchLists lists everything the backend's capabilities say it offers.
func fetchLists(ctx context.Context, cl *client.Client) (*lists, error) {
	caps := cl.Capabilities()
	l := &lists{}
	_, l.completions = caps["completions"]
	l.extensions = extensionsOf(caps)
	var err error
	if _, ok := caps["tools"]; ok {
		if l.tools, err = listAll[handlers.Tool](ctx, cl, "tools/list", "tools"); err != nil {
			return nil, err
		}
	}
	if _, ok := caps["prompts"]; ok {
		if l.prompts, err = listAll[handlers.Prompt](ctx, cl, "prompts/list", "prompts"); err != nil {
			return nil, err
		}
	}
	if _, ok := caps["resources"]; ok {
		if l.resources, err = listAll[handlers.Resource](ctx, cl, "resources/list", "resources"); err != nil {
			return nil, err
		}
		if l.templates, err = listAll[handlers.ResourceTemplate](ctx, cl, "resources/templates/list", "resourceTemplates"); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// listAll follows nextCursor to the end. An item that does not decode is
// left out (the rest of the list is still worth offering).
func listAll[T any](ctx context.Context, cl *client.Client, method, field string) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	cursor := ""
	for range maxPages {
		var params map[string]string
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		var res map[string]json.RawMessage
		if err := cl.Call(ctx, method, params, &res); err != nil {
			return nil, err
		}
		var items []json.RawMessage
		if raw, ok := res[field]; ok {
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, fmt.Errorf("%s: %s is not an array: %w", method, field, err)
			}
		}
		for _, raw := range items {
			var v T
			if json.Unmarshal(raw, &v) == nil {
				all = append(all, v)
			}
		}
		var next string
		if raw, ok := res["nextCursor"]; ok {
			_ = json.Unmarshal(raw, &next)
		}
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("%s: the server repeated cursor %q", method, next)
		}
		seen[next] = true
		cursor = next
	}
	return nil, fmt.Errorf("%s: more than %d pages", method, maxPages)
}

// external is the gateway's name for one of the backend's names.
func (b *backend) external(name string) string {
	if b.cfg.NoPrefix {
		return name
	}
	return b.cfg.Prefix + separator + name
}

// register puts the backend's lists in the gateway's server, in place of
// what its earlier lists put there, as one change per kind.
func (b *backend) register(l *lists) {
	b.regMu.Lock()
	if b.removed.Load() {
		b.regMu.Unlock()
		return
	}
	b.reg.last = l
	b.apply(l, "")
	b.regMu.Unlock()
	b.g.adoptSubscriptions()
}

// markUnavailable registers the backend's tools and prompts again with a
// description that says it is down, so that the client (and its model)
// sees it in its lists; calls still reach the backend, and one after the
// cool-down starts it again.
func (b *backend) markUnavailable() {
	b.regMu.Lock()
	defer b.regMu.Unlock()
	if b.reg.last == nil || b.removed.Load() {
		return
	}
	b.mu.Lock()
	retry := b.failedAt.Add(b.cfg.Cooldown)
	b.mu.Unlock()
	b.apply(b.reg.last, fmt.Sprintf("[unavailable: backend %q failed; a call after %s starts it again]", b.name, retry.Format(time.TimeOnly)))
}

// apply registers l, with note before every tool's and prompt's
// description, and removes what the backend registered before and l no
// longer has. The caller holds regMu.
func (b *backend) apply(l *lists, note string) {
	g := b.g
	defer g.hold()()
	skip := func(kind, name, why string) {
		g.log.Warn("gateway: not offering a backend's "+kind, "backend", b.name, kind, name, "why", why)
	}
	offer := func(kind byte, what, name, ext string, add func()) bool {
		ok, err := g.put(kind, ext, b, func() error { return try(add) })
		switch {
		case err != nil:
			skip(what, name, err.Error())
		case !ok:
			skip(what, name, fmt.Sprintf("backend %q offers %q already", g.owner(kind, ext), ext))
		}
		return ok
	}
	describe := func(d string) string {
		if note == "" {
			return d
		}
		return strings.TrimSpace(note + " " + d)
	}

	tools := map[string]string{}
	for _, t := range l.tools {
		if t.Name == "" || b.cfg.hidden(t.Name) {
			continue
		}
		name := t.Name
		ov := b.cfg.Tools[name]
		ext := b.external(sanitizeName(ov.offeredName(name)))
		if o, ok := tools[ext]; ok {
			skip("tool", name, fmt.Sprintf("it is %q to the gateway, as %q is", ext, o))
			continue
		}
		if g.search.reserved(ext) {
			skip("tool", name, fmt.Sprintf("%q is the gateway's own with tool search", ext))
			continue
		}
		if len(ext) > 128 {
			skip("tool", name, fmt.Sprintf("%q is longer than the 128 characters a tool name may have", ext))
			continue
		}
		t, err := ov.fit(t)
		if err != nil {
			skip("tool", name, err.Error())
			continue
		}
		t.Name, t.Unchecked, t.Timeout, t.Description = ext, true, b.cfg.Timeout+toolMargin, describe(t.Description)
		t.Start = ov.starter(ext, b.toolStarter(name))
		t.Access = b.cfg.toolAccess(name)
		t.Unlisted = g.search.unlisted(ext)
		if g.opts.TaskAnyTool {
			t.Execution = anyTask(t.Execution)
		}
		if !offer('t', "tool", name, ext, func() { g.addTool(t, ov.handler(ext, b.toolHandler(name))) }) {
			continue
		}
		tools[ext] = name
	}
	if ext := b.external(signOutTool); b.cfg.Auth == AuthUser && tools[ext] == "" && !g.search.reserved(ext) {
		// AuthUser: the caller's way to forget their sign-in.
		t := handlers.Tool{
			Tool: mcp.Tool{
				Name:        ext,
				InputSchema: json.RawMessage(`{"type":"object"}`),
				Description: fmt.Sprintf("Sign out of %q: the gateway forgets your token for it, and your next call of its tools asks you to sign in again.", b.name),
			},
			Unchecked: true,
		}
		if offer('t', "tool", signOutTool, ext, func() { g.addTool(t, b.signOutHandler()) }) {
			tools[ext] = signOutTool
		}
	}
	if ext := b.external(confirmTool); b.cfg.Auth == AuthUser && tools[ext] == "" && !g.search.reserved(ext) {
		// AuthUser: the caller's way to bind a sign-in to themselves.
		t := handlers.Tool{
			Tool: mcp.Tool{
				Name:        ext,
				InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"the code the sign-in page showed"}},"required":["code"]}`),
				Description: fmt.Sprintf("Finish signing in to %q: give the code the sign-in page showed in your browser. Only then does the gateway use that sign-in for your calls.", b.name),
			},
			Unchecked: true,
		}
		if offer('t', "tool", confirmTool, ext, func() { g.addTool(t, b.confirmSignInHandler()) }) {
			tools[ext] = confirmTool
		}
	}
	if note == "" {
		b.unmatchedOverrides(l.tools)
	}
	for ext := range b.reg.tools {
		if _, ok := tools[ext]; !ok {
			g.drop('t', ext, b, func() { g.removeTool(ext) })
		}
	}
	b.reg.tools = tools

	prompts := map[string]string{}
	for _, p := range l.prompts {
		name := p.Name
		ext := b.external(name)
		if name == "" || prompts[ext] != "" {
			continue
		}
		p.Name, p.Description, p.Access = ext, describe(p.Description), b.cfg.Access
		if l.completions && len(p.Arguments) > 0 {
			p.Complete = make(map[string]handlers.CompletionHandler, len(p.Arguments))
			for _, a := range p.Arguments {
				p.Complete[a.Name] = b.completer(client.CompletionRef{Type: "ref/prompt", Name: name}, a.Name)
			}
		}
		if !offer('p', "prompt", name, ext, func() { g.addPrompt(p, b.promptHandler(name)) }) {
			continue
		}
		prompts[ext] = name
	}
	for ext := range b.reg.prompts {
		if _, ok := prompts[ext]; !ok {
			g.drop('p', ext, b, func() { g.removePrompt(ext) })
		}
	}
	b.reg.prompts = prompts

	resources := map[string]bool{}
	for _, r := range l.resources {
		if r.URI == "" || resources[r.URI] {
			continue
		}
		r.Name, r.Access = b.external(cmpOr(r.Name, r.URI)), b.cfg.Access
		if !offer('r', "resource", r.URI, r.URI, func() { g.addResource(r, b.resourceHandler()) }) {
			continue
		}
		resources[r.URI] = true
	}
	for uri := range b.reg.resources {
		if !resources[uri] {
			g.drop('r', uri, b, func() { g.removeResource(uri) })
		}
	}
	b.reg.resources = resources

	templates := map[string]bool{}
	for _, t := range l.templates {
		if t.URITemplate == "" || templates[t.URITemplate] {
			continue
		}
		parsed, err := uritemplate.Parse(t.URITemplate)
		if err != nil {
			skip("resource template", t.URITemplate, err.Error())
			continue
		}
		t.Name, t.Access = b.external(cmpOr(t.Name, t.URITemplate)), b.cfg.Access
		if l.completions {
			t.Complete = map[string]handlers.CompletionHandler{}
			for _, v := range parsed.Vars() {
				t.Complete[v] = b.completer(client.CompletionRef{Type: "ref/resource", URI: t.URITemplate}, v)
			}
		}
		if !offer('u', "resource template", t.URITemplate, t.URITemplate, func() { g.addTemplate(t, b.resourceHandler()) }) {
			continue
		}
		templates[t.URITemplate] = true
	}
	for tmpl := range b.reg.templates {
		if !templates[tmpl] {
			g.drop('u', tmpl, b, func() { g.removeTemplate(tmpl) })
		}
	}
	b.reg.templates = templates
	g.offerExtensions(b, l.extensions)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// try runs f, turning a panic (handlers' registration methods panic on
// what they cannot take) into an error.
func try(f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%v", v)
		}
	}()
	f()
	return nil
}
