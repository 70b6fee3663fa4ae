package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inspectorEnv names a directory where the MCP Inspector was installed,
// pinned by test/e2e/inspector/package-lock.json, for
// TestGatewayToolSearchInspector; test/e2e/inspector/install.sh installs it
// and prints it, as CI does:
//
//	MCPRT_INSPECTOR=$(bash test/e2e/inspector/install.sh) go test ./test/e2e -run Inspector
const inspectorEnv = "MCPRT_INSPECTOR"

// toolSearchConfig is a gateway of mcprt's reference server, with an
// endpoint "calc" that offers its add alone, by search.
func (f *gwFixture) toolSearchConfig() string {
	return f.writeConfig(map[string]any{"one": f.serve("one", nil)}, map[string]any{
		"endpoints": map[string]any{"calc": map[string]any{"tools": []string{"one__add"}, "toolSearch": true}},
	})
}

// TestGatewayToolSearchTSClient: the official TypeScript SDK v2 client
// (testdata/toolsearch-client.mjs) lists search_tools and call_tool on
// mcprt gateway -tool-search, finds one__add with search_tools (its
// structuredContent checked by the SDK against the output schema) and
// calls it through call_tool: over stdio, over Streamable HTTP, and on a
// virtual endpoint with its own search.
func TestGatewayToolSearchTSClient(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	node, scriptPath := tsClientScript(t, "toolsearch-client.mjs")
	config := f.toolSearchConfig()
	drive := func(what string, args ...string) {
		t.Helper()
		out, err := exec.Command(node, append([]string{scriptPath}, args...)...).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("%s: %v\n%s\n%s", what, err, out, tail(string(stderr), 3000))
		}
		var got struct {
			Listed, Found []string
			Called        struct {
				StructuredContent map[string]any `json:"structuredContent"`
				IsError           bool           `json:"isError"`
			}
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		mustUnmarshal(t, []byte(lines[len(lines)-1]), &got)
		if !slices.Equal(got.Listed, []string{"search_tools", "call_tool"}) || len(got.Found) == 0 || got.Found[0] != "one__add" ||
			got.Called.IsError || got.Called.StructuredContent["sum"] != 5.0 {
			t.Errorf("%s: %s", what, out)
		}
	}
	drive("stdio", binPath, "gateway", "-config", config, "-tool-search")
	gw := f.startGatewayHTTP(config, "-tool-search")
	drive("Streamable HTTP", gw.url)
	drive("the endpoint calc", gw.url+"/calc")
	if code := gw.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit status %d:\n%s", code, tail(gw.stderr.String(), 3000))
	}
}

// TestGatewayToolSearchInspector: the MCP Inspector's CLI calls
// search_tools, then call_tool with what it found, on mcprt gateway
// -tool-search over stdio, and call_tool over Streamable HTTP on a
// virtual endpoint.
func TestGatewayToolSearchInspector(t *testing.T) {
	t.Parallel()
	dir := os.Getenv(inspectorEnv)
	if dir == "" {
		t.Skipf("set %s to a directory with the MCP Inspector installed (bash test/e2e/inspector/install.sh) to drive the gateway with its CLI", inspectorEnv)
	}
	inspector := filepath.Join(dir, "node_modules", ".bin", "mcp-inspector")
	if _, err := os.Stat(inspector); err != nil {
		t.Skipf("the MCP Inspector is not installed in %s: %v", dir, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node: %v", err)
	}
	f := newGateway(t)
	config := f.toolSearchConfig()
	home := t.TempDir()
	cli := func(what string, args ...string) map[string]json.RawMessage {
		t.Helper()
		cmd := exec.Command(inspector, append([]string{"--cli"}, args...)...)
		// Its catalog and settings in the test's folder, not the user's.
		cmd.Env = append(os.Environ(), "HOME="+home, "MCP_CATALOG_PATH="+filepath.Join(home, "catalog.json"))
		cmd.WaitDelay = time.Second
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("%s: %v\n%s\n%s", what, err, out, tail(string(stderr), 3000))
		}
		var res map[string]json.RawMessage
		mustUnmarshal(t, out, &res)
		return res
	}
	gateway := []string{binPath, "gateway", "-config", config, "-tool-search"}
	res := cli("search_tools", append(gateway, "--method", "tools/call", "--tool-name", "search_tools", "--tool-arg", "query=add two numbers", "limit=3")...)
	found := searchFound(t, res["structuredContent"])
	if len(found) == 0 || found[0] != "one__add" {
		t.Fatalf("search_tools found %v", found)
	}
	res = cli("call_tool", append(gateway, "--method", "tools/call", "--tool-name", "call_tool", "--tool-arg", "name="+found[0], `arguments={"a":2,"b":3}`)...)
	if !strings.Contains(string(res["structuredContent"]), `"sum": 5`) && !strings.Contains(string(res["structuredContent"]), `"sum":5`) {
		t.Errorf("call_tool %s: %s", found[0], res["structuredContent"])
	}

	gw := f.startGatewayHTTP(config)
	res = cli("call_tool over HTTP", gw.url+"/calc", "--transport", "http", "--method", "tools/call", "--tool-name", "call_tool", "--tool-arg", "name=one__add", `arguments={"a":4,"b":5}`)
	if !strings.Contains(string(res["structuredContent"]), "9") {
		t.Errorf("call_tool one__add on /mcp/calc: %s", res["structuredContent"])
	}
	if code := gw.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit status %d:\n%s", code, tail(gw.stderr.String(), 3000))
	}
}

// tsClientScript is node and testdata/NAME copied beside the npm peers'
// node_modules (where its imports of the official TypeScript SDK client
// resolve); the test is skipped when they are not installed.
func tsClientScript(t *testing.T, name string) (node, path string) {
	t.Helper()
	dir := os.Getenv(npmServersEnv)
	if dir == "" {
		t.Skipf("set %s to a directory with the npm peers installed (bash test/e2e/npm/install.sh) to drive mcprt with the TypeScript SDK client", npmServersEnv)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "client")); err != nil {
		t.Skipf("the TypeScript SDK client is not installed in %s (bash test/e2e/npm/install.sh): %v", dir, err)
	}
	sdkDir := t.TempDir()
	if err := os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(sdkDir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(sdkDir, name)
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	return node, path
}
