package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGatewayReload: SIGHUP makes mcprt gateway read its file again. A
// server added to it is started and its tools offered, one taken out is
// stopped (no process left) and its tools withdrawn, the client hearing
// list_changed each time; a file with an error is refused and the
// gateway serves on as it was.
func TestGatewayReload(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	file := f.config(map[string]any{"one": f.serve("one", nil)})
	c := f.start(file, Options{})
	c.Initialize("2025-11-25")
	f.waitProcs("one", "backend one", func(p []int) bool { return len(p) == 1 })
	hasPrefix := func(tools []string, prefix string) bool {
		return slices.ContainsFunc(tools, func(n string) bool { return strings.HasPrefix(n, prefix) })
	}
	reload := func(servers map[string]any, reloads int) {
		t.Helper()
		notes := c.countNotes("notifications/tools/list_changed")
		if servers != nil {
			f.config(servers)
		}
		c.Signal(syscall.SIGHUP)
		waitStderr(t, c, reloads, "mcprt gateway: reload")
		if servers != nil {
			c.waitNotes(t, "notifications/tools/list_changed", notes+1)
		}
	}

	reload(map[string]any{"one": f.serve("one", nil), "two": f.serve("two", nil)}, 1)
	tools := namesOf(listAll(t, c, "tools/list", "tools"), "name")
	if !hasPrefix(tools, "one__") || !slices.Contains(tools, "two__echo") {
		t.Fatalf("tools after two was added: %v", tools)
	}
	if got := toolText(t, c.Call("tools/call", toolsCall("two__echo", map[string]any{"text": "hello two"}))); got != "hello two" {
		t.Fatalf("two__echo: %q", got)
	}
	pidOne := f.procs("one")

	reload(map[string]any{"two": f.serve("two", nil)}, 2)
	f.waitProcs("one", "backend one to be gone", func(p []int) bool { return len(p) == 0 })
	tools = namesOf(listAll(t, c, "tools/list", "tools"), "name")
	if hasPrefix(tools, "one__") || !slices.Contains(tools, "two__echo") {
		t.Fatalf("tools after one was removed: %v (one was %v)", tools, pidOne)
	}
	wantError(t, c.Call("tools/call", toolsCall("one__echo", map[string]any{"text": "x"})), -32602)

	// A file with an error changes nothing.
	if err := os.WriteFile(file, []byte(`{"mcpServers": {"two": {"command": 7}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	reload(nil, 3)
	if !strings.Contains(c.Stderr(), "reload refused") {
		t.Fatalf("stderr does not say the reload was refused:\n%s", tail(c.Stderr(), 2000))
	}
	if got := toolText(t, c.Call("tools/call", toolsCall("two__echo", map[string]any{"text": "still"}))); got != "still" {
		t.Fatalf("two__echo after a refused reload: %q", got)
	}

	c.CloseStdin()
	if code, ok := c.WaitExit(2 * exitTimeout); !ok || code != 0 {
		t.Fatalf("exit %d (exited: %v)\n%s", code, ok, tail(c.Stderr(), 2000))
	}
	f.waitProcs("", "no backend left", func(p []int) bool { return len(p) == 0 })
}

// TestGatewayWatch: with -watch the gateway reloads its file when its
// contents change, without a signal; a file that does not parse is
// refused until it does.
func TestGatewayWatch(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	file := f.config(map[string]any{"one": f.serve("one", nil)})
	c := f.start(file, Options{}, "-watch", "20ms")
	c.Initialize("2025-11-25")
	f.waitProcs("one", "backend one", func(p []int) bool { return len(p) == 1 })

	// Half a file, as an editor writing in place may leave it for a moment.
	if err := os.WriteFile(file, []byte(`{"mcpServers": {"one": `), 0o600); err != nil {
		t.Fatal(err)
	}
	waitStderr(t, c, 1, "reload refused")
	notes := c.countNotes("notifications/tools/list_changed")
	f.config(map[string]any{"one": f.serve("one", nil), "two": f.serve("two", nil)})
	waitStderr(t, c, 1, "mcprt gateway: reloaded")
	f.waitProcs("two", "backend two", func(p []int) bool { return len(p) == 1 })
	c.waitNotes(t, "notifications/tools/list_changed", notes+1)
	if got := toolText(t, c.Call("tools/call", toolsCall("two__echo", map[string]any{"text": "watched"}))); got != "watched" {
		t.Fatalf("two__echo: %q", got)
	}
	// An unchanged file is not reloaded again.
	time.Sleep(100 * time.Millisecond)
	if n := strings.Count(c.Stderr(), "mcprt gateway: reloaded"); n != 1 {
		t.Errorf("%d reloads for one change", n)
	}
	c.CloseStdin()
	if code, ok := c.WaitExit(2 * exitTimeout); !ok || code != 0 {
		t.Fatalf("exit %d (exited: %v)\n%s", code, ok, tail(c.Stderr(), 2000))
	}
	f.waitProcs("", "no backend left", func(p []int) bool { return len(p) == 0 })
}

// TestGatewayCheck: -check finds each backend's command as the gateway
// would start it and prints what each runs; a command that cannot be
// found is an error naming the server (exit 2), and nothing starts.
func TestGatewayCheck(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	good := f.config(map[string]any{
		"one":    f.serve("one", nil),
		"remote": map[string]any{"type": "http", "url": "http://127.0.0.1:9/mcp"},
	})
	out, err := exec.Command(binPath, "gateway", "-config", good, "-check").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "one: "+f.mcprt("one")+` ["serve"]`) || !strings.Contains(string(out), "remote: http://127.0.0.1:9/mcp (Streamable HTTP)") {
		t.Fatalf("-check of a good file: %v\n%s", err, out)
	}
	bad := f.config(map[string]any{
		"one":     f.serve("one", nil),
		"missing": map[string]any{"command": "no-such-mcp-server-" + f.marker},
	})
	out, err = exec.Command(binPath, "gateway", "-config", bad, "-check").CombinedOutput()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), `backend "missing": key "command"`) {
		t.Fatalf("-check of a missing command: %v\n%s", err, out)
	}
	if p := f.procs(""); len(p) != 0 {
		t.Errorf("-check started backends: %v", p)
	}
}

// TestGatewayEnvFile: a backend's "envFile", relative to the configuration
// file, reaches its environment, below its "env"; a missing one is refused
// before anything starts (exit 2, naming the backend and the key).
func TestGatewayEnvFile(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	if err := os.WriteFile(filepath.Join(f.dir, "one.env"), []byte("TOKEN=from-file\nLEVEL=file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	says := f.script("says", "echo \"token=$TOKEN level=$LEVEL\" >&2\nexec \"$1\" serve\n")
	c := f.start(f.config(map[string]any{
		"one": map[string]any{"command": says, "args": []string{f.mcprt("one")}, "envFile": "one.env", "env": map[string]string{"LEVEL": "env"}},
	}), Options{})
	c.Initialize("2025-11-25")
	if !c.WaitStderr(exitTimeout, "[one] token=from-file level=env") {
		t.Fatalf("the backend's environment is not as the files say:\n%s", tail(c.Stderr(), 2000))
	}
	c.CloseStdin()
	if code, ok := c.WaitExit(exitTimeout); !ok || code != 0 {
		t.Fatalf("exit %d (exited: %v)", code, ok)
	}

	missing := f.config(map[string]any{"one": map[string]any{"command": says, "envFile": "nowhere.env"}})
	out, err := exec.Command(binPath, "gateway", "-config", missing).CombinedOutput()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), `backend "one": key "envFile"`) {
		t.Fatalf("a missing envFile: %v\n%s", err, out)
	}
}

// TestGatewayLogCalls: with -log-calls each tool call is one line on
// stderr, naming the backend and the tool and how it ended, whichever way
// the gateway forwarded it; the client is not sent them.
func TestGatewayLogCalls(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	c := f.start(f.config(map[string]any{"one": f.serve("one", nil)}), Options{}, "-log-calls")
	c.Initialize("2025-11-25")
	c.Call("logging/setLevel", map[string]any{"level": "debug"})
	const n = 20
	for i := range n {
		if got := toolText(t, c.Call("tools/call", toolsCall("one__echo", map[string]any{"text": fmt.Sprint(i)}))); got != fmt.Sprint(i) {
			t.Fatalf("echo %d: %q", i, got)
		}
	}
	c.Call("tools/call", toolsCall("one__add", map[string]any{"a": "x"}))
	// Written before each answer, but read from the pipe on its own time.
	c.WaitStderr(exitTimeout, "tool=add took=")
	stderr := c.Stderr()
	if got := strings.Count(stderr, `msg="gateway: call" backend=one tool=echo took=`); got != n {
		t.Errorf("%d echo lines, want %d:\n%s", got, n, tail(stderr, 3000))
	}
	if got := strings.Count(stderr, "tool=add took="); got != 1 || !strings.Contains(stderr, "outcome=is_error") {
		t.Errorf("%d add lines, want 1 with outcome=is_error:\n%s", got, tail(stderr, 3000))
	}
	for i := range c.LineCount() {
		if m := c.Line(i); m.Method == "notifications/message" && strings.Contains(string(m.Params), "gateway: call") {
			t.Errorf("a call line reached the client: %s", m.Raw)
		}
	}
}
