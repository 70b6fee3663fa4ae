package e2e

import (
	"strings"
	"testing"
)

// TestCrashLoopSuspends: by default a tool that keeps panicking is taken out
// of service for a period, and the rest of the server is untouched.
func TestCrashLoopSuspends(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{Args: []string{"-crash-intensity", "3", "-crash-period", "1h"}})
	c.Initialize("2025-11-25")
	panicCall := map[string]any{"name": "panic", "arguments": map[string]any{}}
	for range 4 {
		wantToolPanic(t, c.Call("tools/call", panicCall))
	}
	if e := wantError(t, c.Call("tools/call", panicCall), -32603); !strings.Contains(e.Message, "crash-looping and suspended") {
		t.Fatalf("want the tool suspended, got %q", e.Message)
	}
	if got := toolText(t, c.Call("tools/call", echoParams("fine"))); got != "fine" {
		t.Fatalf("echo: %q", got)
	}
	if !strings.Contains(c.Stderr(), "handler crash loop: tool suspended") {
		t.Fatalf("stderr does not say so:\n%s", tail(c.Stderr(), 2000))
	}
}

// TestCrashLoopEscalates: with -crash-loop escalate each crash loop fails
// the handler supervisor; past the root's intensity the server gives up
// with one clear line on stderr and exit status 1.
func TestCrashLoopEscalates(t *testing.T) {
	t.Parallel()
	c := Start(t, Options{Args: []string{"-crash-loop", "escalate", "-crash-intensity", "1", "-intensity", "1", "-period", "1h"}})
	c.Initialize("2025-11-25")
	panicCall := map[string]any{"name": "panic", "arguments": map[string]any{}}
	for range 2 { // the second panic is one too many: the handler supervisor is restarted
		wantToolPanic(t, c.Call("tools/call", panicCall))
	}
	if got := toolText(t, c.Call("tools/call", echoParams("after restart"))); got != "after restart" {
		t.Fatalf("echo after the restart: %q", got)
	}
	for range 2 { // a second crash loop: one restart too many for the root
		c.Request(c.NewID(), "tools/call", panicCall)
	}
	code, ok := c.WaitExit(exitTimeout)
	if !ok || code != 1 {
		t.Fatalf("exit status %d (exited %v), want 1", code, ok)
	}
	stderr := c.Stderr()
	if !strings.Contains(stderr, "mcprt: server failed") || !strings.Contains(stderr, "gave up") || !strings.Contains(stderr, "crash-looping") {
		t.Fatalf("stderr does not explain the exit:\n%s", tail(stderr, 3000))
	}
}
