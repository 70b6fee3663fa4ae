package main

import (
	"strings"
	"testing"
)

// TestChaosHTTPFlood: `mcprt chaos -flood` over HTTP against mcprt serve
// -http with a cap of 100 sessions: 300 abandoned handshakes are all
// served, a new client after them too, and the campaign passes. Over
// stdio -flood is a usage error.
func TestChaosHTTPFlood(t *testing.T) {
	t.Parallel()
	bin := buildChaos(t)
	args := []string{"-seed", "5", "-requests", "100", "-flood", "300", "-http", "--",
		bin, "serve", "-http", "127.0.0.1:0", "-http-max-sessions", "100", "-request-timeout", "2s", "-drain-timeout", "1s"}
	out, code := runChaos(t, bin, nil, args...)
	if code != 0 || !strings.Contains(out, "\nPASS\n") ||
		!strings.Contains(out, "session flood: 300 handshakes abandoned, 300 served, 0 refused as busy; a new client served after them: true") {
		t.Errorf("mcprt chaos %s: status %d, want 0, PASS and the flood served:\n%s", strings.Join(args, " "), code, out)
	}
	if out, code := runChaos(t, bin, nil, "-flood", "10", "--", bin, "serve"); code != 2 || !strings.Contains(out, "Streamable HTTP") {
		t.Errorf("-flood over stdio: status %d, want 2 and a word on HTTP:\n%s", code, out)
	}
}
