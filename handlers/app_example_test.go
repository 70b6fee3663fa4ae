package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	mcprt "github.com/mcprt/mcprt/runtime"
)

// appUI is the MCP Apps extension (io.modelcontextprotocol/ui).
const appUI = "io.modelcontextprotocol/ui"

// A server offering an MCP App: a tool whose _meta.ui.resourceUri names a
// ui:// resource of HTML, which a host that supports the extension
// renders beside the tool's result. The resource's _meta.ui says what the
// page may load. The tool's result stays useful to a host without the
// extension, as the extension requires; the tool can tell which it
// serves from the client's declared extensions. Here the server runs
// over a pipe, and a host's requests are written by hand.
func Example_mcpApp() {
	srv := handlers.NewServer(mcp.Implementation{Name: "weather", Version: "1.0.0"}, "")
	srv.SetExtension(appUI, nil)
	srv.AddTool(handlers.Tool{
		Tool: mcp.Tool{
			Name:        "forecast",
			Description: "Today's forecast, with a chart for hosts that show apps.",
			Meta:        json.RawMessage(`{"ui":{"resourceUri":"ui://weather/forecast.html"}}`),
		},
	}, func(_ context.Context, req *handlers.Request, _ json.RawMessage) (*mcp.CallToolResult, error) {
		text := "Sunny, 21°C."
		if _, ok := req.ClientExtension(appUI); !ok {
			text += " (Your host shows no apps: this text is all there is.)"
		}
		return mcp.TextResult(text), nil
	})
	srv.AddResource(handlers.Resource{Resource: mcp.Resource{URI: "ui://weather/forecast.html", Name: "forecast-view", MimeType: "text/html;profile=mcp-app"}}, func(context.Context, *handlers.Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{
			Text: `<!doctype html><div id="chart"></div><script src="https://cdn.example.com/chart.js"></script>`,
			Meta: json.RawMessage(`{"ui":{"csp":{"resourceDomains":["https://cdn.example.com"]},"prefersBorder":true}}`),
		}}, nil
	})

	engine, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		panic(err)
	}
	serverIn, host := io.Pipe()
	responses, serverOut := io.Pipe()
	inst, err := mcprt.Start(engine, srv, serverIn, serverOut, mcprt.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	lines := bufio.NewScanner(responses)
	send := func(line string) { io.WriteString(host, line+"\n") }
	ask := func(line string) { // one request at a time: answers come as they are ready
		send(line)
		lines.Scan()
		fmt.Println(lines.Text())
	}
	// A host that renders apps says so in its capabilities.
	ask(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"host","version":"1"},` +
		`"capabilities":{"extensions":{"` + appUI + `":{"mimeTypes":["text/html;profile=mcp-app"]}}}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ask(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	ask(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"ui://weather/forecast.html"}}`)
	ask(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"forecast"}}`)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := inst.Stop(ctx); err != nil {
		panic(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/ui":{}},"logging":{},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}},"serverInfo":{"name":"weather","version":"1.0.0"}}}
	// {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"forecast","description":"Today's forecast, with a chart for hosts that show apps.","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://weather/forecast.html"}}}]}}
	// {"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"ui://weather/forecast.html","mimeType":"text/html;profile=mcp-app","text":"\u003c!doctype html\u003e\u003cdiv id=\"chart\"\u003e\u003c/div\u003e\u003cscript src=\"https://cdn.example.com/chart.js\"\u003e\u003c/script\u003e","_meta":{"ui":{"csp":{"resourceDomains":["https://cdn.example.com"]},"prefersBorder":true}}}]}}
	// {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"Sunny, 21°C."}]}}
}
