//go:build linux

package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// get fetches url with an optional Origin and returns the status and body.
func get(t *testing.T, method, url, origin string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHTTPHealth: -http-health answers probes beside the MCP endpoint:
// mcprt serve says it is up; mcprt gateway gives each backend's state and
// says degraded while one is failed. A browser's request (Origin) is
// refused, and so is any method but GET and HEAD.
func TestHTTPHealth(t *testing.T) {
	t.Parallel()
	p := startHTTP(t, binPath, "serve", "-http", "127.0.0.1:0", "-http-health", "/healthz")
	health := strings.TrimSuffix(p.url, "/mcp") + "/healthz"
	if code, body := get(t, "GET", health, ""); code != 200 || strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Fatalf("serve: %d %s", code, body)
	}
	if code, body := get(t, "HEAD", health, ""); code != 200 || body != "" {
		t.Errorf("HEAD: %d %q", code, body)
	}
	if code, _ := get(t, "GET", health, "http://evil.example"); code != 403 {
		t.Errorf("with an Origin: %d", code)
	}
	if code, _ := get(t, "POST", health, ""); code != 405 {
		t.Errorf("POST: %d", code)
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("serve exit %d", code)
	}

	f := newGateway(t)
	bad := f.script("bad", "exit 1\n")
	gw := f.startGatewayHTTP(f.config(map[string]any{
		"good": f.serve("good", nil),
		"bad":  map[string]any{"command": bad, "maxRestarts": 1, "backoff": "10ms"},
	}), "-http-health", "/healthz")
	health = strings.TrimSuffix(gw.url, "/mcp") + "/healthz"
	var report struct {
		Status   string
		Backends []struct {
			Name, State string
			Restarts    int
		}
	}
	deadline := time.Now().Add(callTimeout)
	for {
		code, body := get(t, "GET", health, "")
		if err := json.Unmarshal([]byte(body), &report); err != nil {
			t.Fatalf("%d %s: %v", code, body, err)
		}
		// The gateway serves at once, while its backends start: wait
		// until neither is still starting.
		settled := !slices.ContainsFunc(report.Backends, func(b struct {
			Name, State string
			Restarts    int
		}) bool {
			return b.State == "starting" || b.State == "restarting"
		})
		if code == 200 && report.Status == "degraded" && settled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never degraded: %d %s", code, body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	states := map[string]string{}
	for _, b := range report.Backends {
		states[b.Name] = b.State
	}
	if len(states) != 2 || states["good"] != "up" || states["bad"] != "failed" {
		t.Fatalf("gateway report: %+v", report)
	}
	if code := gw.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("gateway exit %d", code)
	}

	// The health path must be a path of its own.
	out, err := exec.Command(binPath, "serve", "-http", "127.0.0.1:0", "-http-health", "/mcp").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "-http-health") {
		t.Errorf("-http-health /mcp: %v\n%s", err, out)
	}
}

// TestHTTPMetrics: -http-metrics answers a scraper in Prometheus's text
// format: mcprt serve its process's figures; mcprt gateway also each
// backend's state and its tool calls by outcome. A browser's request
// (Origin) is refused, as is a path that is already another's.
func TestHTTPMetrics(t *testing.T) {
	t.Parallel()
	p := startHTTP(t, binPath, "serve", "-http", "127.0.0.1:0", "-http-metrics", "/metrics")
	metrics := strings.TrimSuffix(p.url, "/mcp") + "/metrics"
	if code, body := get(t, "GET", metrics, ""); code != 200 || !strings.Contains(body, "# TYPE go_goroutines gauge\ngo_goroutines ") || !strings.Contains(body, "mcprt_info{version=") {
		t.Fatalf("serve: %d %s", code, body)
	}
	if code, _ := get(t, "GET", metrics, "http://evil.example"); code != 403 {
		t.Errorf("with an Origin: %d", code)
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("serve exit %d", code)
	}

	f := newGateway(t)
	gw := f.startGatewayHTTP(f.config(map[string]any{"good": f.serve("good", nil)}), "-http-metrics", "/metrics")
	for _, args := range []string{`{"text":"hi"}`, `{"text":"again"}`} {
		if out, err := exec.Command(binPath, "call", "-url", gw.url, "good__echo", args).CombinedOutput(); err != nil {
			t.Fatalf("call: %v\n%s", err, out)
		}
	}
	exec.Command(binPath, "call", "-url", gw.url, "good__add", `{"a":"x"}`).Run() // an isError result
	metrics = strings.TrimSuffix(gw.url, "/mcp") + "/metrics"
	code, body := get(t, "GET", metrics, "")
	for _, want := range []string{
		`mcprt_gateway_backend_state{backend="good",state="up"} 1`,
		`mcprt_gateway_tool_calls_total{backend="good",tool="echo",outcome="ok"} 2`,
		`mcprt_gateway_tool_calls_total{backend="good",tool="add",outcome="is_error"} 1`,
		`mcprt_gateway_tool_call_seconds_total{backend="good",tool="echo",outcome="ok"} `,
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("gateway metrics: want %q in %d:\n%s", want, code, body)
		}
	}
	if code := gw.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("gateway exit %d", code)
	}

	out, err := exec.Command(binPath, "serve", "-http", "127.0.0.1:0", "-http-health", "/h", "-http-metrics", "/h").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "-http-metrics") {
		t.Errorf("-http-metrics on the health path: %v\n%s", err, out)
	}
}
