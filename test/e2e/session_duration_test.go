package e2e

import (
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSessionDurations: the conventions' session histograms. A legacy
// HTTP session ended by DELETE is one mcp.server.session.duration
// (network.transport tcp) on the gateway's -http-metrics page; a
// 2026-07-28 call (mcprt call) opens no session and adds none. When the
// gateway stops, its connection to its stdio backend ends, and the
// OTLP export carries one mcp.client.session.duration with the server one.
func TestSessionDurations(t *testing.T) {
	rcv := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "gw-sessions")
	f := newGateway(t)
	gw := f.startGatewayHTTP(f.config(map[string]any{"good": f.serve("good", nil)}), "-http-metrics", "/metrics")
	metrics := strings.TrimSuffix(gw.url, "/mcp") + "/metrics"

	hc := &http.Client{Timeout: callTimeout}
	code, hdr, body := rawPost(t, hc, gw.url, legacyInit, nil)
	sid := hdr.Get("Mcp-Session-Id")
	if code != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	rawPost(t, hc, gw.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid})
	if code, _, body := rawPost(t, hc, gw.url, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid}); code != 200 {
		t.Fatalf("ping: %d %s", code, body)
	}
	if out, err := exec.Command(binPath, "call", "-url", gw.url, "good__echo", `{"text":"hi"}`).CombinedOutput(); err != nil {
		t.Fatalf("call: %v\n%s", err, out)
	}
	req, _ := http.NewRequest("DELETE", gw.url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}

	// The session's actor ends after the DELETE is answered: poll.
	want := `mcp_server_session_duration_seconds_count{mcp_protocol_version="2025-06-18",network_transport="tcp"} 1`
	var page string
	for deadline := time.Now().Add(callTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		_, page = get(t, "GET", metrics, "")
		if strings.Contains(page, want) {
			break
		}
	}
	for _, w := range []string{
		"# TYPE mcp_server_session_duration_seconds histogram\n",
		want,
		`mcp_server_session_duration_seconds_bucket{mcp_protocol_version="2025-06-18",network_transport="tcp",le="+Inf"} 1`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("want %q in:\n%s", w, page)
		}
	}
	// Nothing is being worked on or waiting now (mcprt's own gauges).
	if f, q := metric(page, "mcprt_requests_in_flight"), metric(page, "mcprt_requests_queued"); f != 0 || q != 0 {
		t.Errorf("in flight %v, queued %v; want 0 and 0:\n%s", f, q, page)
	}
	// The mailboxes' depth: at rest a session may hold news posted for
	// its next wake-up (supervisor.Inbox.Post), not more.
	sum, most := metric(page, "mcprt_session_mailbox_messages"), metric(page, "mcprt_session_mailbox_messages_max")
	if !strings.Contains(page, "# TYPE mcprt_session_mailbox_messages gauge\n") || sum < 0 || sum > 4 || most < 0 || most > sum {
		t.Errorf("mailbox depth %v (deepest %v): want a small gauge at rest:\n%s", sum, most, page)
	}
	if n := strings.Count(page, "mcp_server_session_duration_seconds_count{"); n != 1 {
		t.Errorf("%d server session series, want 1 (the 2026-07-28 call has no session):\n%s", n, page)
	}
	if strings.Contains(page, "mcp_client_session_duration_seconds") {
		t.Errorf("the backend's connection has not ended, yet a client session was recorded:\n%s", page)
	}

	if code := gw.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("gateway exit %d", code)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	var last string
	for _, m := range rcv.metrics {
		if strings.Contains(m, `"gw-sessions"`) {
			last = m // cumulative: the last export has it all
		}
	}
	for _, w := range []string{`"name":"mcp.server.session.duration"`, `"name":"mcp.client.session.duration"`} {
		if !strings.Contains(last, w) {
			t.Errorf("the gateway's last OTLP export lacks %s:\n%s", w, last)
		}
	}
	if i := strings.Index(last, `"name":"mcp.client.session.duration"`); i >= 0 && !strings.Contains(last[i:], `"count":"1"`) {
		t.Errorf("client sessions: want a count of 1:\n%s", last[i:])
	}
}

// TestSessionDurationStdio: over stdio, a legacy session ends at stdin's
// EOF and its duration goes out over OTLP with network.transport pipe; a
// 2026-07-28 exchange (no initialize) has no session and records none.
func TestSessionDurationStdio(t *testing.T) {
	rcv := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")

	legacy := Start(t, Options{})
	legacy.Initialize("2025-11-25")
	if m := legacy.Call("ping", map[string]any{}); m.Error != nil {
		t.Fatalf("ping: %s", m)
	}
	legacy.CloseStdin()
	if _, ok := legacy.WaitExit(exitTimeout); !ok {
		t.Fatal("serve did not exit at EOF")
	}
	rcv.mu.Lock()
	var last string
	if n := len(rcv.metrics); n > 0 {
		last = rcv.metrics[n-1]
	}
	rcv.mu.Unlock()
	for _, w := range []string{`"name":"mcp.server.session.duration"`, `"stringValue":"pipe"`, `"stringValue":"2025-11-25"`, `"count":"1"`} {
		if !strings.Contains(last, w) {
			t.Errorf("the last OTLP export lacks %s:\n%s", w, last)
		}
	}

	rcv.mu.Lock()
	rcv.metrics = nil
	rcv.mu.Unlock()
	modern := Start(t, Options{})
	if m := modern.Call("tools/call", withMeta(map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}, meta())); m.Error != nil {
		t.Fatalf("2026-07-28 echo: %s", m)
	}
	modern.CloseStdin()
	if _, ok := modern.WaitExit(exitTimeout); !ok {
		t.Fatal("serve did not exit at EOF")
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.metrics) == 0 {
		t.Fatal("no OTLP metrics export of the 2026-07-28 exchange")
	}
	for _, m := range rcv.metrics {
		if strings.Contains(m, "session.duration") {
			t.Errorf("a 2026-07-28 exchange recorded a session:\n%s", m)
		}
	}
}
