//go:build linux

package e2e

import (
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

// Who a task belongs to, and what bounds it: a 2025-11-25 task over HTTP
// outlives its session (bound by its id, not the Mcp-Session-Id), a DELETE
// cancels the session's running tasks, blocked tasks/result requests leave
// the slots plain calls need, and the bounds on tasks count per client.

func legacyHTTP(t *testing.T, url string) *client.Client {
	return connectHTTP(t, url, client.Options{Version: "2025-11-25"})
}

// startTask makes a task of name, failing the test unless it is one.
func startTask(t *testing.T, c *client.Client, name string, args any) string {
	t.Helper()
	tk, raw, err := c.CallToolTask(testCtx(t), name, args)
	if err != nil || tk == nil {
		t.Fatalf("%s as a task: %v (%s)", name, err, raw)
	}
	return tk.ID
}

// TestLegacyHTTPTasksSurviveRestart: a 2025-11-25 client over Streamable
// HTTP makes a task that completes and one that runs, the server is
// killed (SIGKILL) and started again on the same -tasks-dir, and the
// client, initialized again (a new session), gets both back by id: the
// completed one's result as it was, the running one failed saying why. Its
// new session lists neither (tasks/list lists a session's own tasks
// without a caller), as the old one listed both.
func TestLegacyHTTPTasksSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	args := []string{"serve", "-http", "127.0.0.1:0", "-fixture", "conformance", "-tasks-dir", dir}
	p := startHTTP(t, binPath, args...)
	c := legacyHTTP(t, p.url)
	done := startTask(t, c, "slow_compute", map[string]any{"seconds": 0, "label": "legacy"})
	res, err := c.TaskResult(testCtx(t), done)
	if err != nil || !strings.Contains(string(res), `computed \"legacy\"`) {
		t.Fatalf("tasks/result: %s, %v", res, err)
	}
	running := startTask(t, c, "slow_compute", map[string]any{"seconds": 3600, "label": "long"})
	if l, err := c.ListTasks(testCtx(t)); err != nil || len(l) != 2 {
		t.Fatalf("the session's tasks/list: %+v, %v; want its 2 tasks", l, err)
	}
	_ = p.cmd.Process.Kill()
	<-p.exited

	p = startHTTP(t, binPath, args...)
	c = legacyHTTP(t, p.url)
	if tk, err := c.GetTask(testCtx(t), done); err != nil || tk.Status != client.TaskCompleted {
		t.Fatalf("completed task after kill -9, from a new session: %+v, %v", tk, err)
	}
	if again, err := c.TaskResult(testCtx(t), done); err != nil || string(again) != string(res) {
		t.Fatalf("result after kill -9: %s, %v\nbefore: %s", again, err, res)
	}
	if tk, err := c.GetTask(testCtx(t), running); err != nil || tk.Status != client.TaskFailed || !strings.Contains(tk.StatusMessage, "restarted") {
		t.Fatalf("running task after kill -9: %+v, %v; want failed, saying the server restarted", tk, err)
	}
	if l, err := c.ListTasks(testCtx(t)); err != nil || len(l) != 0 {
		t.Fatalf("a new session's tasks/list: %+v, %v; want none (the old ones are got by id)", l, err)
	}
}

// TestDeletedSessionCancelsItsTasks: a legacy session DELETEd (its client
// closed) cancels the task it left running, and its completed task's
// result is still served, by id, to the client's next session.
func TestDeletedSessionCancelsItsTasks(t *testing.T) {
	p := startHTTP(t, binPath, "serve", "-http", "127.0.0.1:0", "-tasks-dir", t.TempDir())
	c := legacyHTTP(t, p.url)
	done := startTask(t, c, "sleep", map[string]any{"ms": 1})
	res, err := c.TaskResult(testCtx(t), done)
	if err != nil {
		t.Fatal(err)
	}
	running := startTask(t, c, "sleep", map[string]any{"ms": 3600_000})
	if err := c.Close(); err != nil { // DELETE
		t.Fatalf("closing the session: %v", err)
	}
	c = legacyHTTP(t, p.url)
	if tk, err := c.GetTask(testCtx(t), running); err != nil || tk.Status != client.TaskCancelled || !strings.Contains(tk.StatusMessage, "session") {
		t.Fatalf("the DELETEd session's running task: %+v, %v; want cancelled, saying why", tk, err)
	}
	if again, err := c.TaskResult(testCtx(t), done); err != nil || string(again) != string(res) {
		t.Fatalf("the DELETEd session's completed task: %s, %v; want its result %s", again, err, res)
	}
}

// TestBlockedTaskResultsLeaveSlots: a client with 600 tasks running
// waits for each with tasks/result (more than the 512 -max-in-flight
// slots); its plain tools/call is still answered, while every
// tasks/result is still blocked (the tasks sleep for an hour).
func TestBlockedTaskResultsLeaveSlots(t *testing.T) {
	c := Start(t, Options{Args: []string{"-tasks"}})
	c.Initialize("2025-11-25")
	const n = 600
	ids := make([]string, n)
	for i := range ids {
		key := c.Request(c.NewID(), "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 3600_000}, "task": map[string]any{}})
		m := c.Response(key, callTimeout)
		tk := readTask(t, m.Result)
		if m.Error != nil || tk.TaskID == "" {
			t.Fatalf("task %d: %s", i, m)
		}
		ids[i] = tk.TaskID
	}
	results := make([]string, n)
	for i, id := range ids {
		results[i] = c.Request(c.NewID(), "tasks/result", map[string]any{"taskId": id})
	}
	// The last tasks/result has been taken up (or parked) before the call
	// is read: the server reads its stdin in order.
	m := c.Call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "still here"}})
	if m.Error != nil || !strings.Contains(string(m.Result), "still here") {
		t.Fatalf("plain call behind %d blocked tasks/result: %s", n, m)
	}
	for i, key := range results {
		if r := c.WaitResponse(key, 0); r != nil {
			t.Fatalf("tasks/result %d answered while its task sleeps: %s", i, r)
		}
	}
}

// modernFrom is a 2026-07-28 client whose connections come from the
// loopback address src (any 127/8 address is the machine's own on Linux).
func modernFrom(t *testing.T, url, src string) *client.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: callTimeout}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return connectHTTP(t, url, client.Options{Era: client.EraModern, HTTPClient: &http.Client{Transport: tr}})
}

// TestAnonymousClientsHaveOwnTaskBudgets: two 2026-07-28 clients without
// a caller, from different addresses, each get -tasks-max-per-client
// tasks: one at its bound does not lock the other out.
func TestAnonymousClientsHaveOwnTaskBudgets(t *testing.T) {
	p := startHTTP(t, binPath, "serve", "-http", "127.0.0.1:0", "-tasks", "-tasks-max-per-client", "2")
	a, b := modernFrom(t, p.url, "127.0.0.1"), modernFrom(t, p.url, "127.0.0.2")
	long := map[string]any{"ms": 3600_000}
	for range 2 {
		startTask(t, a, "sleep", long)
	}
	if tk, _, err := a.CallToolTask(testCtx(t), "sleep", long); err == nil || !strings.Contains(err.Error(), "too many tasks in progress for this client") {
		t.Fatalf("a's third task: %+v, %v; want refused, at its bound", tk, err)
	}
	for i := range 2 {
		if tk, raw, err := b.CallToolTask(testCtx(t), "sleep", long); err != nil || tk == nil {
			t.Fatalf("task %d of a client from another address, with the first at its bound: %v (%s)", i, err, raw)
		}
	}
	if _, _, err := b.CallToolTask(testCtx(t), "sleep", long); err == nil {
		t.Fatal("b's third task was made; want refused, at its own bound")
	}
}

// TestEndedTasksBoundedPerClient: with -tasks-max-ended-per-client 3, a
// client's five tasks that completed leave the newest three; the two that
// ended first are unknown.
func TestEndedTasksBoundedPerClient(t *testing.T) {
	c := Start(t, Options{Args: []string{"-tasks", "-tasks-max-ended-per-client", "3"}})
	c.Initialize("2025-11-25")
	var ids []string
	for i := range 5 {
		m := c.Call("tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 1}, "task": map[string]any{}})
		id := readTask(t, m.Result).TaskID
		if r := c.Call("tasks/result", map[string]any{"taskId": id}); r.Error != nil {
			t.Fatalf("task %d's result: %s", i, r)
		}
		ids = append(ids, id)
	}
	for i, id := range ids {
		m := c.Call("tasks/get", map[string]any{"taskId": id})
		gone := m.Error != nil && m.Error.Code == -32602
		if gone != (i < 2) {
			t.Errorf("task %d of 5 (ended in that order): %s; want the 2 oldest unknown, the newest 3 kept", i, m)
		}
	}
}

// TestGatewayRepollsTaskThroughBackendRestart: a gateway's task awaits a
// remote 2026-07-28 backend's task; the backend is killed (SIGKILL) and
// started again on the same -tasks-dir, where its task (the reference
// sleep, resumable) runs again. The gateway, its connection broken (a
// proxy in front of the backend answers 502 meanwhile), reconnects and
// polls the same task again, rather than fail its own at the first
// connection error: the client gets the backend's result.
func TestGatewayRepollsTaskThroughBackendRestart(t *testing.T) {
	bdir := t.TempDir()
	backend := startHTTP(t, binPath, "serve", "-http", "127.0.0.1:0", "-tasks-dir", bdir)
	var target atomic.Pointer[url.URL]
	setTarget := func(raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		target.Store(u)
	}
	setTarget(backend.url)
	polled := make(chan struct{}, 1) // a tasks/get reached the proxy
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(target.Load()); r.Out.URL.Path = target.Load().Path },
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") == "tasks/get" {
			select {
			case polled <- struct{}{}:
			default:
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	cfg := filepath.Join(t.TempDir(), "gateway.json")
	raw, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"remote": map[string]any{"url": proxy.URL + "/mcp"}}})
	if err := os.WriteFile(cfg, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startHTTP(t, binPath, "gateway", "-config", cfg, "-http", "127.0.0.1:0")
	c := connectHTTP(t, gw.url, client.Options{Era: client.EraModern})
	tk, res, err := c.CallToolTask(testCtx(t), "remote__sleep", map[string]any{"ms": 2000})
	if err != nil || tk == nil {
		t.Fatalf("a task through the gateway: %v (%s)", err, res)
	}
	// The gateway polls the backend's task: it has its id. Kill the
	// backend then.
	select {
	case <-polled:
	case <-time.After(callTimeout):
		t.Fatalf("the gateway never polled its backend's task:\n%s", gw.stderr)
	}
	_ = backend.cmd.Process.Kill()
	<-backend.exited
	// The gateway polls the backend's task while it is gone: it says it
	// will poll again (or, as before, fails its task).
	for deadline := time.Now().Add(callTimeout); !strings.Contains(gw.stderr.String(), "polling the task again once reconnected"); time.Sleep(20 * time.Millisecond) {
		if got, err := c.GetTask(testCtx(t), tk.ID); err != nil || got.Status != client.TaskWorking {
			t.Fatalf("the gateway's task, its backend killed: %+v %s, %v; want working, the backend polled again once back", got, got.Result, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway never polled the killed backend's task:\n%s", gw.stderr)
		}
	}
	setTarget(startHTTP(t, binPath, "serve", "-http", "127.0.0.1:0", "-tasks-dir", bdir).url)
	out, err := c.AwaitTask(testCtx(t), tk, nil)
	if err != nil || !strings.Contains(string(out), "slept") || strings.Contains(string(out), `"isError":true`) {
		t.Fatalf("the gateway's task after its backend's restart: %s, %v; want the backend's result\n%s", out, err, tail(gw.stderr.String(), 3000))
	}
}

// TestOAuthLegacyTasksFollowTheCaller: with OAuth a 2025-11-25 task is
// its caller's: after the server's kill -9 and restart on the same
// -tasks-dir, the caller, in a new session, gets it and lists it; another
// caller holding the id does not get it.
func TestOAuthLegacyTasksFollowTheCaller(t *testing.T) {
	as := startAuthServer(t, asKeys("1"))
	dir := t.TempDir()
	srv := oauthServe(t, as, "-tasks-dir", dir)
	alice, mallory := as.token("c-es256", oauthResource, "mcp:tools"), as.token("c-rs256", oauthResource, "mcp:tools")
	legacy := client.Options{Version: "2025-11-25"}
	c := connectHTTP(t, srv.url, withToken(legacy, alice))
	id := startTask(t, c, "sleep", map[string]any{"ms": 1})
	res, err := c.TaskResult(testCtx(t), id)
	if err != nil {
		t.Fatal(err)
	}
	_ = srv.cmd.Process.Kill()
	<-srv.exited

	srv = oauthServe(t, as, "-tasks-dir", dir)
	c = connectHTTP(t, srv.url, withToken(legacy, alice))
	if again, err := c.TaskResult(testCtx(t), id); err != nil || string(again) != string(res) {
		t.Fatalf("the caller's task after kill -9, from a new session: %s, %v; want %s", again, err, res)
	}
	if l, err := c.ListTasks(testCtx(t)); err != nil || len(l) != 1 || l[0].ID != id {
		t.Fatalf("the caller's tasks/list in a new session: %+v, %v; want its task", l, err)
	}
	other := connectHTTP(t, srv.url, withToken(legacy, mallory))
	if tk, err := other.GetTask(testCtx(t), id); err == nil {
		t.Fatalf("another caller got the task by its id: %+v", tk)
	}
}

// TestGatewayDeletedSessionCancelsItsTask: behind mcprt gateway too, a
// legacy session DELETEd with a task running cancels the gateway's task
// (and so the backend's), and another session holding the id is told.
func TestGatewayDeletedSessionCancelsItsTask(t *testing.T) {
	f := newGateway(t)
	config, _ := taskBackends(t, f, t.TempDir())
	gw := f.startGatewayHTTP(config)
	ctx := testCtx(t)
	d := connectHTTP(t, gw.url, client.Options{Era: client.EraLegacy})
	left, _, err := d.CallToolTask(ctx, "mc__slow_compute", map[string]any{"seconds": 600, "label": "left"})
	if err != nil || left == nil {
		t.Fatalf("legacy CallToolTask: task %v, err %v", left, err)
	}
	if err := d.Close(); err != nil { // DELETE
		t.Fatalf("DELETE: %v", err)
	}
	b := connectHTTP(t, gw.url, client.Options{Era: client.EraLegacy})
	if got, err := b.GetTask(ctx, left.ID); err != nil || got.Status != client.TaskCancelled {
		t.Errorf("a DELETEd session's running task, from another session: %+v, %v; want cancelled", got, err)
	}
}
