package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestThousandMixedCalls: 1,000 tools/call in flight at once, 10% of them
// panicking and 5% running past their deadline. Every id is answered
// exactly once with the right kind of answer, and the server serves on.
// (The crash-loop policy, which would suspend the panicking tool, is set
// out of the way: the panics are the point here.)
func TestThousandMixedCalls(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{Args: []string{"-request-timeout", "2s", "-max-in-flight", "2000", "-crash-intensity", "100000"}})
	c.Initialize("2025-11-25")
	const n = 1000
	kind := make(map[string]string, n)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("m%d", i)
		var key string
		switch {
		case i%10 == 0:
			key = c.Request(id, "tools/call", map[string]any{"name": "panic", "arguments": map[string]any{}})
			kind[key] = "panic"
		case i%20 == 1:
			key = c.Request(id, "tools/call", sleepParams(60_000))
			kind[key] = "deadline"
		default:
			key = c.Request(id, "tools/call", echoParams(id))
			kind[key] = "echo:" + id
		}
	}
	counts := map[string]int{}
	for key, k := range kind {
		m := c.Response(key, callTimeout)
		switch {
		case k == "panic":
			wantToolPanic(t, m)
		case k == "deadline":
			if e := wantError(t, m, -32603); e.Message != "Request timed out after 2s" {
				t.Errorf("%s: %s", key, m)
			}
		default:
			if got := toolText(t, m); "echo:"+got != k {
				t.Errorf("%s: echoed %q", key, got)
			}
		}
		counts[k[:min(len(k), 4)]]++
	}
	for key := range kind {
		if rs := c.Responses(key); len(rs) != 1 {
			t.Errorf("%s answered %d times", key, len(rs))
		}
	}
	t.Logf("answered: %v", counts)
	if got := toolText(t, c.Call("tools/call", echoParams("still here"))); got != "still here" {
		t.Fatalf("after the storm: %q", got)
	}
	c.CloseStdin()
	if code, ok := c.WaitExit(exitTimeout); !ok || code != 0 {
		t.Fatalf("exit %d (exited %v)", code, ok)
	}
}

// TestCancelFreesSlot: with room for one request in flight, a cancelled
// sleep gets no response and its slot serves the next request.
func TestCancelFreesSlot(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{Args: []string{"-max-in-flight", "1"}})
	c.Initialize("2025-06-18")
	key := c.Request("s", "tools/call", sleepParams(60_000))
	c.Notify("notifications/cancelled", map[string]any{"requestId": "s"})
	if got := toolText(t, c.Call("tools/call", echoParams("next"))); got != "next" {
		t.Fatalf("echo after cancel: %q", got)
	}
	if rs := c.Responses(key); len(rs) != 0 {
		t.Fatalf("cancelled sleep answered: %s", rs[0])
	}
}

// TestProgressBeforeResult: progress notifications for a request arrive in
// increasing order and all before its result; none without a token.
func TestProgressBeforeResult(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{})
	c.Initialize("2025-11-25")
	m := c.Call("tools/call", map[string]any{
		"name": "sleep", "arguments": map[string]any{"ms": 300},
		"_meta": map[string]any{"progressToken": "tok"},
	})
	if got := toolText(t, m); got != "slept" {
		t.Fatalf("sleep: %q", got)
	}
	var last float64 = -1
	seen, resultAt := 0, -1
	for i := 0; i < c.LineCount(); i++ {
		l := c.Line(i)
		if string(l.ID) == string(m.ID) {
			resultAt = i
			continue
		}
		if l.Method != "notifications/progress" {
			continue
		}
		var p struct {
			Token    json.RawMessage `json:"progressToken"`
			Progress float64         `json:"progress"`
		}
		mustUnmarshal(t, l.Params, &p)
		if string(p.Token) != `"tok"` {
			t.Fatalf("progress for another token: %s", l)
		}
		if resultAt >= 0 {
			t.Fatalf("progress after the result: %s", l)
		}
		if p.Progress <= last {
			t.Fatalf("progress not increasing: %v after %v", p.Progress, last)
		}
		last = p.Progress
		seen++
	}
	if seen == 0 {
		t.Fatal("no progress notification")
	}
	before := c.LineCount()
	if got := toolText(t, c.Call("tools/call", sleepParams(100))); got != "slept" {
		t.Fatalf("sleep: %q", got)
	}
	for i := before; i < c.LineCount(); i++ {
		if c.Line(i).Method == "notifications/progress" {
			t.Fatalf("progress without a token: %s", c.Line(i))
		}
	}
}
