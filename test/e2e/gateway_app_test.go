package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGatewayMCPApp: an MCP App made with the official TypeScript SDK (v2)
// and @modelcontextprotocol/ext-apps (testdata/appserver.mjs), behind
// mcprt gateway twice, reached in each era (one backend legacy, one
// 2026-07-28), and the gateway's client in each era too: the tool's
// _meta.ui.resourceUri, the resource's _meta.ui and its contents' _meta.ui
// reach the client as the server wrote them, and the client's declared
// MCP Apps extension reaches the server. Needs the npm servers installed
// (see npmServersEnv).
func TestGatewayMCPApp(t *testing.T) {
	dir := os.Getenv(npmServersEnv)
	if dir == "" {
		t.Skipf("set %s to a directory with the npm servers installed (see npmServersEnv)", npmServersEnv)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "ext-apps")); err != nil {
		t.Skipf("ext-apps is not installed in %s: %v", dir, err)
	}
	f := newGateway(t)
	// The script beside the installed packages, where its imports resolve.
	appDir := filepath.Join(f.dir, "app")
	os.MkdirAll(appDir, 0o755)
	if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(appDir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("testdata", "appserver.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(appDir, "appserver.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	backend := func(protocol string) map[string]any {
		return map[string]any{"command": node, "args": []string{filepath.Join(appDir, "appserver.mjs")}, "protocol": protocol,
			"env": map[string]string{"MCPRT_GWMARK": f.marker + "-node"}}
	}
	const (
		toolUI     = `{"resourceUri":"ui://app/view.html","visibility":["model","app"]}`
		resourceUI = `{"csp":{"connectDomains":["https://api.example.com"]},"prefersBorder":true}`
		contentsUI = `{"csp":{"resourceDomains":["https://cdn.example.com"]},"permissions":{"camera":{}}}`
		hostUI     = `{"mimeTypes":["text/html;profile=mcp-app"]}`
	)
	ext := map[string]any{"io.modelcontextprotocol/ui": json.RawMessage(hostUI)}
	// One client: the legacy backend is told its extensions at initialize.
	c := f.start(f.config(map[string]any{"legacy": backend("legacy"), "modern": backend("modern")}), Options{})
	c.InitializeWith("2025-11-25", map[string]any{"extensions": ext})
	modernMeta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": ext},
	}

	uiOf := func(raw json.RawMessage) string {
		var m struct {
			UI json.RawMessage `json:"ui"`
		}
		_ = json.Unmarshal(raw, &m)
		return string(m.UI)
	}
	for _, era := range []string{"legacy", "modern"} {
		call := func(method string, params map[string]any) map[string]json.RawMessage {
			t.Helper()
			if era == "modern" {
				return checkModernResult(t, c.Call(method, withMeta(params, modernMeta)), method != "tools/call")
			}
			return wantResult(t, c.Call(method, params))
		}
		var tools []struct {
			Name string          `json:"name"`
			Meta json.RawMessage `json:"_meta"`
		}
		mustUnmarshal(t, call("tools/list", map[string]any{})["tools"], &tools)
		found := 0
		for _, tool := range tools {
			if tool.Name == "legacy__show" || tool.Name == "modern__show" {
				found++
				if got := uiOf(tool.Meta); got != toolUI {
					t.Errorf("%s client, tool %s: _meta.ui %s, want %s", era, tool.Name, got, toolUI)
				}
			}
		}
		if found != 2 {
			t.Errorf("%s client: the show tools are not both listed: %+v", era, tools)
		}
		var resources []struct {
			URI  string          `json:"uri"`
			Meta json.RawMessage `json:"_meta"`
		}
		mustUnmarshal(t, call("resources/list", map[string]any{})["resources"], &resources)
		if len(resources) != 1 || resources[0].URI != "ui://app/view.html" || uiOf(resources[0].Meta) != resourceUI {
			t.Errorf("%s client: resources %+v, want ui://app/view.html with _meta.ui %s", era, resources, resourceUI)
		}
		var contents []struct {
			MimeType string          `json:"mimeType"`
			Meta     json.RawMessage `json:"_meta"`
		}
		mustUnmarshal(t, call("resources/read", map[string]any{"uri": "ui://app/view.html"})["contents"], &contents)
		if len(contents) != 1 || contents[0].MimeType != "text/html;profile=mcp-app" || uiOf(contents[0].Meta) != contentsUI {
			t.Errorf("%s client: contents %+v, want text/html;profile=mcp-app with _meta.ui %s", era, contents, contentsUI)
		}
		for _, b := range []string{"legacy", "modern"} {
			r := call("tools/call", toolsCall(b+"__show", map[string]any{}))
			if !strings.Contains(string(r["content"]), "shown") || !strings.Contains(string(r["_meta"]), `"com.example/result":true`) {
				t.Errorf("%s client, %s backend: show's result %s", era, b, r["_meta"])
			}
			r = call("tools/call", toolsCall(b+"__ext", map[string]any{}))
			if want := `ui ` + hostUI; !strings.Contains(string(r["content"]), strings.ReplaceAll(want, `"`, `\"`)) {
				t.Errorf("%s client, %s backend: the server saw %s, want %s", era, b, r["content"], want)
			}
		}
	}
	c.CloseStdin()
	if code, ok := c.WaitExit(exitTimeout); !ok || code != 0 {
		t.Fatalf("exit %d (exited: %v)\n%s", code, ok, tail(c.Stderr(), 3000))
	}
}
