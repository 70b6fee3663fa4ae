package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestChaosTasksEverything: the task campaign against server-everything
// (2025-11-25 tasks, in memory): tasks cancelled, the server killed and
// started again (up to twice); each task ends once, and what the restarts forgot
// is counted as lost, not failed. It needs the npm reference servers
// (MCPRT_NPM_SERVERS, see test/e2e/npm/install.sh) and skips without.
func TestChaosTasksEverything(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("MCPRT_NPM_SERVERS")
	if dir == "" {
		t.Skip("set MCPRT_NPM_SERVERS to the directory test/e2e/npm/install.sh prints")
	}
	ev := dir + "/node_modules/.bin/mcp-server-everything"
	if _, err := os.Stat(ev); err != nil {
		t.Skip(err)
	}
	bin := buildChaos(t)
	out, code := runChaos(t, bin, os.Environ(), "-tasks", "12", "-task-kills", "2", "-task-cancel", "0.5", "-seed", "7", "--", ev, "stdio")
	// A kill waits for tasks both running and ended (when depends on
	// the machine's speed): with more tasks than run at once there is
	// at least one.
	if code != 0 || !strings.Contains(out, "PASS: every task ended in exactly one terminal state") || !regexp.MustCompile(`[1-9] kills and restarts`).MatchString(out) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// TestChaosTasksCatchesALie: a server whose task is completed on one poll
// and working on the next fails the campaign, which names the task.
func TestChaosTasksCatchesALie(t *testing.T) {
	t.Parallel()
	bin := buildChaos(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, code := runChaos(t, bin, append(os.Environ(), "MCPRT_LYING_TASKS=1"), "-tasks", "2", "-task-kills", "0", "-task-cancel", "0", "--", self, "-test.run=^TestLyingTaskServer$")
	if code != 1 || !strings.Contains(out, "ended completed, then was working") {
		t.Fatalf("exit %d, want 1 and the lie named:\n%s", code, out)
	}
}

// TestLyingTaskServer is not a test: run with MCPRT_LYING_TASKS=1 it is a
// 2025-11-25 stdio server whose tasks are completed on their first poll
// and working again on the next.
func TestLyingTaskServer(t *testing.T) {
	if os.Getenv("MCPRT_LYING_TASKS") != "1" {
		t.Skip("a server for TestChaosTasksCatchesALie")
	}
	polls := map[string]int{}
	n := 0
	out := bufio.NewWriter(os.Stdout)
	reply := func(id json.RawMessage, result any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
		out.Write(append(b, '\n'))
		out.Flush()
	}
	task := func(id, status string) map[string]any {
		return map[string]any{"taskId": id, "status": status, "createdAt": "2026-11-27T00:00:00Z", "lastUpdatedAt": "2026-11-27T00:00:00Z", "ttl": 60000, "pollInterval": 10}
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		switch m.Method {
		case "initialize":
			reply(m.ID, map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "liar", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}})
		case "tools/list":
			reply(m.ID, map[string]any{"tools": []any{map[string]any{"name": "slow_compute", "inputSchema": map[string]any{"type": "object"}, "execution": map[string]any{"taskSupport": "optional"}}}})
		case "tools/call":
			n++
			reply(m.ID, map[string]any{"task": task(fmt.Sprintf("lie-%d", n), "working")})
		case "tasks/get":
			polls[m.Params.TaskID]++
			status := "completed"
			if polls[m.Params.TaskID] > 1 {
				status = "working"
			}
			reply(m.ID, task(m.Params.TaskID, status))
		case "tasks/result":
			reply(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}})
		default:
			reply(m.ID, map[string]any{})
		}
	}
	os.Exit(0)
}

// TestChaosTasksDurable: the task campaign against mcprt's own server
// with a tasks directory, in both eras over stdio and over HTTP (where a
// task outlives the connection, and a 2025-11-25 one its session, which
// does not outlive its server: the task is bound by its id), and behind
// mcprt gateway -tasks-dir over HTTP in both eras: killed and started
// again on the same directory, it must still know every task (those that
// were running ended as failed), each ended once, results intact. It needs the server
// side of tasks (issue 26, branch tasks: -tasks-dir and the conformance
// fixture's slow_compute) and skips until they exist.
func TestChaosTasksDurable(t *testing.T) {
	t.Parallel()
	bin := buildChaos(t)
	help, _ := exec.Command(bin, "serve", "--help").CombinedOutput()
	tools, _ := exec.Command(bin, "list", "tools", "--", bin, "serve", "-fixture", "conformance").Output()
	if !strings.Contains(string(help), "-tasks-dir") || !strings.Contains(string(tools), "slow_compute") {
		t.Skip("needs the server side of tasks (issue 26): mcprt serve -tasks-dir and -fixture conformance's slow_compute")
	}
	for _, tc := range []struct {
		era           string
		http, gateway bool
	}{{"legacy", false, false}, {"modern", false, false}, {"legacy", true, false}, {"modern", true, false}, {"legacy", true, true}, {"modern", true, true}} {
		args := []string{"-era", tc.era, "-tasks", "12", "-task-kills", "2", "-task-cancel", "0.3", "-seed", "11"}
		serve := []string{bin, "serve", "-fixture", "conformance", "-tasks-dir", t.TempDir()}
		switch {
		case tc.gateway:
			args = append(args, "-http", "-behind-gateway") // the gateway serves HTTP; CMD is its stdio backend
		case tc.http:
			args = append(args, "-http")
			serve = append(serve, "-http", "127.0.0.1:0")
		}
		out, code := runChaos(t, bin, os.Environ(), append(append(args, "--"), serve...)...)
		if code != 0 || !strings.Contains(out, "PASS: every task ended in exactly one terminal state") || !strings.Contains(out, "; 0 lost") ||
			tc.gateway && !strings.Contains(out, `"gateway"`) {
			t.Errorf("%s (http %v, behind a gateway %v): exit %d:\n%s", tc.era, tc.http, tc.gateway, code, out)
		}
	}
}
