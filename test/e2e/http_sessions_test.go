//go:build linux

package e2e

import (
	"context"
	"io"
	"net/http"
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
