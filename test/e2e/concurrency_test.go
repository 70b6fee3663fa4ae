package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrency covers requests running side by side, cancellation and
// deadlines.
func TestConcurrency(t *testing.T) {
	t.Parallel()

	t.Run("slow requests do not block quick ones", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		c.Initialize("2025-06-18")
		var sleeps []string
		for i := 0; i < 8; i++ {
			sleeps = append(sleeps, c.Request(fmt.Sprintf("sleep-%d", i), "tools/call", sleepParams(1000)))
		}
		echo := c.Call("tools/call", echoParams("quick"))
		if got := toolText(t, echo); got != "quick" {
			t.Errorf("echo: got %q", got)
		}
		for _, k := range sleeps {
			if rs := c.Responses(k); len(rs) != 0 {
				t.Errorf("sleep %s answered before the echo: %s", k, rs[0])
			}
		}
		for _, k := range sleeps {
			if got, err := toolTextErr(c.Response(k, callTimeout)); err != nil || got != "slept" {
				t.Errorf("sleep %s: %v %q", k, err, got)
			}
		}
	})

	t.Run("cancelled request gets no response", func(t *testing.T) {
		t.Parallel()
		for _, id := range []any{"cancel-me", 31337} {
			c := Start(t, Options{})
			c.Initialize("2025-06-18")
			key := c.Request(id, "tools/call", sleepParams(5000))
			c.Call("ping", nil) // the sleep is now in flight
			c.Notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "test"})
			c.Call("ping", nil) // the cancellation has been read
			time.Sleep(300 * time.Millisecond)
			if rs := c.Responses(key); len(rs) != 0 {
				t.Errorf("cancelled request %s was answered: %s", key, rs[0])
			}
			if got := toolText(t, c.Call("tools/call", echoParams("after cancel"))); got != "after cancel" {
				t.Errorf("echo after cancel: got %q", got)
			}
			// Draining must not wait for, or answer, the cancelled request.
			c.CloseStdin()
			if code, ok := c.WaitExit(exitTimeout); !ok || code != 0 {
				t.Errorf("exit: code %d, exited %v", code, ok)
			}
			c.WaitReader(exitTimeout)
			if rs := c.Responses(key); len(rs) != 0 {
				t.Errorf("cancelled request %s answered at shutdown: %s", key, rs[0])
			}
		}
	})

	t.Run("cancel finished or unknown request is harmless", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		c.Initialize("2025-06-18")
		m := c.CallID("done-1", "tools/call", echoParams("done"))
		if got := toolText(t, m); got != "done" {
			t.Errorf("echo: %q", got)
		}
		c.AssertSilent(RequestLine(nil, "notifications/cancelled", map[string]any{"requestId": "done-1"}))
		c.AssertSilent(RequestLine(nil, "notifications/cancelled", map[string]any{"requestId": "never-sent"}))
		c.AssertSilent(RequestLine(nil, "notifications/cancelled", map[string]any{"requestId": map[string]any{"x": 1}}))
		if got := toolText(t, c.Call("tools/call", echoParams("fine"))); got != "fine" {
			t.Errorf("echo: %q", got)
		}
	})

	t.Run("request timeout", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{Args: []string{"-request-timeout", "200ms"}})
		c.Initialize("2025-06-18")
		key := c.Request("times-out", "tools/call", sleepParams(5000))
		m := c.Response(key, callTimeout)
		if m.Error == nil {
			t.Errorf("request past its deadline: got %s, want an error", m)
		}
		// The modern era gets the same.
		key = c.Request("times-out-modern", "tools/call", withMeta(sleepParams(5000), meta()))
		if m := c.Response(key, callTimeout); m.Error == nil {
			t.Errorf("modern request past its deadline: got %s, want an error", m)
		}
		if got := toolText(t, c.Call("tools/call", echoParams("still serving"))); got != "still serving" {
			t.Errorf("echo: got %q", got)
		}
		time.Sleep(300 * time.Millisecond) // no late second answer (the reader flags duplicates)
	})

	t.Run("200 concurrent echoes", func(t *testing.T) {
		t.Parallel()
		c := Start(t, Options{})
		c.Initialize("2025-11-25")
		var wg sync.WaitGroup
		errs := make(chan error, 200)
		for i := 0; i < 200; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				id := fmt.Sprintf("conc-%d", i)
				text := fmt.Sprintf("text %d %s", i, pattern(i))
				m, err := c.CallErr(id, "tools/call", echoParams(text))
				if err != nil {
					errs <- err
					return
				}
				got, err := toolTextErr(m)
				if err != nil {
					errs <- err
				} else if got != text {
					errs <- fmt.Errorf("id %s: got %q, want %q", id, got, text)
				}
			}(i)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		c.Call("ping", nil)
		for i := 0; i < 200; i++ {
			if n := len(c.Responses(jsonString(fmt.Sprintf("conc-%d", i)))); n != 1 {
				t.Errorf("conc-%d answered %d times", i, n)
			}
		}
	})
}
