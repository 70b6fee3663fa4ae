//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTasksLoad makes 1,000 tasks (MCPRT_TASKS_LOAD=10000 for the
// measure of record) at once over Streamable HTTP, all alive together (each sleeps
// 10 s), from 64 concurrent clients, then polls every one until it has
// completed, and logs the server's memory (MCPRT_TASKS_LOAD_ENV adds to
// the server's environment: GOGC=100, say): its peak RSS (VmHWM) and its
// RSS once all have completed. It runs against a journal (-tasks-dir).
//
//	cd test/e2e && MCPRT_TASKS_LOAD=10000 go test -run TestTasksLoad -v .
func TestTasksLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	n := 1000
	if s := os.Getenv("MCPRT_TASKS_LOAD"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	var env []string // MCPRT_TASKS_LOAD_ENV="GOGC=50 ..." for the server
	if e := os.Getenv("MCPRT_TASKS_LOAD_ENV"); e != "" {
		env = strings.Fields(e)
	}
	p := startHTTPEnv(t, env, binPath, "serve", "-http", "127.0.0.1:0", "-fixture", "conformance", "-tasks-dir", t.TempDir(),
		"-tasks-max", strconv.Itoa(2*n), "-tasks-max-per-client", strconv.Itoa(2*n))
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 2 * callTimeout}
	post := func(method string, params map[string]any) (json.RawMessage, error) {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "load", "version": "0"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		req, _ := http.NewRequest("POST", p.url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if v, ok := params["name"].(string); ok {
			req.Header.Set("Mcp-Name", v)
		} else {
			req.Header.Set("Mcp-Name", params["taskId"].(string))
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m struct {
			Result json.RawMessage `json:"result"`
			Error  *RPCError       `json:"error"`
		}
		if err := json.Unmarshal(raw, &m); err != nil || m.Error != nil {
			return nil, fmt.Errorf("%s: HTTP %d %s", method, resp.StatusCode, raw)
		}
		return m.Result, nil
	}
	ids := make([]string, n)
	var next atomic.Int64
	var failures atomic.Int64
	work := func(do func(i int) error) {
		var wg sync.WaitGroup
		next.Store(-1)
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1))
					if i >= n {
						return
					}
					if err := do(i); err != nil {
						if failures.Add(1) < 5 {
							t.Error(err)
						}
					}
				}
			}()
		}
		wg.Wait()
	}
	start := time.Now()
	work(func(i int) error {
		raw, err := post("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 10, "label": strconv.Itoa(i)}})
		if err != nil {
			return err
		}
		tk := readTask(t, raw)
		if tk.TaskID == "" {
			return fmt.Errorf("no task: %s", raw)
		}
		ids[i] = tk.TaskID
		return nil
	})
	created := time.Since(start)
	polls := atomic.Int64{}
	work(func(i int) error {
		for {
			polls.Add(1)
			raw, err := post("tasks/get", map[string]any{"taskId": ids[i]})
			if err != nil {
				return err
			}
			switch st := readTask(t, raw).Status; st {
			case "completed":
				return nil
			case "working":
				time.Sleep(100 * time.Millisecond)
			default:
				return fmt.Errorf("task %s: %s", ids[i], raw)
			}
		}
	})
	all := time.Since(start)
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	mem := map[string]string{}
	for _, l := range strings.Split(string(status), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && (k == "VmHWM" || k == "VmRSS") {
			mem[k] = strings.TrimSpace(v)
		}
	}
	t.Logf("%d tasks (journalled, 10 s each): created in %v (%.0f/s); all completed and seen so after %v, %d polls; server peak RSS %s, RSS now %s; %d failures",
		n, created.Round(time.Millisecond), float64(n)/created.Seconds(), all.Round(time.Millisecond), polls.Load(), mem["VmHWM"], mem["VmRSS"], failures.Load())
}
