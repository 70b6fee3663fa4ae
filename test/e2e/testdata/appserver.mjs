// An MCP App server made with the official TypeScript SDK (v2) and the
// MCP Apps helpers (@modelcontextprotocol/ext-apps), over stdio:
// TestGatewayMCPApp runs it behind mcprt gateway. Its tool "show" links
// its ui:// resource through _meta.ui.resourceUri; the resource carries
// _meta.ui on its listing and on its contents; the tool "ext" says what
// the client declared of the MCP Apps extension, as this server saw it.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { registerAppTool, registerAppResource, RESOURCE_MIME_TYPE, EXTENSION_ID } from "@modelcontextprotocol/ext-apps/server";

// serveStdio serves both eras: the opening exchange (server/discover or
// initialize) chooses one, and the factory makes the server for it.
serveStdio(() => {
  const server = new McpServer({ name: "app-server", version: "1.0.0" });

  registerAppTool(server, "show", {
    description: "Shows the app.",
    _meta: { ui: { resourceUri: "ui://app/view.html", visibility: ["model", "app"] }, "com.example/n": 7 },
  }, async () => ({ content: [{ type: "text", text: "shown" }], _meta: { "com.example/result": true } }));

  registerAppTool(server, "ext", {
    description: "Says what the client declared of the MCP Apps extension.",
    _meta: { ui: { resourceUri: "ui://app/view.html" } },
  }, async (ctx) => {
    const modern = ctx?.mcpReq?.envelope?.["io.modelcontextprotocol/clientCapabilities"];
    const caps = modern ?? server.server.getClientCapabilities();
    const ui = caps?.extensions?.[EXTENSION_ID];
    return { content: [{ type: "text", text: ui ? "ui " + JSON.stringify(ui) : "no ui" }] };
  });

  registerAppResource(server, "App View", "ui://app/view.html", {
    description: "The app's page.",
    _meta: { ui: { csp: { connectDomains: ["https://api.example.com"] }, prefersBorder: true } },
  }, async () => ({
    contents: [{
      uri: "ui://app/view.html",
      mimeType: RESOURCE_MIME_TYPE,
      text: "<!doctype html><p>app</p>",
      _meta: { ui: { csp: { resourceDomains: ["https://cdn.example.com"] }, permissions: { camera: {} } } },
    }],
  }));
  return server;
});
