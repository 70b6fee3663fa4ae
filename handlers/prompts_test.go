package handlers

import (
	"context"
	"errors"
	"testing"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
)

func promptServer() *Server {
	s := NewServer(mcp.Implementation{Name: "t", Version: "1"}, "")
	s.AddPrompt(Prompt{
		Prompt: mcp.Prompt{
			Name:        "review",
			Title:       "Review",
			Description: "Reviews code.",
			Arguments: []mcp.PromptArgument{
				{Name: "code", Title: "Code", Required: true},
				{Name: "language", Description: "Its language."},
			},
			Icons: []mcp.Icon{{Src: "data:,p"}},
		},
	}, func(_ context.Context, _ *Request, args map[string]string) (*mcp.GetPromptResult, error) {
		lang, ok := args["language"]
		if !ok {
			lang = "(none)"
		}
		return &mcp.GetPromptResult{
			Description: "Review in " + lang,
			Messages: []mcp.PromptMessage{
				{Role: "user", Content: mcp.TextContent(args["code"])},
				{Role: "assistant", Content: mcp.AudioContent([]byte{1}, "audio/wav")},
			},
		}, nil
	})
	s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: "plain"}}, func(context.Context, *Request, map[string]string) (*mcp.GetPromptResult, error) {
		return nil, nil
	})
	s.AddPrompt(Prompt{Prompt: mcp.Prompt{Name: "broken"}}, func(context.Context, *Request, map[string]string) (*mcp.GetPromptResult, error) {
		return nil, errors.New("template missing")
	})
	return s
}

func TestListPromptsPerEra(t *testing.T) {
	s := promptServer()
	const rest = `{"name":"plain"},{"name":"broken"}]}`
	const (
		old    = `{"prompts":[{"name":"review","description":"Reviews code.","arguments":[{"name":"code","required":true},{"name":"language","description":"Its language."}]},` + rest
		mid    = `{"prompts":[{"name":"review","title":"Review","description":"Reviews code.","arguments":[{"name":"code","title":"Code","required":true},{"name":"language","description":"Its language."}]},` + rest
		newest = `{"prompts":[{"name":"review","title":"Review","description":"Reviews code.","arguments":[{"name":"code","title":"Code","required":true},{"name":"language","description":"Its language."}],"icons":[{"src":"data:,p"}]},` + rest
	)
	want := map[string]string{"2024-11-05": old, "2025-03-26": old, "2025-06-18": mid, "2025-11-25": newest, "2026-07-28": newest}
	// Oldest first: shaping a prompt for an old client must not change it.
	for _, v := range eras {
		wantResult(t, run(t, s, v, "prompts/list", `{}`), want[v])
	}
}

func TestGetPrompt(t *testing.T) {
	s := promptServer()
	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			audio := `{"type":"audio","data":"AQ==","mimeType":"audio/wav"}`
			if v == "2024-11-05" {
				audio = `{"type":"text","text":"[audio/wav audio left out: not supported by protocol 2024-11-05]"}`
			}
			wantResult(t, run(t, s, v, "prompts/get", `{"name":"review","arguments":{"code":"x := 1","language":"Go"}}`),
				`{"description":"Review in Go","messages":[{"role":"user","content":{"type":"text","text":"x := 1"}},{"role":"assistant","content":`+audio+`}]}`)
			wantResult(t, run(t, s, v, "prompts/get", `{"name":"review","arguments":{"code":""}}`),
				`{"description":"Review in (none)","messages":[{"role":"user","content":{"type":"text","text":""}},{"role":"assistant","content":`+audio+`}]}`)
			wantResult(t, run(t, s, v, "prompts/get", `{"name":"plain"}`), `{"messages":[]}`)
			wantInternal(t, run(t, s, v, "prompts/get", `{"name":"broken"}`), "template missing")
			for _, c := range []struct{ params, message string }{
				{`{"name":"nope"}`, `Invalid params: unknown prompt "nope"`},
				{`{"name":"review"}`, `Invalid params: prompt "review" needs argument(s) "code"`},
				{`{"name":"review","arguments":{"language":"Go"}}`, `Invalid params: prompt "review" needs argument(s) "code"`},
				{`{"name":"review","arguments":{"code":"x","lang":"Go","style":"terse"}}`, `Invalid params: prompt "review" has no argument(s) "lang", "style"`},
				{`{"name":"review","arguments":{"code":1}}`, `Invalid params: prompts/get needs a string name and an object of string arguments`},
				{`{"arguments":{}}`, `Invalid params: prompts/get needs a string name and an object of string arguments`},
			} {
				wantError(t, run(t, s, v, "prompts/get", c.params), jsonrpc.CodeInvalidParams, c.message, "")
			}
		})
	}
}

func TestPromptRegistration(t *testing.T) {
	s := promptServer()
	if !s.RemovePrompt("plain") || s.RemovePrompt("plain") {
		t.Fatal("RemovePrompt: want true then false")
	}
	wantError(t, run(t, s, "2025-11-25", "prompts/get", `{"name":"plain"}`), jsonrpc.CodeInvalidParams, `Invalid params: unknown prompt "plain"`, "")
	for _, p := range []Prompt{
		{},
		{Prompt: mcp.Prompt{Name: "dup", Arguments: []mcp.PromptArgument{{Name: "a"}, {Name: "a"}}}},
		{Prompt: mcp.Prompt{Name: "unnamed", Arguments: []mcp.PromptArgument{{}}}},
		{Prompt: mcp.Prompt{Name: "stray", Arguments: []mcp.PromptArgument{{Name: "a"}}}, Complete: map[string]CompletionHandler{"b": CompleteFrom("x")}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v: no panic", p)
				}
			}()
			s.AddPrompt(p, noPrompt)
		}()
	}
}
