//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

// Backends that hang: the gateway answers its client at once, lists what
// is up after its list grace, names the backend that hangs when its tools
// are called, and leaves the hung ones to their supervisors.

// hangScript answers initialize and then nothing: a wedged server that
// also ignores stdin EOF.
const hangScript = `trap '' HUP
while IFS= read -r line; do
  case "$line" in
  *'"method":"initialize"'*)
    id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
    printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hang","version":"1"}}}\n' "$id";;
  esac
done
exec sleep 1000
`

// hostileConfig is a healthy reference server beside one backend that
// answers initialize and never tools/list, and one that answers nothing.
func hostileConfig(f *gwFixture) string {
	quick := map[string]any{"protocol": "legacy", "timeout": "2s", "maxRestarts": 1, "backoff": "100ms"}
	hang := map[string]any{"command": f.script("hang", hangScript)}
	mute := map[string]any{"command": f.script("mute", "exec sleep 1000\n")}
	for k, v := range quick {
		hang[k], mute[k] = v, v
	}
	return f.config(map[string]any{"ref": f.serve("ref", nil), "hang": hang, "mute": mute})
}

// TestGatewayHungBackendAtStart: over stdio, a client with a handshake
// limit of its own (mcprt list, 10 s) is served, and lists the healthy
// backend's tools; a call of a hung backend's tool names the backend; the
// hung backends are restarted by their supervisors.
func TestGatewayHungBackendAtStart(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	file := hostileConfig(f)

	out, err := exec.Command(binPath, "list", "--", binPath, "gateway", "-config", file, "-list-grace", "1s").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ref__echo") {
		t.Fatalf("mcprt list through a gateway with hung backends: %v\n%s", err, out)
	}

	c := f.start(file, Options{}, "-list-grace", "1s")
	c.Initialize("2025-11-25")
	if tools := namesOf(listAll(t, c, "tools/list", "tools"), "name"); !slices.Contains(tools, "ref__echo") {
		t.Errorf("tools: %v", tools)
	}
	if got := toolText(t, c.Call("tools/call", toolsCall("ref__echo", map[string]any{"text": "fine"}))); got != "fine" {
		t.Errorf("ref__echo: %q", got)
	}
	for _, name := range []string{"hang", "mute"} {
		_, err := toolTextErr(c.Call("tools/call", toolsCall(name+"__anything", map[string]any{})))
		if err == nil || !strings.Contains(err.Error(), `backend \"`+name+`\"`) || !strings.Contains(err.Error(), `"isError":true`) {
			t.Errorf("%s__anything: want an isError result naming the backend, got %v", name, err)
		}
	}
	if !c.WaitStderr(callTimeout, "backend=hang", "backend=mute", "gateway: backend failed") {
		t.Errorf("the hung backends were not restarted, then failed:\n%s", tail(c.Stderr(), 3000))
	}
}

// TestGatewayHTTPHungBackendAtStart: the same over Streamable HTTP, both
// eras.
func TestGatewayHTTPHungBackendAtStart(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	gw := f.startGatewayHTTP(hostileConfig(f), "-list-grace", "1s")
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		c := connectHTTP(t, gw.url, client.Options{Era: era})
		if tools := toolNames(t, c); !slices.Contains(tools, "ref__echo") {
			t.Errorf("era %v: tools %v", era, tools)
		}
		if got := callText(t, c, "ref__echo", map[string]any{"text": "fine"}); got != "fine" {
			t.Errorf("era %v: ref__echo: %q", era, got)
		}
		r, err := c.CallTool(testCtx(t), "hang__anything", map[string]any{})
		if err != nil || !r.IsError || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, `backend "hang"`) {
			t.Errorf("era %v: hang__anything: want an isError result naming the backend, got %+v, %v", era, r, err)
		}
	}
}

// stallScript answers initialize, the lists and pings, and never a tool
// call or a prompt.
const stallScript = `while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"method":"initialize"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"prompts":{}},"serverInfo":{"name":"stall","version":"1"}}}\n' "$id";;
  *'"method":"tools/list"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"stall","inputSchema":{"type":"object"}}]}}\n' "$id";;
  *'"method":"prompts/list"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"prompts":[{"name":"stall"}]}}\n' "$id";;
  *'"method":"ping"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id";;
  esac
done
`

// TestGatewayStalledCall: a call a backend never answers is answered at
// the backend's timeout with an error naming it (a prompt too); a call
// whose backend reports progress outlives the timeout, up to maxTimeout.
func TestGatewayStalledCall(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	c := f.start(f.config(map[string]any{
		"stall":  map[string]any{"command": f.script("stall", stallScript), "protocol": "legacy", "timeout": "1s"},
		"ref":    f.serve("ref", map[string]any{"timeout": "2s", "maxTimeout": "20s"}),
		"capped": f.serve("capped", map[string]any{"timeout": "2s", "maxTimeout": "4s"}),
	}), Options{})
	c.Initialize("2025-11-25")

	_, err := toolTextErr(c.Call("tools/call", toolsCall("stall__stall", map[string]any{})))
	if err == nil || !strings.Contains(err.Error(), `backend \"stall\" did not answer tools/call within 1s`) {
		t.Errorf("a stalled call: want an isError result naming the backend, got %v", err)
	}
	m := c.Call("prompts/get", map[string]any{"name": "stall__stall"})
	if m.Error == nil || !strings.Contains(m.Error.Message, `backend "stall" did not answer prompts/get within 1s`) {
		t.Errorf("a stalled prompt: want an error naming the backend, got %s", m)
	}
	// sleep reports progress every tenth of its time: 6 s at 0.6 s steps
	// outlives the 2 s timeout; 8 s is cut at a 4 s maxTimeout.
	if got := toolText(t, c.Call("tools/call", toolsCall("ref__sleep", map[string]any{"ms": 6000}))); got != "slept" {
		t.Errorf("a call reporting progress past its timeout: %q", got)
	}
	_, err = toolTextErr(c.Call("tools/call", toolsCall("capped__sleep", map[string]any{"ms": 8000})))
	if err == nil || !strings.Contains(err.Error(), `backend \"capped\" did not answer tools/call`) {
		t.Errorf("a call reporting progress past maxTimeout: want an isError result naming the backend, got %v", err)
	}
}

// TestGatewayBackendCannotStart: a backend whose command does not exist
// is said once on stderr, at start, and the others are served; a call of
// its tool names it and why; no restart storm is logged.
func TestGatewayBackendCannotStart(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	c := f.start(f.config(map[string]any{
		"ref":  f.serve("ref", nil),
		"nope": map[string]any{"command": f.dir + "/no-such-mcp-server"},
	}), Options{})
	c.Initialize("2025-11-25")
	if tools := namesOf(listAll(t, c, "tools/list", "tools"), "name"); !slices.Contains(tools, "ref__echo") {
		t.Errorf("tools: %v", tools)
	}
	_, err := toolTextErr(c.Call("tools/call", toolsCall("nope__anything", map[string]any{})))
	if err == nil || !strings.Contains(err.Error(), `backend \"nope\" could not start`) || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("nope__anything: want an isError result naming the backend and why, got %v", err)
	}
	stderr := c.Stderr()
	if n := strings.Count(stderr, "backend cannot start"); n != 1 || !strings.Contains(stderr, "backend=nope") {
		t.Errorf("want one line saying nope cannot start, got %d:\n%s", n, tail(stderr, 3000))
	}
	if strings.Contains(stderr, "restarting") || strings.Contains(stderr, "child exited") {
		t.Errorf("a backend that cannot start was restarted:\n%s", tail(stderr, 3000))
	}
}

// TestGatewayRestartLoggedOnce: each restart of a crashing backend is one
// WARN line naming it, the reason and the attempt; Error only when it is
// given up; and its retries after each cool-down say nothing more.
func TestGatewayRestartLoggedOnce(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	c := f.start(f.config(map[string]any{
		"ref":   f.serve("ref", nil),
		"crash": map[string]any{"command": f.script("crash", "echo dying >&2\nexit 3\n"), "maxRestarts": 2, "backoff": "10ms", "cooldown": "200ms"},
	}), Options{})
	c.Initialize("2025-11-25")
	if !c.WaitStderr(callTimeout, "gateway: backend failed") {
		t.Fatalf("crash was not given up:\n%s", tail(c.Stderr(), 3000))
	}
	// It never listed its tools, so it is started again after each
	// cool-down: what was said the first time is not said again.
	deadline := time.Now().Add(callTimeout)
	for strings.Count(c.Stderr(), "[crash] dying") < 9 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if strings.Count(c.Stderr(), "[crash] dying") < 9 {
		t.Fatalf("crash was not started again after its cool-down:\n%s", tail(c.Stderr(), 3000))
	}
	var warns, errs []string
	for _, line := range strings.Split(c.Stderr(), "\n") {
		switch {
		case strings.Contains(line, "level=WARN"):
			warns = append(warns, line)
		case strings.Contains(line, "level=ERROR"):
			errs = append(errs, line)
		}
	}
	if len(warns) != 2 || !strings.Contains(warns[0], "backend=crash") || !strings.Contains(warns[0], `attempt="1 of 2`) || !strings.Contains(warns[1], `attempt="2 of 2`) {
		t.Errorf("want a WARN per restart (2), got:\n%s", strings.Join(warns, "\n"))
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "gateway: backend failed") {
		t.Errorf("want one ERROR, the giving up, got:\n%s", strings.Join(errs, "\n"))
	}
}

// spyScript records what it reads in $SPY_LOG, and answers initialize and
// the tool list.
const spyScript = `while IFS= read -r line; do
  printf '%s\n' "$line" >> "$SPY_LOG"
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"method":"initialize"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"spy","version":"1"}}}\n' "$id";;
  *'"method":"tools/list"'*)
    printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}\n' "$id";;
  esac
done
`

// TestGatewayRootsOnlyWhenTheClientHasThem: behind mcprt gateway (one
// client, over stdio) a backend is told of roots only when the client
// declared them, so that a server that falls back to its arguments
// without roots does so.
func TestGatewayRootsOnlyWhenTheClientHasThem(t *testing.T) {
	t.Parallel()
	for name, caps := range map[string]map[string]any{
		"without": {},
		"with":    {"roots": map[string]any{"listChanged": true}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newGateway(t)
			log := f.dir + "/spy.log"
			c := f.start(f.config(map[string]any{
				"spy": map[string]any{"command": f.script("spy", spyScript), "protocol": "legacy", "env": map[string]string{"SPY_LOG": log}},
			}), Options{AllowRequests: true})
			c.InitializeWith("2025-11-25", caps)
			listAll(t, c, "tools/list", "tools")
			raw, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			init, _, _ := strings.Cut(string(raw), "\n")
			if !strings.Contains(init, `"method":"initialize"`) {
				t.Fatalf("the backend's first line: %s", init)
			}
			if got, want := strings.Contains(init, `"roots"`), name == "with"; got != want {
				t.Errorf("the backend was told of roots: %v, want %v: %s", got, want, init)
			}
		})
	}
}

// TestChaosBehindGateway: mcprt chaos -behind-gateway runs its campaign
// through mcprt gateway with a wedged backend beside the server, over
// stdio and Streamable HTTP, and passes.
func TestChaosBehindGateway(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{nil, {"-http"}} {
		cmd := exec.Command(binPath, append(append([]string{"chaos", "-behind-gateway", "-requests", "300", "-seed", "5",
			"-echo-tool", "target__echo", "-slow-tool", "target__sleep", "-panic-tool", "target__panic"}, args...), "--", binPath, "serve")...)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PASS") || !strings.Contains(string(out), "0 never answered") {
			t.Errorf("chaos -behind-gateway %v: %v\n%s", args, err, out)
		}
	}
}
