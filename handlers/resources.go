package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/handlers/uritemplate"
)

// Resource is a resource with a fixed URI as a server offers it: what
// resources/list shows, and who may see and read it.
type Resource struct {
	mcp.Resource
	// Access, when set, says which callers may see and use it (see
	// Access); nil: everyone.
	Access *Access `json:"-"`
}

// resourceFor adapts r to what req's revision can carry.
func resourceFor(r mcp.Resource, req *Request) mcp.Resource {
	if !since(req, mcp.Version20250618) {
		r.Title, r.Meta = "", nil
	}
	r.Annotations = annotationsFor(r.Annotations, req)
	r.Icons = iconsFor(r.Icons, req)
	return r
}

func (r Resource) forVersion(req *Request) Resource {
	r.Resource = resourceFor(r.Resource, req)
	return r
}

// ResourceTemplate is a resource template as a server offers it: what
// resources/templates/list shows (mcp.ResourceTemplate), the completions
// of its variables, and who may see and read its resources.
type ResourceTemplate struct {
	mcp.ResourceTemplate
	// Complete suggests values for the template's variables, by variable
	// name, for completion/complete with a ref/resource.
	Complete map[string]CompletionHandler `json:"-"`
	// Access, when set, says which callers may see and use it (see
	// Access); nil: everyone.
	Access *Access `json:"-"`
}

func (t ResourceTemplate) forVersion(req *Request) ResourceTemplate {
	t.ResourceTemplate = templateFor(t.ResourceTemplate, req)
	return t
}

// templateFor adapts t to what req's revision can carry.
func templateFor(t mcp.ResourceTemplate, req *Request) mcp.ResourceTemplate {
	if !since(req, mcp.Version20250618) {
		t.Title, t.Meta = "", nil
	}
	t.Annotations = annotationsFor(t.Annotations, req)
	t.Icons = iconsFor(t.Icons, req)
	return t
}

// ResourceHandler reads a resource. uri is the URI the client asked for;
// vars holds the values of the template's variables (empty for a resource
// with a fixed URI). Returning ErrResourceNotFound (or an error wrapping it),
// or no contents at all, tells the client there is no such resource; a
// *jsonrpc.Error is sent as that protocol error; any other error becomes an
// internal error (-32603) whose text is logged, not sent.
type ResourceHandler func(ctx context.Context, req *Request, uri string, vars map[string]string) ([]mcp.ResourceContents, error)

// ErrResourceNotFound is what a ResourceHandler returns for a URI that
// matches its template but names nothing.
var ErrResourceNotFound = errors.New("resource not found")

type resource struct {
	Resource
	handler ResourceHandler
}

type template struct {
	ResourceTemplate
	parsed  *uritemplate.Template
	handler ResourceHandler
}

// AddResource registers (or replaces, by URI) a resource with a fixed URI.
// It panics if the URI, the name or the handler is missing.
func (s *Server) AddResource(r Resource, h ResourceHandler) {
	if r.URI == "" || r.Name == "" || h == nil {
		panic("handlers: AddResource needs a URI, a name and a handler")
	}
	r.Meta = nullIsNone(r.Meta)
	mustBeObject("resource", r.URI, "_meta", r.Meta)
	s.mu.Lock()
	s.guard(r.Access)
	s.resources.put(r.URI, &resource{Resource: r, handler: h})
	s.offer(offerResources)
	s.mu.Unlock()
	s.changed(Change{Kind: ResourcesChanged})
}

// RemoveResource unregisters the resource with this URI; it reports whether
// there was one.
func (s *Server) RemoveResource(uri string) bool {
	s.mu.Lock()
	ok := s.resources.remove(uri)
	s.mu.Unlock()
	if ok {
		s.changed(Change{Kind: ResourcesChanged})
	}
	return ok
}

// AddResourceTemplate registers (or replaces, by template text) a resource
// template. resources/read serves a URI that no fixed resource has with the
// first template (in registration order) that matches it. It panics if the
// template does not parse or the name or handler is missing.
func (s *Server) AddResourceTemplate(t ResourceTemplate, h ResourceHandler) {
	if t.Name == "" || h == nil {
		panic("handlers: AddResourceTemplate needs a name and a handler")
	}
	t.Meta = nullIsNone(t.Meta)
	mustBeObject("resource template", t.URITemplate, "_meta", t.Meta)
	parsed, err := uritemplate.Parse(t.URITemplate)
	if err != nil {
		panic(fmt.Sprintf("handlers: resource template %q: %v", t.URITemplate, err))
	}
	vars := parsed.Vars()
	for v := range t.Complete {
		if !contains(vars, v) {
			panic(fmt.Sprintf("handlers: resource template %q has no variable %q to complete", t.URITemplate, v))
		}
	}
	s.mu.Lock()
	s.guard(t.Access)
	s.templates.put(t.URITemplate, &template{ResourceTemplate: t, parsed: parsed, handler: h})
	s.offer(offerResources)
	if len(t.Complete) > 0 {
		s.offer(offerCompletions)
	}
	s.mu.Unlock()
	s.changed(Change{Kind: ResourcesChanged})
}

// RemoveResourceTemplate unregisters the template with this text; it
// reports whether there was one.
func (s *Server) RemoveResourceTemplate(uriTemplate string) bool {
	s.mu.Lock()
	ok := s.templates.remove(uriTemplate)
	s.mu.Unlock()
	if ok {
		s.changed(Change{Kind: ResourcesChanged})
	}
	return ok
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s *Server) listResources(ctx context.Context, req *Request) (any, error) {
	list, next, err := listPage(ctx, s, req, &s.resources, 'r', func(r *resource) *Access { return r.Access }, func(r *resource, req *Request) Resource { return r.Resource.forVersion(req) })
	if err != nil {
		return nil, err
	}
	return struct {
		Resources  []Resource `json:"resources"`
		NextCursor string     `json:"nextCursor,omitempty"`
	}{list, next}, nil
}

func (s *Server) listResourceTemplates(ctx context.Context, req *Request) (any, error) {
	list, next, err := listPage(ctx, s, req, &s.templates, 'u', func(t *template) *Access { return t.Access }, func(t *template, req *Request) ResourceTemplate { return t.ResourceTemplate.forVersion(req) })
	if err != nil {
		return nil, err
	}
	return struct {
		ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
		NextCursor        string             `json:"nextCursor,omitempty"`
	}{list, next}, nil
}

// resourceNotFound is -32002 in the legacy era and -32602 in 2026-07-28,
// which retired the MCP-specific code.
func resourceNotFound(req *Request, uri string) *jsonrpc.Error {
	code := jsonrpc.CodeResourceNotFound
	if req.Modern {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: "Resource not found", Data: map[string]string{"uri": uri}}
}

func (s *Server) readResource(ctx context.Context, req *Request) (any, error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.URI == nil || *p.URI == "" {
		return nil, invalidParams("resources/read needs a string uri")
	}
	uri := *p.URI
	var (
		h        ResourceHandler
		vars     map[string]string
		mimeType string
		access   *Access
	)
	s.mu.RLock()
	if r, ok := s.resources.get(uri); ok {
		h, mimeType, vars, access = r.handler, r.MimeType, map[string]string{}, r.Access
	} else {
		for _, e := range s.templates.list {
			if m, ok := e.val.parsed.Match(uri); ok {
				h, mimeType, vars, access = e.val.handler, e.val.MimeType, m, e.val.Access
				break
			}
		}
	}
	s.mu.RUnlock()
	switch access.verdict(req.Caller) {
	case unseen:
		h = nil // answered as a resource that does not exist
	case needsScope:
		return nil, insufficientScope("resource", uri, access, req.Caller)
	}
	if h == nil {
		return nil, resourceNotFound(req, uri)
	}
	contents, err := h(ctx, req, uri, vars)
	if errors.Is(err, ErrResourceNotFound) || err == nil && len(contents) == 0 {
		// An empty contents array for a missing resource is ambiguous, and
		// 2026-07-28 forbids it.
		return nil, resourceNotFound(req, uri)
	}
	if err != nil {
		return nil, err
	}
	out := make([]mcp.ResourceContents, len(contents))
	for i, c := range contents {
		if c.URI == "" {
			c.URI = uri
		}
		if c.MimeType == "" {
			c.MimeType = mimeType
		}
		if !since(req, mcp.Version20250618) {
			c.Meta = nil
		}
		out[i] = c
	}
	return struct {
		Contents []mcp.ResourceContents `json:"contents"`
		Meta     json.RawMessage        `json:"_meta,omitempty"`
	}{out, req.resultMeta()}, nil
}
