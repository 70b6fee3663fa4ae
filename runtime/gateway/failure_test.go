package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
)

// fast makes a backend restart and fail quickly.
func fast(b Backend) Backend {
	b.Backoff, b.MaxBackoff = 10*time.Millisecond, 50*time.Millisecond
	b.Timeout = 10 * time.Second
	return b
}

// alive reports whether pid is a process that has not exited.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// A backend killed during a burst of calls: each call gets one answer,
// a result or an error naming the backend; the backend comes back, its
// tools work again, and the gateway's lists were reported changed.
func TestKilledBackendComesBack(t *testing.T) {
	g := start(t, fast(serve("one")), fast(serve("two")))
	var changes sync.Map
	g.Server().Watch(func(c handlers.Change) { changes.Store(c.Kind, true) })
	pid := g.state("one").PID

	const n = 60
	var wg sync.WaitGroup
	answers := make([]string, n)
	for i := range n {
		wg.Go(func() {
			args := fmt.Sprintf(`{"name":"one__sleep","arguments":{"ms":%d}}`, 50+i*10)
			out, err := g.run(nil, req("tools/call", args, nil))
			if err != nil {
				out = "error: " + err.Error()
			}
			answers[i] = out
		})
	}
	time.Sleep(100 * time.Millisecond) // some answered, most in flight
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	ok, failed := 0, 0
	for i, a := range answers {
		switch {
		case strings.Contains(a, `"text":"slept"`):
			ok++
		case strings.Contains(a, `"isError":true`) && strings.Contains(a, `backend \"one\"`):
			failed++
		default:
			t.Errorf("call %d: %s", i, a)
		}
	}
	if failed == 0 {
		t.Errorf("no call saw the backend die (%d ok)", ok)
	}
	waitFor(t, "one to come back", func() bool { s := g.state("one"); return s.State == Up && s.PID != pid })
	if s := g.state("one"); s.Restarts != 1 || !strings.Contains(s.LastError, "killed") {
		t.Errorf("status after the restart: %+v", s)
	}
	// What the status page and the metrics show of it: one restart, its
	// process having exited, and the incarnation that is up now.
	if s := g.state("one"); len(s.RecentRestarts) != 1 || s.RecentRestarts[0].Cause != causeExited ||
		!strings.Contains(s.RecentRestarts[0].Reason, "killed") || s.RestartsByCause[causeExited] != 1 ||
		s.Since.IsZero() || s.Protocol == "" || s.RestartsWithin(time.Now()) != 1 || s.GaveUp != 0 {
		t.Errorf("restarts as reported: %+v", s)
	}
	if got := g.must("tools/call", `{"name":"one__echo","arguments":{"text":"back"}}`); !strings.Contains(got, "back") {
		t.Errorf("after the restart: %s", got)
	}
	if _, ok := changes.Load(handlers.ToolsChanged); !ok {
		t.Error("the restart changed no list")
	}
	if got := g.must("tools/call", `{"name":"two__echo","arguments":{"text":"untouched"}}`); !strings.Contains(got, "untouched") {
		t.Errorf("two: %s", got)
	}
}

// A backend that exits at once every time is failed after its restart
// intensity, stays down, and the others keep working.
func TestCrashLoopingBackendFails(t *testing.T) {
	bad := fast(Backend{Name: "bad", Command: "sh", Args: []string{"-c", "echo 'no config, giving up' >&2; exit 3"}})
	bad.MaxRestarts = 2
	g := start(t, serve("good"), bad)
	waitFor(t, "bad to fail", func() bool { return g.state("bad").State == Failed })
	s := g.state("bad")
	if s.Restarts != 2 || !strings.Contains(s.LastError, "status 3") || !strings.Contains(s.LastError, "no config, giving up") {
		t.Errorf("failed status: %+v", s)
	}
	if !strings.Contains(g.stderr.String(), "[bad] no config, giving up") {
		t.Errorf("its stderr did not reach the gateway's:\n%s", g.stderr.String())
	}
	if s.GaveUp != 1 || len(s.RecentRestarts) != 2 || s.RestartsByCause[causeExited] != 2 || !s.Since.IsZero() ||
		len(s.Stderr) == 0 || s.Stderr[len(s.Stderr)-1] != "no config, giving up" {
		t.Errorf("give-up as reported: %+v", s)
	}
	if got := g.must("tools/call", `{"name":"good__echo","arguments":{"text":"fine"}}`); !strings.Contains(got, "fine") {
		t.Errorf("good: %s", got)
	}
	time.Sleep(100 * time.Millisecond)
	if st := g.state("bad").State; st != Failed {
		t.Errorf("a failed backend was started again without a request: %s", st)
	}
}

// A backend that fails after it was up is marked unavailable in the
// lists, its calls say why, and a call after the cool-down starts it
// again.
func TestFailedBackendRetriedAfterCooldown(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "broken")
	b := fast(Backend{Name: "flaky", Command: "sh", Args: []string{"-c", `if [ -e "$1" ]; then echo broken >&2; exit 1; fi; exec "$2" serve`, "sh", flag, mcprtPath},
		Env: []string{"LOG_LEVEL=warn"}})
	b.MaxRestarts, b.Cooldown = 1, 300*time.Millisecond
	g := start(t, b)
	pid := g.state("flaky").PID
	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "flaky to fail", func() bool { return g.state("flaky").State == Failed })
	// Its tools are marked just after its state changes.
	waitFor(t, "tools/list to say it is down", func() bool {
		return strings.Contains(g.must("tools/list", `{}`), `[unavailable: backend \"flaky\" failed`)
	})
	got := g.must("tools/call", `{"name":"flaky__echo","arguments":{"text":"x"}}`)
	if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, `backend \"flaky\" failed`) || !strings.Contains(got, "broken") {
		t.Errorf("call to a failed backend: %s", got)
	}
	if _, err := g.run(nil, req("prompts/get", `{"name":"flaky__review","arguments":{"code":"x"}}`, nil)); err == nil || !strings.Contains(err.Error(), `backend "flaky" failed`) {
		t.Errorf("prompts/get of a failed backend: %v", err)
	}
	os.Remove(flag)
	time.Sleep(350 * time.Millisecond)
	if got := g.must("tools/call", `{"name":"flaky__echo","arguments":{"text":"again"}}`); !strings.Contains(got, `"text":"again"`) {
		t.Fatalf("after the cool-down: %s", got)
	}
	if list := g.must("tools/list", `{}`); strings.Contains(list, "unavailable") {
		t.Errorf("still marked unavailable: %s", list)
	}
}

// A backend that stops answering (SIGSTOP) is restarted when a ping goes
// unanswered.
func TestHungBackendRestartedByPing(t *testing.T) {
	b := fast(serve("hung"))
	b.PingInterval, b.PingTimeout = 50*time.Millisecond, 200*time.Millisecond
	g := start(t, b)
	pid := g.state("hung").PID
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	waitFor(t, "a new incarnation", func() bool { s := g.state("hung"); return s.State == Up && s.PID != pid })
	if s := g.state("hung"); !strings.Contains(s.LastError, "did not answer a ping") {
		t.Errorf("status: %+v", s)
	}
	waitFor(t, "the hung process to be killed", func() bool { return !alive(pid) })
	if got := g.must("tools/call", `{"name":"hung__echo","arguments":{"text":"awake"}}`); !strings.Contains(got, "awake") {
		t.Errorf("after the restart: %s", got)
	}
}

// A lazy backend is started to learn what it offers, stopped, started by
// a request, and stopped again when idle.
func TestLazyBackend(t *testing.T) {
	b := serve("lazy")
	b.Lazy, b.IdleTimeout = true, 200*time.Millisecond
	g := start(t, b)
	waitFor(t, "lazy to go idle", func() bool { return g.state("lazy").State == Idle })
	if s := g.state("lazy"); s.Tools == 0 {
		t.Fatalf("an idle lazy backend offers nothing: %+v", s)
	}
	if got := g.must("tools/call", `{"name":"lazy__echo","arguments":{"text":"woken"}}`); !strings.Contains(got, "woken") {
		t.Fatalf("call to an idle backend: %s", got)
	}
	pid := g.state("lazy").PID
	if pid == 0 {
		t.Fatal("not up after a call")
	}
	waitFor(t, "lazy to go idle again", func() bool { return g.state("lazy").State == Idle })
	waitFor(t, "its process to exit", func() bool { return !alive(pid) })
}

// Close stops every backend process, also ones that ignore stdin EOF and
// SIGTERM.
func TestCloseLeavesNoProcess(t *testing.T) {
	stubborn := fast(Backend{Name: "stubborn", Command: "sh", Args: []string{"-c", `trap '' TERM; "$0" serve < /dev/stdin; sleep 1000`, mcprtPath}})
	g := start(t, serve("one"), stubborn)
	var pids []int
	for _, s := range g.Backends() {
		if s.PID == 0 {
			t.Fatalf("not up: %+v", s)
		}
		pids = append(pids, s.PID)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d outlived Close", pid)
		}
	}
	if got, _ := g.run(nil, req("tools/call", `{"name":"one__echo","arguments":{"text":"x"}}`, nil)); !strings.Contains(got, "shutting down") {
		t.Errorf("a call after Close: %s", got)
	}
}

// A backend's stderr reaches the gateway's prefixed with its name and
// throttled; its last lines are kept for error messages whatever the
// throttle dropped.
func TestStderrPrefixedThrottledKept(t *testing.T) {
	noisy := Backend{Name: "noisy", Command: "sh", Args: []string{"-c", `i=1; while [ $i -le 100 ]; do echo "line $i" >&2; i=$((i+1)); done; exec "$0" serve`, mcprtPath},
		Env: []string{"LOG_LEVEL=warn"}}
	stderr := &syncBuffer{}
	g, err := New(&Config{Backends: []Backend{noisy}}, Options{Logger: slog.New(slog.DiscardHandler), Stderr: stderr, StderrLimit: 5, StderrWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	waitFor(t, "the throttle to speak", func() bool { return strings.Contains(stderr.String(), "dropping the rest") })
	out := stderr.String()
	if !strings.HasPrefix(out, "[noisy] line 1\n[noisy] line 2\n") || !strings.Contains(out, "[noisy] line 5\n") || strings.Contains(out, "line 6\n") {
		t.Errorf("gateway stderr:\n%s", out)
	}
	tail := g.all()[0].tail()
	if len(tail) != stderrKept || tail[len(tail)-1] != "line 100" {
		t.Errorf("kept lines: %q", tail)
	}
}

// A backend past its timeout: the call is answered with an error naming
// it, and the backend stays up.
func TestBackendTimeout(t *testing.T) {
	b := serve("slow")
	b.Timeout = 300 * time.Millisecond
	g := start(t, b)
	got := g.must("tools/call", `{"name":"slow__sleep","arguments":{"ms":60000}}`)
	if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, `backend \"slow\" did not answer tools/call within 300ms`) {
		t.Fatalf("slow call: %s", got)
	}
	if _, err := g.run(nil, req("resources/read", `{"uri":"mcprt://reference/readme"}`, nil)); err != nil {
		t.Errorf("the backend after a timeout: %v", err)
	}
	if s := g.state("slow"); s.State != Up || s.Restarts != 0 {
		t.Errorf("a timeout restarted the backend: %+v", s)
	}
}

// A backend that fails before it ever listed what it offers (no request
// can reach it) is started again after its cool-down, and its tools then
// join the gateway's.
func TestUnseenBackendIsRetried(t *testing.T) {
	count := filepath.Join(t.TempDir(), "starts")
	// The first two starts fail; the third runs the reference server.
	script := `n=$(cat "$1" 2>/dev/null || echo 0); n=$((n+1)); echo $n >"$1"; [ $n -ge 3 ] || { echo "not yet ($n)" >&2; exit 1; }; exec "$2" serve`
	late := fast(Backend{Name: "late", Command: "sh", Args: []string{"-c", script, "sh", count, mcprtPath}, Env: []string{"LOG_LEVEL=warn"}})
	late.MaxRestarts, late.Cooldown = -1, 50*time.Millisecond
	g := start(t, serve("good"), late)
	waitFor(t, "late to come up", func() bool { return g.state("late").State == Up })
	if got := g.must("tools/call", `{"name":"late__echo","arguments":{"text":"at last"}}`); !strings.Contains(got, "at last") {
		t.Fatalf("late__echo: %s", got)
	}
	if !strings.Contains(g.stderr.String(), "failed before it listed what it offers") {
		t.Errorf("the log does not say why it is started again:\n%s", g.stderr.String())
	}
}

// A backend found to speak 2026-07-28 is spoken to in 2026-07-28 after a
// restart too, even when the restarted process is slower to answer than
// the server/discover probe waits (5s): probing again would have fallen
// back to initialize and spoken 2025-11-25 to a 2026-07-28 server, as a
// loaded machine once showed on the status page.
func TestRestartedBackendKeepsItsEra(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started")
	slow := fast(Backend{Name: "slow", Command: "sh", Args: []string{"-c",
		`if [ -e "$0" ]; then sleep 6; fi; : >"$0"; exec "$1" serve`, marker, mcprtPath},
		Env: []string{"LOG_LEVEL=warn", "GORACE=atexit_sleep_ms=0"}})
	slow.Timeout = 30 * time.Second
	g := start(t, slow)
	first := g.state("slow")
	if first.Protocol != mcp.Version20260728 {
		t.Fatalf("first incarnation speaks %q, want %s", first.Protocol, mcp.Version20260728)
	}
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "slow to come back", func() bool { s := g.state("slow"); return s.State == Up && s.PID != first.PID })
	if s := g.state("slow"); s.Protocol != first.Protocol {
		t.Errorf("after the restart it speaks %q, before %q", s.Protocol, first.Protocol)
	}
	if got := g.must("tools/call", `{"name":"slow__echo","arguments":{"text":"back"}}`); !strings.Contains(got, "back") {
		t.Errorf("after the restart: %s", got)
	}
}
