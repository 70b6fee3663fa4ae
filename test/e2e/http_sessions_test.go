//go:build linux

package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

const legacyInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`

// rawPost POSTs body to url as an MCP client does, with hdr, and returns
// the status, the headers and the body.
func rawPost(t *testing.T, hc *http.Client, url, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Error(err)
		return 0, nil, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// metric is the value of the sample named name (no labels) in a
// Prometheus text body; -1 when it is not there.
func metric(body, name string) float64 {
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// TestHTTPSessionFlood (issue 21): 2,000 legacy initialize handshakes that
// are never used again, against mcprt serve -http's default cap of 1,000
// sessions. Every one is served (the idle sessions before it are closed to
// make room), a new client is served at once after them, the session with
// its GET stream open is not closed while the one idle the longest is
// (404), the process's goroutines stay as they were at the cap, and
// -http-metrics counts the evictions.
func TestHTTPSessionFlood(t *testing.T) {
	t.Parallel()
	p := startHTTP(t, binPath, "serve", "-http", "127.0.0.1:0", "-http-metrics", "/metrics")
	metrics := strings.TrimSuffix(p.url, "/mcp") + "/metrics"
	tr := &http.Transport{MaxIdleConnsPerHost: 8}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: callTimeout}
	initialize := func() string {
		code, hdr, body := rawPost(t, hc, p.url, legacyInit, nil)
		if code != 200 || hdr.Get("Mcp-Session-Id") == "" {
			t.Errorf("initialize: %d %s", code, body)
			return ""
		}
		return hdr.Get("Mcp-Session-Id")
	}
	ping := func(sid string) int {
		code, _, _ := rawPost(t, hc, p.url, `{"jsonrpc":"2.0","id":"p","method":"ping"}`, map[string]string{"Mcp-Session-Id": sid})
		return code
	}

	oldest := initialize()
	streaming := initialize()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", p.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", streaming)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", stream, err)
	}
	defer stream.Body.Close()

	var refused atomic.Int64
	flood := func(n int) {
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < n; i += 8 {
					if code, hdr, _ := rawPost(t, hc, p.url, legacyInit, nil); code != 200 || hdr.Get("Mcp-Session-Id") == "" {
						refused.Add(1)
					}
				}
			})
		}
		wg.Wait()
	}
	goroutines := func() float64 {
		_, body := get(t, "GET", metrics, "")
		return metric(body, "go_goroutines")
	}
	began := time.Now()
	flood(1000)
	atCap := goroutines()
	flood(1000)
	t.Logf("2,000 handshakes: %v", time.Since(began))
	if n := refused.Load(); n > 0 {
		t.Fatalf("%d of 2,000 handshakes refused, with idle sessions to close", n)
	}

	// A new client is served at once.
	c := connectHTTP(t, p.url, client.Options{Era: client.EraLegacy})
	if got := callText(t, c, "echo", map[string]any{"text": "after the flood"}); got != "after the flood" {
		t.Errorf("echo after the flood: %q", got)
	}
	if code := ping(oldest); code != http.StatusNotFound {
		t.Errorf("the session idle the longest: ping %d, want 404", code)
	}
	if code := ping(streaming); code != 200 {
		t.Errorf("the session with its GET stream open: ping %d, want 200 (a session in use is never closed)", code)
	}

	// Bounded: the sessions closed end, and take their goroutines along.
	deadline := time.Now().Add(callTimeout)
	for {
		g := goroutines()
		if g <= atCap+20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v goroutines at the cap, %v after 1,000 more handshakes", atCap, g)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, body := get(t, "GET", metrics, "")
	// Sessions made: 2 before the flood, 2,000, and the new client's.
	if open, evicted := metric(body, "mcprt_http_sessions"), metric(body, "mcprt_http_sessions_evicted_total"); open != 1000 || evicted != 1003 {
		t.Errorf("metrics: %v sessions open, %v evicted; want 1000 and 1003:\n%s", open, evicted, body)
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d after the flood:\n%s", code, tail(p.stderr.String(), 3000))
	}
}

// TestHTTPOriginRefused (issue 27): a request from a browser page of an
// origin not allowed gets 403 naming the origin and -http-allow-origin; the
// refusal is logged at debug level, once for a burst of them, and counted
// in -http-metrics.
func TestHTTPOriginRefused(t *testing.T) {
	t.Parallel()
	p := startHTTPEnv(t, []string{"LOG_LEVEL=debug"}, binPath, "serve", "-http", "127.0.0.1:0", "-http-metrics", "/metrics")
	const origin = "http://evil.example:8080"
	began := time.Now()
	for i := range 50 {
		code, _, body := rawPost(t, http.DefaultClient, p.url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Origin": origin})
		if code != http.StatusForbidden {
			t.Fatalf("Origin %s: %d, want 403", origin, code)
		}
		if i == 0 && (!strings.Contains(body, `\"`+origin+`\"`) || !strings.Contains(body, "-http-allow-origin")) {
			t.Errorf("the 403 names neither the origin nor -http-allow-origin: %s", body)
		}
	}
	burst := time.Since(began)
	_, body := get(t, "GET", strings.TrimSuffix(p.url, "/mcp")+"/metrics", "")
	if n := metric(body, "mcprt_http_origin_refused_total"); n != 50 {
		t.Errorf("mcprt_http_origin_refused_total %v, want 50", n)
	}
	// An allowed origin is served: the refusals were for this one.
	if code, _, _ := rawPost(t, http.DefaultClient, p.url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Origin": "http://localhost:3000"}); code == http.StatusForbidden {
		t.Errorf("a loopback origin: 403")
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("exit %d", code)
	}
	logs := p.stderr.String()
	lines := 0
	for line := range strings.SplitSeq(logs, "\n") {
		if strings.Contains(line, "level=DEBUG") && strings.Contains(line, "origin="+origin) {
			lines++
		}
	}
	// One line every 10 seconds at most.
	if lines < 1 || lines > 1+int(burst/(10*time.Second)) {
		t.Errorf("%d debug lines for 50 refusals in %v, want 1:\n%s", lines, burst, tail(logs, 3000))
	}
}

// TestHTTPBeyondLoopback (issue 27): -http 0.0.0.0:PORT says where it
// serves as given (not [::]) and warns that it is reachable beyond
// loopback with no token; with -http-token-file, or on loopback, no
// warning.
func TestHTTPBeyondLoopback(t *testing.T) {
	t.Parallel()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		host string
		warn bool
	}{
		{[]string{"-http", "0.0.0.0:0"}, "0.0.0.0", true},
		{[]string{"-http", "0.0.0.0:0", "-http-token-file", tok}, "0.0.0.0", false},
		{[]string{"-http", "127.0.0.1:0"}, "127.0.0.1", false},
		{[]string{"-http", "0"}, "127.0.0.1", false},
	} {
		p := startHTTP(t, binPath, append([]string{"serve"}, tc.args...)...)
		code := p.stop(syscall.SIGTERM)
		logs := p.stderr.String()
		warned := strings.Contains(logs, "level=WARN") && strings.Contains(logs, "-http-token-file")
		switch {
		case !strings.HasPrefix(p.url, "http://"+tc.host+":") || strings.HasSuffix(p.url, ":0/mcp"):
			t.Errorf("%v: serving on %s, want http://%s:PORT/mcp", tc.args, p.url, tc.host)
		case warned != tc.warn:
			t.Errorf("%v: warned %v, want %v:\n%s", tc.args, warned, tc.warn, logs)
		case code != 0:
			t.Errorf("%v: exit %d", tc.args, code)
		}
	}
}
