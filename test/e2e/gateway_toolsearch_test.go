package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// searchFound is the names of the tools a search_tools result holds, in
// order, each checked to come with its inputSchema.
func searchFound(t *testing.T, structuredContent any) []string {
	t.Helper()
	structured, _ := structuredContent.(json.RawMessage)
	var s struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	mustUnmarshal(t, structured, &s)
	var names []string
	for _, tl := range s.Tools {
		if len(tl.InputSchema) == 0 {
			t.Errorf("%s found without its inputSchema", tl.Name)
		}
		names = append(names, tl.Name)
	}
	return names
}

// writeConfig writes a gateway file of servers and the top-level keys.
func (f *gwFixture) writeConfig(servers map[string]any, top map[string]any) string {
	f.t.Helper()
	m := map[string]any{"mcpServers": servers}
	for k, v := range top {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		f.t.Fatal(err)
	}
	p := filepath.Join(f.dir, "gateway.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// TestGatewayToolSearch: mcprt gateway with "toolSearch" over stdio, in
// both eras. tools/list offers search_tools, call_tool and the pinned
// tool; a search finds a tool with its definition, call_tool calls it
// with its progress and its question to the user (an elicitation, and in
// 2026-07-28 an input_required round) and its task as a direct call has them; a
// direct call still works; a backend added by a reload is found.
func TestGatewayToolSearch(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	top := map[string]any{"toolSearch": true, "alwaysList": []string{"one__echo"}}
	one := f.serve("one", map[string]any{"args": []string{"serve", "-tasks"}})
	file := f.writeConfig(map[string]any{"one": one}, top)
	c := f.start(file, Options{AllowRequests: true})
	c.InitializeWith("2025-11-25", map[string]any{"elicitation": map[string]any{}})

	if got := namesOf(listAll(t, c, "tools/list", "tools"), "name"); !slices.Equal(got, []string{"search_tools", "call_tool", "one__echo"}) {
		t.Fatalf("tools/list: %v", got)
	}
	search := func(query string, meta map[string]any) []string {
		t.Helper()
		params := toolsCall("search_tools", map[string]any{"query": query})
		if meta != nil {
			params = withMeta(params, meta)
		}
		r := wantResult(t, c.Call("tools/call", params))
		if string(r["isError"]) == "true" {
			t.Fatalf("search_tools %q: %s", query, r["content"])
		}
		return searchFound(t, r["structuredContent"])
	}
	if got := search("add two numbers", nil); len(got) == 0 || got[0] != "one__add" {
		t.Errorf("add two numbers: %v", got)
	}
	if got := search("add two numbers", meta()); len(got) == 0 || got[0] != "one__add" {
		t.Errorf("add two numbers, 2026-07-28: %v", got)
	}
	via := func(name string, args map[string]any) map[string]any {
		return toolsCall("call_tool", map[string]any{"name": name, "arguments": args})
	}
	for _, params := range []map[string]any{via("one__add", map[string]any{"a": 2, "b": 3}), toolsCall("one__add", map[string]any{"a": 2, "b": 3})} {
		if r := wantResult(t, c.Call("tools/call", params)); !strings.Contains(string(r["structuredContent"]), `"sum":5`) {
			t.Errorf("%v: %s", params, r["structuredContent"])
		}
	}
	if r := checkModernResult(t, c.Call("tools/call", withMeta(via("one__add", map[string]any{"a": 1, "b": 1}), meta())), false); !strings.Contains(string(r["structuredContent"]), `"sum":2`) {
		t.Errorf("call_tool one__add, 2026-07-28: %s", r["structuredContent"])
	}

	// Progress, to the client's token.
	key := c.Request("slow", "tools/call", withMeta(via("one__sleep", map[string]any{"ms": 200}), map[string]any{"progressToken": "ts-tok"}))
	wantResult(t, c.Response(key, callTimeout))
	c.mu.Lock()
	progress := 0
	for _, n := range c.notes {
		if n.Method == "notifications/progress" && strings.Contains(string(n.Params), `"ts-tok"`) {
			progress++
		}
	}
	c.mu.Unlock()
	if progress == 0 {
		t.Error("no progress from call_tool one__sleep")
	}

	// A question to the user: elicitation/create in 2025-11-25...
	key = c.Request("elicit", "tools/call", via("one__elicit", nil))
	q := c.ServerRequest("elicitation/create", callTimeout)
	c.Send(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,"result":{"action":"accept","content":{"name":"Grace"}}}`)
	if r := wantResult(t, c.Response(key, callTimeout)); !strings.Contains(string(r["content"]), "Hello, Grace!") {
		t.Errorf("call_tool one__elicit: %s", r["content"])
	}
	// ... and input_required, then the retry, in 2026-07-28.
	modern := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
	}
	m := c.Call("tools/call", withMeta(via("one__elicit", nil), modern))
	var first struct {
		ResultType    string         `json:"resultType"`
		InputRequests map[string]any `json:"inputRequests"`
		RequestState  *string        `json:"requestState"`
	}
	mustUnmarshal(t, m.Result, &first)
	if first.ResultType != "input_required" || len(first.InputRequests) != 1 {
		t.Fatalf("call_tool one__elicit, 2026-07-28: want input_required, got %s", m)
	}
	retry := withMeta(via("one__elicit", nil), modern)
	for k := range first.InputRequests {
		retry["inputResponses"] = map[string]any{k: map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}
	}
	if first.RequestState != nil {
		retry["requestState"] = *first.RequestState
	}
	if r := checkModernResult(t, c.Call("tools/call", retry), false); !strings.Contains(string(r["content"]), "Hello, Ada!") {
		t.Errorf("call_tool one__elicit retried: %s", r["content"])
	}

	// A task of the named tool, asked for as its direct call would.
	task := via("one__sleep", map[string]any{"ms": 50})
	task["task"] = map[string]any{}
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	mustUnmarshal(t, c.Call("tools/call", task).Result, &created)
	if created.Task.TaskID == "" {
		t.Fatalf("call_tool one__sleep as a task: no task created")
	}
	if got := toolText(t, c.Call("tasks/result", map[string]any{"taskId": created.Task.TaskID})); got != "slept" {
		t.Errorf("tasks/result of call_tool one__sleep: %q", got)
	}

	// An unknown tool is one through call_tool too.
	wantError(t, c.Call("tools/call", via("one__nothing", nil)), -32602)

	// A backend that joins later is found.
	if got := search("echo", nil); slices.Contains(got, "two__echo") {
		t.Fatalf("two__echo before it was added: %v", got)
	}
	notes := c.countNotes("notifications/tools/list_changed")
	f.writeConfig(map[string]any{"one": one, "two": f.serve("two", nil)}, top)
	c.Signal(syscall.SIGHUP)
	c.waitNotes(t, "notifications/tools/list_changed", notes+1)
	if got := search("echo text", nil); !slices.Contains(got, "two__echo") {
		t.Errorf("two__echo after it was added: %v", got)
	}
	if got := namesOf(listAll(t, c, "tools/list", "tools"), "name"); !slices.Equal(got, []string{"search_tools", "call_tool", "one__echo"}) {
		t.Errorf("tools/list after the reload: %v", got)
	}
}

// toolsBytes is the size of the tools arrays of every page of tools/list,
// as the client receives them: what a client puts in its model's context.
func toolsBytes(t *testing.T, c *Client) (int, []string) {
	t.Helper()
	n := 0
	var names []string
	params := map[string]any{}
	for {
		r := wantResult(t, c.Call("tools/list", params))
		n += len(r["tools"])
		var items []map[string]any
		mustUnmarshal(t, r["tools"], &items)
		names = append(names, namesOf(items, "name")...)
		var next string
		if raw, ok := r["nextCursor"]; ok {
			mustUnmarshal(t, raw, &next)
		}
		if next == "" {
			return n, names
		}
		params = map[string]any{"cursor": next}
	}
}

// TestGatewayToolSearchNPM: the npm reference servers filesystem, memory
// and everything and mcprt serve behind mcprt gateway, with and without
// tool search: the context tools/list costs either way (logged: the
// figure of test/bench/RESULTS.md and the README), the catalog is the one
// the ranking's relevance set was measured on, and a search then a
// call_tool reads a file and writes to the memory server.
//
//	MCPRT_NPM_SERVERS=$(bash test/e2e/npm/install.sh) go test ./test/e2e -run ToolSearchNPM -v
func TestGatewayToolSearchNPM(t *testing.T) {
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
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("searched and found\n"), 0o600)
	mark := map[string]string{"MCPRT_GWMARK": f.marker + "-node"}
	servers := map[string]any{
		"everything": map[string]any{"command": bin("mcp-server-everything"), "args": []string{"stdio"}, "env": mark},
		"fs":         map[string]any{"command": bin("mcp-server-filesystem"), "args": []string{root}, "env": mark},
		"memory":     map[string]any{"command": bin("mcp-server-memory"), "env": map[string]string{"MCPRT_GWMARK": mark["MCPRT_GWMARK"], "MEMORY_FILE_PATH": filepath.Join(f.dir, "memory.json")}},
		"ref":        f.serve("ref", nil),
	}
	plain := f.start(f.writeConfig(servers, nil), Options{})
	plain.Initialize("2025-11-25")
	full, names := toolsBytes(t, plain)
	plain.CloseStdin()
	plain.WaitExit(exitTimeout)

	// The catalog is the relevance set's (a newer server would call for
	// a new capture: see runtime/gateway/internal/toolsearch/relevance_test.go).
	raw, err := os.ReadFile("../../runtime/gateway/internal/toolsearch/testdata/four-servers.json")
	if err != nil {
		t.Fatal(err)
	}
	var captured struct {
		Tools []map[string]any `json:"tools"`
	}
	mustUnmarshal(t, raw, &captured)
	if want := namesOf(captured.Tools, "name"); !slices.Equal(names, want) {
		t.Errorf("the servers' tools are not the captured catalog's:\n got %v\nwant %v", names, want)
	}

	c := f.start(f.writeConfig(servers, map[string]any{"toolSearch": true}), Options{})
	c.Initialize("2025-11-25")
	searched, _ := toolsBytes(t, c)
	t.Logf("tools/list of %d tools: %d bytes (~%d tokens); with tool search: %d bytes (~%d tokens), %.1f%% of it",
		len(names), full, full/4, searched, searched/4, 100*float64(searched)/float64(full))

	search := func(query string) []string {
		t.Helper()
		r := wantResult(t, c.Call("tools/call", toolsCall("search_tools", map[string]any{"query": query})))
		return searchFound(t, r["structuredContent"])
	}
	got := search("read a file")
	if len(got) == 0 || got[0] != "fs__read_text_file" && got[0] != "fs__read_file" {
		t.Fatalf("read a file: %v", got)
	}
	if text := toolText(t, c.Call("tools/call", toolsCall("call_tool", map[string]any{"name": got[0], "arguments": map[string]any{"path": filepath.Join(root, "notes.txt")}}))); !strings.Contains(text, "searched and found") {
		t.Errorf("call_tool %s: %q", got[0], text)
	}
	if got := search("store new entities in the knowledge graph"); len(got) == 0 || got[0] != "memory__create_entities" {
		t.Fatalf("store new entities: %v", got)
	}
	r := wantResult(t, c.Call("tools/call", toolsCall("call_tool", map[string]any{"name": "memory__create_entities", "arguments": map[string]any{
		"entities": []map[string]any{{"name": "Ada", "entityType": "person", "observations": []string{"wrote the first program"}}}}})))
	if string(r["isError"]) == "true" || !strings.Contains(string(r["content"]), "Ada") {
		t.Errorf("call_tool memory__create_entities: %s", r["content"])
	}
	if text := toolText(t, c.Call("tools/call", toolsCall("memory__search_nodes", map[string]any{"query": "Ada"}))); !strings.Contains(text, "first program") {
		t.Errorf("memory__search_nodes, called directly: %q", text)
	}
}

// TestGatewayToolSearchCancel: the client's cancellation of a call_tool
// reaches the backend of the tool it named, in both eras' ways of asking
// (the call's own id), as a direct call's does.
func TestGatewayToolSearchCancel(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	input := filepath.Join(f.dir, "backend-stdin.log")
	tee := f.script("tee", `tee -a "$1" | "$2" serve`)
	c := f.start(f.config(map[string]any{
		"sleepy": map[string]any{"command": tee, "args": []string{input, f.mcprt("sleepy")}, "env": map[string]string{"LOG_LEVEL": "warn"}},
	}), Options{}, "-tool-search")
	c.Initialize("2025-11-25")
	key := c.Request("long", "tools/call", toolsCall("call_tool", map[string]any{"name": "sleepy__sleep", "arguments": map[string]any{"ms": 600000}}))
	waitFile(t, input, `"ms":600000`)
	c.Notify("notifications/cancelled", map[string]any{"requestId": "long", "reason": "changed my mind"})
	waitFile(t, input, `"method":"notifications/cancelled"`)
	if got := toolText(t, c.Call("tools/call", toolsCall("call_tool", map[string]any{"name": "sleepy__echo", "arguments": map[string]any{"text": "still here"}}))); got != "still here" {
		t.Fatalf("after the cancel: %q", got)
	}
	if r := c.Responses(key); len(r) != 0 {
		t.Errorf("the cancelled request was answered: %v", r)
	}
}
