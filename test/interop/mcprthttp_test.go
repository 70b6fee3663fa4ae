package interop

import (
	"testing"

	"github.com/mcprt/mcprt/session/client"
)

// TestMcprtHTTPClientDrivesSDKServer: mcprt's Streamable HTTP client
// against ./sdkserver served by the SDK's StreamableHTTPHandler. With
// sessions the SDK serves the legacy era only: the probe's -32022 lists
// legacy versions, and the client initializes (its GET stream carries the
// SDK's server→client requests). Stateless, it serves 2026-07-28, which
// the probe finds (with input_required and the x-mcp-header check), and
// the legacy era without sessions, in which it cannot ask the client
// anything.
func TestMcprtHTTPClientDrivesSDKServer(t *testing.T) {
	t.Parallel()
	stateful := serveHTTP(t, sdkServerBin, "-http", "127.0.0.1:0")
	stateless := serveHTTP(t, sdkServerBin, "-http", "127.0.0.1:0", "-stateless")
	for _, tc := range []struct {
		name    string
		url     string
		opts    client.Options
		version string
		asks    bool
		samples bool
	}{
		{"sessions/auto", stateful, client.Options{}, "2025-11-25", true, true},
		{"sessions/2025-06-18", stateful, client.Options{Version: "2025-06-18"}, "2025-06-18", true, true},
		{"sessions/2025-03-26", stateful, client.Options{Version: "2025-03-26"}, "2025-03-26", false, true},
		{"stateless/auto", stateless, client.Options{}, "2026-07-28", true, true},
		{"stateless/2025-11-25", stateless, client.Options{Version: "2025-11-25"}, "2025-11-25", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := sdkServerOptions(tc.opts)
			c, err := client.ConnectURL(testCtx(t), tc.url, &o)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			checkSDKServer(t, c, tc.version, tc.asks, tc.samples)
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}
