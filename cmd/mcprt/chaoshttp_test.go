package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestChaosHTTP runs `mcprt chaos` over Streamable HTTP as users do:
// against `mcprt serve -http` that the campaign starts (-http, both eras,
// and -era auto, which finds 2026-07-28), and against one already running
// (-url), which the campaign leaves running and which then exits 0 on
// SIGTERM.
func TestChaosHTTP(t *testing.T) {
	t.Parallel()
	bin := buildChaos(t)
	// Small payloads keep this quick under -race; runtime/fault's campaigns
	// use paused answers large enough to block the server's writes.
	serve := []string{bin, "serve", "-http", "127.0.0.1:0", "-http-max-body", "2097152", "-request-timeout", "2s", "-drain-timeout", "1s"}
	faults := []string{"-max-body", "2097152", "-huge", "3000000", "-pause-size", "1048576", "-garbage", "0.1", "-pause", "0.02", "-disconnect", "0.02", "-delete", "0.02", "-cancel", "0.08"}
	for _, tc := range []struct {
		name, era string
		args      []string
	}{
		{"legacy", "legacy", []string{"-seed", "2", "-requests", "200"}},
		{"modern", "modern", []string{"-seed", "3", "-requests", "200", "-era", "modern"}},
		{"auto", "modern", []string{"-seed", "4", "-requests", "100", "-era", "auto", "-clients", "8"}},
	} {
		args := append(append(append(tc.args, faults...), "-http", "--"), serve...)
		out, code := runChaos(t, bin, nil, args...)
		if code != 0 || !strings.Contains(out, "\nPASS\n") || !strings.Contains(out, "0 answered twice, 0 never answered") {
			t.Errorf("%s: mcprt chaos %s: status %d, want 0 and PASS:\n%s", tc.name, strings.Join(args, " "), code, out)
			continue
		}
		t.Logf("%s:\n%s", tc.name, out)
		for _, want := range []string{" over HTTP, " + tc.era + " era\n", "ending sigterm", "exit: status 0"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: report lacks %q:\n%s", tc.name, want, out)
			}
		}
	}

	// -url: a server the campaign did not start.
	cmd := exec.Command(bin, serve[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "serving Streamable HTTP on "); ok {
				urls <- u
			}
		}
		done <- cmd.Wait()
	}()
	var u string
	select {
	case u = <-urls:
	case <-time.After(chaosHang):
		cmd.Process.Kill()
		<-done
		t.Fatal("mcprt serve -http printed no URL")
	}
	for _, era := range []string{"legacy", "modern"} {
		args := append([]string{"-url", u, "-era", era, "-requests", "150"}, faults...)
		out, code := runChaos(t, bin, nil, args...)
		if code != 0 || !strings.Contains(out, "\nPASS\n") || !strings.Contains(out, u+", "+era+" era\n") ||
			!strings.Contains(out, "ending none") || !strings.Contains(out, "exit: not ended") {
			t.Errorf("mcprt chaos %s: status %d, want 0, PASS and the server left running:\n%s", strings.Join(args, " "), code, out)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("mcprt serve -http after two campaigns, then SIGTERM: %v", err)
		}
	case <-time.After(chaosHang):
		cmd.Process.Kill()
		<-done
		t.Error("mcprt serve -http did not exit on SIGTERM after two campaigns")
	}
}

// TestChaosHTTPFake: a Streamable HTTP server that answers some calls
// twice, or ends some streams without their response, fails `mcprt chaos
// -url` with status 1 and a violation that says so; the same fake,
// unbroken, passes, and -era auto finds it speaks the legacy era only.
func TestChaosHTTPFake(t *testing.T) {
	t.Parallel()
	bin := buildChaos(t)
	quiet := []string{"-panic", "0", "-hang", "0", "-slow", "0", "-cancel", "0", "-garbage", "0", "-pause", "0", "-disconnect", "0", "-delete", "0"}
	for mode, want := range map[string]string{
		"double": "answered 2 times",
		"drop":   "never answered: HTTP 200, an SSE stream of 0 messages",
		"ok":     "",
	} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			u := startChaosFake(t, mode)
			args := append([]string{"-url", u, "-requests", "100", "-era", "auto"}, quiet...)
			out, code := runChaos(t, bin, nil, args...)
			switch {
			case want == "" && (code != 0 || !strings.Contains(out, "\nPASS\n") || !strings.Contains(out, ", legacy era\n")):
				t.Errorf("the fake HTTP server, unbroken, failed (status %d):\n%s", code, out)
			case want != "" && (code != 1 || !strings.Contains(out, want)):
				t.Errorf("status %d, want 1 and %q in:\n%s", code, want, out)
			}
		})
	}
}

// startChaosFake serves a legacy Streamable HTTP echo server on a loopback
// port: correct in mode "ok", answering every 7th call twice in mode
// "double", ending every 9th call's stream without its response in "drop".
func startChaosFake(t *testing.T, mode string) string {
	var (
		mu       sync.Mutex
		calls    int
		sessions = map[string]bool{}
	)
	reply := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid := r.Header.Get("Mcp-Session-Id")
		mu.Lock()
		known := sessions[sid]
		mu.Unlock()
		switch r.Method {
		case http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		case http.MethodDelete:
			mu.Lock()
			delete(sessions, sid)
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage
			Method string
			Params struct{ Arguments struct{ Text string } }
		}
		if json.Unmarshal(body, &m) != nil {
			reply(w, 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)
			return
		}
		if m.Method == "initialize" {
			sid = fmt.Sprintf("s%d", time.Now().UnixNano())
			mu.Lock()
			sessions[sid] = true
			mu.Unlock()
			w.Header().Set("Mcp-Session-Id", sid)
			reply(w, 200, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`, m.ID))
			return
		}
		if !known {
			reply(w, 404, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no such session"}}`)
			return
		}
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		res := `{}`
		switch m.Method {
		case "tools/list":
			res = `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			text, _ := json.Marshal(m.Params.Arguments.Text)
			res = fmt.Sprintf(`{"content":[{"type":"text","text":%s}]}`, text)
		}
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, res)
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		switch {
		case mode == "double" && n%7 == 0:
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\nevent: message\ndata: %s\n\n", line, line)
		case mode == "drop" && n%9 == 0:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
		default:
			reply(w, 200, line)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/mcp"
}

// TestChaosHTTPUsage: the HTTP flags are checked before anything runs.
func TestChaosHTTPUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-url", "http://127.0.0.1:1/mcp", "--", "x"}, 2},
		{[]string{"-url", "http://127.0.0.1:1/mcp", "-http"}, 2},
		{[]string{"-url", "ftp://127.0.0.1/mcp"}, 2},
		{[]string{"-http", "-end", "eof", "--", "x"}, 2},
		{[]string{"-url", "http://127.0.0.1:1/mcp", "-end", "sigterm"}, 2},
		{[]string{"-end", "none", "--", "x"}, 2},
		{[]string{"-max-body", "1000", "--", "x"}, 2},
		{[]string{"-clients", "0", "-http", "--", "x"}, 2},
		{[]string{"-url", "http://127.0.0.1:1/mcp", "-requests", "5"}, 1}, // nothing listens there
		{[]string{"-http", "--", "/nonexistent/mcp-server"}, 1},
	} {
		var out bytes.Buffer
		if code := chaos(tc.args, streams{Stdout: &out, Stderr: &out}); code != tc.code {
			t.Errorf("mcprt chaos %q: status %d, want %d\n%s", tc.args, code, tc.code, out.String())
		}
	}
}
