package e2e

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// npmBin is the path of an npm reference server's command, or skips the
// test when the servers are not installed (see npmServersEnv).
func npmBin(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv(npmServersEnv)
	if dir == "" {
		t.Skipf("set %s to a directory with the npm reference servers installed (see npmServersEnv)", npmServersEnv)
	}
	p := filepath.Join(dir, "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s: %v", name, err)
	}
	return p
}

// endpointServers are the backends of the endpoint tests: the npm
// filesystem and memory servers, and mcprt's reference server.
func (f *gwFixture) endpointServers(t *testing.T) (map[string]any, string) {
	root := filepath.Join(f.dir, "root")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello file\n"), 0o600)
	mark := map[string]string{"MCPRT_GWMARK": f.marker + "-node"}
	return map[string]any{
		"fs":     map[string]any{"command": npmBin(t, "mcp-server-filesystem"), "args": []string{root}, "env": mark},
		"memory": map[string]any{"command": npmBin(t, "mcp-server-memory"), "env": map[string]string{"MCPRT_GWMARK": mark["MCPRT_GWMARK"], "MEMORY_FILE_PATH": filepath.Join(f.dir, "memory.json")}},
		"ref":    f.serve("ref", nil),
	}, filepath.Join(root, "a.txt")
}

// endpointsBefore and endpointsAfter are the endpoints before and after
// the reload of TestGatewayEndpoints.
var (
	endpointsBefore = map[string]any{
		"dev": map[string]any{"tools": []string{"fs__read_*", "ref__add"}},
		"mem": map[string]any{"tools": []string{"memory__*", "ref__echo"}, "toolSearch": true},
	}
	endpointsAfter = map[string]any{
		"dev": map[string]any{"tools": []string{"ref__echo"}},
	}
)

// TestGatewayEndpoints: virtual endpoints of mcprt gateway -http over the
// npm reference servers and mcprt's, in both eras: /mcp/dev lists and
// calls only its tools, and a tool it does not name is refused as one that
// does not exist is; search on /mcp/mem finds only its tools; mcprt list
// -url shows the subset; a reload (SIGHUP) changes /mcp/dev and removes
// /mcp/mem with every backend left running, the same processes.
func TestGatewayEndpoints(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	servers, file := f.endpointServers(t)
	config := f.writeConfig(servers, map[string]any{"endpoints": endpointsBefore})
	// The node servers may take a while to start on a busy machine.
	gw := f.startGatewayHTTP(config, "-list-grace", "60s")
	dev, mem := gw.url+"/dev", gw.url+"/mem"

	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		c := connectHTTP(t, dev, client.Options{Era: era})
		got := toolNames(t, c)
		slices.Sort(got)
		if len(got) < 3 || !slices.Contains(got, "ref__add") || !slices.ContainsFunc(got, func(n string) bool { return n == "fs__read_text_file" }) ||
			slices.ContainsFunc(got, func(n string) bool { return n != "ref__add" && !strings.HasPrefix(n, "fs__read_") }) {
			t.Errorf("%v: /mcp/dev lists %v", era, got)
		}
		if got := callText(t, c, "fs__read_text_file", map[string]any{"path": file}); !strings.Contains(got, "hello file") {
			t.Errorf("%v: fs__read_text_file: %q", era, got)
		}
		_, hidden := c.CallTool(testCtx(t), "memory__read_graph", map[string]any{})
		_, unknown := c.CallTool(testCtx(t), "memory__no_such_tool", map[string]any{})
		var re *client.RPCError
		if !errors.As(hidden, &re) || unknown == nil ||
			strings.ReplaceAll(hidden.Error(), "memory__read_graph", "X") != strings.ReplaceAll(unknown.Error(), "memory__no_such_tool", "X") {
			t.Errorf("%v: /mcp/dev calling memory__read_graph: %v; a tool that does not exist: %v", era, hidden, unknown)
		}

		m := connectHTTP(t, mem, client.Options{Era: era})
		if got := toolNames(t, m); !slices.Equal(got, []string{"search_tools", "call_tool"}) {
			t.Errorf("%v: /mcp/mem lists %v", era, got)
		}
		var found []string
		for _, q := range []string{"read a file", "read the knowledge graph", "echo text back", "add two numbers"} {
			r, err := m.CallTool(testCtx(t), "search_tools", map[string]any{"query": q, "limit": 50})
			if err != nil || r.IsError {
				t.Fatalf("%v: /mcp/mem searching %q: %+v %v", era, q, r, err)
			}
			found = append(found, searchFound(t, r.StructuredContent)...)
		}
		if !slices.Contains(found, "memory__read_graph") || slices.ContainsFunc(found, func(n string) bool { return !strings.HasPrefix(n, "memory__") && n != "ref__echo" }) {
			t.Errorf("%v: /mcp/mem found %v", era, found)
		}
		r, err := m.CallTool(testCtx(t), "call_tool", map[string]any{"name": "memory__read_graph", "arguments": map[string]any{}})
		if err != nil || r.IsError || !strings.Contains(structuredText(r)+r.Content[0].Text, "entities") {
			t.Errorf("%v: /mcp/mem call_tool memory__read_graph: %+v %v", era, r, err)
		}
		if _, err := m.CallTool(testCtx(t), "call_tool", map[string]any{"name": "fs__read_text_file", "arguments": map[string]any{"path": file}}); err == nil {
			t.Errorf("%v: /mcp/mem called fs__read_text_file through call_tool", era)
		}
	}

	out, err := exec.Command(binPath, "list", "tools", "-url", dev).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "fs__read_text_file") || !strings.Contains(string(out), "ref__add") || strings.Contains(string(out), "memory__") || strings.Contains(string(out), "ref__echo") {
		t.Errorf("mcprt list tools -url %s: %v\n%s", dev, err, out)
	}

	// The reload: endpoints change, backends do not.
	pids := f.procs("")
	slices.Sort(pids)
	f.writeConfig(servers, map[string]any{"endpoints": endpointsAfter})
	_ = gw.cmd.Process.Signal(syscall.SIGHUP)
	c := connectHTTP(t, dev, client.Options{Era: client.EraModern})
	deadline := time.Now().Add(callTimeout)
	for got := toolNames(t, c); !slices.Equal(got, []string{"ref__echo"}); got = toolNames(t, c) {
		if time.Now().After(deadline) {
			t.Fatalf("/mcp/dev lists %v after the reload\n%s", got, tail(gw.stderr.String(), 3000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := callText(t, c, "ref__echo", map[string]any{"text": "after"}); got != "after" {
		t.Errorf("ref__echo after the reload: %q", got)
	}
	if !strings.Contains(gw.stderr.String(), "unchanged=3") {
		t.Errorf("the reload touched a backend:\n%s", tail(gw.stderr.String(), 3000))
	}
	after := f.procs("")
	slices.Sort(after)
	if !slices.Equal(pids, after) || len(pids) < 3 {
		t.Errorf("backend processes %v before the reload, %v after", pids, after)
	}
	if _, err := client.ConnectURL(testCtx(t), mem, &client.Options{Era: client.EraLegacy}); err == nil {
		t.Error("/mcp/mem still serves after the reload removed it")
	}
	if code := gw.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit status %d:\n%s", code, tail(gw.stderr.String(), 3000))
	}
}

// TestGatewayEndpointStdio: mcprt gateway -endpoint dev over stdio, in
// both eras: it lists dev's tools, calls them, and refuses the rest as
// unknown; an endpoint the file lacks is a usage error; a reload that
// changes it sends its client list_changed, with the backends untouched.
func TestGatewayEndpointStdio(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	servers, file := f.endpointServers(t)
	config := f.writeConfig(servers, map[string]any{"endpoints": endpointsBefore})
	if out, err := exec.Command(binPath, "gateway", "-config", config, "-endpoint", "nope").CombinedOutput(); err == nil || !strings.Contains(string(out), `-endpoint "nope"`) {
		t.Errorf("-endpoint nope: %v\n%s", err, out)
	}
	c := f.start(config, Options{}, "-endpoint", "dev", "-list-grace", "60s")
	c.Initialize("2025-11-25")
	for _, modern := range []bool{false, true} {
		call := func(method string, params map[string]any) *Msg {
			if modern {
				params = withMeta(params, meta())
			}
			return c.Call(method, params)
		}
		tools := namesOf(listAll(t, c, "tools/list", "tools"), "name")
		if modern {
			var res struct {
				Tools []struct{ Name string } `json:"tools"`
			}
			mustUnmarshal(t, call("tools/list", map[string]any{}).Result, &res)
			tools = nil
			for _, tl := range res.Tools {
				tools = append(tools, tl.Name)
			}
		}
		if !slices.Contains(tools, "ref__add") || !slices.Contains(tools, "fs__read_text_file") || slices.Contains(tools, "ref__echo") || slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, "memory__") }) {
			t.Errorf("modern %v: tools/list: %v", modern, tools)
		}
		if got := toolText(t, call("tools/call", toolsCall("fs__read_text_file", map[string]any{"path": file}))); !strings.Contains(got, "hello file") {
			t.Errorf("modern %v: fs__read_text_file: %q", modern, got)
		}
		hidden := wantError(t, call("tools/call", toolsCall("ref__echo", map[string]any{"text": "x"})), -32602)
		unknown := wantError(t, call("tools/call", toolsCall("ref__nothing", map[string]any{})), -32602)
		if hidden != nil && unknown != nil && strings.ReplaceAll(hidden.Message, "ref__echo", "X") != strings.ReplaceAll(unknown.Message, "ref__nothing", "X") {
			t.Errorf("modern %v: ref__echo refused with %q, an unknown tool with %q", modern, hidden.Message, unknown.Message)
		}
	}
	// A reload that changes the endpoint: its client is told, and lists
	// the new subset; the backends stay.
	notes := c.countNotes("notifications/tools/list_changed")
	f.writeConfig(servers, map[string]any{"endpoints": endpointsAfter})
	c.Signal(syscall.SIGHUP)
	c.waitNotes(t, "notifications/tools/list_changed", notes+1)
	if got := namesOf(listAll(t, c, "tools/list", "tools"), "name"); !slices.Equal(got, []string{"ref__echo"}) {
		t.Errorf("tools/list after the reload: %v", got)
	}
	waitStderr(t, c, 1, "unchanged=3")
	c.CloseStdin()
	if code, ok := c.WaitExit(2 * exitTimeout); !ok || code != 0 {
		t.Fatalf("exit %d (exited: %v)\n%s", code, ok, tail(c.Stderr(), 2000))
	}
}

// Tasks on a virtual endpoint over HTTP: the gateway's one tasks manager
// serves /mcp/NAME too, in both eras; a task made there is awaited there
// and is the gateway's (read at the main endpoint by its id); a reload
// that removes the endpoint leaves the main endpoint's tasks served.
func TestGatewayEndpointTasks(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	servers := map[string]any{"ref": f.serve("ref", map[string]any{"args": []string{"serve", "-tasks"}})}
	endpoints := map[string]any{"slow": map[string]any{"tools": []string{"ref__sleep"}}}
	config := f.writeConfig(servers, map[string]any{"endpoints": endpoints})
	gw := f.startGatewayHTTP(config)
	ctx := testCtx(t)
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		c := connectHTTP(t, gw.url+"/slow", client.Options{Era: era})
		task, _, err := c.CallToolTask(ctx, "ref__sleep", map[string]any{"ms": 300})
		if err != nil || task == nil {
			t.Fatalf("%v: ref__sleep as a task on /mcp/slow: %v %v", era, task, err)
		}
		main := connectHTTP(t, gw.url, client.Options{Era: era})
		if got, err := main.GetTask(ctx, task.ID); err != nil || got.ID != task.ID {
			t.Fatalf("%v: the endpoint's task read at the main endpoint: %+v %v", era, got, err)
		}
		res, err := c.AwaitTask(ctx, task, nil)
		if err != nil || !strings.Contains(string(res), "slept") {
			t.Fatalf("%v: the endpoint's task awaited there: %s %v", era, res, err)
		}
	}
	// The endpoint removed: it is gone, and the main endpoint's tasks go on.
	f.writeConfig(servers, map[string]any{"endpoints": map[string]any{}})
	_ = gw.cmd.Process.Signal(syscall.SIGHUP)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Post(gw.url+"/slow", "application/json", strings.NewReader(`{}`))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNotFound {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/mcp/slow still served 20 s after the reload removed it")
		}
	}
	c := connectHTTP(t, gw.url, client.Options{Era: client.EraModern})
	task, _, err := c.CallToolTask(ctx, "ref__sleep", map[string]any{"ms": 100})
	if err != nil || task == nil {
		t.Fatalf("a task at the main endpoint after the reload: %v %v", task, err)
	}
	if res, err := c.AwaitTask(ctx, task, nil); err != nil || !strings.Contains(string(res), "slept") {
		t.Fatalf("awaited at the main endpoint after the reload: %s %v", res, err)
	}
}

// structuredText is a tool result's structured content as a client read
// it ("" for none).
func structuredText(r *mcp.CallToolResult) string {
	raw, _ := r.StructuredContent.(json.RawMessage)
	return string(raw)
}
