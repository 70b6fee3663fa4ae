package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The gateway's end-to-end tests run `mcprt gateway -config FILE` with
// backends that are `mcprt serve` itself, started through a symlink whose
// name carries a marker unique to the test: every backend process (and
// only they) can then be found in /proc by its command line.

// gwFixture is one test's directory, marker and configuration.
type gwFixture struct {
	t      *testing.T
	dir    string
	marker string
}

func newGateway(t *testing.T) *gwFixture {
	t.Helper()
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc")
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, t.Name())
	return &gwFixture{t: t, dir: t.TempDir(), marker: fmt.Sprintf("gwmark-%d-%s", os.Getpid(), name)}
}

// mcprt is the path of mcprt under a name carrying the marker and tag.
func (f *gwFixture) mcprt(tag string) string {
	f.t.Helper()
	p := filepath.Join(f.dir, f.marker+"-"+tag)
	if _, err := os.Lstat(p); err != nil {
		if err := os.Symlink(binPath, p); err != nil {
			f.t.Fatal(err)
		}
	}
	return p
}

// serve is a backend entry running the reference server, marked tag.
func (f *gwFixture) serve(tag string, extra map[string]any) map[string]any {
	m := map[string]any{"command": f.mcprt(tag), "args": []string{"serve"},
		"env": map[string]string{"LOG_LEVEL": "warn", "GORACE": "atexit_sleep_ms=0"}}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// script writes an executable shell script whose path carries the marker.
func (f *gwFixture) script(tag, body string) string {
	f.t.Helper()
	p := filepath.Join(f.dir, f.marker+"-"+tag+".sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *gwFixture) config(servers map[string]any) string {
	f.t.Helper()
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		f.t.Fatal(err)
	}
	p := filepath.Join(f.dir, "gateway.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// procs lists the live processes whose command line holds the marker and
// tag ("" for any tag), or whose environment has MCPRT_GWMARK set to them
// (for servers started through an interpreter): the backends, not the
// mcprt guard each is started through (see guards).
func (f *gwFixture) procs(tag string) []int { return f.scan(tag, false) }

// guards lists the live mcprt guard processes of the backends procs lists.
func (f *gwFixture) guards(tag string) []int { return f.scan(tag, true) }

func (f *gwFixture) scan(tag string, guards bool) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		environ, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains(string(cmdline), f.marker+"-"+tag) && !strings.Contains(string(environ), "MCPRT_GWMARK="+f.marker+"-"+tag) {
			continue
		}
		if argv := strings.Split(string(cmdline), "\x00"); (len(argv) > 2 && argv[1] == "guard" && argv[2] == "--") != guards {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if s := string(stat); strings.Contains(s[strings.LastIndexByte(s, ')')+1:], " Z ") {
				continue // exited, waiting for its reaper
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitProcs waits until procs(tag) satisfies ok.
func (f *gwFixture) waitProcs(tag, what string, ok func([]int) bool) []int {
	f.t.Helper()
	deadline := time.Now().Add(exitTimeout)
	for {
		pids := f.procs(tag)
		if ok(pids) {
			return pids
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("waiting for %s: marked processes %v", what, pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// start runs `mcprt gateway -config FILE ARGS...` as Start runs serve.
func (f *gwFixture) start(config string, o Options, args ...string) *Client {
	t := f.t
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// Whatever happens to the test, no backend outlives it (registered
	// first, so it runs after the client's cleanup has killed the gateway).
	t.Cleanup(func() {
		for _, pid := range append(f.guards(""), f.procs("")...) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	c := &Client{
		t: t, stdin: inW, stdout: outR, stderr: &syncBuffer{},
		allowBatches: o.AllowBatches, allowRequests: o.AllowRequests,
		gate: make(chan struct{}), changed: make(chan struct{}),
		byID: map[string][]*Msg{}, repeatOK: map[string]bool{},
		readerDone: make(chan struct{}), exited: make(chan struct{}),
	}
	c.cmd = exec.Command(binPath, append([]string{"gateway", "-config", config}, args...)...)
	c.cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = inR, outW, c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	go c.wait()
	go c.read()
	c.Resume()
	t.Cleanup(c.cleanup)
	return c
}

// countNotes counts the notifications with method the client has received.
func (c *Client) countNotes(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.notesOf(method)
}

// notesOf is countNotes with c.mu held.
func (c *Client) notesOf(method string) int {
	n := 0
	for _, m := range c.notes {
		if m.Method == method {
			n++
		}
	}
	return n
}

// waitNotes waits until the client has had n notifications of method.
func (c *Client) waitNotes(t *testing.T, method string, n int) {
	t.Helper()
	if !c.waitUntil(callTimeout, func() bool { return c.notesOf(method) >= n }) {
		t.Fatalf("%d %s, want %d", c.countNotes(method), method, n)
	}
}

func toolsCall(name string, args any) map[string]any {
	return map[string]any{"name": name, "arguments": args}
}

// listAll follows a list method's cursors and returns the field's items.
func listAll(t *testing.T, c *Client, method, field string) []map[string]any {
	t.Helper()
	var all []map[string]any
	params := map[string]any{}
	for {
		r := wantResult(t, c.Call(method, params))
		var items []map[string]any
		mustUnmarshal(t, r[field], &items)
		all = append(all, items...)
		var next string
		if raw, ok := r["nextCursor"]; ok {
			mustUnmarshal(t, raw, &next)
		}
		if next == "" {
			return all
		}
		params = map[string]any{"cursor": next}
	}
}

func namesOf(items []map[string]any, key string) []string {
	var out []string
	for _, it := range items {
		out = append(out, fmt.Sprint(it[key]))
	}
	return out
}

// TestGatewayOneView: three reference servers behind one gateway, listed
// as one, every kind of request routed to its backend.
func TestGatewayOneView(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	c := f.start(f.config(map[string]any{
		"alpha": f.serve("alpha", nil),
		"beta":  f.serve("beta", map[string]any{"hideTools": []string{"panic"}}),
		"gamma": f.serve("gamma", map[string]any{"prefix": "g"}),
	}), Options{})
	ini := wantResult(t, c.Initialize("2025-11-25"))
	if !strings.Contains(string(ini["serverInfo"]), "mcprt-gateway") || !strings.Contains(string(ini["capabilities"]), `"tools":{"listChanged":true}`) {
		t.Fatalf("initialize: %s", ini)
	}
	tools := namesOf(listAll(t, c, "tools/list", "tools"), "name")
	for _, want := range []string{"alpha__echo", "alpha__panic", "beta__echo", "g__echo", "g__sleep"} {
		if !slices.Contains(tools, want) {
			t.Errorf("tools/list lacks %s: %v", want, tools)
		}
	}
	if slices.Contains(tools, "beta__panic") || len(tools) != 29 {
		t.Errorf("tools/list: %d tools %v", len(tools), tools)
	}
	if prompts := namesOf(listAll(t, c, "prompts/list", "prompts"), "name"); !slices.Equal(slices.Sorted(slices.Values(prompts)), []string{"alpha__review", "beta__review", "g__review"}) {
		t.Errorf("prompts/list: %v", prompts)
	}
	if uris := namesOf(listAll(t, c, "resources/list", "resources"), "uri"); !slices.Contains(uris, "mcprt://reference/readme") {
		t.Errorf("resources/list: %v", uris)
	}
	if templates := namesOf(listAll(t, c, "resources/templates/list", "resourceTemplates"), "uriTemplate"); !slices.Contains(templates, "mcprt://reference/greeting/{name}") {
		t.Errorf("templates: %v", templates)
	}

	for _, name := range []string{"alpha__echo", "beta__echo", "g__echo"} {
		if got := toolText(t, c.Call("tools/call", toolsCall(name, map[string]any{"text": "via " + name}))); got != "via "+name {
			t.Errorf("%s: %q", name, got)
		}
	}
	if r := wantResult(t, c.Call("tools/call", toolsCall("beta__add", map[string]any{"a": 40, "b": 2}))); !strings.Contains(string(r["structuredContent"]), `"sum":42`) {
		t.Errorf("beta__add: %s", r["structuredContent"])
	}
	if r := wantResult(t, c.Call("resources/read", map[string]any{"uri": "mcprt://reference/greeting/Grace"})); !strings.Contains(string(r["contents"]), "Grace") {
		t.Errorf("read: %s", r["contents"])
	}
	if r := wantResult(t, c.Call("prompts/get", map[string]any{"name": "g__review", "arguments": map[string]string{"code": "fmt.Println()"}})); !strings.Contains(string(r["messages"]), "fmt.Println()") {
		t.Errorf("prompts/get: %s", r["messages"])
	}
	if r := wantResult(t, c.Call("completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "alpha__review"}, "argument": map[string]any{"name": "language", "value": "g"},
	})); !strings.Contains(string(r["completion"]), `"Go"`) {
		t.Errorf("completion: %s", r["completion"])
	}
	// A tool the gateway does not know is the gateway's answer; one the
	// backend rejects is the backend's.
	wantError(t, c.Call("tools/call", toolsCall("beta__panic", map[string]any{})), -32602)
	if m := c.Call("tools/call", toolsCall("alpha__panic", map[string]any{})); !strings.Contains(string(m.Result), `"isError":true`) {
		t.Errorf("alpha__panic: %s", m)
	}

	// The same through 2026-07-28, without a handshake.
	m := c.Call("tools/call", withMeta(toolsCall("g__echo", map[string]any{"text": "modern"}), meta()))
	if r := checkModernResult(t, m, false); !strings.Contains(string(r["content"]), "modern") {
		t.Errorf("modern call: %s", m)
	}
}

// TestGatewayProgressAndCancel: a long call's progress reaches the client,
// and the client's cancellation reaches the backend.
func TestGatewayProgressAndCancel(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	input := filepath.Join(f.dir, "backend-stdin.log")
	// The backend's stdin is copied to a file on its way, so the test can
	// see what the gateway sent it.
	tee := f.script("tee", `tee -a "$1" | "$2" serve`)
	c := f.start(f.config(map[string]any{
		"sleepy": map[string]any{"command": tee, "args": []string{input, f.mcprt("sleepy")}, "env": map[string]string{"LOG_LEVEL": "warn"}},
	}), Options{})
	c.Initialize("2025-06-18")

	key := c.Request("p1", "tools/call", map[string]any{"name": "sleepy__sleep", "arguments": map[string]any{"ms": 400}, "_meta": map[string]any{"progressToken": "tok-1"}})
	if got := toolText(t, c.Response(key, callTimeout)); got != "slept" {
		t.Fatalf("sleep: %q", got)
	}
	c.mu.Lock()
	progress := 0
	for _, n := range c.notes {
		if n.Method == "notifications/progress" && strings.Contains(string(n.Params), `"progressToken":"tok-1"`) {
			progress++
		}
	}
	c.mu.Unlock()
	if progress == 0 {
		t.Errorf("no progress with the client's token")
	}

	key = c.Request("long", "tools/call", map[string]any{"name": "sleepy__sleep", "arguments": map[string]any{"ms": 600000}})
	waitFile(t, input, `"ms":600000`)
	c.Notify("notifications/cancelled", map[string]any{"requestId": "long", "reason": "changed my mind"})
	waitFile(t, input, `"method":"notifications/cancelled"`)
	// The cancelled request gets no answer, and the gateway goes on.
	if got := toolText(t, c.Call("tools/call", toolsCall("sleepy__echo", map[string]any{"text": "still here"}))); got != "still here" {
		t.Fatalf("after the cancel: %q", got)
	}
	if r := c.Responses(key); len(r) != 0 {
		t.Errorf("the cancelled request was answered: %v", r)
	}
}

// waitFile waits until file holds substr.
func waitFile(t *testing.T, file, substr string) {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	for {
		b, _ := os.ReadFile(file)
		if strings.Contains(string(b), substr) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %s; it holds:\n%s", file, substr, tail(string(b), 2000))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGatewayBackendKilledDuringBurst: SIGKILL a backend while fifty calls
// are in flight to it: every call is answered exactly once (the client
// checks for doubles), at once, the backend comes back, its tools work
// again, and the client was told its lists changed.
func TestGatewayBackendKilledDuringBurst(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	// restartWait 0: a call that comes during the restart is answered at
	// once too (TestGatewayCallHeldDuringRestart has the wait), rather
	// than run a 20 s sleep on the restarted alpha.
	c := f.start(f.config(map[string]any{
		"alpha": f.serve("alpha", map[string]any{"backoff": "50ms", "restartWait": 0}),
		"beta":  f.serve("beta", nil),
	}), Options{})
	c.Initialize("2025-11-25")
	pids := f.waitProcs("alpha", "alpha's process", func(p []int) bool { return len(p) == 1 })
	// Its process running is not alpha up: under load it may not have
	// listed its tools yet, and a call of one is then answered that alpha
	// has not started (the failure seen once).
	waitTool(t, c, "alpha__sleep")
	before := c.countNotes("notifications/tools/list_changed")

	const n = 50
	keys := make([]string, n)
	for i := range n {
		keys[i] = c.Request(fmt.Sprintf("burst-%d", i), "tools/call", toolsCall("alpha__sleep", map[string]any{"ms": 20000 + i}))
	}
	ok := c.Call("tools/call", toolsCall("alpha__echo", map[string]any{"text": "in the middle"}))
	if got := toolText(t, ok); got != "in the middle" {
		t.Fatalf("echo during the burst: %q", got)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i, key := range keys {
		m := c.Response(key, callTimeout)
		r := wantResult(t, m)
		text := string(r["content"])
		if string(r["isError"]) != "true" || !strings.Contains(text, `backend \"alpha\" went away during tools/call`) && !strings.Contains(text, `backend \"alpha\" is restarting`) {
			t.Errorf("call %d: %s", i, m)
		}
	}
	f.waitProcs("alpha", "alpha to be restarted", func(p []int) bool { return len(p) == 1 && p[0] != pids[0] })
	deadline := time.Now().Add(callTimeout)
	for {
		m := c.Call("tools/call", toolsCall("alpha__echo", map[string]any{"text": "back"}))
		if text, err := toolTextErr(m); err == nil && text == "back" && !strings.Contains(string(m.Result), "isError") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alpha did not come back: %s", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !c.waitUntil(callTimeout, func() bool {
		n := 0
		for _, m := range c.notes {
			if m.Method == "notifications/tools/list_changed" {
				n++
			}
		}
		return n > before
	}) {
		t.Error("no notifications/tools/list_changed after the restart")
	}
	if got := toolText(t, c.Call("tools/call", toolsCall("beta__echo", map[string]any{"text": "unharmed"}))); got != "unharmed" {
		t.Errorf("beta: %q", got)
	}
	if !strings.Contains(c.Stderr(), "backend went away; restarting it") {
		t.Errorf("the gateway did not log the restart:\n%s", tail(c.Stderr(), 2000))
	}
}

// waitTool waits until the gateway lists the tool name.
func waitTool(t *testing.T, c *Client, name string) {
	t.Helper()
	for deadline := time.Now().Add(callTimeout); !slices.Contains(namesOf(listAll(t, c, "tools/list", "tools"), "name"), name); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the gateway never listed %s", name)
		}
	}
}

// TestGatewayCallHeldDuringRestart: a call that comes while a backend
// restarts (killed with SIGKILL, restarted after a backoff of 300ms) is
// held until the backend is up again and answered by the restarted
// process; with a restartWait shorter than the backoff it is answered
// that the backend is restarting, once the wait has passed, naming it.
func TestGatewayCallHeldDuringRestart(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	c := f.start(f.config(map[string]any{
		"alpha": f.serve("alpha", map[string]any{"backoff": "300ms"}),
		"beta":  f.serve("beta", map[string]any{"backoff": "5s", "restartWait": "100ms"}),
	}), Options{})
	c.Initialize("2025-11-25")
	waitTool(t, c, "alpha__echo")
	waitTool(t, c, "beta__echo")
	kill := func(tag string) int {
		pids := f.waitProcs(tag, tag+"'s process", func(p []int) bool { return len(p) == 1 })
		n := strings.Count(c.Stderr(), "backend went away; restarting it")
		if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitStderr(t, c, n+1, "backend went away; restarting it")
		return pids[0]
	}

	old := kill("alpha")
	// pid answers with the process's id: that of the restarted alpha.
	m := c.Call("tools/call", toolsCall("alpha__echo", map[string]any{"text": "held"}))
	if got := toolText(t, m); got != "held" || strings.Contains(string(m.Result), `"isError":true`) {
		t.Fatalf("call during the restart: %s", m)
	}
	if pids := f.procs("alpha"); len(pids) != 1 || pids[0] == old {
		t.Errorf("alpha's processes after the held call: %v (killed %d)", pids, old)
	}

	kill("beta")
	m = c.Call("tools/call", toolsCall("beta__echo", map[string]any{"text": "not held"}))
	r := wantResult(t, m)
	if text := string(r["content"]); string(r["isError"]) != "true" || !strings.Contains(text, `backend \"beta\" is restarting`) || !strings.Contains(text, "not up again within 100ms") {
		t.Errorf("call during a restart longer than restartWait: %s", m)
	}
}

// TestGatewayFailingBackend: a backend that exits at once every time is
// failed after its restart intensity and left down; the others work.
func TestGatewayFailingBackend(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	bad := f.script("bad", "echo \"cannot start: no licence\" >&2\nexit 1\n")
	c := f.start(f.config(map[string]any{
		"good": f.serve("good", nil),
		"bad":  map[string]any{"command": bad, "maxRestarts": 2, "backoff": "10ms", "maxBackoff": "20ms"},
	}), Options{})
	c.Initialize("2025-11-25")
	waitStderr(t, c, 1, "gateway: backend failed")
	stderr := c.Stderr()
	if !strings.Contains(stderr, "[bad] cannot start: no licence") || strings.Count(stderr, "[bad] cannot start") != 3 {
		t.Errorf("bad's stderr, prefixed, once per start (3):\n%s", tail(stderr, 3000))
	}
	if tools := namesOf(listAll(t, c, "tools/list", "tools"), "name"); len(tools) != 10 || !slices.Contains(tools, "good__echo") {
		t.Errorf("tools: %v", tools)
	}
	if got := toolText(t, c.Call("tools/call", toolsCall("good__echo", map[string]any{"text": "fine"}))); got != "fine" {
		t.Errorf("good: %q", got)
	}
	time.Sleep(200 * time.Millisecond)
	if n := strings.Count(c.Stderr(), "[bad] cannot start"); n != 3 {
		t.Errorf("a failed backend was started again: %d starts", n)
	}
}

// TestGatewayBadConfig: a configuration with errors is refused with exit
// status 2, each error naming the backend and the key; nothing starts.
func TestGatewayBadConfig(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	file := f.config(map[string]any{
		"a": map[string]any{"command": f.mcprt("a"), "args": "serve"},
		"b": map[string]any{"command": f.mcprt("b"), "timeout": "soon", "colour": "blue"},
	})
	out, err := exec.Command(binPath, "gateway", "-config", file).CombinedOutput()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v\n%s", err, out)
	}
	for _, want := range []string{`backend "a": key "args": want an array of strings`, `backend "b": key "timeout": "soon" is not a duration`, `backend "b": key "colour" ignored`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if p := f.procs(""); len(p) != 0 {
		t.Errorf("backends started: %v", p)
	}
}

func errorsAs(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*ee = e
	}
	return ok
}

// TestGatewayLeavesNoProcess: after stdin EOF the gateway drains, closes
// every backend (also one that ignores stdin EOF and SIGTERM) and exits 0;
// after SIGKILL of the gateway, the kernel kills its backends. Either way
// nothing a backend started is left: not a wrapper's child that ignores
// stdin EOF, SIGTERM and SIGHUP, and not the mcprt guard each backend was
// started through.
func TestGatewayLeavesNoProcess(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"eof", "sigkill"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			f := newGateway(t)
			// Ignores SIGTERM and stdin EOF: only SIGKILL ends it.
			stubborn := f.script("stubborn", "trap '' TERM\n\"$1\" serve\nwhile :; do sleep 1; done\n")
			// Leaves a job behind that ignores everything but SIGKILL, and
			// becomes a server that exits at stdin EOF.
			wrapper := f.script("wrapper", "(trap '' TERM HUP; while :; do sleep 1; done) &\nexec \"$1\" serve\n")
			c := f.start(f.config(map[string]any{
				"alpha":    f.serve("alpha", nil),
				"beta":     f.serve("beta", nil),
				"stubborn": map[string]any{"command": stubborn, "args": []string{f.mcprt("stubchild")}, "env": map[string]string{"LOG_LEVEL": "warn"}},
				"wrapper":  map[string]any{"command": wrapper, "args": []string{f.mcprt("wrapped")}},
			}), Options{})
			c.Initialize("2025-11-25")
			key := c.Request("inflight", "tools/call", toolsCall("alpha__sleep", map[string]any{"ms": 300}))
			f.waitProcs("", "every backend", func(p []int) bool { return len(p) == 6 })
			f.waitProcs("wrapper", "the wrapper's job", func(p []int) bool { return len(p) == 1 })
			switch how {
			case "eof":
				c.CloseStdin()
				if code, ok := c.WaitExit(2 * exitTimeout); !ok || code != 0 {
					t.Fatalf("exit %d (exited: %v)\n%s", code, ok, tail(c.Stderr(), 2000))
				}
				if got := toolText(t, c.Response(key, callTimeout)); got != "slept" {
					t.Errorf("the call in flight at EOF: %q", got)
				}
			case "sigkill":
				c.Signal(syscall.SIGKILL)
				c.WaitExit(exitTimeout)
			}
			f.waitProcs("", "no backend left", func(p []int) bool { return len(p) == 0 })
			for deadline := time.Now().Add(exitTimeout); len(f.guards("")) != 0; {
				if time.Now().After(deadline) {
					t.Fatalf("guards left: %v", f.guards(""))
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// TestGatewayAsksTheClient: a backend's elicitation reaches the gateway's
// client, legacy (a request) and 2026-07-28 (input_required), and the
// answer gets back to the backend.
func TestGatewayAsksTheClient(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	c := f.start(f.config(map[string]any{"alpha": f.serve("alpha", nil)}), Options{AllowRequests: true})
	c.InitializeWith("2025-06-18", map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}})

	key := c.Request("e1", "tools/call", toolsCall("alpha__elicit", map[string]any{}))
	req := c.ServerRequest("elicitation/create", callTimeout)
	if !strings.Contains(string(req.Params), "What is your name?") {
		t.Fatalf("elicitation: %s", req)
	}
	c.Send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
	if r := wantResult(t, c.Response(key, callTimeout)); !strings.Contains(string(r["structuredContent"]), `"greeting":"Hello, Ada!"`) {
		t.Errorf("elicit: %s", r)
	}
	key = c.Request("s1", "tools/call", toolsCall("alpha__sample", map[string]any{"prompt": "2+2?"}))
	req = c.ServerRequest("sampling/createMessage", callTimeout)
	c.Send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"role":"assistant","content":{"type":"text","text":"4"},"model":"m-1"}}`)
	if r := wantResult(t, c.Response(key, callTimeout)); !strings.Contains(string(r["structuredContent"]), `"text":"4"`) {
		t.Errorf("sample: %s", r)
	}

	modern := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
	}
	m := c.Call("tools/call", withMeta(toolsCall("alpha__elicit", map[string]any{}), modern))
	var first struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  *string                    `json:"requestState"`
	}
	mustUnmarshal(t, m.Result, &first)
	if first.ResultType != "input_required" || len(first.InputRequests) != 1 {
		t.Fatalf("want input_required, got %s", m)
	}
	retry := withMeta(toolsCall("alpha__elicit", map[string]any{}), modern)
	for k := range first.InputRequests {
		if !strings.Contains(string(first.InputRequests[k]), "elicitation/create") {
			t.Errorf("input request: %s", first.InputRequests[k])
		}
		retry["inputResponses"] = map[string]any{k: map[string]any{"action": "accept", "content": map[string]any{"name": "Bo"}}}
	}
	if first.RequestState != nil {
		retry["requestState"] = *first.RequestState
	}
	if r := wantResult(t, c.Call("tools/call", retry)); !strings.Contains(string(r["structuredContent"]), `"greeting":"Hello, Bo!"`) {
		t.Errorf("retry: %s", r)
	}
}

// TestGatewayChaosBackendsKilled: the campaign against the gateway while
// the backend its tools live on is SIGKILLed, again and again: calls in
// flight on it are answered (a tool error naming the backend) and never
// twice, the backend comes back each time, and the gateway exits cleanly.
func TestGatewayChaosBackendsKilled(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	file := f.config(map[string]any{
		"ref":   f.serve("ref", map[string]any{"timeout": "2s", "maxRestarts": 100, "restartWindow": "1m", "backoff": "10ms"}),
		"other": f.serve("other", nil),
	})
	cmd := exec.Command(binPath, "chaos", "-requests", "2000", "-end", "eof", "-seed", "21",
		"-echo-tool", "ref__echo", "-slow-tool", "ref__sleep", "-panic-tool", "ref__panic",
		"--", binPath, "gateway", "-config", file)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kills := 0
	for kills < 5 {
		select {
		case err := <-done:
			t.Fatalf("the campaign ended after %d kills: %v\n%s", kills, err, out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if pids := f.procs("ref"); len(pids) == 1 {
			if syscall.Kill(pids[0], syscall.SIGKILL) == nil {
				kills++
			}
		}
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the campaign did not end:\n%s", out.String())
	}
	if err != nil || !strings.Contains(out.String(), "PASS") {
		t.Fatalf("chaos with %d backend kills: %v\n%s", kills, err, out.String())
	}
	t.Logf("%d kills:\n%s", kills, out.String())
	f.waitProcs("", "no backend left", func(p []int) bool { return len(p) == 0 })
}

// TestGatewayChaos: mcprt chaos's seeded fault campaign against the
// gateway (panics, hangs past the backend's timeout, cancels, malformed
// lines, unread stdout, then stdin EOF or SIGTERM with calls in flight):
// every request answered once, clean exit.
func TestGatewayChaos(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"eof", "sigterm"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			f := newGateway(t)
			file := f.config(map[string]any{
				"ref":   f.serve("ref", map[string]any{"timeout": "2s"}),
				"other": f.serve("other", nil),
			})
			out, err := exec.Command(binPath, "chaos", "-requests", "400", "-end", end, "-seed", "13",
				"-echo-tool", "ref__echo", "-slow-tool", "ref__sleep", "-panic-tool", "ref__panic",
				"--", binPath, "gateway", "-config", file).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "PASS") {
				t.Fatalf("chaos: %v\n%s", err, out)
			}
			f.waitProcs("", "no backend left", func(p []int) bool { return len(p) == 0 })
			for deadline := time.Now().Add(exitTimeout); len(f.guards("")) != 0; {
				if time.Now().After(deadline) {
					t.Fatalf("guards left: %v", f.guards(""))
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
