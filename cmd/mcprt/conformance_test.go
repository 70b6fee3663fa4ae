package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session/client"
)

// The conformance fixture is tested as the conformance suite drives it:
// through `mcprt serve -fixture conformance` (this test binary, run again
// with conformanceTestServe set), over stdio, as a client of 2025-11-25
// that declares sampling and elicitation, with the scenarios' own calls and
// the checks they make of the answers.
const conformanceTestServe = "MCPRT_CONFORMANCE_TEST_SERVE"

func init() {
	if os.Getenv(conformanceTestServe) == "1" {
		os.Exit(run([]string{"serve", "-fixture", "conformance"}, streams{Stdout: os.Stdout, Stderr: os.Stderr}))
	}
}

// conformanceClient is a connected client of the fixture and what it saw.
type conformanceClient struct {
	*client.Client
	mu            sync.Mutex
	notifications []client.Notification
	sampled       []json.RawMessage // params of sampling/createMessage
	elicited      []json.RawMessage // params of elicitation/create
}

func (c *conformanceClient) seen(method string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []json.RawMessage
	for _, n := range c.notifications {
		if n.Method == method {
			out = append(out, n.Params)
		}
	}
	return out
}

func (c *conformanceClient) lastElicited() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.elicited) == 0 {
		return nil
	}
	return c.elicited[len(c.elicited)-1]
}

// connectFixture starts the fixture and connects to it in revision
// version, answering sampling with a fixed text and elicitation with
// accept and content.
func connectFixture(t *testing.T, version string, content map[string]any) *conformanceClient {
	t.Helper()
	c := &conformanceClient{}
	opts := &client.Options{
		ClientInfo: mcp.Implementation{Name: "conformance-test-client", Version: "1.0.0"},
		Version:    version,
		Timeout:    20 * time.Second,
		LogLevel:   "debug",
		Sampling: func(_ context.Context, params json.RawMessage) (any, error) {
			c.mu.Lock()
			c.sampled = append(c.sampled, params)
			c.mu.Unlock()
			return map[string]any{
				"role":       "assistant",
				"content":    map[string]any{"type": "text", "text": "This is a test response from the client"},
				"model":      "test-model",
				"stopReason": "endTurn",
			}, nil
		},
		Elicitation: func(_ context.Context, params json.RawMessage) (any, error) {
			c.mu.Lock()
			c.elicited = append(c.elicited, params)
			c.mu.Unlock()
			return map[string]any{"action": "accept", "content": content}, nil
		},
		OnStderr: func(string) {},
	}
	cmd := client.Command{Path: os.Args[0], Env: []string{conformanceTestServe + "=1", "GORACE=atexit_sleep_ms=0", "LOG_LEVEL=warn"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := client.Connect(ctx, cmd, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cl.Close() })
	c.Client = cl
	cl.Subscribe("", func(n client.Notification) {
		c.mu.Lock()
		c.notifications = append(c.notifications, n)
		c.mu.Unlock()
	})
	return c
}

func callText(t *testing.T, c *conformanceClient, name string, args any, opts ...client.CallOption) *mcp.CallToolResult {
	t.Helper()
	res, err := c.CallTool(context.Background(), name, args, opts...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestConformanceFixtureTools(t *testing.T) {
	t.Parallel()
	c := connectFixture(t, "2025-11-25", map[string]any{"username": "testuser", "email": "test@example.com"})
	ctx := context.Background()
	if info := c.ServerInfo(); info.Name != "mcprt-conformance" {
		t.Errorf("serverInfo %+v, want the conformance fixture", info)
	}
	for _, capName := range []string{"tools", "resources", "prompts", "logging", "completions"} {
		if _, ok := c.Capabilities()[capName]; !ok {
			t.Errorf("capabilities %v lack %s", c.Capabilities(), capName)
		}
	}

	// tools-list: every tool has a name, a description and an input schema.
	tools, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		if tl.Description == "" || len(tl.InputSchema) == 0 {
			t.Errorf("tool %s: description %q, inputSchema %s", tl.Name, tl.Description, tl.InputSchema)
		}
		if tl.Name == "json_schema_2020_12_tool" {
			var s map[string]any
			_ = json.Unmarshal(tl.InputSchema, &s)
			if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" || s["$defs"] == nil || s["additionalProperties"] != false {
				t.Errorf("json_schema_2020_12_tool's schema lost a keyword: %s", tl.InputSchema)
			}
		}
	}
	for _, want := range []string{"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_tool_with_logging", "test_tool_with_progress", "test_error_handling",
		"test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
		"json_schema_2020_12_tool", "test_reconnection"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}

	// tools-call-simple-text, -image, -audio, -embedded-resource, -mixed-content
	if r := callText(t, c, "test_simple_text", nil); len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != "This is a simple text response for testing." {
		t.Errorf("test_simple_text: %+v", r)
	}
	r := callText(t, c, "test_image_content", map[string]any{})
	if len(r.Content) != 1 || r.Content[0].Type != "image" || r.Content[0].MimeType != "image/png" || !decodesTo(r.Content[0].Data, "\x89PNG\r\n") {
		t.Errorf("test_image_content: %+v", r)
	}
	r = callText(t, c, "test_audio_content", map[string]any{})
	if len(r.Content) != 1 || r.Content[0].Type != "audio" || r.Content[0].MimeType != "audio/wav" || !decodesTo(r.Content[0].Data, "RIFF") {
		t.Errorf("test_audio_content: %+v", r)
	}
	if b := r.Content[0].Data; len(b) != 46 || string(b[8:16]) != "WAVEfmt " || string(b[36:40]) != "data" {
		t.Errorf("test_audio_content: not a 46-byte WAV: %q", b)
	}
	r = callText(t, c, "test_embedded_resource", map[string]any{})
	if len(r.Content) != 1 || r.Content[0].Type != "resource" ||
		!jsonEqual(mustJSON(r.Content[0].Resource), `{"uri":"test://embedded-resource","mimeType":"text/plain","text":"This is an embedded resource content."}`) {
		t.Errorf("test_embedded_resource: %+v (%s)", r, r.Content[0].Resource)
	}
	r = callText(t, c, "test_multiple_content_types", map[string]any{})
	if types := contentTypes(r); !slices.Equal(types, []string{"text", "image", "resource"}) ||
		!jsonEqual(mustJSON(r.Content[2].Resource), `{"uri":"test://mixed-content-resource","mimeType":"application/json","text":"{\"test\":\"data\",\"value\":123}"}`) {
		t.Errorf("test_multiple_content_types: %v %+v", types, r)
	}

	// tools-call-with-logging: three info messages, all before the result.
	// The runtime's own records (a worker started meanwhile, at debug)
	// carry an object, not a tool's string, and are not the tool's.
	before := len(c.seen("notifications/message"))
	r = callText(t, c, "test_tool_with_logging", map[string]any{})
	logs := c.seen("notifications/message")[before:]
	var texts []string
	for _, l := range logs {
		var p struct {
			Level string
			Data  json.RawMessage
		}
		_ = json.Unmarshal(l, &p)
		var text string
		if json.Unmarshal(p.Data, &text) != nil {
			continue
		}
		if p.Level != "info" {
			t.Errorf("log at %q, want info: %s", p.Level, l)
		}
		texts = append(texts, text)
	}
	if !slices.Equal(texts, []string{"Tool execution started", "Tool processing data", "Tool execution completed"}) || r.IsError {
		t.Errorf("test_tool_with_logging: logs %q, result %+v", texts, r)
	}

	// tools-call-with-progress: 0, 50, 100 of 100, in that order.
	var mu sync.Mutex
	var progress []client.Progress
	r = callText(t, c, "test_tool_with_progress", map[string]any{}, client.WithProgress(func(p client.Progress) {
		mu.Lock()
		progress = append(progress, p)
		mu.Unlock()
	}))
	mu.Lock()
	if len(progress) != 3 || progress[0].Progress != 0 || progress[1].Progress != 50 || progress[2].Progress != 100 || progress[2].Total != 100 || r.IsError {
		t.Errorf("test_tool_with_progress: progress %+v, result %+v", progress, r)
	}
	mu.Unlock()

	// tools-call-error: a tool error, not a protocol error.
	r = callText(t, c, "test_error_handling", map[string]any{})
	if !r.IsError || len(r.Content) == 0 || r.Content[0].Text != "This tool intentionally returns an error for testing" {
		t.Errorf("test_error_handling: %+v", r)
	}

	// tools-call-sampling: the prompt goes to the client's model, with
	// maxTokens 100, and its answer comes back.
	r = callText(t, c, "test_sampling", map[string]any{"prompt": "Test prompt for sampling"})
	if len(c.sampled) != 1 || !jsonEqual(c.sampled[0], `{"messages":[{"role":"user","content":{"type":"text","text":"Test prompt for sampling"}}],"maxTokens":100}`) {
		t.Errorf("sampling/createMessage params: %s", c.sampled)
	}
	if r.IsError || len(r.Content) != 1 || r.Content[0].Text != "LLM response: This is a test response from the client" {
		t.Errorf("test_sampling: %+v", r)
	}

	// tools-call-elicitation
	r = callText(t, c, "test_elicitation", map[string]any{"message": "Please provide your information"})
	var el struct {
		Message, Mode   string
		RequestedSchema struct {
			Type       string
			Properties map[string]map[string]any
			Required   []string
		}
	}
	if err := json.Unmarshal(c.lastElicited(), &el); err != nil || el.Message != "Please provide your information" || el.Mode != "form" ||
		el.RequestedSchema.Type != "object" || el.RequestedSchema.Properties["email"]["type"] != "string" || !slices.Equal(el.RequestedSchema.Required, []string{"username", "email"}) {
		t.Errorf("elicitation/create params: %s (%v)", c.lastElicited(), err)
	}
	if r.IsError || len(r.Content) != 1 || r.Content[0].Text != `User response: action=accept, content={"email":"test@example.com","username":"testuser"}` {
		t.Errorf("test_elicitation: %+v", r)
	}
}

// TestConformanceFixtureElicitationSchemas: the SEP-1034 and SEP-1330
// tools ask with the schemas those scenarios check field by field.
func TestConformanceFixtureElicitationSchemas(t *testing.T) {
	t.Parallel()
	c := connectFixture(t, "2025-11-25", map[string]any{"name": "Jane Smith", "age": 25})
	schema := func(tool string) map[string]map[string]any {
		t.Helper()
		r := callText(t, c, tool, map[string]any{})
		if r.IsError || len(r.Content) != 1 || !strings.HasPrefix(r.Content[0].Text, "Elicitation completed: action=accept, content={") {
			t.Errorf("%s: %+v", tool, r)
		}
		var p struct {
			RequestedSchema struct{ Properties map[string]map[string]any }
		}
		if err := json.Unmarshal(c.lastElicited(), &p); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return p.RequestedSchema.Properties
	}
	d := schema("test_elicitation_sep1034_defaults")
	for field, want := range map[string][2]any{
		"name": {"string", "John Doe"}, "age": {"integer", 30.0}, "score": {"number", 95.5},
		"status": {"string", "active"}, "verified": {"boolean", true},
	} {
		if d[field]["type"] != want[0] || d[field]["default"] != want[1] {
			t.Errorf("sep1034 %s: %v, want type %v default %v", field, d[field], want[0], want[1])
		}
	}
	e := schema("test_elicitation_sep1330_enums")
	if e["untitledSingle"]["enum"] == nil || e["untitledSingle"]["oneOf"] != nil ||
		e["titledSingle"]["oneOf"] == nil || e["titledSingle"]["enum"] != nil ||
		len(asSlice(e["legacyEnum"]["enumNames"])) != len(asSlice(e["legacyEnum"]["enum"])) || e["legacyEnum"]["enumNames"] == nil ||
		e["untitledMulti"]["type"] != "array" || e["untitledMulti"]["items"].(map[string]any)["enum"] == nil ||
		e["titledMulti"]["type"] != "array" || e["titledMulti"]["items"].(map[string]any)["anyOf"] == nil {
		t.Errorf("sep1330 schema: %v", e)
	}
}

func TestConformanceFixtureResourcesPrompts(t *testing.T) {
	t.Parallel()
	c := connectFixture(t, "2025-11-25", nil)
	ctx := context.Background()

	// resources-list, -read-text, -read-binary, -templates-read
	resources, err := c.ListResources(ctx)
	if err != nil || len(resources) != 5 { // three test:// ones, two skills' SKILL.md
		t.Fatalf("resources/list: %+v, %v", resources, err)
	}
	for _, r := range resources {
		if r.URI == "" || r.Name == "" || r.Description == "" {
			t.Errorf("resource %+v lacks a uri, name or description", r)
		}
	}
	read := func(uri string) mcp.ResourceContents {
		t.Helper()
		res, err := c.ReadResource(ctx, uri)
		if err != nil || len(res.Contents) != 1 {
			t.Fatalf("read %s: %+v, %v", uri, res, err)
		}
		return res.Contents[0]
	}
	if got := read("test://static-text"); !reflect.DeepEqual(got, mcp.ResourceContents{URI: "test://static-text", MimeType: "text/plain", Text: "This is the content of the static text resource."}) {
		t.Errorf("test://static-text: %+v", got)
	}
	if got := read("test://static-binary"); got.MimeType != "image/png" || !strings.HasPrefix(string(got.Blob), "\x89PNG\r\n") {
		t.Errorf("test://static-binary: %+v", got)
	}
	if got := read("test://template/123/data"); got.URI != "test://template/123/data" || got.MimeType != "application/json" ||
		got.Text != `{"id":"123","templateTest":true,"data":"Data for ID: 123"}` {
		t.Errorf("test://template/123/data: %+v", got)
	}

	// resources-subscribe, -unsubscribe: both answer {}; an update reaches
	// the client while it is subscribed, and only then.
	updated := func() int { return len(c.seen("notifications/resources/updated")) }
	var empty map[string]any
	if err := c.Call(ctx, "resources/subscribe", map[string]string{"uri": "test://watched-resource"}, &empty); err != nil || len(empty) != 0 {
		t.Fatalf("resources/subscribe: %v, %v", empty, err)
	}
	// The update goes out through the session, the result straight from
	// the handler: a ping, answered after the session's queue, orders
	// them.
	r := callText(t, c, "test_update_watched_resource", nil)
	if err := c.Ping(ctx); err != nil || r.Content[0].Text != "Watched resource content (update 1)" || updated() != 1 {
		t.Errorf("update while subscribed: %+v, %d notifications (%v)", r, updated(), err)
	}
	if got := read("test://watched-resource"); got.Text != "Watched resource content (update 1)" {
		t.Errorf("watched resource after the update: %+v", got)
	}
	if err := c.Call(ctx, "resources/unsubscribe", map[string]string{"uri": "test://watched-resource"}, &empty); err != nil || len(empty) != 0 {
		t.Fatalf("resources/unsubscribe: %v, %v", empty, err)
	}
	callText(t, c, "test_update_watched_resource", nil)
	if err := c.Ping(ctx); err != nil || updated() != 1 {
		t.Errorf("update after unsubscribing: %d notifications (ping: %v)", updated(), err)
	}

	// prompts-list, -get-simple, -get-with-args, -get-embedded-resource, -get-with-image
	prompts, err := c.ListPrompts(ctx)
	if err != nil || len(prompts) != 5 {
		t.Fatalf("prompts/list: %+v, %v", prompts, err)
	}
	for _, p := range prompts {
		if p.Description == "" {
			t.Errorf("prompt %s has no description", p.Name)
		}
	}
	get := func(name string, args map[string]string) []mcp.PromptMessage {
		t.Helper()
		res, err := c.GetPrompt(ctx, name, args)
		if err != nil {
			t.Fatalf("prompts/get %s: %v", name, err)
		}
		return res.Messages
	}
	if m := get("test_simple_prompt", nil); len(m) != 1 || m[0].Role != "user" || m[0].Content.Text != "This is a simple prompt for testing." {
		t.Errorf("test_simple_prompt: %+v", m)
	}
	if m := get("test_prompt_with_arguments", map[string]string{"arg1": "testValue1", "arg2": "testValue2"}); len(m) != 1 ||
		m[0].Content.Text != "Prompt with arguments: arg1='testValue1', arg2='testValue2'" {
		t.Errorf("test_prompt_with_arguments: %+v", m)
	}
	if m := get("test_prompt_with_embedded_resource", map[string]string{"resourceUri": "test://example-resource"}); len(m) != 2 ||
		m[0].Content.Type != "resource" || !jsonEqual(mustJSON(m[0].Content.Resource), `{"uri":"test://example-resource","mimeType":"text/plain","text":"Embedded resource content for testing."}`) {
		t.Errorf("test_prompt_with_embedded_resource: %+v", m)
	}
	if m := get("test_prompt_with_image", nil); len(m) != 2 || m[0].Content.Type != "image" || m[0].Content.MimeType != "image/png" || !decodesTo(m[0].Content.Data, "\x89PNG") {
		t.Errorf("test_prompt_with_image: %+v", m)
	}

	// completion-complete: the scenario's own request, and one that matches.
	for value, want := range map[string][]string{"test": {}, "par": {"paris", "park", "party"}} {
		comp, err := c.Complete(ctx, client.CompleteParams{
			Ref:      client.CompletionRef{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
			Argument: client.CompleteArgument{Name: "arg1", Value: value},
		})
		if err != nil || !slices.Equal(comp.Values, want) {
			t.Errorf("complete arg1=%q: %+v, %v; want %v", value, comp, err, want)
		}
	}

	// logging-set-level, ping: both answer {}.
	if err := c.Call(ctx, "logging/setLevel", map[string]string{"level": "info"}, &empty); err != nil || len(empty) != 0 {
		t.Errorf("logging/setLevel: %v, %v", empty, err)
	}
	if err := c.Call(ctx, "ping", nil, &empty); err != nil || len(empty) != 0 {
		t.Errorf("ping: %v, %v", empty, err)
	}
}

// TestConformanceFixtureModern: the same tools in 2026-07-28, where
// sampling and elicitation travel in input_required rounds.
func TestConformanceFixtureModern(t *testing.T) {
	t.Parallel()
	c := connectFixture(t, "2026-07-28", map[string]any{"username": "u", "email": "e@example.com"})
	if r := callText(t, c, "test_sampling", map[string]any{"prompt": "hi"}); r.IsError || r.Content[0].Text != "LLM response: This is a test response from the client" {
		t.Errorf("test_sampling: %+v", r)
	}
	if r := callText(t, c, "test_elicitation", map[string]any{"message": "who?"}); r.IsError || r.Content[0].Text != `User response: action=accept, content={"email":"e@example.com","username":"u"}` {
		t.Errorf("test_elicitation: %+v", r)
	}
	if r := callText(t, c, "test_audio_content", nil); r.Content[0].Type != "audio" {
		t.Errorf("test_audio_content: %+v", r)
	}
}

// TestServeFixtureFlag: -fixture picks the server; an unknown one is a
// usage error.
func TestServeFixtureFlag(t *testing.T) {
	_, errs, code := runMcprt("serve", "-fixture", "everything")
	if code != runtime.ExitUsage || !strings.Contains(errs, "-fixture must be reference, conformance or wedged") {
		t.Errorf("serve -fixture everything: exit %d, stderr %q", code, errs)
	}
	out, _, code := runMcprt("serve", "-help")
	if code != runtime.ExitOK || !strings.Contains(out, "-fixture name") {
		t.Errorf("serve -help does not explain -fixture: exit %d", code)
	}
}

func contentTypes(r *mcp.CallToolResult) []string {
	var types []string
	for _, c := range r.Content {
		types = append(types, c.Type)
	}
	return types
}

// decodesTo reports whether b64 is base64 of bytes that start with prefix.
func decodesTo(b []byte, prefix string) bool {
	return bytes.HasPrefix(b, []byte(prefix))
}

// jsonEqual reports whether got is the JSON value want.
func jsonEqual(got json.RawMessage, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}
