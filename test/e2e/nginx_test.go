//go:build linux

package e2e

// Horizontal scale behind a real load balancer: two `mcprt serve -http`
// replicas behind nginx, configured with the very files runtime/streamhttp's doc quotes
// (testdata/nginx-modern.conf and testdata/nginx-legacy.conf; only their
// example addresses are replaced with the ports of this run). Skipped when
// nginx is not installed; CI installs it (.ci/run). Linux only: every child
// gets a parent-death signal, so that no replica or nginx outlives a test
// binary that is killed.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The example addresses of the testdata configurations.
const (
	nginxExampleListen = "127.0.0.1:8080"
	nginxExampleA      = "127.0.0.1:8081"
	nginxExampleB      = "127.0.0.1:8082"
	nginxExampleC      = "127.0.0.1:8083"
)

// nginxPath finds nginx (Debian installs it in /usr/sbin, which is not on
// every user's PATH), or skips the test.
func nginxPath(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	t.Skip("nginx is not installed (apt-get install nginx): the load-balancer tests need a real nginx")
	return ""
}

// nginxLog is a goroutine-safe log of a child's output.
type nginxLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *nginxLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *nginxLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// nginxReplica is one `mcprt serve -http` process.
type nginxReplica struct {
	name   string
	addr   string // host:port as bound
	cmd    *exec.Cmd
	stderr *nginxLog
	exited chan struct{}
}

// nginxStartReplica runs `mcprt serve -http 127.0.0.1:0 args...` and waits for
// the line that gives its address.
func nginxStartReplica(t testing.TB, name string, args ...string) *nginxReplica {
	t.Helper()
	return nginxStartReplicaAt(t, name, "127.0.0.1:0", args...)
}

// nginxStartReplicaAt is nginxStartReplica on a given address: a replica
// started again where nginx expects it.
func nginxStartReplicaAt(t testing.TB, name, addr string, args ...string) *nginxReplica {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"serve", "-http", addr}, args...)...)
	cmd.Env = append(os.Environ(), "LOG_LEVEL=debug")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &nginxReplica{name: name, cmd: cmd, stderr: &nginxLog{}, exited: make(chan struct{})}
	addrc := make(chan string, 1)
	go func() {
		const prefix = "mcprt: serving Streamable HTTP on http://"
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(r.stderr, line)
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				select {
				case addrc <- strings.TrimSuffix(rest, "/mcp"):
				default:
				}
			}
		}
		_, _ = io.Copy(r.stderr, pr)
		_ = cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() { r.stop(t) })
	select {
	case r.addr = <-addrc:
	case <-r.exited:
		t.Fatalf("replica %s exited before serving: %s", name, r.stderr)
	case <-time.After(15 * time.Second):
		t.Fatalf("replica %s did not say where it serves: %s", name, r.stderr)
	}
	return r
}

// stop ends the replica with SIGTERM (SIGKILL after 10s) and waits for it.
func (r *nginxReplica) stop(t testing.TB) {
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		t.Errorf("replica %s ignored SIGTERM for 10s; killing it", r.name)
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
}

// kill is the replica's sudden death.
func (r *nginxReplica) kill(t testing.TB) {
	t.Helper()
	_ = r.cmd.Process.Kill()
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("replica %s still running 10s after SIGKILL", r.name)
	}
}

// nginxCluster is nginx in front of replicas.
type nginxCluster struct {
	url      string // the MCP endpoint through nginx
	replicas map[string]*nginxReplica
	byAddr   map[string]string // replica address → name
	dir      string
	errLog   string
	client   *http.Client
}

// nginxStart runs nginx with the testdata configuration conf in front of a
// and b (in place of the example addresses), and waits until it accepts.
// nginxStart starts nginx with testdata/conf, its example addresses
// replaced: the listen address by a free one, the replicas' (8081, 8082,
// 8083) by those of replicas, in that order.
func nginxStart(t testing.TB, conf string, replicas ...*nginxReplica) *nginxCluster {
	t.Helper()
	bin := nginxPath(t)
	tmpl, err := os.ReadFile(filepath.Join("testdata", conf))
	if err != nil {
		t.Fatal(err)
	}
	examples := []string{nginxExampleA, nginxExampleB, nginxExampleC}[:len(replicas)]
	for _, ex := range append([]string{nginxExampleListen}, examples...) {
		if !bytes.Contains(tmpl, []byte(ex)) {
			t.Fatalf("testdata/%s lacks the example address %s", conf, ex)
		}
	}
	dir := t.TempDir()
	c := &nginxCluster{
		replicas: map[string]*nginxReplica{},
		byAddr:   map[string]string{},
		dir:      dir,
		errLog:   filepath.Join(dir, "error.log"),
		client:   &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4}},
	}
	var toActual []string
	for i, r := range replicas {
		c.replicas[r.name], c.byAddr[r.addr] = r, r.name
		toActual = append(toActual, examples[i], r.addr)
	}
	t.Cleanup(c.client.CloseIdleConnections)
	user := ""
	if os.Geteuid() == 0 {
		// Workers would run as nobody, who cannot enter t.TempDir().
		user = "user root;"
	}
	// The main context is the test's (in the foreground, everything in
	// dir); the http context includes the configuration as a user would.
	// X-Upstream tells the test which replica answered.
	main := fmt.Sprintf(`daemon off;
master_process on;
worker_processes 1;
%[2]s
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events { worker_connections 256; }
http {
    log_format upstream '$request_method $status "$http_mcp_session_id" "$http_mcp_method" -> $upstream_addr $upstream_status';
    access_log %[1]s/access.log upstream;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    add_header X-Upstream $upstream_addr always;
    include %[1]s/mcprt.conf;
}
`, dir, user)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		listen := nginxFreeAddr(t)
		site := strings.NewReplacer(append([]string{nginxExampleListen, listen}, toActual...)...).Replace(string(tmpl))
		if err := os.WriteFile(filepath.Join(dir, "mcprt.conf"), []byte(site), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", c.errLog)
		out := &nginxLog{}
		cmd.Stdout, cmd.Stderr = out, out
		// SIGTERM, not SIGKILL: the master then stops its worker.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		if nginxWaitListening(listen, exited, 10*time.Second) {
			t.Cleanup(func() {
				_ = cmd.Process.Signal(syscall.SIGTERM) // fast shutdown
				select {
				case <-exited:
				case <-time.After(10 * time.Second):
					t.Errorf("nginx ignored SIGTERM for 10s; killing it")
					_ = cmd.Process.Kill()
					<-exited
				}
				if t.Failed() {
					t.Logf("nginx error.log:\n%s", nginxReadFile(c.errLog))
					t.Logf("nginx access.log:\n%s", nginxReadFile(filepath.Join(dir, "access.log")))
					for _, r := range c.replicas {
						t.Logf("replica %s (%s) stderr:\n%s", r.name, r.addr, tail(r.stderr.String(), 4000))
					}
				}
			})
			c.url = "http://" + listen + "/mcp"
			return c
		}
		_ = cmd.Process.Kill()
		<-exited
		log := out.String() + nginxReadFile(c.errLog)
		if attempt < 3 && strings.Contains(log, "Address already in use") {
			continue
		}
		t.Fatalf("nginx did not start:\n%s", log)
	}
}

// nginxFreeAddr is a loopback address with a port nobody listens on (for now).
func nginxFreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func nginxWaitListening(addr string, exited <-chan struct{}, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func nginxReadFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// nginxReply is one HTTP exchange through nginx.
type nginxReply struct {
	status   int
	header   http.Header
	body     []byte            // the JSON body, or the raw SSE stream
	msgs     []json.RawMessage // the JSON body, or each SSE event's data
	upstream string            // the replica that answered ("" if none)
	tried    string            // X-Upstream as nginx sent it: every replica tried
	elapsed  []time.Duration   // when each message arrived, from the request
	readErr  error             // the body or stream did not end cleanly
}

// final is the last message: the response.
func (r *nginxReply) final(t *testing.T) *nginxMsg {
	t.Helper()
	if len(r.msgs) == 0 {
		t.Fatalf("no message in the reply (status %d, X-Upstream %q): %s", r.status, r.tried, r.body)
	}
	var m nginxMsg
	if err := json.Unmarshal(r.msgs[len(r.msgs)-1], &m); err != nil {
		t.Fatalf("reply is not JSON: %v: %s", err, r.body)
	}
	return &m
}

type nginxMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// result fails the test unless the message is a result.
func (m *nginxMsg) result(t *testing.T, what string) map[string]json.RawMessage {
	t.Helper()
	if m.Error != nil || m.Result == nil {
		b, _ := json.Marshal(m)
		t.Fatalf("%s: want a result, got %s", what, b)
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("%s: result is not an object: %s", what, m.Result)
	}
	return r
}

// do sends one request to url and reads the whole reply, a JSON body or an
// SSE stream, noting when each message arrived.
func (c *nginxCluster) do(t *testing.T, url, method string, hdr map[string]string, body any) *nginxReply {
	t.Helper()
	r, err := c.send(url, method, hdr, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if r.readErr != nil {
		t.Fatalf("%s %s: reading the reply: %v", method, url, r.readErr)
	}
	return r
}

// send is do for any goroutine: an error instead of a failed test.
func (c *nginxCluster) send(url, method string, hdr map[string]string, body any) (*nginxReply, error) {
	return c.sendWithin(0, url, method, hdr, body)
}

// sendWithin is send with a deadline for the whole exchange (0: none).
func (c *nginxCluster) sendWithin(within time.Duration, url, method string, hdr map[string]string, body any) (*nginxReply, error) {
	ctx := context.Background()
	if within > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, within)
		defer cancel()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	r := &nginxReply{status: resp.StatusCode, header: resp.Header, tried: resp.Header.Get("X-Upstream")}
	r.upstream = c.answeredBy(r.tried)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var raw bytes.Buffer
		sc := bufio.NewScanner(io.TeeReader(resp.Body, &raw))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				r.msgs = append(r.msgs, json.RawMessage(data))
				r.elapsed = append(r.elapsed, time.Since(start))
			}
		}
		r.readErr = sc.Err()
		r.body = raw.Bytes()
		if r.readErr != nil && ctx.Err() != nil {
			return nil, r.readErr
		}
		return r, nil
	}
	r.body, r.readErr = io.ReadAll(resp.Body)
	if r.readErr != nil {
		return nil, r.readErr
	}
	if len(bytes.TrimSpace(r.body)) > 0 && json.Valid(r.body) {
		r.msgs = []json.RawMessage{bytes.TrimSpace(r.body)}
		r.elapsed = []time.Duration{time.Since(start)}
	}
	return r, nil
}

// nginxFirstData reads an SSE stream up to its first data line.
func nginxFirstData(body io.Reader) (string, error) {
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return data, nil
		}
	}
	if sc.Err() != nil {
		return "", sc.Err()
	}
	return "", io.ErrUnexpectedEOF
}

// answeredBy names the replica that answered from $upstream_addr, which
// lists every server nginx tried ("a, b": a failed, b answered).
func (c *nginxCluster) answeredBy(upstreamAddr string) string {
	if upstreamAddr == "" {
		return ""
	}
	parts := strings.Split(upstreamAddr, ", ")
	last := strings.TrimSpace(parts[len(parts)-1])
	if n, ok := c.byAddr[last]; ok {
		return n
	}
	return last
}

// modern sends a 2026-07-28 request with its headers: MCP-Protocol-Version,
// Mcp-Method, and Mcp-Name for the methods that have one. caps are the
// clientCapabilities of its _meta. to is the URL (the cluster's, or a
// replica's own).
func (c *nginxCluster) modern(t *testing.T, to string, id int, method string, params map[string]any, caps map[string]any) *nginxReply {
	t.Helper()
	hdr, body := nginxModernRequest(id, method, params, caps)
	return c.do(t, to, http.MethodPost, hdr, body)
}

func nginxModernRequest(id int, method string, params map[string]any, caps map[string]any) (map[string]string, map[string]any) {
	if caps == nil {
		caps = map[string]any{}
	}
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientCapabilities": caps,
	}}
	for k, v := range params {
		p[k] = v
	}
	hdr := map[string]string{"MCP-Protocol-Version": modernVersion, "Mcp-Method": method}
	switch method {
	case "tools/call", "prompts/get":
		hdr["Mcp-Name"] = params["name"].(string)
	case "resources/read":
		hdr["Mcp-Name"] = params["uri"].(string)
	case "tasks/get", "tasks/update", "tasks/cancel":
		hdr["Mcp-Name"] = params["taskId"].(string)
	}
	return hdr, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p}
}

// nginxSession is a client's legacy session through nginx.
type nginxSession struct {
	id      string
	replica string
	tried   string // X-Upstream of its initialize
}

const nginxLegacyVersion = "2025-11-25"

// initialize opens a legacy session through nginx (no Mcp-Session-Id: it
// goes round robin) and checks that its id carries the tag of the replica
// that answered.
func (c *nginxCluster) initialize(t *testing.T) *nginxSession {
	t.Helper()
	r := c.do(t, c.url, http.MethodPost, nil, map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": nginxLegacyVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "nginx-e2e", "version": "1"},
	}})
	if r.status != http.StatusOK {
		t.Fatalf("initialize: status %d (X-Upstream %q): %s", r.status, r.tried, r.body)
	}
	res := r.final(t).result(t, "initialize")
	if string(res["protocolVersion"]) != strconv.Quote(nginxLegacyVersion) {
		t.Fatalf("initialize: protocolVersion %s", res["protocolVersion"])
	}
	s := &nginxSession{id: r.header.Get("Mcp-Session-Id"), replica: r.upstream, tried: r.tried}
	if tag, _, _ := strings.Cut(s.id, "."); tag != s.replica {
		t.Fatalf("initialize answered by replica %q (X-Upstream %q) gave session id %q: want the tag %q.", s.replica, r.tried, s.id, s.replica)
	}
	if n := c.legacy(t, s, http.MethodPost, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); n.status != http.StatusAccepted || n.upstream != s.replica {
		t.Fatalf("notifications/initialized: status %d via %q, want 202 via %s: %s", n.status, n.tried, s.replica, n.body)
	}
	return s
}

// legacy sends a message (or a GET/DELETE with a nil body) on a session.
func (c *nginxCluster) legacy(t *testing.T, s *nginxSession, method string, body any) *nginxReply {
	t.Helper()
	return c.do(t, c.url, method, map[string]string{"Mcp-Session-Id": s.id, "MCP-Protocol-Version": nginxLegacyVersion}, body)
}

// nginxEcho is a tools/call of echo, and a check of its text.
func nginxEcho(id int, text string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": "echo", "arguments": map[string]any{"text": text}}}
}

func nginxWantEcho(t *testing.T, r *nginxReply, text string) {
	t.Helper()
	res := r.final(t).result(t, "echo")
	var content []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(res["content"], &content)
	if len(content) != 1 || content[0].Text != text {
		t.Fatalf("echo %q: got %s", text, r.body)
	}
}

func nginxKeyFile(t testing.TB, name string) string {
	t.Helper()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	path := filepath.Join(t.TempDir(), name+".key")
	if err := os.WriteFile(path, []byte(hex.EncodeToString(b)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var nginxElicitCaps = map[string]any{"elicitation": map[string]any{}}

// firstAsk sends the elicit tool's first round until it lands on replica
// from; it must answer input_required.
func (c *nginxCluster) firstAsk(t *testing.T, from string) (state string, key string) {
	t.Helper()
	for try := 0; try < 6; try++ {
		r := c.modern(t, c.url, 100+try, "tools/call", map[string]any{"name": "elicit", "arguments": map[string]any{}}, nginxElicitCaps)
		res := r.final(t).result(t, "elicit, first round")
		var first struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		}
		b, _ := json.Marshal(res)
		_ = json.Unmarshal(b, &first)
		if r.status != http.StatusOK || first.ResultType != "input_required" || len(first.InputRequests) != 1 || first.RequestState == "" {
			t.Fatalf("elicit, first round via %s: status %d, want input_required with one input request and a requestState: %s", r.upstream, r.status, r.body)
		}
		if r.upstream != from {
			continue
		}
		for k := range first.InputRequests {
			key = k
		}
		return first.RequestState, key
	}
	t.Fatalf("six first rounds, none landed on replica %s: is nginx round-robin?", from)
	return "", ""
}

// nginxRetryParams is the elicit retry: the same tools/call, with the answers
// keyed as in inputRequests and the requestState echoed.
func nginxRetryParams(key, state, name string) map[string]any {
	return map[string]any{
		"name": "elicit", "arguments": map[string]any{},
		"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": name}}},
		"requestState":   state,
	}
}

// retryElsewhere sends the retry until it lands on a replica other than
// from; every attempt must pass check.
func (c *nginxCluster) retryElsewhere(t *testing.T, from, key, state, name string, check func(*nginxReply)) *nginxReply {
	t.Helper()
	for try := 0; try < 6; try++ {
		r := c.modern(t, c.url, 200+try, "tools/call", nginxRetryParams(key, state, name), nginxElicitCaps)
		check(r)
		if r.upstream != from && r.upstream != "" {
			return r
		}
	}
	t.Fatalf("six retries, all landed on replica %s: is nginx round-robin?", from)
	return nil
}

// TestNginxModernRoundRobin: 2026-07-28 behind nginx round robin
// (testdata/nginx-modern.conf) over two replicas that share a state key.
// Every kind of request is answered correctly by whichever replica gets it,
// both replicas serve, an SSE response streams through unbuffered, and an
// input_required retry answered by the other replica completes the call.
func TestNginxModernRoundRobin(t *testing.T) {
	t.Parallel()
	nginxPath(t)
	key := nginxKeyFile(t, "shared")
	a := nginxStartReplica(t, "a", "-http-state-key-file", key, "-max-in-flight", "2")
	b := nginxStartReplica(t, "b", "-http-state-key-file", key, "-max-in-flight", "2")
	c := nginxStart(t, "nginx-modern.conf", a, b)

	t.Run("every request answered, by both replicas", func(t *testing.T) {
		served := map[string]int{}
		for i := range 20 {
			var r *nginxReply
			switch i % 5 {
			case 0:
				r = c.modern(t, c.url, i, "server/discover", nil, nil)
				res := r.final(t).result(t, "server/discover")
				var versions []string
				_ = json.Unmarshal(res["supportedVersions"], &versions)
				if !hasString(versions, modernVersion) {
					t.Fatalf("server/discover: supportedVersions %s", res["supportedVersions"])
				}
			case 1:
				r = c.modern(t, c.url, i, "tools/list", nil, nil)
				if res := r.final(t).result(t, "tools/list"); !bytes.Contains(res["tools"], []byte(`"name":"elicit"`)) {
					t.Fatalf("tools/list: %s", r.body)
				}
			case 2:
				text := "echo " + strconv.Itoa(i)
				r = c.modern(t, c.url, i, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": text}}, nil)
				nginxWantEcho(t, r, text)
			case 3:
				r = c.modern(t, c.url, i, "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": i, "b": 0.5}}, nil)
				res := r.final(t).result(t, "add")
				if want := fmt.Sprintf(`{"sum":%d.5}`, i); string(res["structuredContent"]) != want {
					t.Fatalf("add: structuredContent %s, want %s", res["structuredContent"], want)
				}
			case 4:
				uri := "mcprt://reference/greeting/R" + strconv.Itoa(i)
				r = c.modern(t, c.url, i, "resources/read", map[string]any{"uri": uri}, nil)
				res := r.final(t).result(t, "resources/read")
				if !bytes.Contains(res["contents"], []byte(`"text":"Hello, R`+strconv.Itoa(i)+`!"`)) {
					t.Fatalf("resources/read: %s", r.body)
				}
			}
			if r.status != http.StatusOK {
				t.Fatalf("request %d: status %d: %s", i, r.status, r.body)
			}
			if id := string(r.final(t).ID); id != strconv.Itoa(i) {
				t.Fatalf("request %d answered with id %s", i, id)
			}
			served[r.upstream]++
		}
		if served["a"] == 0 || served["b"] == 0 || len(served) != 2 {
			t.Fatalf("served by %v: want both replicas, and only them", served)
		}
		t.Logf("20 requests served by %v", served)
	})

	t.Run("SSE streams through unbuffered", func(t *testing.T) {
		// sleep with a progress token sends a progress notification every
		// tenth of its time, so the response is an SSE stream; each event
		// must reach the client when sent, not at the end.
		const ms = 1500
		r := c.modern(t, c.url, 1, "tools/call", map[string]any{
			"name": "sleep", "arguments": map[string]any{"ms": ms},
			"_meta": map[string]any{"progressToken": "p1", "io.modelcontextprotocol/protocolVersion": modernVersion, "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
		}, nil)
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") || len(r.msgs) < 3 {
			t.Fatalf("want an SSE stream of progress then the result, got %s with %d messages: %s", ct, len(r.msgs), r.body)
		}
		r.final(t).result(t, "sleep")
		first, last := r.elapsed[0], r.elapsed[len(r.elapsed)-1]
		if last < ms*time.Millisecond || last-first < ms*time.Millisecond/2 {
			t.Fatalf("first event after %v, result after %v: the stream was buffered", first, last)
		}
		t.Logf("%d events via replica %s: first after %v, result after %v", len(r.msgs), r.upstream, first, last)
	})

	t.Run("subscriptions/listen streams, and closing one frees its slot", func(t *testing.T) {
		// The replicas run with -max-in-flight 2, a listen stream holds a
		// slot, and a listen past the bound is refused (503): if closing
		// the stream at the client did not reach the replica through
		// nginx, every listen after the fourth would be refused. (The
		// close reaches the replica a moment later: a 503 is retried.)
		for i := range 8 {
			listen := func() (status int, via, first string, err error) {
				hdr, body := nginxModernRequest(i, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil)
				b, _ := json.Marshal(body)
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(b))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				resp, err := c.client.Do(req)
				if err != nil {
					return 0, "", "", err
				}
				defer resp.Body.Close() // the client closes the stream
				first, err = nginxFirstData(resp.Body)
				return resp.StatusCode, resp.Header.Get("X-Upstream"), first, err
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				status, via, first, err := listen()
				if status == http.StatusServiceUnavailable && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
					continue
				}
				if err != nil || status != http.StatusOK || !strings.Contains(first, "notifications/subscriptions/acknowledged") {
					t.Fatalf("listen %d via %q: status %d: want the acknowledgement at once, got %q (%v): were the closed streams' slots not freed?", i, via, status, first, err)
				}
				break
			}
		}
		for i := range 4 {
			hdr, body := nginxModernRequest(i, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "after listens"}}, nil)
			r, err := c.sendWithin(5*time.Second, c.url, http.MethodPost, hdr, body)
			if err != nil {
				t.Fatalf("echo %d after the listens: %v (a replica's slots were not freed?)", i, err)
			}
			nginxWantEcho(t, r, "after listens")
		}
	})

	t.Run("input_required retry on the other replica", func(t *testing.T) {
		for _, dir := range [][2]string{{"a", "b"}, {"b", "a"}} {
			state, key := c.firstAsk(t, dir[0])
			name := "Ada-" + dir[0]
			r := c.retryElsewhere(t, dir[0], key, state, name, func(r *nginxReply) {
				res := r.final(t).result(t, "elicit, retry")
				if r.status != http.StatusOK || string(res["resultType"]) != `"complete"` ||
					!bytes.Contains(res["structuredContent"], []byte(`"greeting":"Hello, `+name+`!"`)) {
					t.Fatalf("elicit retry via replica %s: status %d: %s", r.upstream, r.status, r.body)
				}
			})
			if r.upstream != dir[1] {
				t.Fatalf("retry answered by %q, want %s", r.upstream, dir[1])
			}
			t.Logf("input_required from replica %s, retry completed by replica %s: %s", dir[0], r.upstream, r.body)
		}
	})

	t.Run("a replica dies", func(t *testing.T) {
		// An input_required from b, two long calls in flight (one on
		// each replica), then b dies.
		state, key := c.firstAsk(t, "b")
		type sent struct {
			r   *nginxReply
			err error
		}
		long := make(chan sent, 2)
		for i := range 2 {
			go func() {
				hdr, body := nginxModernRequest(400+i, "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 2000}}, nil)
				r, err := c.sendWithin(15*time.Second, c.url, http.MethodPost, hdr, body)
				long <- sent{r, err}
			}()
		}
		time.Sleep(500 * time.Millisecond)
		killed := time.Now()
		b.kill(t)
		got := map[string]int{}
		for range 2 {
			x := <-long
			if x.err != nil {
				t.Fatalf("a call in flight: %v", x.err)
			}
			t.Logf("call in flight when b died: %d after %v via %q, %s", x.r.status, time.Since(killed), x.r.tried, clip(bytes.TrimSpace(x.r.body)))
			switch x.r.upstream {
			case "a":
				x.r.final(t).result(t, "sleep on the survivor")
				got["a"]++
			case "b":
				if x.r.status != http.StatusBadGateway {
					t.Errorf("the call in flight on the dead replica: status %d, want 502", x.r.status)
				}
				got["b"]++
			}
		}
		if got["a"] != 1 || got["b"] != 1 {
			t.Fatalf("the two calls in flight went to %v: want one on each replica", got)
		}
		// The state b signed is good on a: the retry completes there.
		r := c.modern(t, c.url, 500, "tools/call", nginxRetryParams(key, state, "Grace"), nginxElicitCaps)
		if res := r.final(t).result(t, "retry after the issuing replica died"); r.upstream != "a" || !bytes.Contains(res["structuredContent"], []byte(`"greeting":"Hello, Grace!"`)) {
			t.Fatalf("retry after b died, via %q: %s", r.tried, r.body)
		}
		t.Logf("retry of b's input_required after b died: completed, X-Upstream %q", r.tried)
		// Every new request is answered, by a.
		for i := range 6 {
			text := "survivor " + strconv.Itoa(i)
			r := c.modern(t, c.url, 600+i, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": text}}, nil)
			nginxWantEcho(t, r, text)
			if r.upstream != "a" {
				t.Fatalf("after b died: answered by %q (X-Upstream %q)", r.upstream, r.tried)
			}
			if i == 0 {
				t.Logf("first request after b died: X-Upstream %q", r.tried)
			}
		}
	})
}

// TestNginxTasksFollowTheirReplica: a 2026-07-28 task lives on the replica
// that made it. Through either configuration, with tagged replicas serving
// tasks, each task's id carries the tag of the replica that answered its
// tools/call, and every tasks/get of it (Mcp-Name = its id) is routed
// there, while the calls that make tasks still go to both replicas.
func TestNginxTasksFollowTheirReplica(t *testing.T) {
	t.Parallel()
	nginxPath(t)
	key := nginxKeyFile(t, "tasks")
	a := nginxStartReplica(t, "a", "-http-session-tag", "a", "-http-state-key-file", key, "-tasks")
	b := nginxStartReplica(t, "b", "-http-session-tag", "b", "-http-state-key-file", key, "-tasks")
	tasksExt := map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	for _, conf := range []string{"nginx-modern.conf", "nginx-legacy.conf"} {
		t.Run(conf, func(t *testing.T) {
			c := nginxStart(t, conf, a, b)
			made := map[string]string{} // task id → replica that made it
			for i := range 6 {
				r := c.modern(t, c.url, i, "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 300}}, tasksExt)
				res := r.final(t).result(t, "tools/call")
				var id string
				if json.Unmarshal(res["taskId"], &id); id == "" || string(res["resultType"]) != `"task"` {
					t.Fatalf("tools/call sleep with the tasks extension: want a task, got %s", r.final(t).Result)
				}
				if tag, _, _ := strings.Cut(id, "."); tag != r.upstream {
					t.Fatalf("task %q made by replica %q (X-Upstream %q): want its tag", id, r.upstream, r.tried)
				}
				made[id] = r.upstream
			}
			if byReplica := slices.Sorted(maps.Values(made)); byReplica[0] == byReplica[len(byReplica)-1] {
				t.Fatalf("every task was made by replica %s: want round robin", byReplica[0])
			}
			n := 100
			for id, replica := range made {
				for deadline := time.Now().Add(callTimeout); ; n++ {
					r := c.modern(t, c.url, n, "tasks/get", map[string]any{"taskId": id}, tasksExt)
					if r.upstream != replica {
						t.Fatalf("tasks/get %s answered by %q (X-Upstream %q): want %s, the replica that made it", id, r.upstream, r.tried, replica)
					}
					res := r.final(t).result(t, "tasks/get")
					if string(res["status"]) == `"completed"` {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("task %s never completed: %s", id, r.final(t).Result)
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
}

// TestNginxModernKeysDiffer is the negative control: replicas that do not
// share a state key refuse each other's requestState, while the replica
// that issued it accepts the very same retry.
func TestNginxModernKeysDiffer(t *testing.T) {
	t.Parallel()
	nginxPath(t)
	a := nginxStartReplica(t, "a", "-http-state-key-file", nginxKeyFile(t, "a"))
	b := nginxStartReplica(t, "b", "-http-state-key-file", nginxKeyFile(t, "b"))
	c := nginxStart(t, "nginx-modern.conf", a, b)
	for _, dir := range [][2]string{{"a", "b"}, {"b", "a"}} {
		state, key := c.firstAsk(t, dir[0])
		r := c.retryElsewhere(t, dir[0], key, state, "Ada", func(r *nginxReply) {})
		m := r.final(t)
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "requestState") {
			t.Fatalf("retry with another replica's requestState, via %s: want error -32602 about requestState, got status %d: %s", r.upstream, r.status, r.body)
		}
		t.Logf("replica %s refused replica %s's requestState: HTTP %d %s", r.upstream, dir[0], r.status, bytes.TrimSpace(r.body))
		// The same retry, straight to the replica that issued the state.
		direct := c.modern(t, "http://"+c.replicas[dir[0]].addr+"/mcp", 300, "tools/call", nginxRetryParams(key, state, "Ada"), nginxElicitCaps)
		if res := direct.final(t).result(t, "retry to the issuing replica"); !bytes.Contains(res["structuredContent"], []byte(`"greeting":"Hello, Ada!"`)) {
			t.Fatalf("retry to the issuing replica %s: %s", dir[0], direct.body)
		}
	}
}

// TestNginxLegacySessionAffinity: legacy sessions behind nginx
// (testdata/nginx-legacy.conf), routed on the replica tag of their session
// id. Each session's requests land on its replica; when that replica dies
// the client gets 404 for the session (for a call in flight too), and
// initializing again lands on the survivor.
func TestNginxLegacySessionAffinity(t *testing.T) {
	t.Parallel()
	nginxPath(t)
	key := nginxKeyFile(t, "shared")
	a := nginxStartReplica(t, "a", "-http-session-tag", "a", "-http-state-key-file", key)
	b := nginxStartReplica(t, "b", "-http-session-tag", "b", "-http-state-key-file", key)
	c := nginxStart(t, "nginx-legacy.conf", a, b)

	// initialize goes round robin: open sessions until each replica has one.
	sessions := map[string]*nginxSession{}
	for i := 0; len(sessions) < 2; i++ {
		if i == 6 {
			t.Fatalf("six initializes did not reach both replicas: %v", sessions)
		}
		s := c.initialize(t)
		if sessions[s.replica] == nil {
			sessions[s.replica] = s
		}
	}
	sa, sb := sessions["a"], sessions["b"]
	t.Logf("sessions %s and %s", sa.id, sb.id)

	// Every request of a session lands on its replica.
	for i := range 10 {
		for _, s := range []*nginxSession{sa, sb} {
			var r *nginxReply
			if i%2 == 0 {
				text := s.replica + " " + strconv.Itoa(i)
				r = c.legacy(t, s, http.MethodPost, nginxEcho(i, text))
				nginxWantEcho(t, r, text)
			} else {
				r = c.legacy(t, s, http.MethodPost, map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/list"})
				r.final(t).result(t, "tools/list")
			}
			if r.status != http.StatusOK || r.upstream != s.replica || r.tried != c.replicas[s.replica].addr {
				t.Fatalf("session %s: request %d: status %d via %q, want 200 via %s only", s.id, i, r.status, r.tried, s.replica)
			}
		}
	}

	// An SSE response streams through, on the session's replica.
	r := c.legacy(t, sb, http.MethodPost, map[string]any{"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": map[string]any{
		"name": "sleep", "arguments": map[string]any{"ms": 600}, "_meta": map[string]any{"progressToken": 7},
	}})
	if r.upstream != "b" || len(r.msgs) < 3 || r.elapsed[len(r.elapsed)-1]-r.elapsed[0] < 250*time.Millisecond {
		t.Fatalf("progress on session b: via %q, %d messages, at %v: %s", r.tried, len(r.msgs), r.elapsed, r.body)
	}
	r.final(t).result(t, "sleep")

	// 2026-07-28 requests carry no session id: round robin, as in the
	// other configuration.
	served := map[string]int{}
	for i := range 4 {
		r := c.modern(t, c.url, i, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "modern"}}, nil)
		nginxWantEcho(t, r, "modern")
		served[r.upstream]++
	}
	if served["a"] == 0 || served["b"] == 0 {
		t.Fatalf("2026-07-28 requests through the legacy configuration served by %v: want both replicas", served)
	}

	// A session id with no replica's tag goes round robin, and the replica
	// that gets it does not know it: 404 from mcprt itself.
	ghost := &nginxSession{id: "c.00000000000000000000000000000000"}
	if r := c.legacy(t, ghost, http.MethodPost, nginxEcho(1, "x")); r.status != http.StatusNotFound || r.upstream == "" || !strings.Contains(string(r.body), "no session") {
		t.Fatalf("unknown tag: want 404 from a replica, got %d via %q: %s", r.status, r.tried, r.body)
	}

	// When a dies, session a has its GET stream open and a call in flight.
	get, err := http.NewRequest(http.MethodGet, c.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sa.id)
	getResp, err := c.client.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer getResp.Body.Close()
	if getResp.StatusCode != http.StatusOK || !strings.HasPrefix(getResp.Header.Get("Content-Type"), "text/event-stream") || c.answeredBy(getResp.Header.Get("X-Upstream")) != "a" {
		t.Fatalf("GET stream of session a: %s, %s via %q", getResp.Status, getResp.Header.Get("Content-Type"), getResp.Header.Get("X-Upstream"))
	}
	getEnded := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, getResp.Body)
		getEnded <- err
	}()
	type sent struct {
		r   *nginxReply
		err error
	}
	inFlight := make(chan sent, 1)
	go func() {
		r, err := c.send(c.url, http.MethodPost, map[string]string{"Mcp-Session-Id": sa.id, "MCP-Protocol-Version": nginxLegacyVersion},
			map[string]any{"jsonrpc": "2.0", "id": "long", "method": "tools/call", "params": map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 30000}}})
		inFlight <- sent{r, err}
	}()
	time.Sleep(500 * time.Millisecond) // the call reaches a and sleeps
	killed := time.Now()
	a.kill(t)

	select {
	case x := <-inFlight:
		if x.err != nil {
			t.Fatalf("call in flight when its replica died: %v", x.err)
		}
		t.Logf("call in flight on session a when a died: %d after %v via %q: %s", x.r.status, time.Since(killed), x.r.tried, bytes.TrimSpace(x.r.body))
		if x.r.status != http.StatusNotFound {
			t.Errorf("call in flight when its replica died: status %d, want 404: %s", x.r.status, x.r.body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight on the dead replica is still waiting after 10s")
	}
	select {
	case err := <-getEnded:
		t.Logf("GET stream of session a: ended %v after a died (%v)", time.Since(killed), err)
	case <-time.After(10 * time.Second):
		t.Fatal("the GET stream of the dead replica's session did not end within 10s")
	}

	// Session a is gone: 404 for every kind of request, as mcprt answers
	// a session it does not know, so the client initializes again.
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		var body any
		if m == http.MethodPost {
			body = nginxEcho(50, "anyone there?")
		}
		r := c.legacy(t, sa, m, body)
		if r.status != http.StatusNotFound || r.tried != a.addr {
			t.Fatalf("%s on the dead replica's session: status %d via %q, want 404 having tried %s: %s", m, r.status, r.tried, a.addr, r.body)
		}
		if m == http.MethodPost {
			if e := r.final(t).Error; e == nil || e.Code != -32600 || !strings.Contains(e.Message, "initialize") {
				t.Fatalf("404 body: want a JSON-RPC error telling to initialize again: %s", r.body)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("404 Content-Type %q", ct)
			}
			t.Logf("client of the dead replica's session sees: %d %s", r.status, bytes.TrimSpace(r.body))
		}
	}

	// Initializing again always lands on the survivor, even when round
	// robin tries the dead replica first.
	for i := range 3 {
		s := c.initialize(t)
		if s.replica != "b" || !strings.HasPrefix(s.id, "b.") {
			t.Fatalf("initialize %d after a died: session %q on %q", i, s.id, s.replica)
		}
		t.Logf("initialize again after a died: session %s, X-Upstream %q", s.id, s.tried)
		if r := c.legacy(t, s, http.MethodPost, nginxEcho(60+i, "again")); r.upstream != "b" {
			t.Fatalf("new session's call via %q", r.tried)
		} else {
			nginxWantEcho(t, r, "again")
		}
	}
	// b's own session never noticed.
	nginxWantEcho(t, c.legacy(t, sb, http.MethodPost, nginxEcho(70, "still here")), "still here")

	// DELETE ends b's session; its id then gets 404 from b itself.
	if r := c.legacy(t, sb, http.MethodDelete, nil); r.status != http.StatusNoContent || r.upstream != "b" {
		t.Fatalf("DELETE: status %d via %q", r.status, r.tried)
	}
	if r := c.legacy(t, sb, http.MethodPost, nginxEcho(71, "x")); r.status != http.StatusNotFound || r.upstream != "b" {
		t.Fatalf("after DELETE: status %d via %q: %s", r.status, r.tried, r.body)
	}

	// With no replica left: 404 for a session, 502 for a new one.
	b.kill(t)
	if r := c.legacy(t, sb, http.MethodPost, nginxEcho(80, "x")); r.status != http.StatusNotFound {
		t.Fatalf("session with no replica left: status %d: %s", r.status, r.body)
	}
	r = c.do(t, c.url, http.MethodPost, nil, map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": nginxLegacyVersion, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"},
	}})
	if r.status != http.StatusBadGateway {
		t.Fatalf("initialize with no replica left: status %d, want 502: %s", r.status, r.body)
	}
}

// TestNginxDocQuotesTestdata: the package doc of runtime/streamhttp
// (section "Scaling out", shown by go doc) quotes the configurations these
// tests run, verbatim, as indented blocks.
func TestNginxDocQuotesTestdata(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "runtime", "streamhttp", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n// # Scaling out\n")
	if !ok {
		t.Fatal(`runtime/streamhttp/doc.go has no section "# Scaling out"`)
	}
	for _, name := range []string{"nginx-modern.conf", "nginx-legacy.conf"} {
		conf, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		var quoted strings.Builder
		for _, line := range strings.Split(strings.TrimSuffix(string(conf), "\n"), "\n") {
			if line == "" {
				quoted.WriteString("//\n")
			} else {
				quoted.WriteString("//\t" + line + "\n")
			}
		}
		if !strings.Contains(section, "//\n"+quoted.String()+"//\n") {
			t.Errorf("runtime/streamhttp/doc.go's section \"Scaling out\" does not quote test/e2e/testdata/%s verbatim", name)
		}
	}
}
