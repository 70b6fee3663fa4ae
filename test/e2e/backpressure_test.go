package e2e

import (
	"fmt"
	"testing"
	"time"
)

// TestBackPressure: with -max-in-flight 8, a client that writes 2,000
// requests without reading is slowed down (the server stops reading stdin
// instead of buffering), and once it reads, every request is answered
// exactly once with the right text.
func TestBackPressure(t *testing.T) {
	t.Parallel()
	const n = 2000
	c := Start(t, Options{Args: []string{"-max-in-flight", "8"}, Paused: true})

	text := func(i int) string { return fmt.Sprintf("%06d:%s", i, pattern(1024-7)) }
	writeErr := make(chan error, 1)
	go func() {
		_, err := c.requestErr(0, "initialize", map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "e2e", "version": "1"},
		})
		if err == nil {
			err = c.SendRaw([]byte(RequestLine(nil, "notifications/initialized", nil) + "\n"))
		}
		for i := 1; i <= n && err == nil; i++ {
			_, err = c.requestErr(i, "tools/call", echoParams(text(i)))
		}
		writeErr <- err
	}()

	time.Sleep(time.Second)
	select {
	case err := <-writeErr:
		// About 2 MiB cannot fit in two pipes and 8 in-flight lines.
		t.Errorf("all %d requests were written while nobody read stdout (err %v): no back-pressure", n, err)
	default:
	}
	if code, ok := c.WaitExit(0); ok {
		t.Fatalf("server exited (status %d) while the client was not reading", code)
	}

	c.Resume()
	select {
	case err := <-writeErr:
		if err != nil {
			t.Fatalf("writing requests: %v", err)
		}
	case <-time.After(callTimeout):
		t.Fatal("writer still blocked after the client started reading")
	}
	if !c.waitUntil(callTimeout, func() bool { return len(c.byID) >= n+1 }) {
		c.mu.Lock()
		got := len(c.byID)
		c.mu.Unlock()
		t.Fatalf("only %d of %d responses arrived", got, n+1)
	}
	if m := c.Responses("0"); len(m) != 1 || m[0].Error != nil {
		t.Errorf("initialize: %v", m)
	}
	for i := 1; i <= n; i++ {
		rs := c.Responses(itoa(i))
		if len(rs) != 1 {
			t.Errorf("id %d answered %d times", i, len(rs))
			continue
		}
		if got, err := toolTextErr(rs[0]); err != nil || got != text(i) {
			t.Errorf("id %d: %v, got %.20q", i, err, got)
		}
	}
}
