package interop

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveHTTP runs bin with args (a server that prints "… serving … on URL"
// on stderr once it listens) for the test, and returns the URL it printed.
// The server is stopped with SIGTERM and waited for when the test ends.
func serveHTTP(t *testing.T, bin string, args ...string) string {
	t.Helper()
	needBinaries(t)
	cmd := exec.Command(bin, args...)
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
			if i := strings.Index(line, " on http://"); i >= 0 && strings.Contains(line, "serving") {
				select {
				case urls <- line[i+len(" on "):]:
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
	t.Fatalf("%s %v printed no address: %q", bin, args, lines)
	return ""
}

// connectSDKHTTP connects the SDK's Streamable HTTP client to url asking
// for version.
func connectSDKHTTP(t *testing.T, url, version string) *sdkSession {
	t.Helper()
	s := &sdkSession{version: version, progress: map[string]int{}}
	cs, err := sdkClient(s).Connect(testCtx(t), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("SDK HTTP client connecting to %s (%s): %v", url, version, err)
	}
	t.Cleanup(func() { cs.Close() })
	s.cs = cs
	return s
}

// TestSDKHTTPClientDrivesMcprt: the official SDK's Streamable HTTP client,
// in every protocol version it speaks, against `mcprt serve -http`: the
// same checks as over stdio (every tool, progress, a panic as an error
// result, elicitation and sampling, resources, templates, prompts,
// completion).
func TestSDKHTTPClientDrivesMcprt(t *testing.T) {
	t.Parallel()
	url := serveHTTP(t, mcprtBin, "serve", "-http", "127.0.0.1:0")
	for _, version := range mcp.SupportedProtocolVersions() {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			checkSession(t, connectSDKHTTP(t, url, version), version)
		})
	}
}

// TestSDKHTTPClientCancels: a call the SDK's HTTP client gives up on is
// cancelled in mcprt: the server has one request slot, so an echo after a
// cancelled 20 s sleep is answered only if the sleep was stopped. In the
// legacy era the SDK closes the call's stream first and sends
// notifications/cancelled after, so the id must still name the call then.
func TestSDKHTTPClientCancels(t *testing.T) {
	t.Parallel()
	for _, version := range mcp.SupportedProtocolVersions() {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			url := serveHTTP(t, mcprtBin, "serve", "-http", "127.0.0.1:0", "-max-in-flight", "1")
			s := connectSDKHTTP(t, url, version)
			ctx, cancel := context.WithCancel(testCtx(t))
			params := &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 20000}}
			params.SetProgressToken("cancel-me")
			go func() {
				defer cancel()
				for s.progressFor("cancel-me") == 0 && ctx.Err() == nil {
					time.Sleep(5 * time.Millisecond)
				}
			}()
			if res, err := s.cs.CallTool(ctx, params); err == nil {
				t.Fatalf("the cancelled sleep answered %+v", res)
			}
			ectx, ecancel := context.WithTimeout(testCtx(t), 15*time.Second)
			defer ecancel()
			res, err := s.cs.CallTool(ectx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
			if err != nil || res.IsError || textOf(t, res) != "after" {
				t.Errorf("echo after the cancelled sleep (the sleep still holds the slot?): %+v %v", res, err)
			}
		})
	}
}
