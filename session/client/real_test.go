//go:build unix

package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

func mcprtServe(t *testing.T) client.Command {
	t.Helper()
	if mcprtBuildErr != nil {
		t.Fatal(mcprtBuildErr)
	}
	return client.Command{Path: mcprtPath, Args: []string{"serve"}, Env: []string{"LOG_LEVEL=warn"}}
}

// TestRealServer drives the real `mcprt serve` in every way the client can
// connect: the probe (which finds 2026-07-28), each era pinned, and each
// legacy revision pinned.
func TestRealServer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		o       client.Options
		era     client.Era
		version string
	}{
		{"auto", client.Options{}, client.EraModern, "2026-07-28"},
		{"modern", client.Options{Era: client.EraModern}, client.EraModern, "2026-07-28"},
		{"legacy", client.Options{Era: client.EraLegacy}, client.EraLegacy, "2025-11-25"},
	}
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		cases = append(cases, struct {
			name    string
			o       client.Options
			era     client.Era
			version string
		}{v, client.Options{Version: v}, client.EraLegacy, v})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.o.LogLevel = "info"
			c := connect(t, mcprtServe(t), opts(tc.o))
			if c.Era() != tc.era || c.ProtocolVersion() != tc.version || c.ServerInfo().Name != "mcprt-reference" {
				t.Fatalf("era %v version %s server %+v", c.Era(), c.ProtocolVersion(), c.ServerInfo())
			}
			tools, err := c.ListTools(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Name)
			}
			for _, want := range []string{"echo", "sleep", "add"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}

			r, err := c.CallTool(ctx(t), "echo", map[string]string{"text": "héllo\nworld"})
			if err != nil || r.IsError || toolText(t, r) != "héllo\nworld" {
				t.Fatalf("echo: %+v %v", r, err)
			}

			var mu sync.Mutex
			var progress []client.Progress
			r, err = c.CallTool(ctx(t), "sleep", map[string]int{"ms": 300}, client.WithProgress(func(p client.Progress) {
				mu.Lock()
				progress = append(progress, p)
				mu.Unlock()
			}))
			if err != nil || toolText(t, r) != "slept" {
				t.Fatalf("sleep: %+v %v", r, err)
			}
			mu.Lock()
			if len(progress) == 0 {
				t.Error("sleep reported no progress")
			}
			for i := 1; i < len(progress); i++ {
				if progress[i].Progress <= progress[i-1].Progress {
					t.Errorf("progress not increasing: %+v", progress)
				}
			}
			mu.Unlock()

			// Invalid arguments: a protocol error until 2025-06-18, a tool
			// error result (isError) from 2025-11-25 on.
			r, err = c.CallTool(ctx(t), "echo", map[string]int{"text": 1})
			var re *client.RPCError
			if tc.version < "2025-11-25" {
				if !errors.As(err, &re) || re.Err.Code != jsonrpc.CodeInvalidParams {
					t.Errorf("echo with a bad argument: %+v %v", r, err)
				}
			} else if err != nil || !r.IsError {
				t.Errorf("echo with a bad argument: %+v %v", r, err)
			}

			// Logging: logging/setLevel (legacy) or the logLevel _meta (modern).
			var logs []string
			c.Subscribe("notifications/message", func(n client.Notification) { logs = append(logs, string(n.Params)) })
			var out struct {
				StructuredContent struct{ Sent int } `json:"structuredContent"`
			}
			if err := c.Call(ctx(t), "tools/call", map[string]any{"name": "log", "arguments": map[string]any{"levels": []string{"debug", "info", "error"}, "message": "hi"}}, &out); err != nil {
				t.Fatal(err)
			}
			if len(logs) != 2 || !strings.Contains(logs[0], `"level":"info"`) || !strings.Contains(logs[1], `"level":"error"`) {
				t.Errorf("log: got %v", logs)
			}
			// structuredContent arrived in 2025-06-18.
			if tc.version >= "2025-06-18" && out.StructuredContent.Sent != 2 {
				t.Errorf("log: structured sent = %d", out.StructuredContent.Sent)
			}

			if err := c.Ping(ctx(t)); err != nil {
				t.Errorf("ping: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestRealServerFeatures reads what the reference server offers besides
// tools: resources, templates, prompts and completion.
func TestRealServerFeatures(t *testing.T) {
	t.Parallel()
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			c := connect(t, mcprtServe(t), opts(client.Options{Era: era}))
			resources, err := c.ListResources(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range resources {
				rr, err := c.ReadResource(ctx(t), res.URI)
				if err != nil {
					t.Errorf("read %s: %v", res.URI, err)
					continue
				}
				if len(rr.Contents) == 0 || rr.Contents[0].URI != res.URI || rr.Contents[0].Text == "" && rr.Contents[0].Blob == nil {
					t.Errorf("read %s: %+v", res.URI, rr)
				}
			}
			templates, err := c.ListResourceTemplates(ctx(t))
			if err != nil || len(templates) == 0 {
				t.Fatalf("templates: %v %v", templates, err)
			}
			rr, err := c.ReadResource(ctx(t), "mcprt://reference/greeting/Ada")
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "Hello, Ada!" {
				t.Errorf("greeting: %+v %v", rr, err)
			}
			prompts, err := c.ListPrompts(ctx(t))
			if err != nil || len(prompts) == 0 {
				t.Fatalf("prompts: %v %v", prompts, err)
			}
			gp, err := c.GetPrompt(ctx(t), "review", map[string]string{"code": "x := 1", "language": "Go"})
			if err != nil || len(gp.Messages) != 1 || !strings.Contains(gp.Messages[0].Content.Text, "x := 1") {
				t.Errorf("review prompt: %+v %v", gp, err)
			}
			comp, err := c.Complete(ctx(t), client.CompleteParams{
				Ref:      client.CompletionRef{Type: "ref/prompt", Name: "review"},
				Argument: client.CompleteArgument{Name: "language", Value: "Py"},
			})
			if err != nil || !slices.Contains(comp.Values, "Python") {
				t.Errorf("complete: %+v %v", comp, err)
			}
			var raw json.RawMessage
			if err := c.Call(ctx(t), "no/such/method", nil, &raw); err == nil {
				t.Error("unknown method succeeded")
			}
		})
	}
}

// TestRealServerCloseWhileBusy: mcprt serve finishes in-flight work after
// stdin EOF (up to its drain timeout, 5 s); Close cancels the work first,
// so the server exits at once and cleanly instead of being killed.
func TestRealServerCloseWhileBusy(t *testing.T) {
	t.Parallel()
	c := connect(t, mcprtServe(t), opts(client.Options{CloseGrace: time.Second, TermGrace: time.Second}))
	started := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		var once sync.Once
		// Progress every 300 ms; what is left after the first (2.7 s) is
		// more than CloseGrace + TermGrace.
		_, err := c.CallTool(context.Background(), "sleep", map[string]int{"ms": 3000},
			client.WithProgress(func(client.Progress) { once.Do(func() { close(started) }) }))
		errs <- err
	}()
	<-started
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-errs; !errors.Is(err, client.ErrClosed) {
		t.Errorf("call: %v", err)
	}
}

// TestRealServerAsksTheClient: the reference server's elicit and sample
// tools reach the client's handlers, as server requests (legacy) and as
// input_required results answered by a retry (2026-07-28); without the
// handlers the capability is not declared and the tool cannot ask.
func TestRealServerAsksTheClient(t *testing.T) {
	t.Parallel()
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			c := connect(t, mcprtServe(t), opts(client.Options{
				Era: era,
				Elicitation: func(_ context.Context, p json.RawMessage) (any, error) {
					if !strings.Contains(string(p), "What is your name?") {
						return nil, fmt.Errorf("unexpected elicitation %s", p)
					}
					return map[string]any{"action": "accept", "content": map[string]any{"name": "Grace"}}, nil
				},
				Sampling: func(_ context.Context, p json.RawMessage) (any, error) {
					var req struct {
						Messages []struct{ Content mcp.Content }
					}
					json.Unmarshal(p, &req)
					return map[string]any{"role": "assistant", "model": "echo-model",
						"content": map[string]any{"type": "text", "text": "you said: " + req.Messages[0].Content.Text}}, nil
				},
			}))
			r, err := c.CallTool(ctx(t), "elicit", nil)
			if err != nil || r.IsError || !strings.Contains(fmt.Sprintf("%s", r.StructuredContent), "Hello, Grace!") {
				t.Errorf("elicit: %+v %v", r, err)
			}
			r, err = c.CallTool(ctx(t), "sample", map[string]string{"prompt": "ping"})
			if err != nil || r.IsError || !strings.Contains(fmt.Sprintf("%s", r.StructuredContent), "you said: ping") || !strings.Contains(fmt.Sprintf("%s", r.StructuredContent), "echo-model") {
				t.Errorf("sample: %+v %v", r, err)
			}

			bare := connect(t, mcprtServe(t), opts(client.Options{Era: era}))
			r, err = bare.CallTool(ctx(t), "elicit", nil)
			if err == nil && !r.IsError {
				t.Errorf("elicit without a handler succeeded: %+v", r)
			}
		})
	}
}
