package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

func completionServer() *Server {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddPrompt(Prompt{
		Prompt: mcp.Prompt{
			Name: "review",
			Arguments: []mcp.PromptArgument{
				{Name: "code", Required: true},
				{Name: "language"},
				{Name: "many"},
				{Name: "failing"},
			},
		},
		Complete: map[string]CompletionHandler{
			"language": CompleteFrom("Go", "Python", "go-template", "Pascal"),
			"many": func(_ context.Context, _ *Request, value string, _ map[string]string) (mcp.Completion, error) {
				var c mcp.Completion
				for i := range 250 {
					c.Values = append(c.Values, fmt.Sprintf("%s%03d", value, i))
				}
				return c, nil
			},
			"failing": func(context.Context, *Request, string, map[string]string) (mcp.Completion, error) {
				return mcp.Completion{}, errors.New("index unavailable")
			},
		},
	}, noPrompt)
	s.AddResourceTemplate(ResourceTemplate{
		ResourceTemplate: mcp.ResourceTemplate{
			URITemplate: "repo://{owner}/{name}",
			Name:        "repo",
		},
		Complete: map[string]CompletionHandler{
			// Suggests the owner's repositories: needs context.arguments.
			"name": func(_ context.Context, _ *Request, value string, args map[string]string) (mcp.Completion, error) {
				repos := map[string][]string{"golang": {"go", "tools", "text"}, "anthdm": {"hollywood"}}[args["owner"]]
				c := mcp.Completion{Values: []string{}, Total: len(repos)}
				for _, r := range repos {
					if strings.HasPrefix(r, value) {
						c.Values = append(c.Values, r)
					}
				}
				c.HasMore = len(c.Values) < len(repos)
				return c, nil
			},
		},
	}, noContents)
	s.AddResource(Resource{Resource: mcp.Resource{URI: "file:///fixed", Name: "fixed"}}, noContents)
	return s
}

func TestCompletePromptArgument(t *testing.T) {
	s := completionServer()
	for _, v := range eras {
		wantResult(t, run(t, s, v, "completion/complete", `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"language","value":"g"}}`),
			`{"completion":{"values":["Go","go-template"]}}`)
		wantResult(t, run(t, s, v, "completion/complete", `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"language","value":""}}`),
			`{"completion":{"values":["Go","Python","go-template","Pascal"]}}`)
		wantResult(t, run(t, s, v, "completion/complete", `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"language","value":"x"}}`),
			`{"completion":{"values":[]}}`)
		// An argument without a CompletionHandler has no suggestions.
		wantResult(t, run(t, s, v, "completion/complete", `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"code","value":"f"}}`),
			`{"completion":{"values":[]}}`)
		wantInternal(t, run(t, s, v, "completion/complete", `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"failing","value":""}}`), "index unavailable")
	}
}

func TestCompleteAtMost100(t *testing.T) {
	s := completionServer()
	a := run(t, s, "2025-11-25", "completion/complete", `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"many","value":"v"}}`)
	var vals []string
	for i := range 100 {
		vals = append(vals, fmt.Sprintf(`"v%03d"`, i))
	}
	wantResult(t, a, `{"completion":{"values":[`+strings.Join(vals, ",")+`],"total":250,"hasMore":true}}`)
}

func TestCompleteTemplateVariableWithContext(t *testing.T) {
	s := completionServer()
	const params = `{"ref":{"type":"ref/resource","uri":"repo://{owner}/{name}"},"argument":{"name":"name","value":"t"},"context":{"arguments":{"owner":"golang"}}}`
	for _, v := range eras {
		want := `{"completion":{"values":["tools","text"],"total":3,"hasMore":true}}`
		if v < "2025-06-18" {
			// context.arguments arrived in 2025-06-18: older requests do not have it.
			want = `{"completion":{"values":[]}}`
		}
		wantResult(t, run(t, s, v, "completion/complete", params), want)
	}
	wantResult(t, run(t, s, "2025-06-18", "completion/complete", `{"ref":{"type":"ref/resource","uri":"repo://{owner}/{name}"},"argument":{"name":"owner","value":""}}`),
		`{"completion":{"values":[]}}`)
	// A fixed URI has no variables to complete.
	wantResult(t, run(t, s, "2025-06-18", "completion/complete", `{"ref":{"type":"ref/resource","uri":"file:///fixed"},"argument":{"name":"x","value":""}}`),
		`{"completion":{"values":[]}}`)
}

func TestCompleteErrors(t *testing.T) {
	s := completionServer()
	for _, c := range []struct{ params, message string }{
		{`{}`, "Invalid params: completion/complete needs a ref and an argument with a string name and value"},
		{`{"ref":{"type":"ref/prompt","name":"review"}}`, "Invalid params: completion/complete needs a ref and an argument with a string name and value"},
		{`{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"language"}}`, "Invalid params: completion/complete needs a ref and an argument with a string name and value"},
		{`{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""}}`, `Invalid params: unknown prompt "nope"`},
		{`{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"nope","value":""}}`, `Invalid params: prompt "review" has no argument "nope"`},
		{`{"ref":{"type":"ref/resource","uri":"repo://x/{name}"},"argument":{"name":"name","value":""}}`, `Invalid params: unknown resource template "repo://x/{name}"`},
		{`{"ref":{"type":"ref/resource","uri":"repo://{owner}/{name}"},"argument":{"name":"branch","value":""}}`, `Invalid params: resource template "repo://{owner}/{name}" has no variable "branch"`},
		{`{"ref":{"type":"ref/tool","name":"x"},"argument":{"name":"a","value":""}}`, `Invalid params: ref.type must be "ref/prompt" or "ref/resource"`},
	} {
		wantError(t, run(t, s, "2025-11-25", "completion/complete", c.params), jsonrpc.CodeInvalidParams, c.message, "")
	}
}

func TestCompleteFrom(t *testing.T) {
	h := CompleteFrom("Élan", "élite", "Zebra", "zeta")
	for _, c := range []struct {
		value string
		want  []string
	}{
		{"", []string{"Élan", "élite", "Zebra", "zeta"}},
		{"z", []string{"Zebra", "zeta"}},
		{"ÉL", []string{"Élan", "élite"}},
		{"zebras", nil},
	} {
		got, err := h(context.Background(), nil, c.value, nil)
		if err != nil || fmt.Sprint(got.Values) != fmt.Sprint(c.want) {
			t.Errorf("%q: got %v (%v), want %v", c.value, got.Values, err, c.want)
		}
	}
}
