package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcprt/mcprt/handlers/mcp"
)

// Prompt is a prompt as a server offers it: what prompts/list shows
// (mcp.Prompt), the completions of its arguments, and who may see and get
// it.
type Prompt struct {
	mcp.Prompt
	// Complete suggests values for an argument, by argument name, for
	// completion/complete with a ref/prompt.
	Complete map[string]CompletionHandler `json:"-"`
	// Access, when set, says which callers may see and use it (see
	// Access); nil: everyone.
	Access *Access `json:"-"`
}

func (p Prompt) forVersion(req *Request) Prompt {
	if !since(req, mcp.Version20250618) {
		p.Title, p.Meta = "", nil
		if p.Arguments != nil {
			args := make([]mcp.PromptArgument, len(p.Arguments))
			for i, a := range p.Arguments {
				a.Title = ""
				args[i] = a
			}
			p.Arguments = args
		}
	}
	p.Icons = iconsFor(p.Icons, req)
	return p
}

// PromptHandler fills in a prompt. args holds the arguments the client gave
// (every required one is there, and no unknown one). A *jsonrpc.Error is
// sent as that protocol error; any other error becomes an internal error
// (-32603) whose text is logged, not sent.
type PromptHandler func(ctx context.Context, req *Request, args map[string]string) (*mcp.GetPromptResult, error)

type prompt struct {
	Prompt
	handler PromptHandler
}

// AddPrompt registers (or replaces, by name) a prompt. It panics if the
// name or the handler is missing, or if two arguments share a name.
func (s *Server) AddPrompt(p Prompt, h PromptHandler) {
	if p.Name == "" || h == nil {
		panic("handlers: AddPrompt needs a name and a handler")
	}
	p.Meta = nullIsNone(p.Meta)
	mustBeObject("prompt", p.Name, "_meta", p.Meta)
	seen := map[string]bool{}
	for _, a := range p.Arguments {
		if a.Name == "" || seen[a.Name] {
			panic(fmt.Sprintf("handlers: prompt %q: argument names must be unique and not empty", p.Name))
		}
		seen[a.Name] = true
	}
	completes := false
	for name, c := range p.Complete {
		if !seen[name] {
			panic(fmt.Sprintf("handlers: prompt %q: Complete names %q, which is not one of its arguments", p.Name, name))
		}
		completes = completes || c != nil
	}
	s.mu.Lock()
	s.guard(p.Access)
	s.prompts.put(p.Name, &prompt{Prompt: p, handler: h})
	s.offer(offerPrompts)
	if completes {
		s.offer(offerCompletions)
	}
	s.mu.Unlock()
	s.changed(Change{Kind: PromptsChanged})
}

// RemovePrompt unregisters a prompt; it reports whether it existed.
func (s *Server) RemovePrompt(name string) bool {
	s.mu.Lock()
	ok := s.prompts.remove(name)
	s.mu.Unlock()
	if ok {
		s.changed(Change{Kind: PromptsChanged})
	}
	return ok
}

func (s *Server) listPrompts(ctx context.Context, req *Request) (any, error) {
	list, next, err := listPage(ctx, s, req, &s.prompts, 'p', func(p *prompt) *Access { return p.Access }, func(p *prompt, req *Request) Prompt { return p.Prompt.forVersion(req) })
	if err != nil {
		return nil, err
	}
	return struct {
		Prompts    []Prompt `json:"prompts"`
		NextCursor string   `json:"nextCursor,omitempty"`
	}{list, next}, nil
}

func (s *Server) getPrompt(ctx context.Context, req *Request) (any, error) {
	var p struct {
		Name      *string           `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Name == nil {
		return nil, invalidParams("prompts/get needs a string name and an object of string arguments")
	}
	s.mu.RLock()
	pr, ok := s.prompts.get(*p.Name)
	s.mu.RUnlock()
	if ok {
		switch pr.Access.verdict(req.Caller) {
		case unseen:
			ok = false // answered as a prompt that does not exist
		case needsScope:
			return nil, insufficientScope("prompt", pr.Name, pr.Access, req.Caller)
		}
	}
	if !ok {
		return nil, invalidParams(fmt.Sprintf("unknown prompt %q", *p.Name))
	}
	var missing, unknown []string
	for _, a := range pr.Arguments {
		if _, ok := p.Arguments[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	for name := range p.Arguments {
		if !pr.hasArgument(name) {
			unknown = append(unknown, name)
		}
	}
	if len(missing) > 0 {
		return nil, invalidParams(fmt.Sprintf("prompt %q needs argument(s) %s", pr.Name, quoteList(missing)))
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, invalidParams(fmt.Sprintf("prompt %q has no argument(s) %s", pr.Name, quoteList(unknown)))
	}
	if p.Arguments == nil {
		p.Arguments = map[string]string{}
	}
	res, err := pr.handler(ctx, req, p.Arguments)
	if err != nil {
		return nil, err
	}
	if res == nil {
		res = &mcp.GetPromptResult{}
	}
	out := mcp.GetPromptResult{Description: res.Description, Messages: make([]mcp.PromptMessage, len(res.Messages)), Meta: res.Meta}
	for i, m := range res.Messages {
		out.Messages[i] = mcp.PromptMessage{Role: m.Role, Content: contentForVersion(m.Content, req)}
	}
	return out, nil
}

func (p *prompt) hasArgument(name string) bool {
	for _, a := range p.Arguments {
		if a.Name == name {
			return true
		}
	}
	return false
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
