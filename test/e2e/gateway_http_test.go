//go:build linux

package e2e

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

// The gateway over Streamable HTTP, and backends that are Streamable HTTP
// servers. Linux only, as every process here gets a parent-death signal.

// httpProc is an mcprt process serving Streamable HTTP.
type httpProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string // the endpoint, as it printed it
	stderr *syncBuffer
	exited chan struct{}
	code   int
}

// startHTTP runs path with args, which make it serve Streamable HTTP, and
// waits for the line that says where. It is killed, if still running,
// when the test ends.
func startHTTP(t *testing.T, path string, args ...string) *httpProc {
	t.Helper()
	return startHTTPEnv(t, nil, path, args...)
}

// startHTTPEnv is startHTTP with env added to the process's environment
// (LOG_LEVEL=debug, say).
func startHTTPEnv(t *testing.T, env []string, path string, args ...string) *httpProc {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = append(append(os.Environ(), "GORACE=atexit_sleep_ms=0", "LOG_LEVEL=info"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &httpProc{t: t, cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.stderr.Write([]byte(line + "\n"))
			if _, u, ok := strings.Cut(line, "mcprt: serving Streamable HTTP on "); ok {
				select {
				case urls <- u:
				default:
				}
			}
		}
		_, _ = io.Copy(p.stderr, pr)
		_ = cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
	})
	select {
	case p.url = <-urls:
	case <-p.exited:
		t.Fatalf("%s exited before serving:\n%s", strings.Join(args, " "), p.stderr)
	case <-time.After(callTimeout):
		t.Fatalf("%s did not say where it serves:\n%s", strings.Join(args, " "), p.stderr)
	}
	return p
}

// stop sends sig and waits for the exit status.
func (p *httpProc) stop(sig syscall.Signal) int {
	p.t.Helper()
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(2 * exitTimeout):
		p.t.Fatalf("no exit %v after %v:\n%s", sig, 2*exitTimeout, tail(p.stderr.String(), 3000))
	}
	return p.code
}

// startGatewayHTTP runs `mcprt gateway -config FILE -http 127.0.0.1:0`.
// The gateway itself does not carry the fixture's marker: procs finds
// only its backends.
func (f *gwFixture) startGatewayHTTP(config string, args ...string) *httpProc {
	f.t.Helper()
	// No backend outlives the test (registered first: it runs last).
	f.t.Cleanup(func() {
		for _, pid := range append(f.guards(""), f.procs("")...) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return startHTTP(f.t, binPath, append([]string{"gateway", "-config", config, "-http", "127.0.0.1:0"}, args...)...)
}

func connectHTTP(t *testing.T, url string, o client.Options) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	c, err := client.ConnectURL(ctx, url, &o)
	if err != nil {
		t.Fatalf("ConnectURL %s: %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}

// callText calls a tool and returns its first text, failing on an error
// or an isError result.
func callText(t *testing.T, c *client.Client, name string, args any) string {
	t.Helper()
	r, err := c.CallTool(testCtx(t), name, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if r.IsError || len(r.Content) == 0 {
		t.Fatalf("%s: %+v", name, r)
	}
	return r.Content[0].Text
}

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	tools, err := c.ListTools(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestGatewayHTTP: two reference servers behind `mcprt gateway -http`,
// listed and called through mcprt's own Streamable HTTP client in both
// eras, and through `mcprt call -url`; on SIGTERM the call in flight is
// answered, the gateway exits 0 and no backend is left.
func TestGatewayHTTP(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	gw := f.startGatewayHTTP(f.config(map[string]any{
		"alpha": f.serve("alpha", nil),
		"beta":  f.serve("beta", nil),
	}))
	f.waitProcs("", "both backends", func(p []int) bool { return len(p) == 2 })

	for _, era := range []client.Era{client.EraModern, client.EraLegacy} {
		c := connectHTTP(t, gw.url, client.Options{Era: era})
		if c.ServerInfo().Name != "mcprt-gateway" {
			t.Errorf("%v: serverInfo %+v", era, c.ServerInfo())
		}
		names := toolNames(t, c)
		for _, want := range []string{"alpha__echo", "beta__echo", "alpha__sleep", "beta__add"} {
			if !slices.Contains(names, want) {
				t.Errorf("%v: tools/list lacks %s: %v", era, want, names)
			}
		}
		for _, name := range []string{"alpha__echo", "beta__echo"} {
			if got := callText(t, c, name, map[string]any{"text": era.String() + " via " + name}); got != era.String()+" via "+name {
				t.Errorf("%v: %s: %q", era, name, got)
			}
		}
		r, err := c.CallTool(testCtx(t), "beta__add", map[string]any{"a": 40, "b": 2})
		if err != nil || !strings.Contains(structuredText(r), `"sum":42`) {
			t.Errorf("%v: beta__add: %+v %v", era, r, err)
		}
	}
	out, err := exec.Command(binPath, "call", "-url", gw.url, "beta__echo", `{"text":"from mcprt call"}`).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "from mcprt call") {
		t.Errorf("mcprt call -url: %v\n%s", err, out)
	}

	// SIGTERM with a call in flight: it is answered, then the backends
	// close.
	c := connectHTTP(t, gw.url, client.Options{Era: client.EraLegacy})
	inFlight := make(chan struct{})
	var once sync.Once
	res := make(chan string, 1)
	go func() {
		r, err := c.CallTool(context.Background(), "alpha__sleep", map[string]any{"ms": 1000}, client.WithProgress(func(client.Progress) {
			once.Do(func() { close(inFlight) })
		}))
		switch {
		case err != nil:
			res <- err.Error()
		case len(r.Content) == 0:
			res <- "no content"
		default:
			res <- r.Content[0].Text
		}
	}()
	select {
	case <-inFlight:
	case got := <-res:
		t.Fatalf("the sleep ended before its first progress: %s", got)
	case <-time.After(callTimeout):
		t.Fatal("no progress from alpha__sleep")
	}
	code := gw.stop(syscall.SIGTERM)
	if got := <-res; got != "slept" {
		t.Errorf("the call in flight at SIGTERM: %q", got)
	}
	if code != 0 {
		t.Errorf("exit status %d:\n%s", code, tail(gw.stderr.String(), 3000))
	}
	f.waitProcs("", "no backend left", func(p []int) bool { return len(p) == 0 })
}

// TestGatewayHTTPBadFlags: an -http flag the gateway cannot use is said
// before any backend starts.
func TestGatewayHTTPBadFlags(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	file := f.config(map[string]any{"alpha": f.serve("alpha", nil)})
	out, err := exec.Command(binPath, "gateway", "-config", file, "-http", "127.0.0.1:0", "-http-token-file", f.dir+"/nosuch").CombinedOutput()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "mcprt gateway: -http-token-file:") {
		t.Errorf("exit %v:\n%s", err, out)
	}
	if p := f.procs(""); len(p) != 0 {
		t.Errorf("backends started: %v", p)
	}
}

// TestGatewayRemoteBackend: backends that are `mcprt serve -http` (one
// connected in each era, with the bearer token it requires in
// "headers"), beside a stdio one. The server is killed: a call to it is
// answered at once, naming the backend; a new server is started on the
// same port, and the gateway connects again and its tools work again,
// in both eras.
func TestGatewayRemoteBackend(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	token := f.dir + "/token"
	if err := os.WriteFile(token, []byte("e2e-t0k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startHTTP(t, f.mcprt("remote"), "serve", "-http", "127.0.0.1:0", "-http-token-file", token)
	_, port, _ := strings.Cut(strings.TrimPrefix(strings.TrimSuffix(srv.url, "/mcp"), "http://"), ":")
	remote := func(extra map[string]any) map[string]any {
		m := map[string]any{"url": srv.url, "headers": map[string]string{"Authorization": "Bearer e2e-t0k"},
			"backoff": "50ms", "maxBackoff": "200ms", "maxRestarts": 200}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	c := f.start(f.config(map[string]any{
		"modern": remote(map[string]any{"type": "http"}),
		"legacy": remote(map[string]any{"type": "streamable-http", "protocol": "legacy"}),
		"local":  f.serve("local", nil),
	}), Options{})
	c.Initialize("2025-11-25")
	for _, name := range []string{"modern__echo", "legacy__echo", "local__echo"} {
		if got := toolText(t, c.Call("tools/call", toolsCall(name, map[string]any{"text": "via " + name}))); got != "via "+name {
			t.Errorf("%s: %q", name, got)
		}
	}

	srv.stop(syscall.SIGKILL)
	m := c.Call("tools/call", toolsCall("legacy__echo", map[string]any{"text": "away"}))
	if r := wantResult(t, m); string(r["isError"]) != "true" || !strings.Contains(string(r["content"]), `backend \"legacy\"`) {
		t.Errorf("a call while the server is away: %s", m)
	}

	startHTTP(t, f.mcprt("remote"), "serve", "-http", "127.0.0.1:"+port, "-http-token-file", token)
	for _, name := range []string{"modern__echo", "legacy__echo"} {
		deadline := time.Now().Add(callTimeout)
		for {
			m := c.Call("tools/call", toolsCall(name, map[string]any{"text": "back"}))
			if text, err := toolTextErr(m); err == nil && text == "back" && !strings.Contains(string(m.Result), "isError") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not come back: %s\n%s", name, m, tail(c.Stderr(), 3000))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if !strings.Contains(c.Stderr(), "backend went away; restarting it") {
		t.Errorf("the gateway did not log the reconnect:\n%s", tail(c.Stderr(), 2000))
	}
	c.CloseStdin()
	if code, ok := c.WaitExit(2 * exitTimeout); !ok || code != 0 {
		t.Fatalf("exit %d (exited: %v)\n%s", code, ok, tail(c.Stderr(), 2000))
	}
	f.waitProcs("local", "no stdio backend left", func(p []int) bool { return len(p) == 0 })
}

// TestGatewayHTTPSubscriptions: two legacy clients of the gateway over
// Streamable HTTP subscribe to a backend's resource; both hear of its
// updates (on their GET streams); when one has closed its session the
// other still does: the backend follows the resource while any session
// does.
func TestGatewayHTTPSubscriptions(t *testing.T) {
	t.Parallel()
	f := newGateway(t)
	gw := f.startGatewayHTTP(f.config(map[string]any{"conf": f.conformanceBackend("conf", "")}))
	type counted struct {
		c *client.Client
		n chan struct{}
	}
	connect := func() counted {
		c := connectHTTP(t, gw.url, client.Options{Era: client.EraLegacy})
		n := make(chan struct{}, 1000)
		c.Subscribe("notifications/resources/updated", func(nt client.Notification) {
			if strings.Contains(string(nt.Params), watchedURI) {
				n <- struct{}{}
			}
		})
		if err := c.Call(testCtx(t), "resources/subscribe", map[string]string{"uri": watchedURI}, nil); err != nil {
			t.Fatal(err)
		}
		return counted{c, n}
	}
	// heard updates the resource until x hears of it: a legacy session's
	// notifications outside requests go to its GET stream, which the
	// client opens on its own time, and are dropped until it does.
	heard := func(who string, x counted) {
		t.Helper()
		deadline := time.Now().Add(callTimeout)
		for {
			callText(t, x.c, "conf__test_update_watched_resource", map[string]any{})
			select {
			case <-x.n:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s heard of no update", who)
			}
		}
	}
	a := connect()
	heard("a", a)
	b := connect()
	heard("b", b)
	if err := a.c.Close(); err != nil {
		t.Fatal(err)
	}
	for len(b.n) > 0 {
		<-b.n
	}
	heard("b, after a left,", b)
}
