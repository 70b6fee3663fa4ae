package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestStdoutHygiene: a tool that prints with fmt.Println must not corrupt
// the protocol stream: its text lands on stderr (as a log record) and, for
// an initialized legacy client, in a notifications/message from logger
// "stdout"; the client's reader sees nothing but JSON-RPC on stdout.
func TestStdoutHygiene(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-06-18")

	const marker = "STRAY-MARKER"
	m := c.Call("tools/call", map[string]any{"name": "print", "arguments": map[string]any{"text": marker}})
	if got := toolText(t, m); got != "printed" {
		t.Errorf("print: got %q, want printed", got)
	}
	// A print that looks like a JSON-RPC message is still kept off stdout.
	fake := `{"jsonrpc":"2.0","id":"forged","result":{}}`
	m = c.Call("tools/call", map[string]any{"name": "print", "arguments": map[string]any{"text": fake}})
	if got := toolText(t, m); got != "printed" {
		t.Errorf("print: got %q, want printed", got)
	}
	if got := toolText(t, c.Call("tools/call", echoParams("after print"))); got != "after print" {
		t.Errorf("echo: got %q", got)
	}
	// The text handler quotes the record's message, so look for the id.
	if !c.WaitStderr(callTimeout, marker, `forged`) {
		t.Fatalf("printed text never reached stderr; stderr:\n%s", tail(c.Stderr(), 2000))
	}
	c.CloseStdin()
	if code, ok := c.WaitExit(exitTimeout); !ok || code != 0 {
		t.Errorf("exit: code %d, exited %v", code, ok)
	}
	c.WaitReader(exitTimeout)
	if rs := c.Responses(`"forged"`); len(rs) != 0 {
		t.Errorf("printed text reached stdout: %s", rs[0])
	}
	c.mu.Lock()
	delivered := 0
	for _, l := range c.lines {
		if !strings.Contains(string(l.Raw), marker) {
			continue
		}
		if l.Method != "notifications/message" || !strings.Contains(string(l.Params), `"logger":"stdout"`) {
			t.Errorf("marker on stdout outside a stdout log message: %s", l)
		}
		delivered++
	}
	c.mu.Unlock()
	if delivered != 1 {
		t.Errorf("the print reached the client %d times, want once", delivered)
	}
}

// TestPanicTool: a panicking tool is answered with a tool error (a result
// with isError set, which the model can read, where SDK clients treat
// -32603 as a failure of the host) and a generic message (no panic text),
// and the server keeps serving, also after several.
func TestPanicTool(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-06-18")
	for i := 0; i < 3; i++ {
		wantToolPanic(t, c.Call("tools/call", map[string]any{"name": "panic", "arguments": map[string]any{}}))
		if got := toolText(t, c.Call("tools/call", echoParams("after panic "+itoa(i)))); got != "after panic "+itoa(i) {
			t.Errorf("echo after panic: got %q", got)
		}
	}
	// Modern era too.
	m := c.Call("tools/call", withMeta(map[string]any{"name": "panic"}, meta()))
	wantToolPanic(t, m)
	if !strings.Contains(string(m.Result), `"resultType":"complete"`) {
		t.Errorf("2026-07-28 tool panic without resultType: %s", m)
	}
	// Concurrent work is not disturbed by a panic beside it.
	sleepKey := c.Request("beside-panic", "tools/call", sleepParams(300))
	wantToolPanic(t, c.Call("tools/call", map[string]any{"name": "panic"}))
	if got, err := toolTextErr(c.Response(sleepKey, callTimeout)); err != nil || got != "slept" {
		t.Errorf("sleep beside a panic: %v %q", err, got)
	}
}

// TestManyPanics: panicking handlers cost no restart intensity: dozens of
// them, in a row and at once, leave the server serving. (The crash-loop
// policy, which would suspend the tool, is set out of the way.)
func TestManyPanics(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{Args: []string{"-crash-intensity", "1000"}})
	c.Initialize("2025-06-18")
	for i := 0; i < 30; i++ {
		wantToolPanic(t, c.Call("tools/call", map[string]any{"name": "panic"}))
	}
	var keys []string
	for i := 0; i < 30; i++ {
		keys = append(keys, c.Request(fmt.Sprintf("p-%d", i), "tools/call", map[string]any{"name": "panic"}))
	}
	for _, k := range keys {
		wantToolPanic(t, c.Response(k, callTimeout))
	}
	if got := toolText(t, c.Call("tools/call", echoParams("survived panics"))); got != "survived panics" {
		t.Errorf("echo: got %q", got)
	}
	if code, ok := c.WaitExit(0); ok {
		t.Fatalf("server exited with status %d", code)
	}
	c.CloseStdin()
	if code, ok := c.WaitExit(exitTimeout); !ok || code != 0 {
		t.Errorf("exit: code %d, exited %v", code, ok)
	}
}

// wantToolPanic checks the answer to a tool whose handler panicked: a
// result with isError set and a generic text that gives nothing of the
// panic away.
func wantToolPanic(t testing.TB, m *Msg) {
	t.Helper()
	var r struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if m.Error != nil || m.Result == nil || json.Unmarshal(m.Result, &r) != nil || !r.IsError || len(r.Content) != 1 {
		t.Errorf("want a tool result with isError set, got %s", m)
		return
	}
	if r.Content[0].Text != `Tool "panic" failed with an internal error.` {
		t.Errorf("tool panic text: %q", r.Content[0].Text)
	}
	for _, leak := range []string{"panic tool", "as asked", "goroutine", ".go:"} {
		if strings.Contains(string(m.Raw), leak) {
			t.Errorf("answer leaks the panic (%q): %s", leak, m)
		}
	}
}
