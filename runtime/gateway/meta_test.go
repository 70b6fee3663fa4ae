package gateway

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	mcprt "github.com/mcprt/mcprt/runtime"
)

// TestClientMetaReachesTheBackend: what the client puts in its request's
// _meta reaches the backend, on both of the gateway's ways of forwarding a
// tool call (started from the session, and on a handler actor), except
// progressToken (the gateway sends its own) and the keys under the
// protocol's reserved prefixes, which are the client's hop's.
func TestClientMetaReachesTheBackend(t *testing.T) {
	g := start(t, dynamic("d"))
	const params = `{"name":"d__meta","arguments":{},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","progressToken":7,` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"dev.mcp/x":1,"example.com/app":{"k":[1,2]},"mcp":"plain"}}`
	// The backend speaks 2026-07-28: besides the client's keys it gets
	// the gateway's own hop's.
	check := func(how, got string) {
		t.Helper()
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(got), &m); err != nil {
			t.Fatalf("%s: the backend got _meta %s: %v", how, got, err)
		}
		for k, want := range map[string]string{
			"traceparent":                        `"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`,
			"example.com/app":                    `{"k":[1,2]}`,
			"mcp":                                `"plain"`,
			"io.modelcontextprotocol/clientInfo": `{"name":"mcprt-gateway","version":"0.1.0"}`,
			"dev.mcp/x":                          "",
		} {
			if string(m[k]) != want {
				t.Errorf("%s: the backend got _meta[%q] = %s, want %s (all: %s)", how, k, m[k], want, got)
			}
		}
		// The gateway asks for progress with a token of its own (a
		// backend's progress extends the call's timeout).
		if tok := string(m["progressToken"]); tok == "" || tok == "7" {
			t.Errorf("%s: the backend got progressToken %s, want the gateway's own", how, tok)
		}
	}
	m, _ := g.Server().Method("tools/call")
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()

	res, err := m.Run(ctx, req("tools/call", params, &peer{}))
	check("on a handler actor", textOf(t, res, err))
	d := &deferred{done: make(chan struct{})}
	if m.Start == nil || !m.Start(ctx, req("tools/call", params, &peer{}), d) {
		t.Fatal("the tool call was not started")
	}
	<-d.done
	check("started", textOf(t, d.res, d.err))
}

func textOf(t *testing.T, res any, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("result %s: %v", b, err)
	}
	return r.Content[0].Text
}

func TestReservedMetaKey(t *testing.T) {
	for k, want := range map[string]bool{
		"io.modelcontextprotocol/protocolVersion": true,
		"dev.mcp/x":                  true,
		"com.example/x":              false,
		"modelcontextprotocol.io/x":  false, // its second label is io
		"traceparent":                false,
		"progressToken":              false,
		"a.b.modelcontextprotocol/x": false,
	} {
		if got := reservedMetaKey(k); got != want {
			t.Errorf("reservedMetaKey(%q) = %v", k, got)
		}
	}
}

// The _meta, execution and icons of an MCP App server, as the app test
// server (runAppServer) offers them.
const (
	appToolMeta     = `{"ui":{"resourceUri":"ui://app/main.html","visibility":["model","app"]},"com.example/big":12345678901234567890}`
	appResourceMeta = `{"ui":{"csp":{"connectDomains":["https://api.example.com"]},"prefersBorder":true}}`
	appContentsMeta = `{"ui":{"csp":{"resourceDomains":["https://cdn.example.com"]},"permissions":{"camera":{}}}}`
	appExecution    = `{"taskSupport":"optional"}`
	appIcons        = `[{"src":"data:image/png;base64,AA==","mimeType":"image/png","sizes":["48x48"],"theme":"dark"}]`
	appOtherMeta    = `{"com.example/tag":"x"}`
)

// appBackend runs runAppServer, reached with protocol ("legacy" or
// "modern").
func appBackend(name, protocol string) Backend {
	return Backend{Name: name, Command: os.Args[0], Protocol: protocol, Env: []string{testServerEnv + "=app", "LOG_LEVEL=warn", "GORACE=atexit_sleep_ms=0"}}
}

func runAppServer() int {
	srv := handlers.NewServer(mcp.Implementation{Name: "app", Version: "1"}, "")
	var icons []mcp.Icon
	if err := json.Unmarshal([]byte(appIcons), &icons); err != nil {
		panic(err)
	}
	srv.SetExtension("io.modelcontextprotocol/ui", nil)
	srv.SetExtension("com.example/app", json.RawMessage(`{"v":2}`))
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "ext"}}, func(_ context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		settings, ok := req.ClientExtension("io.modelcontextprotocol/ui")
		if !ok {
			return mcp.TextResult("no ui"), nil
		}
		return mcp.TextResult("ui " + string(settings)), nil
	})
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "show", Meta: json.RawMessage(appToolMeta), Execution: json.RawMessage(appExecution), Icons: icons}},
		func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
			text := mcp.TextContent("shown")
			text.Meta = json.RawMessage(appOtherMeta)
			return &mcp.CallToolResult{Content: []mcp.Content{text}, Meta: json.RawMessage(appOtherMeta)}, nil
		})
	srv.AddResource(handlers.Resource{Resource: mcp.Resource{URI: "ui://app/main.html", Name: "main", MimeType: "text/html;profile=mcp-app", Meta: json.RawMessage(appResourceMeta), Icons: icons}},
		func(_ context.Context, req *handlers.Request, _ string, _ map[string]string) ([]mcp.ResourceContents, error) {
			req.SetResultMeta(json.RawMessage(appOtherMeta))
			return []mcp.ResourceContents{{Text: "<html></html>", Meta: json.RawMessage(appContentsMeta)}}, nil
		})
	srv.AddResourceTemplate(handlers.ResourceTemplate{ResourceTemplate: mcp.ResourceTemplate{URITemplate: "ui://app/{page}.html", Name: "pages", Meta: json.RawMessage(appOtherMeta)}},
		func(context.Context, *handlers.Request, string, map[string]string) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{{Text: "page"}}, nil
		})
	srv.AddPrompt(handlers.Prompt{Prompt: mcp.Prompt{Name: "p", Meta: json.RawMessage(appOtherMeta), Icons: icons}},
		func(context.Context, *handlers.Request, map[string]string) (*mcp.GetPromptResult, error) {
			text := mcp.TextContent("m")
			text.Meta = json.RawMessage(appOtherMeta)
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: text}}, Meta: json.RawMessage(appOtherMeta)}, nil
		})
	return mcprt.ExitCode(mcprt.Serve(context.Background(), srv, mcprt.Options{}))
}

// TestBackendMetaPassesThrough: an MCP App behind the gateway is intact:
// the _meta, execution and icons of the backend's tools, resources,
// templates and prompts, of its resource contents and content blocks, and
// of its results reach the client as the backend wrote them (but the
// backend's serverInfo), whichever era the backend and the client speak.
func TestBackendMetaPassesThrough(t *testing.T) {
	for _, protocol := range []string{"legacy", "modern"} {
		t.Run(protocol, func(t *testing.T) {
			g := start(t, appBackend("a", protocol))
			for _, modern := range []bool{false, true} {
				r := func(method, params string) *handlers.Request {
					q := req(method, params, &peer{})
					if modern {
						q.Version, q.Modern = "2026-07-28", true
					}
					return q
				}
				has := func(method, params string, parts ...string) {
					t.Helper()
					got, err := g.run(nil, r(method, params))
					if err != nil {
						t.Fatalf("%s (client modern=%v): %v", method, modern, err)
					}
					for _, part := range parts {
						if !strings.Contains(got, part) {
							t.Errorf("%s (client modern=%v): want %s in %s", method, modern, part, got)
						}
					}
					if strings.Contains(got, "serverInfo") {
						t.Errorf("%s (client modern=%v): the backend's serverInfo came through: %s", method, modern, got)
					}
				}
				has("tools/list", `{}`, `"_meta":`+appToolMeta, `"execution":`+appExecution, `"icons":`+appIcons)
				has("tools/call", `{"name":"a__show"}`, `{"type":"text","text":"shown","_meta":`+appOtherMeta+`}`, `],"_meta":`+appOtherMeta)
				has("resources/list", `{}`, `"_meta":`+appResourceMeta, `"icons":`+appIcons)
				has("resources/templates/list", `{}`, `"_meta":`+appOtherMeta)
				has("resources/read", `{"uri":"ui://app/main.html"}`, `"_meta":`+appContentsMeta, `}],"_meta":`+appOtherMeta)
				has("prompts/list", `{}`, `"_meta":`+appOtherMeta, `"icons":`+appIcons)
				has("prompts/get", `{"name":"a__p"}`, `"text":"m","_meta":`+appOtherMeta, `],"_meta":`+appOtherMeta)
			}
		})
	}
}

// TestBackendExtensions: the gateway offers its backends' extensions, and
// tells a backend the client's: a 2026-07-28 backend on each request, the
// requesting client's own; a legacy backend at initialize, the one
// client's (SingleClient), and none with many clients.
func TestBackendExtensions(t *testing.T) {
	const ui = `{"mimeTypes":["text/html;profile=mcp-app"]}`
	withUI := func(q *handlers.Request) *handlers.Request {
		q.ClientCapabilities = json.RawMessage(`{"extensions":{"io.modelcontextprotocol/ui":` + ui + `}}`)
		return q
	}
	call := func(g *testGateway, q *handlers.Request) string {
		t.Helper()
		got, err := g.run(nil, q)
		if err != nil {
			t.Fatal(err)
		}
		var res mcp.CallToolResult
		if err := json.Unmarshal([]byte(got), &res); err != nil || len(res.Content) != 1 {
			t.Fatalf("%s: %v", got, err)
		}
		return res.Content[0].Text
	}

	g := start(t, appBackend("a", "modern"))
	got, _ := json.Marshal(g.Server().Capabilities()["extensions"])
	if want := `{"com.example/app":{"v":2},"io.modelcontextprotocol/ui":{}}`; string(got) != want {
		t.Errorf("the gateway offers extensions %s, want %s", got, want)
	}
	for i := range 2 { // the second time from the client's cache of _meta
		if got := call(g, withUI(req("tools/call", `{"name":"a__ext"}`, &peer{}))); got != "ui "+ui {
			t.Errorf("modern backend, client with ui (%d): %s", i, got)
		}
		if got := call(g, req("tools/call", `{"name":"a__ext"}`, &peer{})); got != "no ui" {
			t.Errorf("modern backend, client without ui (%d): %s", i, got)
		}
	}

	for _, single := range []bool{true, false} {
		g := unstarted(t, Options{SingleClient: single}, appBackend("l", "legacy"))
		if err := g.startInBackground(); err != nil {
			t.Fatal(err)
		}
		g.Server().ClientCapabilities(json.RawMessage(`{"extensions":{"io.modelcontextprotocol/ui":` + ui + `}}`))
		want := "no ui"
		if single {
			want = "ui " + ui
		}
		if got := call(g, withUI(req("tools/call", `{"name":"l__ext"}`, &peer{}))); got != want {
			t.Errorf("legacy backend, single client %v: %s, want %s", single, got, want)
		}
	}
}
