package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkSession is the SDK's client connected to `mcprt serve`, with what its
// handlers saw.
type sdkSession struct {
	cs      *mcp.ClientSession
	version string

	mu       sync.Mutex
	progress map[string]int // progress notifications by token
	logs     []string       // notifications/message data
}

func (s *sdkSession) progressFor(token string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.progress[token]
}

func (s *sdkSession) logged() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.logs)
}

// connectSDK starts `mcprt serve` with the SDK's CommandTransport and
// connects asking for version.
func connectSDK(t *testing.T, version string) *sdkSession {
	t.Helper()
	needBinaries(t)
	s := &sdkSession{version: version, progress: map[string]int{}}
	cmd := exec.Command(mcprtBin, "serve")
	cmd.Env = append(cmd.Environ(), "LOG_LEVEL=warn")
	cs, err := sdkClient(s).Connect(testCtx(t), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("SDK client connecting to mcprt serve (%s): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	s.cs = cs
	return s
}

// sdkClient is the SDK client the interop tests use, whatever the
// transport: its handlers answer mcprt's elicit and sample tools and
// record progress and log notifications in s.
func sdkClient(s *sdkSession) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "go-sdk-interop", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			prompt := ""
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
					prompt = tc.Text
				}
			}
			return &mcp.CreateMessageResult{Role: "assistant", Model: "sdk-model", Content: &mcp.TextContent{Text: "sdk says " + prompt}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			s.mu.Lock()
			s.progress[fmt.Sprint(req.Params.ProgressToken)]++
			s.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			s.mu.Lock()
			s.logs = append(s.logs, fmt.Sprint(req.Params.Data))
			s.mu.Unlock()
		},
	})
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("non-text content %T", c)
		}
		parts = append(parts, tc.Text)
	}
	return strings.Join(parts, "")
}

func callTool(t *testing.T, s *sdkSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("tools/call %s: error result %s", name, textOf(t, res))
	}
	return res
}

// structured returns the structured content of a result, or (before
// 2025-06-18, which has none) the JSON the text block carries.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	var m map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	if res.StructuredContent == nil {
		raw = []byte(textOf(t, res))
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structured content %s: %v", raw, err)
	}
	return m
}

// toolChecks exercise each tool of the reference server. A tool the
// server lists without a check here is reported in the log, so that new
// tools get one: add an entry.
var toolChecks = map[string]func(t *testing.T, s *sdkSession){
	"echo": func(t *testing.T, s *sdkSession) {
		if got := textOf(t, callTool(t, s, "echo", map[string]any{"text": "interop ✓\n"})); got != "interop ✓\n" {
			t.Errorf("echo: %q", got)
		}
	},
	"add": func(t *testing.T, s *sdkSession) {
		if got := structured(t, callTool(t, s, "add", map[string]any{"a": 2, "b": 3.5})); got["sum"] != 5.5 {
			t.Errorf("add: %v", got)
		}
	},
	"work": func(t *testing.T, s *sdkSession) {
		if got := textOf(t, callTool(t, s, "work", map[string]any{"us": 10})); got != "ok" {
			t.Errorf("work: %q", got)
		}
	},
	"sleep": func(t *testing.T, s *sdkSession) {
		params := &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 300}}
		params.SetProgressToken("sleep-progress")
		res, err := s.cs.CallTool(testCtx(t), params)
		if err != nil || textOf(t, res) != "slept" {
			t.Fatalf("sleep: %v %v", res, err)
		}
		if n := s.progressFor("sleep-progress"); n == 0 {
			t.Error("sleep: no progress notifications")
		}
	},
	"slow-timeout": func(t *testing.T, s *sdkSession) {
		if got := textOf(t, callTool(t, s, "slow-timeout", map[string]any{"ms": 10})); got != "slept" {
			t.Errorf("slow-timeout (short): %q", got)
		}
		res, err := s.cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "slow-timeout", Arguments: map[string]any{"ms": 5000}})
		if err == nil && !res.IsError {
			t.Errorf("slow-timeout (long) succeeded: %v", res)
		}
	},
	"panic": func(t *testing.T, s *sdkSession) {
		// A tool error the model can read, not a JSON-RPC error that the
		// SDK would raise in the host application.
		res, err := s.cs.CallTool(testCtx(t), &mcp.CallToolParams{Name: "panic"})
		if err != nil || !res.IsError {
			t.Errorf("panic: err %v, result %v; want a result with IsError", err, res)
		}
		// The session survives a crashed handler.
		if got := textOf(t, callTool(t, s, "echo", map[string]any{"text": "after panic"})); got != "after panic" {
			t.Errorf("echo after panic: %q", got)
		}
	},
	"print": func(t *testing.T, s *sdkSession) {
		// The tool writes to stdout; mcprt keeps that off the protocol, or
		// the SDK would choke on it.
		if got := textOf(t, callTool(t, s, "print", map[string]any{"text": "not JSON-RPC"})); got != "printed" {
			t.Errorf("print: %q", got)
		}
		if got := textOf(t, callTool(t, s, "echo", map[string]any{"text": "after print"})); got != "after print" {
			t.Errorf("echo after print: %q", got)
		}
	},
	"log": func(t *testing.T, s *sdkSession) {
		modern := s.version >= "2026-07-28"
		if !modern {
			if err := s.cs.SetLoggingLevel(testCtx(t), &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
				t.Fatal(err)
			}
		}
		callTool(t, s, "log", map[string]any{"levels": []string{"debug", "error"}, "message": "from interop"})
		if modern {
			return
		}
		// The SDK delivers notifications on its own goroutine: wait. Other
		// messages (mcprt forwards what the print tool wrote to stdout) are
		// not counted.
		count := func() int {
			n := 0
			for _, m := range s.logged() {
				if m == "from interop" {
					n++
				}
			}
			return n
		}
		deadline := time.Now().Add(hangTimeout)
		for count() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := count(); n != 1 {
			t.Errorf("%d error messages arrived, want 1 (debug is below the level): %v", n, s.logged())
		}
	},
	"elicit": func(t *testing.T, s *sdkSession) {
		res := callTool(t, s, "elicit", nil)
		if got := structured(t, res); got["greeting"] != "Hello, Ada!" {
			t.Errorf("elicit: %v", got)
		}
	},
	"sample": func(t *testing.T, s *sdkSession) {
		res := callTool(t, s, "sample", map[string]any{"prompt": "hi"})
		if got := structured(t, res); got["text"] != "sdk says hi" {
			t.Errorf("sample: %v", got)
		}
	},
}

// templateChecks read one URI of each known resource template.
var templateChecks = map[string]struct{ uri, want string }{
	"greeting": {"mcprt://reference/greeting/Ada", "Hello, Ada!"},
}

// TestSDKClientDrivesMcprt: the official SDK client, in every protocol
// version it speaks, against `mcprt serve`: every tool, resource, template,
// prompt and completion the reference server offers.
func TestSDKClientDrivesMcprt(t *testing.T) {
	t.Parallel()
	for _, version := range mcp.SupportedProtocolVersions() {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			checkSession(t, connectSDK(t, version), version)
		})
	}
}

// checkSession runs every check on an SDK session with mcprt's reference
// server: the handshake's result, then its tools, resources and prompts.
func checkSession(t *testing.T, s *sdkSession, version string) {
	init := s.cs.InitializeResult()
	if init.ProtocolVersion != version || init.ServerInfo == nil || init.ServerInfo.Name != "mcprt-reference" {
		t.Fatalf("negotiated %s with %+v", init.ProtocolVersion, init.ServerInfo)
	}
	caps := init.Capabilities
	// What the reference server declares, by revision.
	if caps.Tools == nil || caps.Resources == nil || caps.Prompts == nil || (caps.Completions == nil) != (version == "2024-11-05") {
		t.Fatalf("capabilities %+v", caps)
	}
	if err := s.cs.Ping(testCtx(t), nil); err != nil && version < "2026-07-28" {
		t.Errorf("ping: %v", err)
	}
	t.Run("tools", func(t *testing.T) { checkTools(t, s) })
	t.Run("resources", func(t *testing.T) { checkResources(t, s) })
	t.Run("prompts", func(t *testing.T) { checkPrompts(t, s, caps.Completions != nil) })
}

func checkTools(t *testing.T, s *sdkSession) {
	res, err := s.cs.ListTools(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil {
			t.Errorf("tool %s has no input schema", tool.Name)
		}
	}
	for _, must := range []string{"echo", "add", "sleep"} {
		if !slices.Contains(names, must) {
			t.Errorf("tools/list lacks %s: %v", must, names)
		}
	}
	for _, name := range names {
		check, ok := toolChecks[name]
		if !ok {
			t.Logf("no interop check for tool %q: add one to toolChecks", name)
			continue
		}
		t.Run(name, func(t *testing.T) { check(t, s) })
	}
}

func checkResources(t *testing.T, s *sdkSession) {
	res, err := s.cs.ListResources(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Resources) == 0 {
		t.Fatal("no resources")
	}
	for _, r := range res.Resources {
		rr, err := s.cs.ReadResource(testCtx(t), &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Errorf("read %s: %v", r.URI, err)
			continue
		}
		if len(rr.Contents) == 0 || rr.Contents[0].URI != r.URI || rr.Contents[0].Text == "" && len(rr.Contents[0].Blob) == 0 {
			t.Errorf("read %s: %+v", r.URI, rr.Contents)
		}
	}
	if _, err := s.cs.ReadResource(testCtx(t), &mcp.ReadResourceParams{URI: "mcprt://no/such/thing"}); err == nil {
		t.Error("reading an unknown resource succeeded")
	}
	tr, err := s.cs.ListResourceTemplates(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tmpl := range tr.ResourceTemplates {
		check, ok := templateChecks[tmpl.Name]
		if !ok {
			t.Logf("no interop check for template %q: add one to templateChecks", tmpl.Name)
			continue
		}
		rr, err := s.cs.ReadResource(testCtx(t), &mcp.ReadResourceParams{URI: check.uri})
		if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != check.want {
			t.Errorf("template %s: %+v %v", tmpl.Name, rr, err)
		}
	}
}

func checkPrompts(t *testing.T, s *sdkSession, completions bool) {
	res, err := s.cs.ListPrompts(testCtx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Prompts) == 0 {
		t.Fatal("no prompts")
	}
	for _, p := range res.Prompts {
		args := map[string]string{}
		for _, a := range p.Arguments {
			if a.Required {
				args[a.Name] = "x"
			}
		}
		gp, err := s.cs.GetPrompt(testCtx(t), &mcp.GetPromptParams{Name: p.Name, Arguments: args})
		if err != nil || len(gp.Messages) == 0 {
			t.Errorf("get %s: %+v %v", p.Name, gp, err)
		}
		if _, err := s.cs.GetPrompt(testCtx(t), &mcp.GetPromptParams{Name: p.Name}); err == nil && len(args) > 0 {
			t.Errorf("get %s without its required arguments succeeded", p.Name)
		}
		if !completions {
			continue
		}
		for _, a := range p.Arguments {
			_, err := s.cs.Complete(testCtx(t), &mcp.CompleteParams{
				Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: p.Name},
				Argument: mcp.CompleteParamsArgument{Name: a.Name, Value: ""},
			})
			if err != nil {
				t.Errorf("complete %s/%s: %v", p.Name, a.Name, err)
			}
		}
	}
	if !completions {
		return
	}
	cr, err := s.cs.Complete(testCtx(t), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "review"},
		Argument: mcp.CompleteParamsArgument{Name: "language", Value: "Py"},
	})
	if err != nil || !slices.Contains(cr.Completion.Values, "Python") {
		t.Errorf("complete review/language Py: %+v %v", cr, err)
	}
	cr, err = s.cs.Complete(testCtx(t), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "mcprt://reference/greeting/{name}"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "Gr"},
	})
	if err != nil || !slices.Contains(cr.Completion.Values, "Grace") {
		t.Errorf("complete greeting/name Gr: %+v %v", cr, err)
	}
}
