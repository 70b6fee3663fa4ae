package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// stdoutMessages returns the data.message of every notifications/message
// from logger "stdout" received so far, in order.
func stdoutMessages(t testing.TB, c *Client) []string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range c.notes {
		if n.Method != "notifications/message" {
			continue
		}
		var p struct {
			Level  string `json:"level"`
			Logger string `json:"logger"`
			Data   struct {
				Message string `json:"message"`
			} `json:"data"`
		}
		if json.Unmarshal(n.Params, &p) == nil && p.Logger == "stdout" {
			out = append(out, p.Data.Message)
		}
	}
	return out
}

func waitStderr(t testing.TB, c *Client, want int, substr string) {
	t.Helper()
	deadline := time.Now().Add(callTimeout)
	for strings.Count(c.Stderr(), substr) < want {
		if time.Now().After(deadline) {
			t.Fatalf("stderr has %d of %d %q lines", strings.Count(c.Stderr(), substr), want, substr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPrintFlood: 10,000 lines printed from 16 goroutines while 10,000
// calls are answered: stdout holds only JSON-RPC (the client checks every
// line), each print arrives once as a notification and once on stderr, and
// each call is answered once.
func TestPrintFlood(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-11-25")
	const goroutines, each, calls = 16, 625, 10_000
	flood := c.Request("flood", "tools/call", map[string]any{"name": "print", "arguments": map[string]any{
		"text": "flood", "count": each, "goroutines": goroutines,
	}})
	keys := make([]string, calls)
	for i := range calls {
		keys[i] = c.Request(fmt.Sprintf("c%d", i), "tools/call", echoParams(fmt.Sprint(i)))
	}
	if got := toolText(t, c.Response(flood, callTimeout)); got != "printed" {
		t.Fatalf("print: %q", got)
	}
	for i, k := range keys {
		if got := toolText(t, c.Response(k, callTimeout)); got != fmt.Sprint(i) {
			t.Fatalf("%s: %q", k, got)
		}
	}
	waitStderr(t, c, goroutines*each, "flood g")
	deadline := time.Now().Add(callTimeout)
	for len(stdoutMessages(t, c)) < goroutines*each && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	seen := map[string]int{}
	for _, m := range stdoutMessages(t, c) {
		seen[m]++
	}
	for g := range goroutines {
		for n := range each {
			if k := fmt.Sprintf("flood g%d n%d", g, n); seen[k] != 1 {
				t.Fatalf("%q reached the client %d times", k, seen[k])
			}
		}
	}
	for _, k := range keys {
		if n := len(c.Responses(k)); n != 1 {
			t.Fatalf("%s answered %d times", k, n)
		}
	}
}

// TestPrintsReplayedAfterInitialized: what is printed between initialize
// and notifications/initialized waits, and is sent in order right after it;
// past -log-buffer the oldest give way to one drop notice.
func TestPrintsReplayedAfterInitialized(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		buffer, prints int
	}{{buffer: 10, prints: 5}, {buffer: 3, prints: 5}} {
		c := Start(t, Options{Args: []string{"-log-buffer", fmt.Sprint(tc.buffer)}})
		c.Call("initialize", map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "e2e", "version": "0"},
		})
		c.Call("tools/call", map[string]any{"name": "print", "arguments": map[string]any{"text": "early", "count": tc.prints}})
		waitStderr(t, c, tc.prints, "early g0")
		time.Sleep(200 * time.Millisecond) // the record is forwarded just after it is written to stderr
		if got := stdoutMessages(t, c); len(got) != 0 {
			t.Fatalf("sent before notifications/initialized: %v", got)
		}
		c.Notify("notifications/initialized", nil)
		c.Call("ping", nil)
		var want []string
		dropped := max(tc.prints-tc.buffer, 0)
		for n := dropped; n < tc.prints; n++ {
			want = append(want, fmt.Sprintf("early g0 n%d", n))
		}
		if got := stdoutMessages(t, c); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("buffer %d: replayed %v, want %v", tc.buffer, got, want)
		}
		notice := false
		c.mu.Lock()
		for _, n := range c.notes {
			if strings.Contains(string(n.Params), fmt.Sprintf(`"%d messages dropped`, dropped)) {
				notice = true
			}
		}
		c.mu.Unlock()
		if notice != (dropped > 0) {
			t.Fatalf("buffer %d: drop notice present = %v, want %v", tc.buffer, notice, dropped > 0)
		}
	}
}

// TestPrintFromChild: a child process that inherited fd 1 is captured too.
func TestPrintFromChild(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-11-25")
	c.Call("tools/call", map[string]any{"name": "print", "arguments": map[string]any{"text": "from-child", "child": true}})
	waitStderr(t, c, 1, "from-child")
	deadline := time.Now().Add(callTimeout)
	for len(stdoutMessages(t, c)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := stdoutMessages(t, c); len(got) != 1 || got[0] != "from-child" {
		t.Fatalf("client got %v", got)
	}
}

// TestSetLevelFilters: with the client's level at error, prints (info) go to
// stderr only; in 2026-07-28 nothing is ever forwarded.
func TestSetLevelFilters(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-11-25")
	c.Call("logging/setLevel", map[string]any{"level": "error"})
	c.Call("tools/call", map[string]any{"name": "print", "arguments": map[string]any{"text": "quiet-one"}})
	waitStderr(t, c, 1, "quiet-one")

	m := Start(t, Options{})
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	m.Call("tools/call", map[string]any{"name": "print", "arguments": map[string]any{"text": "modern-one"}, "_meta": meta})
	waitStderr(t, m, 1, "modern-one")

	time.Sleep(200 * time.Millisecond) // a forwarded record would follow stderr within microseconds
	c.Call("ping", nil)
	m.Call("tools/list", map[string]any{"_meta": meta})
	if got := stdoutMessages(t, c); len(got) != 0 {
		t.Fatalf("legacy at level error got %v", got)
	}
	if got := stdoutMessages(t, m); len(got) != 0 {
		t.Fatalf("2026-07-28 got %v", got)
	}
}
