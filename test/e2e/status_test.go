package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostile is what the noisy backend writes to its stderr: markup a page
// must show as text.
const hostile = `<script>document.title="pwned"</script><img src=x onerror=alert(1)>`

// statusGateway starts a gateway serving -http-status /status and
// -http-metrics /metrics in front of good (the backend entry given) and
// noisy (mcprt serve behind a script that first writes hostile to
// stderr); it returns the gateway and the base URL, once both backends
// are up.
func statusGateway(t *testing.T, f *gwFixture, good map[string]any) (*httpProc, string) {
	t.Helper()
	noisy := f.script("noisy", fmt.Sprintf("echo '%s' >&2\nexec %s serve\n", hostile, f.mcprt("noisy-bin")))
	gw := f.startGatewayHTTP(f.config(map[string]any{
		"good":  good,
		"noisy": map[string]any{"command": noisy, "env": map[string]string{"LOG_LEVEL": "warn"}},
	}), "-http-status", "/status", "-http-metrics", "/metrics")
	base := strings.TrimSuffix(gw.url, "/mcp")
	waitPage(t, base+"/status", `data-backend="good" data-state="up"`, `data-backend="noisy" data-state="up"`)
	return gw, base
}

// waitPage waits until the page at u holds every one of wants.
func waitPage(t *testing.T, u string, wants ...string) string {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	for {
		code, body := get(t, "GET", u, "")
		ok := code == 200
		for _, w := range wants {
			ok = ok && strings.Contains(body, w)
		}
		if ok {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %q: %d\n%s", u, wants, code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHTTPStatusPage: -http-status serves a page of the gateway's
// backends (their state and pid, what they wrote to stderr as text), its
// tasks and sessions; mcprt serve's has no backends. A browser page of
// another origin is refused, as on -http-metrics; with -http-token-file
// the page takes the token; its path must be its own.
func TestHTTPStatusPage(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	gw, base := statusGateway(t, f, f.serve("good", nil))
	if out, err := exec.Command(binPath, "call", "-url", gw.url, "good__echo", `{"text":"hi"}`).CombinedOutput(); err != nil {
		t.Fatalf("call: %v\n%s", err, out)
	}
	body := waitPage(t, base+"/status", "<svg")
	if strings.Contains(body, "<script") || strings.Contains(body, "<img") {
		t.Errorf("the backend's stderr reached the page as markup:\n%s", body)
	}
	for _, want := range []string{
		`&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;`,
		`<table id="tasks">`, `<table id="sessions">`, "mcprt gateway",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	// The pid is the process the gateway started: mcprt guard, which
	// runs the backend, where it has one.
	shown := false
	for _, pid := range append(f.procs("good"), f.guards("good")...) {
		shown = shown || strings.Contains(body, fmt.Sprintf(`<td class="num pid">%d</td>`, pid))
	}
	if !shown {
		t.Errorf("the page lacks good's pid (%v, guards %v):\n%s", f.procs("good"), f.guards("good"), body)
	}
	if code, _ := get(t, "GET", base+"/status", "http://evil.example"); code != 403 {
		t.Errorf("with an Origin: %d, want 403", code)
	}
	if code := gw.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("gateway exit %d", code)
	}

	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret-status-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startHTTP(t, binPath, "serve", "-http", "127.0.0.1:0", "-http-status", "/status", "-http-token-file", token)
	page := strings.TrimSuffix(srv.url, "/mcp") + "/status"
	if code, _ := get(t, "GET", page, ""); code != 401 {
		t.Errorf("serve's page without the token: %d, want 401", code)
	}
	req, _ := http.NewRequest("GET", page, nil)
	req.Header.Set("Authorization", "Bearer s3cret-status-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("serve's page with the token: %d %v", resp.StatusCode, resp.Header)
	}
	if code := srv.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("serve exit %d", code)
	}

	out, err := exec.Command(binPath, "serve", "-http", "127.0.0.1:0", "-http-metrics", "/m", "-http-status", "/m").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "-http-status wants a path of its own") {
		t.Errorf("-http-status on the metrics path: %v\n%s", err, out)
	}
}

// TestPrometheusScrapesMetrics: a real Prometheus (Debian's prometheus
// package) scrapes the gateway's -http-metrics, and its query API gives
// the series back; promtool check metrics finds no problem with the page.
func TestPrometheusScrapesMetrics(t *testing.T) {
	t.Parallel()
	prom, err1 := exec.LookPath("prometheus")
	promtool, err2 := exec.LookPath("promtool")
	if err1 != nil || err2 != nil {
		t.Skip("prometheus and promtool are not installed (Debian: apt-get install prometheus); .ci/run installs them")
	}
	f := newGateway(t)
	gw, base := statusGateway(t, f, f.serve("good", map[string]any{"backoff": "50ms"}))
	if out, err := exec.Command(binPath, "call", "-url", gw.url, "good__echo", `{"text":"hi"}`).CombinedOutput(); err != nil {
		t.Fatalf("call: %v\n%s", err, out)
	}
	// Kill good once: its restart is counted by cause.
	for _, pid := range f.procs("good") {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	waitPage(t, base+"/metrics", `mcprt_gateway_backend_restart_causes_total{backend="good",reason="exited"} 1`, `mcprt_gateway_backend_state{backend="good",state="up"} 1`)

	_, page := get(t, "GET", base+"/metrics", "")
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(page)
	if out, err := check.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	dir := t.TempDir()
	target := strings.TrimPrefix(base, "http://")
	cfg := fmt.Sprintf("global:\n  scrape_interval: 200ms\n  scrape_timeout: 200ms\nscrape_configs:\n  - job_name: mcprt\n    metrics_path: /metrics\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })

	for _, q := range []struct{ query, want string }{
		{`mcprt_gateway_backend_state{backend="good",state="up"}`, "1"},
		{`mcprt_gateway_tool_calls_total{backend="good",tool="echo",outcome="ok"}`, "1"},
		{`mcprt_gateway_backend_restart_causes_total{backend="good",reason="exited"}`, "1"},
		{`up{job="mcprt"}`, "1"},
	} {
		deadline := time.Now().Add(60 * time.Second)
		for {
			v, err := promQuery("http://"+addr, q.query)
			if err == nil && v == q.want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Prometheus never gave %s = %s (last %q, %v); its log:\n%s", q.query, q.want, v, err, tail(log.String(), 3000))
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if code := gw.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("gateway exit %d", code)
	}
}

// promQuery asks Prometheus's HTTP API for an instant vector of one
// series and returns its value.
func promQuery(base, query string) (string, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return "", err
	}
	if r.Status != "success" || len(r.Data.Result) != 1 {
		return "", fmt.Errorf("status %q, %d series", r.Status, len(r.Data.Result))
	}
	v, _ := r.Data.Result[0].Value[1].(string)
	return v, nil
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestStatusPageInChromium: the status page in a real headless browser
// (Debian's chromium): it renders, its DOM names each backend and its
// state, and a backend killed with SIGKILL shows as restarting, then up.
// The screenshots are kept in $MCPRT_ARTIFACTS when it names a directory,
// else in the test's temporary directory (said in the test's log).
func TestStatusPageInChromium(t *testing.T) {
	t.Parallel()
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian: apt-get install chromium); .ci/run installs it")
	}
	artifacts := os.Getenv("MCPRT_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	} else if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	f := newGateway(t)
	// good starts only while the hold file is absent: after its kill it
	// stays restarting as long as the browser needs to see it so.
	hold := filepath.Join(f.dir, "hold")
	good := f.script("good", fmt.Sprintf("while [ -e %s ]; do sleep 0.05; done\nexec %s serve\n", hold, f.mcprt("good-bin")))
	gw, base := statusGateway(t, f, map[string]any{"command": good, "backoff": "50ms", "timeout": "120s", "env": map[string]string{"LOG_LEVEL": "warn"}})
	page := base + "/status"
	for _, text := range []string{"one", "two", "three"} { // for the latency chart
		if out, err := exec.Command(binPath, "call", "-url", gw.url, "good__echo", `{"text":"`+text+`"}`).CombinedOutput(); err != nil {
			t.Fatalf("call: %v\n%s", err, out)
		}
	}

	dom := chromium(t, browser, "--dump-dom", page)
	for _, want := range []string{`data-backend="good" data-state="up"`, `data-backend="noisy" data-state="up"`, "<svg"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %q:\n%s", want, dom)
		}
	}
	// The browser parsed the stderr line as text: no element came of it,
	// and the title is the page's.
	if strings.Contains(dom, "<script") || strings.Contains(dom, "<img") || !strings.Contains(dom, "<title>mcprt gateway: status</title>") {
		t.Errorf("the backend's stderr became markup in the browser:\n%s", dom)
	}
	if !strings.Contains(dom, `&lt;script&gt;document.title="pwned"&lt;/script&gt;`) {
		t.Errorf("the DOM does not show the backend's stderr as text:\n%s", dom)
	}
	shot(t, browser, page, filepath.Join(artifacts, "status-up.png"))
	goodUp := regexp.MustCompile(`data-backend="good" data-state="up">\s*<td class="name">good</td>\s*<td class="state state-up">up</td>\s*<td class="num pid">(\d+)</td>`)
	before := goodUp.FindStringSubmatch(dom)
	if before == nil {
		t.Fatalf("the DOM does not give good's pid:\n%s", dom)
	}

	pids := f.procs("good-bin")
	if len(pids) != 1 {
		t.Fatalf("good's processes: %v", pids)
	}
	if err := os.WriteFile(hold, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitPage(t, page, `data-backend="good" data-state="restarting"`)
	dom = chromium(t, browser, "--dump-dom", page)
	if !strings.Contains(dom, `data-backend="good" data-state="restarting"`) || !strings.Contains(dom, "server killed by signal killed") {
		t.Errorf("the DOM does not show good restarting after its kill:\n%s", dom)
	}
	shot(t, browser, page, filepath.Join(artifacts, "status-restarting.png"))
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	waitPage(t, page, `data-backend="good" data-state="up"`)
	dom = chromium(t, browser, "--dump-dom", page)
	if after := goodUp.FindStringSubmatch(dom); after == nil || after[1] == before[1] {
		t.Errorf("the DOM does not show good up again under a new pid (was %s):\n%s", before[1], dom)
	}
	shot(t, browser, page, filepath.Join(artifacts, "status-up-again.png"))
	if code := gw.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("gateway exit %d", code)
	}
}

// chromium runs the headless browser on args and returns its stdout.
func chromium(t *testing.T, browser string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir()}, args...)
	cmd := exec.CommandContext(ctx, browser, all...)
	// Its helpers (zygote, GPU, crashpad) are in its process group: all
	// of it goes when it times out.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, tail(stderr.String(), 3000))
	}
	return stdout.String()
}

// shot keeps a screenshot of the page at path.
func shot(t *testing.T, browser, page, path string) {
	t.Helper()
	chromium(t, browser, "--screenshot="+path, "--window-size=1200,900", page)
	st, err := os.Stat(path)
	if err != nil || st.Size() < 1000 {
		t.Fatalf("no screenshot at %s: %v", path, err)
	}
	t.Logf("screenshot: %s", path)
}
