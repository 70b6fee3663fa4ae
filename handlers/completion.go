package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// maxCompletionValues is the specification's limit on values per answer.
const maxCompletionValues = 100

// CompletionHandler suggests values for one prompt argument or template
// variable. value is what the user has typed so far. args holds the values
// already chosen for the other arguments or variables (the request's
// context.arguments, sent by clients from 2025-06-18 on; empty before).
// A *jsonrpc.Error is sent as that protocol error; any other error becomes
// an internal error (-32603).
type CompletionHandler func(ctx context.Context, req *Request, value string, args map[string]string) (mcp.Completion, error)

// CompleteFrom returns a CompletionHandler that suggests the options that
// start with what was typed, ignoring case, in the order given.
func CompleteFrom(options ...string) CompletionHandler {
	return func(_ context.Context, _ *Request, value string, _ map[string]string) (mcp.Completion, error) {
		var c mcp.Completion
		prefix := strings.ToLower(value)
		for _, o := range options {
			if strings.HasPrefix(strings.ToLower(o), prefix) {
				c.Values = append(c.Values, o)
			}
		}
		return c, nil
	}
}

func (s *Server) complete(ctx context.Context, req *Request) (any, error) {
	var p struct {
		Ref *struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument *struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		} `json:"argument"`
		Context struct {
			Arguments map[string]string `json:"arguments"`
		} `json:"context"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Ref == nil || p.Argument == nil || p.Argument.Name == nil || p.Argument.Value == nil {
		return nil, invalidParams("completion/complete needs a ref and an argument with a string name and value")
	}
	name := *p.Argument.Name
	var h CompletionHandler
	s.mu.RLock()
	switch p.Ref.Type {
	case "ref/prompt":
		pr, ok := s.prompts.get(p.Ref.Name)
		if !ok || !pr.Access.Allows(req.Caller) { // one it may not use is as unknown
			s.mu.RUnlock()
			return nil, invalidParams(fmt.Sprintf("unknown prompt %q", p.Ref.Name))
		}
		if !pr.hasArgument(name) {
			s.mu.RUnlock()
			return nil, invalidParams(fmt.Sprintf("prompt %q has no argument %q", pr.Name, name))
		}
		h = pr.Complete[name]
	case "ref/resource":
		t, ok := s.templates.get(p.Ref.URI)
		if ok && !t.Access.Allows(req.Caller) {
			s.mu.RUnlock()
			return nil, invalidParams(fmt.Sprintf("unknown resource template %q", p.Ref.URI))
		}
		if !ok {
			r, static := s.resources.get(p.Ref.URI)
			s.mu.RUnlock()
			// A static resource the caller may not use is as unknown as
			// one nobody registered: an empty completion would tell it
			// that the URI exists.
			if static && r.Access.Allows(req.Caller) {
				// A fixed URI has nothing to complete.
				return completeResult(mcp.Completion{}), nil
			}
			return nil, invalidParams(fmt.Sprintf("unknown resource template %q", p.Ref.URI))
		}
		if !contains(t.parsed.Vars(), name) {
			s.mu.RUnlock()
			return nil, invalidParams(fmt.Sprintf("resource template %q has no variable %q", p.Ref.URI, name))
		}
		h = t.Complete[name]
	default:
		s.mu.RUnlock()
		return nil, invalidParams(`ref.type must be "ref/prompt" or "ref/resource"`)
	}
	s.mu.RUnlock()
	if h == nil {
		return completeResult(mcp.Completion{}), nil
	}
	args := p.Context.Arguments
	if args == nil || !since(req, mcp.Version20250618) {
		args = map[string]string{}
	}
	c, err := h(ctx, req, *p.Argument.Value, args)
	if err != nil {
		return nil, err
	}
	return completeResult(c), nil
}

func completeResult(c mcp.Completion) any {
	if n := len(c.Values); n > maxCompletionValues {
		c.Values = c.Values[:maxCompletionValues]
		c.HasMore = true
		c.Total = max(c.Total, n)
	}
	if c.Values == nil {
		c.Values = []string{}
	}
	return struct {
		Completion mcp.Completion `json:"completion"`
	}{c}
}
