package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Past the in-flight limit (512 by default), requests wait for a slot, but
// nothing else does: the client's cancellations and its answers to the
// server's own requests are what free slots, and they must never queue
// behind the requests they would free.

// TestOverLimitCancelAndPing: 600 sleeps of 60 s (512 run, 88 wait), then a
// cancellation for each, then a ping. The ping is answered and every sleep
// is over long before any of them would have ended: no sleep gets a
// response, and stdin EOF then ends the server at once (nothing left to
// drain, not even the 88 that never ran).
func TestOverLimitCancelAndPing(t *testing.T) {
	t.Parallel()
	const n = 600
	c := Start(t, Options{Args: []string{"-request-timeout", "5m", "-drain-timeout", "60s"}})
	c.Initialize("2025-06-18")
	start := time.Now()
	for i := 1; i <= n; i++ {
		c.Request(fmt.Sprintf("s%d", i), "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 60000}})
	}
	for i := 1; i <= n; i++ {
		c.Notify("notifications/cancelled", map[string]any{"requestId": fmt.Sprintf("s%d", i), "reason": "test"})
	}
	// Generous against a loaded machine, far below the 60 s sleeps.
	if m := c.Response(c.Request("p", "ping", nil), 30*time.Second); m.Error != nil {
		t.Fatalf("ping: %s", m)
	}
	// The slots are free again: a call after the ping runs at once.
	if got := toolText(t, c.Response(c.Request("e", "tools/call", echoParams("after")), 30*time.Second)); got != "after" {
		t.Fatalf("echo after the cancellations: %q", got)
	}
	c.CloseStdin()
	code, ok := c.WaitExit(30 * time.Second)
	if !ok || code != 0 {
		t.Fatalf("after EOF: exited=%v status %d; the cancelled sleeps kept the drain waiting", ok, code)
	}
	if el := time.Since(start); el > 50*time.Second {
		t.Fatalf("took %v: the cancellations waited for the sleeps", el)
	}
	for i := 1; i <= n; i++ {
		if rs := c.Responses(fmt.Sprintf(`"s%d"`, i)); len(rs) != 0 {
			t.Errorf("cancelled sleep s%d got %d responses: %s", i, len(rs), rs[0])
		}
	}
}

// TestOverLimitElicitations: 600 calls of a tool that asks the client for
// input. 512 run and each sends elicitation/create; the client answers each
// as it comes. The answers are read at once, free their slots, and the 88
// calls that waited run and ask in turn: all 600 complete.
func TestOverLimitElicitations(t *testing.T) {
	t.Parallel()
	const n = 600
	c := Start(t, Options{AllowRequests: true, Args: []string{"-request-timeout", "5m"}})
	c.InitializeWith("2025-06-18", map[string]any{"elicitation": map[string]any{}})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	defer close(stop)
	wg.Add(1)
	go func() { // the user: answers every elicitation as it arrives
		defer wg.Done()
		for answered := 0; answered < n; {
			select {
			case <-stop:
				return
			default:
			}
			req := c.nextServerRequest("elicitation/create", 100*time.Millisecond)
			if req == nil {
				continue
			}
			answered++
			c.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"u%d"}}}`, req.ID, answered))
		}
	}()
	keys := make([]string, n)
	for i := range n {
		keys[i] = c.Request(fmt.Sprintf("e%d", i), "tools/call", map[string]any{"name": "elicit", "arguments": map[string]any{}})
	}
	for i, key := range keys {
		m := c.Response(key, 60*time.Second)
		if m.Error != nil {
			t.Fatalf("call %d: %s", i, m)
		}
		var r struct {
			StructuredContent struct{ Greeting string } `json:"structuredContent"`
		}
		mustUnmarshal(t, m.Result, &r)
		if !strings.HasPrefix(r.StructuredContent.Greeting, "Hello, u") {
			t.Fatalf("call %d: %s", i, m.Result)
		}
	}
	wg.Wait()
}

// TestOverQueueBusy: with 2 slots and room for 2 to wait, a fifth
// concurrent request is refused at once with -32000 and says why; the
// reader goes on, so a ping behind it is answered, and the four accepted
// requests still complete.
func TestOverQueueBusy(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{Args: []string{"-max-in-flight", "2", "-max-queued", "2"}})
	c.Initialize("2025-06-18")
	var keys []string
	for i := range 4 {
		keys = append(keys, c.Request(fmt.Sprintf("q%d", i), "tools/call", map[string]any{"name": "sleep", "arguments": map[string]any{"ms": 2000}}))
	}
	busy := c.Response(c.Request("over", "tools/call", echoParams("x")), 30*time.Second)
	if busy.Error == nil || busy.Error.Code != -32000 || !strings.Contains(busy.Error.Message, "busy") {
		t.Fatalf("fifth request: got %s, want error -32000 (server busy)", busy)
	}
	var data struct{ MaxInFlight, MaxQueued int }
	if err := json.Unmarshal(busy.Error.Data, &data); err != nil || data.MaxInFlight != 2 || data.MaxQueued != 2 {
		t.Errorf("busy error data = %s, want maxInFlight 2 and maxQueued 2", busy.Error.Data)
	}
	if m := c.Response(c.Request("p", "ping", nil), 30*time.Second); m.Error != nil {
		t.Fatalf("ping: %s", m)
	}
	for _, k := range keys {
		if got := toolText(t, c.Response(k, 30*time.Second)); got != "slept" {
			t.Fatalf("%s: %q", k, got)
		}
	}
	// With the slots free again, the same request is served.
	if got := toolText(t, c.Response(c.Request("again", "tools/call", echoParams("x")), 30*time.Second)); got != "x" {
		t.Fatalf("after the queue emptied: %q", got)
	}
}

// nextServerRequest is ServerRequest that returns nil instead of failing
// when no request came within timeout.
func (c *Client) nextServerRequest(method string, timeout time.Duration) *Msg {
	var m *Msg
	c.waitUntil(timeout, func() bool {
		for i, r := range c.requests {
			if r != nil && r.Method == method {
				m, c.requests[i] = r, nil
				return true
			}
		}
		return false
	})
	return m
}
