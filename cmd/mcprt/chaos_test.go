package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chaosHang only turns a hang into a failure; nothing asserts on time.
const chaosHang = 90 * time.Second

// buildChaos builds mcprt into a temporary directory (with -race when the
// tests have it, so the server under chaos is checked too).
func buildChaos(t *testing.T) string {
	t.Helper()
	path := t.TempDir() + "/mcprt"
	args := []string{"build", "-o", path}
	if benchRaceEnabled() {
		args = append(args, "-race")
	}
	if out, err := exec.Command(benchGoTool(), append(args, ".")...).CombinedOutput(); err != nil {
		t.Fatalf("building mcprt: %v\n%s", err, out)
	}
	return path
}

// runChaos runs the built `mcprt chaos` with args and returns its output
// and exit status.
func runChaos(t *testing.T, bin string, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"chaos"}, args...)...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(chaosHang):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("mcprt chaos %s hung; output:\n%s", strings.Join(args, " "), out.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

// TestChaos runs `mcprt chaos` as users do. The reference server passes
// the default campaign (exactly as documented), the other endings and
// 2026-07-28; a server that answers twice, or prints on stdout, fails with
// status 1 and is told why, while the same fake server unbroken passes.
func TestChaos(t *testing.T) {
	t.Parallel()
	bin := buildChaos(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"defaults": {"--", bin, "serve"},
		"sigterm":  {"-seed", "2", "-end", "sigterm", "-requests", "500", "--", bin, "serve", "-drain-timeout", "1s"},
		"epipe":    {"-seed", "3", "-end", "epipe", "-era", "modern", "-requests", "500", "--", bin, "serve"},
		"protocol": {"-seed", "4", "-protocol", "2025-11-25", "-requests", "300", "--", bin, "serve"},
		"auto":     {"-seed", "5", "-era", "auto", "-requests", "300", "--", bin, "serve"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, code := runChaos(t, bin, nil, args...)
			if code != 0 || !strings.Contains(out, "\nPASS\n") {
				t.Errorf("mcprt chaos %s: status %d, want 0 and PASS:\n%s", strings.Join(args, " "), code, out)
			}
			if !strings.Contains(out, "0 answered twice, 0 never answered") {
				t.Errorf("mcprt chaos %s: report does not say nothing was lost:\n%s", strings.Join(args, " "), out)
			}
			// mcprt serve speaks 2026-07-28, which -era auto finds.
			era := map[string]string{"epipe": "modern", "auto": "modern"}[name]
			if !strings.Contains(out, ", "+cmp.Or(era, "legacy")+" era\n") {
				t.Errorf("mcprt chaos %s: report does not name the %s era:\n%s", strings.Join(args, " "), cmp.Or(era, "legacy"), out)
			}
		})
	}
	for mode, want := range map[string]string{
		"double":  "answered 2 times",
		"garbage": "not a JSON-RPC message",
		"ok":      "",
	} {
		t.Run("fake "+mode, func(t *testing.T) {
			t.Parallel()
			env := append(os.Environ(), chaosFakeEnv+"="+mode)
			out, code := runChaos(t, bin, env, "-requests", "100", "--", exe, "-test.run=^TestChaosFakeServer$")
			switch {
			case want == "" && code != 0:
				t.Errorf("the fake server, unbroken, failed (status %d):\n%s", code, out)
			case want != "" && (code != 1 || !strings.Contains(out, want)):
				t.Errorf("status %d, want 1 and %q in:\n%s", code, want, out)
			}
		})
	}
}

func TestChaosUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{}, 2},
		{[]string{"-end", "kill", "--", "x"}, 2},
		{[]string{"-panic", "0.8", "-cancel", "0.8", "--", "x"}, 2},
		{[]string{"-requests", "0", "--", "x"}, 2},
		{[]string{"-era", "sometimes", "--", "x"}, 2},
		{[]string{"-protocol", "1999-01-01", "--", "x"}, 2},
		{[]string{"-era", "modern", "-protocol", "2025-06-18", "--", "x"}, 2},
		{[]string{"-no-such-flag"}, 2},
		{[]string{"-help"}, 0},
		{[]string{"--", "/nonexistent/mcp-server"}, 1},
	} {
		var out bytes.Buffer
		if code := chaos(tc.args, streams{Stdout: &out, Stderr: &out}); code != tc.code {
			t.Errorf("mcprt chaos %q: status %d, want %d\n%s", tc.args, code, tc.code, out.String())
		}
	}
	var out, errb bytes.Buffer
	chaos([]string{"-help"}, streams{Stdout: &out, Stderr: &errb})
	if !strings.Contains(out.String(), "Usage: mcprt chaos") || !strings.Contains(out.String(), "-seed") || errb.Len() != 0 {
		t.Errorf("help lacks usage or flags on stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
}

// chaosFakeEnv selects the fake server: this test binary run again, an echo
// server that is correct in mode "ok", answers some calls twice in mode
// "double" and prints a stray line on stdout in mode "garbage".
const chaosFakeEnv = "MCPRT_CHAOS_FAKE"

// TestChaosFakeServer is not a test: it is the fake server's entry point.
func TestChaosFakeServer(t *testing.T) {
	mode := os.Getenv(chaosFakeEnv)
	if mode == "" {
		t.Skip("runs only as the child of TestChaos")
	}
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 64<<20)
	calls := 0
	for sc.Scan() {
		var r struct {
			ID     json.RawMessage
			Method string
			Params struct {
				Arguments struct{ Text string }
			}
		}
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			fmt.Fprintln(out, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
		} else if r.ID != nil {
			var res string
			switch r.Method {
			case "initialize":
				res = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`
			case "tools/list":
				res = `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`
			case "tools/call":
				calls++
				text, _ := json.Marshal(r.Params.Arguments.Text)
				res = fmt.Sprintf(`{"content":[{"type":"text","text":%s}]}`, text)
				if mode == "garbage" && calls == 5 {
					fmt.Fprintln(out, "debug: a stray print")
				}
			default:
				res = `{}`
			}
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, r.ID, res)
			fmt.Fprintln(out, line)
			if mode == "double" && calls%10 == 3 {
				fmt.Fprintln(out, line)
			}
		}
		out.Flush()
	}
	out.Flush()
	// Exit here: the testing package must not print PASS on the protocol stream.
	os.Exit(0)
}

// TestChaosThroughAGateway: against mcprt gateway, whose tools are
// "ref__echo" and so on, chaos finds them by their prefixed names, calls
// them (panic faults are injected, not plain requests), and says which.
func TestChaosThroughAGateway(t *testing.T) {
	t.Parallel()
	bin := buildChaos(t)
	cfg := filepath.Join(t.TempDir(), "gateway.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"ref": map[string]any{"command": bin, "args": []string{"serve"}, "env": map[string]string{"GORACE": "atexit_sleep_ms=0"}}}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runChaos(t, bin, nil, "-requests", "200", "-hang", "0", "--", bin, "gateway", "-config", cfg)
	if code != 0 || !strings.Contains(out, "\nPASS\n") ||
		!strings.Contains(out, "\ntools: echo ref__echo, slow ref__sleep, panic ref__panic\n") || !strings.Contains(out, " panic=") {
		t.Errorf("mcprt chaos through a gateway: status %d, want 0, PASS, the prefixed tools named and panics injected:\n%s", code, out)
	}
}
