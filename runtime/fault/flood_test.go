package fault

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestHTTPCampaignFlood: against mcprt serve -http with a cap of 50
// sessions, a flood of 200 abandoned handshakes passes: each is served,
// the idle sessions closed to make room, a new client is served after
// them, and the campaign's clients, in use, keep their sessions.
func TestHTTPCampaignFlood(t *testing.T) {
	t.Parallel()
	bin := buildMcprt(t)
	rep, err := (&Campaign{
		Command:     []string{bin, "serve", "-http", "127.0.0.1:0", "-http-max-sessions", "50", "-request-timeout", "2s", "-drain-timeout", "1s"},
		HTTP:        true,
		Seed:        11,
		Requests:    100,
		Rates:       httpRates,
		Flood:       200,
		Timeout:     60 * time.Second,
		ExitTimeout: 20 * time.Second,
	}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if !rep.OK() || rep.Faults["flood"] != 200 || rep.FloodServed != 200 || !rep.FloodNewClient ||
		!strings.Contains(rep.String(), "session flood: 200 handshakes abandoned, 200 served, 0 refused as busy; a new client served after them: true") {
		t.Errorf("flood of 200 past a cap of 50:\n%s\nserver stderr:\n%s", rep, rep.StderrTail)
	}
}

// TestHTTPCampaignFloodDetects: a server whose cap, full of abandoned
// sessions, locks new clients out fails the flood, and so does one that
// makes room by closing a session in use.
func TestHTTPCampaignFloodDetects(t *testing.T) {
	t.Parallel()
	for mode, want := range map[string]string{
		"lockout":   "session flood: a new client after 40 abandoned handshakes was refused (HTTP 503): abandoned sessions lock new clients out",
		"evictbusy": "session flood: client 0's session, in use (its GET stream open), was closed after 40 abandoned handshakes (404)",
		"ok":        "",
	} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			u, _ := startFakeHTTP(t, mode, 16<<20)
			rep, err := (&Campaign{URL: u, Seed: 5, Requests: 50, Clients: 2, Flood: 40,
				Timeout: 60 * time.Second, ExitTimeout: 3 * time.Second}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("mode %s:\n%s", mode, rep)
			all := strings.Join(append(rep.Violations, rep.Problems()...), "\n")
			switch {
			case want == "" && (!rep.OK() || rep.FloodServed != 40 || !rep.FloodNewClient):
				t.Errorf("mode ok: want a pass, the flood served:\n%s", rep)
			case want != "" && (rep.OK() || !strings.Contains(all, want)):
				t.Errorf("mode %s: want a failure saying %q:\n%s", mode, want, rep)
			}
		})
	}
}
