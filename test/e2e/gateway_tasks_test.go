package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/session/client"
)

// Tasks through the gateway (issue 26, item 6): a backend's task tool
// called as a task through mcprt gateway, from clients of both eras, to
// backends of both eras: server-everything (2025-11-25) and mcprt serve
// -tasks-dir with the conformance fixture (2026-07-28).

// taskBackends is a configuration with mcprt serve keeping its tasks in
// journal (a 2026-07-28 backend), and server-everything (2025-11-25) when
// the npm reference servers are installed (ev is "" when not).
func taskBackends(t *testing.T, f *gwFixture, journal string) (config, ev string) {
	t.Helper()
	servers := map[string]any{
		"mc": f.serve("mc", map[string]any{"args": []string{"serve", "-tasks-dir", journal, "-fixture", "conformance"}}),
	}
	if dir := os.Getenv(npmServersEnv); dir != "" {
		p := filepath.Join(dir, "node_modules", ".bin", "mcp-server-everything")
		if _, err := os.Stat(p); err == nil {
			ev = p
			servers["ev"] = map[string]any{"command": p, "args": []string{"stdio"}, "env": map[string]string{"MCPRT_GWMARK": f.marker + "-ev"}}
		}
	}
	if ev == "" {
		t.Logf("no %s: the 2025-11-25 backend (server-everything) is left out", npmServersEnv)
	}
	return f.config(servers), ev
}

// TestGatewayCallTask: `mcprt call -task` through `mcprt gateway`, in
// both eras, to a task tool of each backend: the task runs at the backend
// as a task (its journal has it), ends completed with the backend's
// result, and the id the client polled is the gateway's, not the
// backend's.
func TestGatewayCallTask(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	journal := t.TempDir()
	config, ev := taskBackends(t, f, journal)
	type tc struct{ tool, arg, want string }
	cases := []tc{{"mc__slow_compute", "label=gw", `computed "gw" after 1s`}}
	if ev != "" {
		cases = append(cases, tc{"ev__simulate-research-query", "topic=gophers", "# Research Report: gophers"})
	}
	var ids []string
	for _, era := range []string{"modern", "legacy"} {
		for _, c := range cases {
			args := []string{"call", "-era", era, "-task", c.tool, c.arg}
			if strings.HasPrefix(c.tool, "mc__") {
				args = append(args, "seconds=1")
			}
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(binPath, append(args, "--", binPath, "gateway", "-config", config)...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if err := cmd.Run(); err != nil {
				t.Errorf("%s %s: mcprt call -task: %v\nstderr:\n%s", era, c.tool, err, stderr.String())
				continue
			}
			m := regexp.MustCompile(`(?m)^mcprt call: task (\S+) completed`).FindStringSubmatch(stderr.String())
			if m == nil || !strings.Contains(stdout.String(), c.want) {
				t.Errorf("%s %s: stdout %q stderr:\n%s", era, c.tool, stdout.String(), stderr.String())
				continue
			}
			if strings.HasPrefix(c.tool, "mc__") {
				ids = append(ids, m[1])
			}
		}
	}
	// The backend made a task of each call (the gateway asked for one),
	// under an id of its own.
	b, err := os.ReadFile(filepath.Join(journal, tasks.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Put struct{ ID, Tool, Status string }
		}
		_, body, _ := strings.Cut(line, " ") // after the line's checksum
		if json.Unmarshal([]byte(body), &rec) == nil && rec.Put.Tool == "slow_compute" && rec.Put.Status == "completed" {
			done++
		}
	}
	if done != 2 {
		t.Errorf("the backend's journal has %d completed slow_compute tasks, want 2 (one per era):\n%s", done, b)
	}
	for _, id := range ids {
		if strings.Contains(string(b), id) {
			t.Errorf("the client was given the backend's task id %s", id)
		}
	}
}

// TestGatewayTasksHTTP: over Streamable HTTP, with clients of both eras:
// a legacy session's task is bound by its id, not the session (another
// session gets it by id, but does not see it in tasks/list), a 2026-07-28 client
// awaits a legacy backend's task and a legacy client a 2026-07-28
// backend's, and cancelling the gateway's task cancels the backend's.
func TestGatewayTasksHTTP(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	journal := t.TempDir()
	config, ev := taskBackends(t, f, journal)
	gw := f.startGatewayHTTP(config)
	ctx := testCtx(t)
	a := connectHTTP(t, gw.url, client.Options{Era: client.EraLegacy})
	b := connectHTTP(t, gw.url, client.Options{Era: client.EraLegacy})
	m := connectHTTP(t, gw.url, client.Options{Era: client.EraModern})

	long, _, err := a.CallToolTask(ctx, "mc__slow_compute", map[string]any{"seconds": 600, "label": "long"})
	if err != nil || long == nil {
		t.Fatalf("legacy CallToolTask: task %v, err %v", long, err)
	}
	if got, err := b.GetTask(ctx, long.ID); err != nil || got.Status != client.TaskWorking {
		t.Errorf("another session's tasks/get of session A's task %s by id: %v, %v", long.ID, got, err)
	}
	if list, err := b.ListTasks(ctx); err != nil || len(list) != 0 {
		t.Errorf("another session's tasks/list: %v, %v; want none", list, err)
	}
	if list, err := a.ListTasks(ctx); err != nil || len(list) != 1 || list[0].ID != long.ID {
		t.Errorf("session A's tasks/list: %v, %v; want its task %s", list, err, long.ID)
	}

	// Each era's client polls the other era's backend.
	type tc struct {
		c          *client.Client
		era, tool  string
		args       map[string]any
		want       string
		backendEra string
	}
	cases := []tc{{a, "legacy", "mc__slow_compute", map[string]any{"seconds": 1, "label": "x"}, `computed \"x\" after 1s`, "2026-07-28"}}
	if ev != "" {
		cases = append(cases, tc{m, "2026-07-28", "ev__simulate-research-query", map[string]any{"topic": "gophers"}, "# Research Report: gophers", "2025-11-25"})
	}
	for _, c := range cases {
		task, raw, err := c.c.CallToolTask(ctx, c.tool, c.args)
		if err != nil || task == nil {
			t.Errorf("%s client, %s backend: CallToolTask: task %v, raw %s, err %v", c.era, c.backendEra, task, raw, err)
			continue
		}
		res, err := c.c.AwaitTask(ctx, task, nil)
		if err != nil || !strings.Contains(string(res), c.want) {
			t.Errorf("%s client, %s backend: AwaitTask: %s, %v", c.era, c.backendEra, res, err)
		}
	}

	if _, err := a.CancelTask(ctx, long.ID); err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
	if got, err := a.GetTask(ctx, long.ID); err != nil || got.Status != client.TaskCancelled {
		t.Errorf("after tasks/cancel: %v, %v", got, err)
	}
	// The backend's task is cancelled too.
	waitFile(t, filepath.Join(journal, tasks.JournalFile), `"tool":"slow_compute","modern":true,"status":"cancelled"`)
}

// TestGatewayTaskOfPlainBackend: mcprt gateway -tasks-dir makes a task of
// a call to a backend that knows no tasks (mcprt serve without -tasks),
// in both eras: the task outlasts the backend's timeout, which still cuts
// the same call made plainly.
func TestGatewayTaskOfPlainBackend(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	config := f.config(map[string]any{"ref": f.serve("ref", map[string]any{"timeout": "1s", "maxTimeout": "1s"})})
	gateway := []string{"--", binPath, "gateway", "-config", config, "-tasks-dir", t.TempDir()}
	run := func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(binPath, append(args, gateway...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	if stdout, stderr, err := run("call", "ref__sleep", "ms=2500"); err == nil || !strings.Contains(stdout, "did not answer tools/call within 1s") {
		t.Errorf("a plain call past the backend's timeout: %v, stdout %q, stderr:\n%s", err, stdout, stderr)
	}
	for _, era := range []string{"modern", "legacy"} {
		stdout, stderr, err := run("call", "-era", era, "-task", "ref__sleep", "ms=2500")
		if err != nil || stdout != "slept\n" || !regexp.MustCompile(`(?m)^mcprt call: task \S+ completed`).MatchString(stderr) {
			t.Errorf("%s: mcprt call -task: %v, stdout %q, stderr:\n%s", era, err, stdout, stderr)
		}
	}
}
