package client

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// maxPages bounds the pages of one list, against a server whose cursors
// never end.
const maxPages = 1000

// The cached lists, by the method that fills them.
const (
	mTools     = "tools/list"
	mResources = "resources/list"
	mTemplates = "resources/templates/list"
	mPrompts   = "prompts/list"
)

// methodsOf are the lists a list_changed notification invalidates:
// resource templates change with resources.
var methodsOf = map[ListKind][]string{
	ListTools:     {mTools},
	ListResources: {mResources, mTemplates},
	ListPrompts:   {mPrompts},
}

// listAll follows nextCursor to the end and caches the whole list, after
// filter (if set) has left out what must not be offered.
func listAll[T any](ctx context.Context, c *Client, method, field string, opts []CallOption, filter func([]T) []T) ([]T, error) {
	kind := kindOf(method)
	c.mu.Lock()
	changes := c.changes[kind]
	c.mu.Unlock()
	all := []T{}
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, fmt.Errorf("client: %s: more than %d pages", method, maxPages)
		}
		var params map[string]string
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		var res map[string]json.RawMessage
		if err := c.Call(ctx, method, params, &res, opts...); err != nil {
			return nil, err
		}
		var items []T
		if raw, ok := res[field]; ok {
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, fmt.Errorf("client: %s: decoding %s: %w", method, field, err)
			}
		}
		all = append(all, items...)
		var next string
		if raw, ok := res["nextCursor"]; ok {
			_ = json.Unmarshal(raw, &next)
		}
		if next == "" {
			break
		}
		if seen[next] {
			return nil, fmt.Errorf("client: %s: the server repeated cursor %q", method, next)
		}
		seen[next] = true
		cursor = next
	}
	if filter != nil {
		all = filter(all)
	}
	c.mu.Lock()
	c.cache[method] = all
	// A list_changed that came while the list was being fetched was not
	// news to a cache that did not exist yet, but the list may predate it.
	stale := c.changes[kind] != changes
	if stale {
		c.dirty[kind] = true
	}
	c.mu.Unlock()
	if stale {
		c.pokeRefresher()
	}
	return slices.Clone(all), nil
}

// kindOf is the list kind whose list_changed invalidates method's list.
func kindOf(method string) ListKind {
	for k, ms := range methodsOf {
		if slices.Contains(ms, method) {
			return k
		}
	}
	return ""
}

func (c *Client) pokeRefresher() {
	select {
	case c.refresh <- struct{}{}:
	default:
	}
}

// ListTools lists every tool (all pages) and caches the list. Over HTTP in
// 2026-07-28, tools whose x-mcp-header annotations are invalid are left
// out (and logged), as the transport requires.
func (c *Client) ListTools(ctx context.Context, opts ...CallOption) ([]mcp.Tool, error) {
	var filter func([]mcp.Tool) []mcp.Tool
	if c.h != nil && c.era == EraModern {
		filter = c.validTools
	}
	return listAll(ctx, c, mTools, "tools", opts, filter)
}

// ListResources lists every resource (all pages) and caches the list.
func (c *Client) ListResources(ctx context.Context, opts ...CallOption) ([]mcp.Resource, error) {
	return listAll[mcp.Resource](ctx, c, mResources, "resources", opts, nil)
}

// ListResourceTemplates lists every resource template (all pages) and
// caches the list.
func (c *Client) ListResourceTemplates(ctx context.Context, opts ...CallOption) ([]mcp.ResourceTemplate, error) {
	return listAll[mcp.ResourceTemplate](ctx, c, mTemplates, "resourceTemplates", opts, nil)
}

// ListPrompts lists every prompt (all pages) and caches the list.
func (c *Client) ListPrompts(ctx context.Context, opts ...CallOption) ([]mcp.Prompt, error) {
	return listAll[mcp.Prompt](ctx, c, mPrompts, "prompts", opts, nil)
}

func cached[T any](c *Client, method string) ([]T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.cache[method]
	if !ok {
		return nil, false
	}
	return slices.Clone(v.([]T)), true
}

// CachedTools returns the tool list as last fetched, by ListTools or by the
// refresh that follows notifications/tools/list_changed; false if it was
// never fetched.
func (c *Client) CachedTools() ([]mcp.Tool, bool) { return cached[mcp.Tool](c, mTools) }

// CachedResources is CachedTools for resources.
func (c *Client) CachedResources() ([]mcp.Resource, bool) { return cached[mcp.Resource](c, mResources) }

// CachedResourceTemplates is CachedTools for resource templates (refreshed
// on notifications/resources/list_changed).
func (c *Client) CachedResourceTemplates() ([]mcp.ResourceTemplate, bool) {
	return cached[mcp.ResourceTemplate](c, mTemplates)
}

// CachedPrompts is CachedTools for prompts.
func (c *Client) CachedPrompts() ([]mcp.Prompt, bool) { return cached[mcp.Prompt](c, mPrompts) }

// markDirty schedules a refresh of the lists of kind that were fetched
// before; lists nobody asked for stay unfetched.
func (c *Client) markDirty(kind ListKind) {
	c.mu.Lock()
	c.changes[kind]++
	fetched := false
	for _, m := range methodsOf[kind] {
		if _, ok := c.cache[m]; ok {
			c.dirty[kind] = true
			fetched = true
		}
	}
	c.mu.Unlock()
	if fetched {
		c.pokeRefresher()
	}
}

// refresher refetches dirty lists off the reading goroutine (which must
// not wait for a response it is the one to read). Notifications that
// arrive during a refresh coalesce into one more.
func (c *Client) refresher() {
	defer c.wg.Done()
	for {
		select {
		case <-c.bg.Done():
			return
		case <-c.refresh:
		}
		c.mu.Lock()
		var kinds []ListKind
		for k := range c.dirty {
			kinds = append(kinds, k)
		}
		clear(c.dirty)
		c.mu.Unlock()
		slices.Sort(kinds)
		for _, k := range kinds {
			if err := c.refetch(k); err != nil {
				if c.bg.Err() == nil {
					c.log.Warn("refreshing a changed list", slog.String("list", string(k)), slog.Any("err", err))
				}
				continue
			}
			if c.opts.OnListChanged != nil {
				c.opts.OnListChanged(k)
			}
		}
	}
}

func (c *Client) refetch(k ListKind) error {
	for _, m := range methodsOf[k] {
		c.mu.Lock()
		_, ok := c.cache[m]
		c.mu.Unlock()
		if !ok {
			continue
		}
		var err error
		switch m {
		case mTools:
			_, err = c.ListTools(c.bg)
		case mResources:
			_, err = c.ListResources(c.bg)
		case mTemplates:
			_, err = c.ListResourceTemplates(c.bg)
		case mPrompts:
			_, err = c.ListPrompts(c.bg)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// CallTool calls a tool. args is marshalled as the arguments object (nil
// sends none). A tool that failed is a result with IsError, not an error.
func (c *Client) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (*mcp.CallToolResult, error) {
	params := map[string]any{"name": name}
	if !isNil(args) {
		params["arguments"] = args
	}
	var res mcp.CallToolResult
	if err := c.Call(ctx, "tools/call", params, &res, opts...); err != nil {
		return nil, err
	}
	return &res, nil
}

// ReadResource reads a resource.
func (c *Client) ReadResource(ctx context.Context, uri string, opts ...CallOption) (*ReadResourceResult, error) {
	var res ReadResourceResult
	if err := c.Call(ctx, "resources/read", map[string]string{"uri": uri}, &res, opts...); err != nil {
		return nil, err
	}
	return &res, nil
}

// GetPrompt gets a prompt with its arguments (nil sends none).
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (*mcp.GetPromptResult, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	var res mcp.GetPromptResult
	if err := c.Call(ctx, "prompts/get", params, &res, opts...); err != nil {
		return nil, err
	}
	return &res, nil
}

// Complete asks for completions of a prompt or resource-template argument.
func (c *Client) Complete(ctx context.Context, p CompleteParams, opts ...CallOption) (*mcp.Completion, error) {
	var res struct {
		Completion mcp.Completion `json:"completion"`
	}
	if err := c.Call(ctx, "completion/complete", p, &res, opts...); err != nil {
		return nil, err
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	return &res.Completion, nil
}

// Ping checks that the server answers. 2026-07-28 removed ping, so in
// that era it sends server/discover, which every modern server must
// answer and which has no side effects.
func (c *Client) Ping(ctx context.Context, opts ...CallOption) error {
	if c.era == EraModern {
		return c.Call(ctx, "server/discover", nil, nil, opts...)
	}
	return c.Call(ctx, "ping", nil, nil, opts...)
}

// isNil reports whether v is nil, or a nil map, pointer or slice in an
// interface: arguments that would be sent as null, which a server may
// refuse (arguments are an object, or absent).
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch r := reflect.ValueOf(v); r.Kind() {
	case reflect.Map, reflect.Pointer, reflect.Slice, reflect.Interface:
		return r.IsNil()
	}
	return false
}
