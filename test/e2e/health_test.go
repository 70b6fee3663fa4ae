//go:build linux

package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
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
		if code == 200 && report.Status == "degraded" {
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
