//go:build unix

package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/session/client"
)

// mcprtHTTP runs `mcprt serve -http 127.0.0.1:0` (with extra flags) for
// the test and returns its endpoint URL. The server is stopped with
// SIGTERM and waited for when the test ends.
func mcprtHTTP(t *testing.T, extra ...string) string {
	t.Helper()
	if mcprtBuildErr != nil {
		t.Fatal(mcprtBuildErr)
	}
	cmd := exec.Command(mcprtPath, append([]string{"serve", "-http", "127.0.0.1:0"}, extra...)...)
	cmd.Env = append(cmd.Environ(), "LOG_LEVEL=warn")
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	drained := make(chan struct{})
	var mu sync.Mutex
	var lines []string
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			lines = append(lines, line)
			mu.Unlock()
			if _, u, ok := strings.Cut(line, "serving Streamable HTTP on "); ok {
				select {
				case urls <- u:
				default:
				}
			}
		}
	}()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-drained
		_ = cmd.Wait()
	}
	select {
	case u := <-urls:
		t.Cleanup(stop)
		return u
	case <-drained:
	case <-time.After(hangTimeout):
		_ = cmd.Process.Kill()
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	t.Fatalf("mcprt serve -http printed no address: %q", lines)
	return ""
}

func connectURL(t *testing.T, url string, o *client.Options) *client.Client {
	t.Helper()
	c, err := client.ConnectURL(ctx(t), url, o)
	if err != nil {
		t.Fatalf("ConnectURL: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestHTTPRealServer drives `mcprt serve -http` over Streamable HTTP in
// every way the client connects: the probe (which finds 2026-07-28), each
// era pinned, and each legacy revision that has Streamable HTTP pinned.
// Progress and log notifications arrive through the SSE response streams,
// a panicking tool is an error result, and the session ends cleanly.
func TestHTTPRealServer(t *testing.T) {
	t.Parallel()
	url := mcprtHTTP(t)
	cases := []struct {
		name    string
		o       client.Options
		era     client.Era
		version string
	}{
		{"auto", client.Options{}, client.EraModern, "2026-07-28"},
		{"modern", client.Options{Era: client.EraModern}, client.EraModern, "2026-07-28"},
		{"legacy", client.Options{Era: client.EraLegacy}, client.EraLegacy, "2025-11-25"},
		{"2025-06-18", client.Options{Version: "2025-06-18"}, client.EraLegacy, "2025-06-18"},
		{"2025-03-26", client.Options{Version: "2025-03-26"}, client.EraLegacy, "2025-03-26"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.o.LogLevel = "info"
			c := connectURL(t, url, opts(tc.o))
			if c.Era() != tc.era || c.ProtocolVersion() != tc.version || c.ServerInfo().Name != "mcprt-reference" || c.PID() != 0 {
				t.Fatalf("era %v version %s server %+v pid %d", c.Era(), c.ProtocolVersion(), c.ServerInfo(), c.PID())
			}
			tools, err := c.ListTools(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Name)
			}
			for _, want := range []string{"echo", "sleep", "panic"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}
			r, err := c.CallTool(ctx(t), "echo", map[string]string{"text": "héllo\nworld"})
			if err != nil || r.IsError || toolText(t, r) != "héllo\nworld" {
				t.Fatalf("echo: %+v %v", r, err)
			}

			var mu sync.Mutex
			var progress []client.Progress
			r, err = c.CallTool(ctx(t), "sleep", map[string]int{"ms": 300}, client.WithProgress(func(p client.Progress) {
				mu.Lock()
				progress = append(progress, p)
				mu.Unlock()
			}))
			if err != nil || toolText(t, r) != "slept" {
				t.Fatalf("sleep: %+v %v", r, err)
			}
			mu.Lock()
			if len(progress) == 0 {
				t.Error("sleep reported no progress")
			}
			mu.Unlock()

			r, err = c.CallTool(ctx(t), "panic", nil)
			if err != nil || !r.IsError {
				t.Errorf("panic: %+v %v; want an error result", r, err)
			}

			var logs []string
			c.Subscribe("notifications/message", func(n client.Notification) {
				mu.Lock()
				logs = append(logs, string(n.Params))
				mu.Unlock()
			})
			if _, err := c.CallTool(ctx(t), "log", map[string]any{"levels": []string{"debug", "info", "error"}, "message": "hi"}); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if len(logs) != 2 || !strings.Contains(logs[0], `"level":"info"`) || !strings.Contains(logs[1], `"level":"error"`) {
				t.Errorf("log: got %v", logs)
			}
			mu.Unlock()

			rr, err := c.ReadResource(ctx(t), "mcprt://reference/greeting/Ada")
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "Hello, Ada!" {
				t.Errorf("greeting: %+v %v", rr, err)
			}
			gp, err := c.GetPrompt(ctx(t), "review", map[string]string{"code": "x := 1"})
			if err != nil || len(gp.Messages) != 1 {
				t.Errorf("review prompt: %+v %v", gp, err)
			}
			if err := c.Call(ctx(t), "no/such/method", nil, nil); err == nil {
				t.Error("unknown method succeeded")
			}
			if err := c.Ping(ctx(t)); err != nil {
				t.Errorf("ping: %v", err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if !errors.Is(c.Err(), client.ErrClosed) {
				t.Errorf("Err after Close: %v", c.Err())
			}
		})
	}
}

// TestHTTPRealServerAsksTheClient: elicitation and sampling reach the
// client's handlers over HTTP, as requests on the call's SSE stream
// answered by POSTs (legacy), and as input_required results (2026-07-28).
func TestHTTPRealServerAsksTheClient(t *testing.T) {
	t.Parallel()
	url := mcprtHTTP(t)
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			c := connectURL(t, url, opts(client.Options{
				Era: era,
				Elicitation: func(_ context.Context, p json.RawMessage) (any, error) {
					if !strings.Contains(string(p), "What is your name?") {
						return nil, fmt.Errorf("unexpected elicitation %s", p)
					}
					return map[string]any{"action": "accept", "content": map[string]any{"name": "Grace"}}, nil
				},
				Sampling: func(_ context.Context, p json.RawMessage) (any, error) {
					return map[string]any{"role": "assistant", "model": "echo-model",
						"content": map[string]any{"type": "text", "text": "sampled"}}, nil
				},
			}))
			r, err := c.CallTool(ctx(t), "elicit", nil)
			if err != nil || r.IsError || !strings.Contains(fmt.Sprintf("%s", r.StructuredContent), "Hello, Grace!") {
				t.Errorf("elicit: %+v %v", r, err)
			}
			r, err = c.CallTool(ctx(t), "sample", map[string]string{"prompt": "ping"})
			if err != nil || r.IsError || !strings.Contains(fmt.Sprintf("%s", r.StructuredContent), "sampled") {
				t.Errorf("sample: %+v %v", r, err)
			}
		})
	}
}

// TestHTTPRealServerCancel: a call abandoned by its context returns at
// once in both eras, and the server stops its work: it has one request
// slot, so an echo after the cancelled 20 s sleep is answered only if the
// sleep was cancelled (notifications/cancelled in the legacy era, the
// closed response stream in 2026-07-28).
func TestHTTPRealServerCancel(t *testing.T) {
	t.Parallel()
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			c := connectURL(t, mcprtHTTP(t, "-max-in-flight", "1"), opts(client.Options{Era: era}))
			cctx, cancel := context.WithCancel(ctx(t))
			var once sync.Once
			_, err := c.CallTool(cctx, "sleep", map[string]int{"ms": 20000},
				client.WithProgress(func(client.Progress) { once.Do(cancel) }))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled sleep: %v", err)
			}
			r, err := c.CallTool(ctx(t), "echo", map[string]string{"text": "after"}, client.WithTimeout(15*time.Second))
			if err != nil || toolText(t, r) != "after" {
				t.Errorf("echo after a cancelled call: %+v %v", r, err)
			}
		})
	}
}

// TestHTTPRealServerCloseWhileBusy: Close with a call in flight cancels it
// and ends the session at once; the pending call fails with ErrClosed.
func TestHTTPRealServerCloseWhileBusy(t *testing.T) {
	t.Parallel()
	url := mcprtHTTP(t)
	for _, era := range []client.Era{client.EraLegacy, client.EraModern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			c := connectURL(t, url, opts(client.Options{Era: era}))
			started := make(chan struct{})
			errs := make(chan error, 1)
			go func() {
				var once sync.Once
				_, err := c.CallTool(context.Background(), "sleep", map[string]int{"ms": 3000},
					client.WithProgress(func(client.Progress) { once.Do(func() { close(started) }) }))
				errs <- err
			}()
			<-started
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := <-errs; !errors.Is(err, client.ErrClosed) {
				t.Errorf("call: %v", err)
			}
		})
	}
}

// TestHTTPSkills: the skills of mcprt serve -fixture conformance, listed
// and loaded: each file read once and checked against the entry.
func TestHTTPSkills(t *testing.T) {
	t.Parallel()
	c := connectURL(t, mcprtHTTP(t, "-fixture", "conformance"), opts(client.Options{}))
	if _, ok := c.Capabilities()["extensions"]; !ok {
		t.Fatalf("capabilities %v", c.Capabilities())
	}
	skills, err := c.ListSkills(ctx(t))
	if err != nil || len(skills) != 2 {
		t.Fatalf("skills %+v, %v", skills, err)
	}
	pdf, err := c.GetSkill(ctx(t), "skill://pdf-processing/SKILL.md")
	if err != nil || len(pdf.Resources) != 3 {
		t.Fatalf("skills/get %+v, %v", pdf, err)
	}
	files, err := c.LoadSkill(ctx(t), pdf)
	if err != nil || len(files) != 3 || !strings.Contains(string(files["skill://pdf-processing/references/FORMS.md"]), "Filling PDF forms") {
		t.Fatalf("LoadSkill: %d files, %v", len(files), err)
	}
}
