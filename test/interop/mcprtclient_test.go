package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// TestMcprtClientDrivesSDKServer: mcprt's client against ./sdkserver,
// written with the official SDK: found by the probe (2026-07-28, where the
// SDK asks for input with input_required results) and pinned to each
// legacy revision (where the SDK turns the same asks into server→client
// requests).
func TestMcprtClientDrivesSDKServer(t *testing.T) {
	t.Parallel()
	type era struct {
		name    string
		opts    client.Options
		version string
	}
	eras := []era{{"auto", client.Options{}, "2026-07-28"}}
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		eras = append(eras, era{v, client.Options{Version: v}, v})
	}
	for _, e := range eras {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			needBinaries(t)
			o := sdkServerOptions(e.opts)
			c, err := client.Connect(testCtx(t), client.Command{Path: sdkServerBin}, &o)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			checkSDKServer(t, c, e.version, e.version >= "2025-06-18", true)
			// The SDK server exits on stdin EOF; had it needed SIGKILL, or
			// exited non-zero, Close would say so.
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// sdkServerOptions are o with what the SDK server's tools need of the
// client: roots, an elicitation and a sampling handler.
func sdkServerOptions(o client.Options) client.Options {
	o.Logger = slog.New(slog.DiscardHandler)
	o.Timeout = hangTimeout
	o.Roots = func(context.Context) ([]mcp.Root, error) {
		return []mcp.Root{{URI: "file:///interop", Name: "interop"}}, nil
	}
	o.Elicitation = func(_ context.Context, p json.RawMessage) (any, error) {
		if !strings.Contains(string(p), "Your name?") {
			return nil, fmt.Errorf("unexpected elicitation %s", p)
		}
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Bob"}}, nil
	}
	o.Sampling = func(_ context.Context, p json.RawMessage) (any, error) {
		var req struct {
			Messages []struct{ Content mcp.Content }
		}
		if err := json.Unmarshal(p, &req); err != nil || len(req.Messages) == 0 {
			return nil, fmt.Errorf("unexpected sampling request %s", p)
		}
		return map[string]any{"role": "assistant", "model": "mcprt-model",
			"content": map[string]any{"type": "text", "text": "echo " + req.Messages[0].Content.Text}}, nil
	}
	return o
}

// checkSDKServer runs every check on a session with the SDK server, which
// speaks version. asks says whether its ask tool can elicit (elicitation
// arrived in 2025-06-18), samples whether its sample tool can ask for
// sampling: a stateless legacy HTTP server cannot send the client requests.
func checkSDKServer(t *testing.T, c *client.Client, version string, asks, samples bool) {
	if c.ProtocolVersion() != version || c.ServerInfo().Name != "sdk-server" || c.Instructions() == "" {
		t.Fatalf("version %s, server %+v, instructions %q", c.ProtocolVersion(), c.ServerInfo(), c.Instructions())
	}
	ctx := testCtx(t)

	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"add", "ask", "greet", "progress", "region", "sample"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}

	r, err := c.CallTool(ctx, "greet", map[string]string{"name": "Bob"})
	if err != nil || r.IsError || !strings.Contains(joinText(r), "Hi Bob") {
		t.Errorf("greet: %+v %v", r, err)
	}
	if version >= "2025-06-18" && !strings.Contains(fmt.Sprintf("%s", r.StructuredContent), `"greeting":"Hi Bob"`) {
		t.Errorf("greet structured content: %s", r.StructuredContent)
	}
	// Over HTTP in 2026-07-28 the SDK refuses the call unless the client
	// mirrored the x-mcp-header argument into Mcp-Param-Region.
	r, err = c.CallTool(ctx, "region", map[string]string{"region": "eu-west-1"})
	if err != nil || r.IsError || joinText(r) != "region eu-west-1" {
		t.Errorf("region: %+v %v", r, err)
	}
	r, err = c.CallTool(ctx, "add", map[string]float64{"a": 1, "b": 41})
	if err != nil || !strings.Contains(joinText(r), "42") {
		t.Errorf("add: %+v %v", r, err)
	}
	// A schema violation: a protocol error or an error result, by revision.
	if r, err = c.CallTool(ctx, "add", map[string]string{"a": "one"}); err == nil && !r.IsError {
		t.Errorf("add with a string succeeded: %+v", r)
	}

	var steps []client.Progress
	r, err = c.CallTool(ctx, "progress", map[string]int{"steps": 3}, client.WithProgress(func(p client.Progress) { steps = append(steps, p) }))
	if err != nil || joinText(r) != "done" {
		t.Errorf("progress: %+v %v", r, err)
	}
	if len(steps) != 3 || steps[2].Progress != 3 || steps[2].Total != 3 || (version > "2024-11-05" && steps[2].Message != "step 3") {
		t.Errorf("progress notifications %+v", steps)
	}

	// Elicitation arrived in 2025-06-18: before it the client does
	// not declare it, so the server cannot ask.
	r, err = c.CallTool(ctx, "ask", nil)
	if asks {
		want := `accept Bob in file:///interop state=`
		if err != nil || r.IsError || !strings.HasPrefix(joinText(r), want) {
			t.Errorf("ask: %+v %v", r, err)
		}
		if version >= "2026-07-28" && !strings.HasSuffix(joinText(r), `state="asked-once"`) {
			t.Errorf("ask: requestState not echoed: %s", joinText(r))
		}
	} else if err == nil && !r.IsError {
		t.Errorf("ask succeeded without the elicitation capability: %+v", r)
	}
	r, err = c.CallTool(ctx, "sample", map[string]string{"prompt": "marco"})
	if samples && (err != nil || r.IsError || joinText(r) != "echo marco (mcprt-model)") {
		t.Errorf("sample: %+v %v", r, err)
	} else if !samples && err == nil && !r.IsError {
		t.Errorf("sample succeeded where the server cannot ask: %+v", r)
	}

	resources, err := c.ListResources(ctx)
	if err != nil || len(resources) != 1 || resources[0].URI != "sdk://hello" {
		t.Fatalf("resources %+v %v", resources, err)
	}
	rr, err := c.ReadResource(ctx, "sdk://hello")
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "hello from the SDK" || rr.Contents[0].MimeType != "text/plain" {
		t.Errorf("read: %+v %v", rr, err)
	}
	templates, err := c.ListResourceTemplates(ctx)
	if err != nil || len(templates) != 1 || templates[0].URITemplate != "sdk://colors/{color}" {
		t.Fatalf("templates %+v %v", templates, err)
	}
	rr, err = c.ReadResource(ctx, "sdk://colors/blue")
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "a color: blue" {
		t.Errorf("read template: %+v %v", rr, err)
	}

	prompts, err := c.ListPrompts(ctx)
	if err != nil || len(prompts) != 1 || prompts[0].Name != "haiku" || !prompts[0].Arguments[0].Required {
		t.Fatalf("prompts %+v %v", prompts, err)
	}
	gp, err := c.GetPrompt(ctx, "haiku", map[string]string{"color": "red"})
	if err != nil || len(gp.Messages) != 1 || gp.Messages[0].Role != "user" || gp.Messages[0].Content.Text != "Write a haiku about red" {
		t.Errorf("get prompt: %+v %v", gp, err)
	}
	comp, err := c.Complete(ctx, client.CompleteParams{
		Ref:      client.CompletionRef{Type: "ref/prompt", Name: "haiku"},
		Argument: client.CompleteArgument{Name: "color", Value: "b"},
	})
	if err != nil || !slices.Equal(comp.Values, []string{"blue", "black", "brown"}) {
		t.Errorf("complete: %+v %v", comp, err)
	}

	if err := c.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
}

func joinText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}
