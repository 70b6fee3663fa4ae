package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// npmServersEnv names a directory where the official reference servers
// were installed, pinned by test/e2e/npm/package-lock.json, for
// TestGatewayNPMServers and TestGatewayMCPApp; test/e2e/npm/install.sh installs them and prints
// it, as CI does:
//
//	MCPRT_NPM_SERVERS=$(bash test/e2e/npm/install.sh) go test ./test/e2e -run NPM
//
// Without it the tests that need them are skipped: they need node (20 or
// later) and the npm registry.
const npmServersEnv = "MCPRT_NPM_SERVERS"

// TestGatewayNPMServers: the official TypeScript reference servers behind
// the gateway, beside mcprt serve: their tools (text, images, resource
// links, embedded resources, structured content, progress), resources,
// templates, prompts and completions, and a server-to-client elicitation;
// then stdin EOF closes them all, server-everything (which ignores EOF)
// included.
func TestGatewayNPMServers(t *testing.T) {
	dir := os.Getenv(npmServersEnv)
	if dir == "" {
		t.Skipf("set %s to a directory with the npm reference servers installed (see npmServersEnv)", npmServersEnv)
	}
	bin := func(name string) string {
		p := filepath.Join(dir, "node_modules", ".bin", name)
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s: %v", name, err)
		}
		return p
	}
	f := newGateway(t)
	root := filepath.Join(f.dir, "root")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello file\n"), 0o600)
	// The node servers carry the marker in their environment, so that the
	// test finds them in /proc.
	mark := map[string]string{"MCPRT_GWMARK": f.marker + "-node"}
	c := f.start(f.config(map[string]any{
		"everything": map[string]any{"command": bin("mcp-server-everything"), "args": []string{"stdio"}, "env": mark},
		"fs":         map[string]any{"command": bin("mcp-server-filesystem"), "args": []string{root}, "env": mark},
		"memory":     map[string]any{"command": bin("mcp-server-memory"), "env": map[string]string{"MCPRT_GWMARK": mark["MCPRT_GWMARK"], "MEMORY_FILE_PATH": filepath.Join(f.dir, "memory.json")}},
		"ref":        f.serve("ref", nil),
	}), Options{AllowRequests: true})
	c.InitializeWith("2025-06-18", map[string]any{"elicitation": map[string]any{}})

	tools := namesOf(listAll(t, c, "tools/list", "tools"), "name")
	for _, want := range []string{"everything__echo", "everything__get-tiny-image", "fs__read_text_file", "memory__read_graph", "ref__echo"} {
		if !slices.Contains(tools, want) {
			t.Errorf("tools/list lacks %s: %v", want, tools)
		}
	}
	call := func(name string, args map[string]any) string {
		t.Helper()
		m := c.Call("tools/call", toolsCall(name, args))
		r := wantResult(t, m)
		if string(r["isError"]) == "true" {
			t.Errorf("%s: %s", name, m)
		}
		return string(m.Result)
	}
	for name, want := range map[string]struct {
		args map[string]any
		has  []string
	}{
		"everything__echo":                   {map[string]any{"message": "hi"}, []string{"Echo: hi"}},
		"everything__get-tiny-image":         {map[string]any{}, []string{`"type":"image"`, `"mimeType":"image/png"`}},
		"everything__get-resource-links":     {map[string]any{"count": 2}, []string{`"type":"resource_link"`}},
		"everything__get-resource-reference": {map[string]any{"resourceType": "Text", "resourceId": 3}, []string{`"type":"resource"`, "demo://resource/dynamic/text/3"}},
		"everything__get-structured-content": {map[string]any{"location": "New York"}, []string{`"structuredContent":{`}},
		"everything__get-annotated-message":  {map[string]any{"messageType": "error"}, []string{`"annotations":{`}},
		"fs__read_text_file":                 {map[string]any{"path": filepath.Join(root, "a.txt")}, []string{"hello file"}},
		"memory__read_graph":                 {map[string]any{}, []string{"entities"}},
	} {
		got := call(name, want.args)
		for _, h := range want.has {
			if !strings.Contains(got, h) {
				t.Errorf("%s: no %s in %s", name, h, got)
			}
		}
	}
	key := c.Request("long", "tools/call", map[string]any{"name": "everything__trigger-long-running-operation",
		"arguments": map[string]any{"duration": 1, "steps": 3}, "_meta": map[string]any{"progressToken": "npm-tok"}})
	wantResult(t, c.Response(key, callTimeout))
	c.mu.Lock()
	progress := 0
	for _, n := range c.notes {
		if n.Method == "notifications/progress" && strings.Contains(string(n.Params), `"npm-tok"`) {
			progress++
		}
	}
	c.mu.Unlock()
	if progress != 3 {
		t.Errorf("progress notifications: %d, want 3", progress)
	}

	key = c.Request("elicit", "tools/call", toolsCall("everything__trigger-elicitation-request", map[string]any{}))
	req := c.ServerRequest("elicitation/create", callTimeout)
	c.Send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"decline"}}`)
	if r := wantResult(t, c.Response(key, callTimeout)); !strings.Contains(strings.ToLower(string(r["content"])), "decline") {
		t.Errorf("elicitation: %s", r["content"])
	}

	// A 2026-07-28 client, and server-everything, which speaks 2025-11-25:
	// its elicitation becomes input_required, and the retry forwards the
	// call again with the answer at hand.
	modern := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
	}
	m := c.Call("tools/call", withMeta(toolsCall("everything__trigger-elicitation-request", map[string]any{}), modern))
	var first struct {
		ResultType    string         `json:"resultType"`
		InputRequests map[string]any `json:"inputRequests"`
		RequestState  *string        `json:"requestState"`
	}
	mustUnmarshal(t, m.Result, &first)
	if first.ResultType != "input_required" || len(first.InputRequests) != 1 {
		t.Fatalf("want input_required, got %s", m)
	}
	retry := withMeta(toolsCall("everything__trigger-elicitation-request", map[string]any{}), modern)
	for k := range first.InputRequests {
		retry["inputResponses"] = map[string]any{k: map[string]any{"action": "decline"}}
	}
	if first.RequestState != nil {
		retry["requestState"] = *first.RequestState
	}
	if r := checkModernResult(t, c.Call("tools/call", retry), false); !strings.Contains(strings.ToLower(string(r["content"])), "decline") {
		t.Errorf("modern elicitation retry: %s", r["content"])
	}

	if r := wantResult(t, c.Call("resources/read", map[string]any{"uri": "demo://resource/dynamic/text/7"})); !strings.Contains(string(r["contents"]), "Resource 7") {
		t.Errorf("read a template's resource: %s", r["contents"])
	}
	if r := wantResult(t, c.Call("prompts/get", map[string]any{"name": "everything__args-prompt", "arguments": map[string]string{"city": "Lyon"}})); !strings.Contains(string(r["messages"]), "Lyon") {
		t.Errorf("prompts/get: %s", r["messages"])
	}
	if r := wantResult(t, c.Call("completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "everything__completable-prompt"}, "argument": map[string]any{"name": "department", "value": "E"},
	})); !strings.Contains(string(r["completion"]), "Engineering") {
		t.Errorf("completion: %s", r["completion"])
	}

	if n := len(f.procs("")); n < 4 {
		t.Fatalf("marked processes: %d", n)
	}
	c.CloseStdin()
	if code, ok := c.WaitExit(exitTimeout); !ok || code != 0 {
		t.Fatalf("exit %d (exited: %v)\n%s", code, ok, tail(c.Stderr(), 3000))
	}
	f.waitProcs("", "no backend left", func(p []int) bool { return len(p) == 0 })
}
