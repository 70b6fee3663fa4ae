package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/session/client"
)

// rootsBackend is a legacy server that asks for the roots as
// server-filesystem does: after initialize and after each
// notifications/roots/list_changed, outside any request. It appends each
// answer's roots to log, one JSON line each.
func rootsBackend(name, log string) Backend {
	return Backend{Name: name, Command: os.Args[0], Protocol: "legacy",
		Env: []string{testServerEnv + "=roots", "MCPRT_ROOTS_LOG=" + log, "GORACE=atexit_sleep_ms=0"}}
}

func runRootsServer() int {
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	write := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		out.Write(append(b, '\n'))
		out.Flush()
	}
	asked := 0
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		result := func(r any) { write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": r}) }
		switch {
		case m.Method == "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(m.Params, &p)
			result(map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "roots", "version": "1"}})
		case m.Method == "tools/list":
			result(map[string]any{"tools": []any{map[string]any{"name": "noop", "inputSchema": map[string]any{"type": "object"}}}})
		case m.Method == "tools/call":
			result(map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}})
		case m.Method == "ping":
			result(map[string]any{})
		case m.Method == "notifications/initialized", m.Method == "notifications/roots/list_changed":
			asked++
			write(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprintf("roots-%d", asked), "method": "roots/list"})
		case m.Method == "" && m.Result != nil:
			var r struct {
				Roots json.RawMessage `json:"roots"`
			}
			json.Unmarshal(m.Result, &r)
			f, err := os.OpenFile(os.Getenv("MCPRT_ROOTS_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err == nil {
				fmt.Fprintf(f, "%s\n", r.Roots)
				f.Close()
			}
		case m.ID != nil && m.Method != "":
			write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
		}
	}
	return 0
}

// logLines reads the roots the backend got, one answer a line.
func logLines(log string) []string {
	b, _ := os.ReadFile(log)
	return strings.Fields(string(b))
}

// A backend that asks for the roots outside any request gets those the
// client last gave the gateway ([] before any), which the gateway asks a
// legacy client for within its first request, and again within the first
// after the client said they changed; each time they change, the
// backend is told (notifications/roots/list_changed) and asks again. A
// client without the roots capability has none; a 2026-07-28 request is
// not asked.
func TestRootsOutsideRequests(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "roots.log")
	g := start(t, rootsBackend("r", log), serve("other"))
	waitFor(t, "the backend's first roots/list", func() bool { return len(logLines(log)) == 1 })
	if got := logLines(log)[0]; got != "[]" {
		t.Fatalf("roots before any client gave them: %s", got)
	}

	var mu sync.Mutex
	asks, roots := 0, `[{"uri":"file:///a","name":"a"}]`
	p := &peer{ask: func(method string, _ any) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		if method != "roots/list" {
			return nil, fmt.Errorf("unexpected %s", method)
		}
		asks++
		return json.RawMessage(`{"roots":` + roots + `}`), nil
	}}
	asked := func() int {
		mu.Lock()
		defer mu.Unlock()
		return asks
	}
	echo := func(r *handlers.Request) {
		t.Helper()
		if _, err := g.run(nil, r); err != nil {
			t.Fatal(err)
		}
	}
	echoReq := func(caps string) *handlers.Request {
		r := req("tools/call", `{"name":"other__echo","arguments":{"text":"x"}}`, p)
		r.ClientCapabilities = json.RawMessage(caps)
		return r
	}
	// A request to another backend: nothing is in flight to r when it asks.
	echo(echoReq(`{"roots":{"listChanged":true}}`))
	waitFor(t, "the backend to hear of the roots", func() bool { return len(logLines(log)) == 2 })
	if got := logLines(log)[1]; got != roots || asked() != 1 {
		t.Fatalf("roots %s after %d asks", got, asked())
	}
	echo(echoReq(`{"roots":{}}`)) // known: not asked again
	if asked() != 1 {
		t.Errorf("asked %d times", asked())
	}

	mu.Lock()
	roots = `[{"uri":"file:///b"}]`
	mu.Unlock()
	g.Server().RootsListChanged()
	echo(echoReq(`{"roots":{}}`))
	waitFor(t, "the backend to hear of the new roots", func() bool { return len(logLines(log)) == 3 })
	if got := logLines(log)[2]; got != roots || asked() != 2 {
		t.Fatalf("roots %s after %d asks", got, asked())
	}

	g.Server().RootsListChanged()
	modern := echoReq(`{"roots":{}}`)
	modern.Modern = true
	echo(modern)
	if asked() != 2 {
		t.Errorf("a 2026-07-28 request was asked for the roots")
	}
	echo(echoReq(`{}`)) // a client without roots
	waitFor(t, "the backend to hear there are none", func() bool { return len(logLines(log)) == 4 })
	if got := logLines(log)[3]; got != "[]" || asked() != 2 {
		t.Fatalf("roots %s after %d asks", got, asked())
	}
}

// The same through `mcprt gateway` and a legacy client (session/client)
// whose roots change: the gateway asks it for them within its first
// request, the client's notifications/roots/list_changed reaches the
// gateway's session and, at the next request, the backend.
func TestRootsThroughTheGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "roots.log")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"r": map[string]any{"command": os.Args[0], "protocol": "legacy",
			"env": map[string]string{testServerEnv: "roots", "MCPRT_ROOTS_LOG": log, "GORACE": "atexit_sleep_ms=0"}},
		"other": map[string]any{"command": mcprtPath, "args": []string{"serve"}, "env": map[string]string{"LOG_LEVEL": "warn"}},
	}})
	file := filepath.Join(dir, "gw.json")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	roots := []client.Root{{URI: "file:///one"}}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	c, err := client.Connect(ctx, client.Command{Path: mcprtPath, Args: []string{"gateway", "-config", file}, Env: []string{"LOG_LEVEL=warn"}}, &client.Options{
		Era: client.EraLegacy,
		Roots: func(context.Context) ([]client.Root, error) {
			mu.Lock()
			defer mu.Unlock()
			return roots, nil
		},
		RootsListChanged: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitFor(t, "the backend's first roots/list", func() bool { return len(logLines(log)) == 1 })
	if _, err := c.CallTool(ctx, "other__echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the backend to get the client's roots", func() bool { return len(logLines(log)) == 2 })
	if got := logLines(log)[1]; got != `[{"uri":"file:///one"}]` {
		t.Fatalf("roots %s", got)
	}
	mu.Lock()
	roots = []client.Root{{URI: "file:///two", Name: "two"}}
	mu.Unlock()
	c.RootsListChanged()
	if _, err := c.CallTool(ctx, "other__echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the backend to get the new roots", func() bool { return len(logLines(log)) == 3 })
	if got := logLines(log)[2]; got != `[{"uri":"file:///two","name":"two"}]` {
		t.Fatalf("roots %s", got)
	}
}
