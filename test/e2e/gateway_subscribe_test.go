package e2e

import (
	"strings"
	"testing"
)

const watchedURI = "test://watched-resource"

// conformanceBackend is a backend entry running mcprt's conformance
// fixture (test_update_watched_resource changes test://watched-resource
// and tells subscribers), connected with protocol.
func (f *gwFixture) conformanceBackend(tag, protocol string) map[string]any {
	return f.serve(tag, map[string]any{"args": []string{"serve", "-fixture", "conformance"}, "protocol": protocol})
}

// updatesOf counts the notifications/resources/updated for uri the
// client has received (with the listen stream's id, if given).
func (c *Client) updatesOf(uri, subscription string) int {
	n := 0
	for _, m := range c.notes {
		if m.Method == "notifications/resources/updated" && strings.Contains(string(m.Params), `"uri":"`+uri+`"`) &&
			(subscription == "" || strings.Contains(string(m.Params), `"io.modelcontextprotocol/subscriptionId":`+subscription)) {
			n++
		}
	}
	return n
}

func (c *Client) waitUpdates(t *testing.T, n int, subscription string) {
	t.Helper()
	if !c.waitUntil(callTimeout, func() bool { return c.updatesOf(watchedURI, subscription) >= n }) {
		c.mu.Lock()
		got := c.updatesOf(watchedURI, subscription)
		c.mu.Unlock()
		t.Fatalf("%d notifications/resources/updated, want %d\n%s", got, n, tail(c.Stderr(), 3000))
	}
}

// TestGatewayResourceSubscriptions: a client's subscription to a
// backend's resource is followed at that backend, in either era on
// either side: a legacy client's resources/subscribe at a 2026-07-28
// backend (through its listen stream), a 2026-07-28 client's listen
// stream at a legacy backend (through resources/subscribe). The client
// is told the resource updated once the backend follows it (it may have
// changed before), and then at each change.
func TestGatewayResourceSubscriptions(t *testing.T) {
	t.Parallel()
	t.Run("legacy client, modern backend", func(t *testing.T) {
		t.Parallel()
		f := newGateway(t)
		c := f.start(f.config(map[string]any{"conf": f.conformanceBackend("conf", "modern")}), Options{})
		c.Initialize("2025-11-25")
		wantResult(t, c.Call("resources/subscribe", map[string]any{"uri": watchedURI}))
		c.waitUpdates(t, 1, "")
		if got := toolText(t, c.Call("tools/call", toolsCall("conf__test_update_watched_resource", map[string]any{}))); !strings.Contains(got, "(update 1)") {
			t.Errorf("update: %q", got)
		}
		c.waitUpdates(t, 2, "")
		if r := wantResult(t, c.Call("resources/read", map[string]any{"uri": watchedURI})); !strings.Contains(string(r["contents"]), "(update 1)") {
			t.Errorf("read after the update: %s", r["contents"])
		}
		wantResult(t, c.Call("resources/unsubscribe", map[string]any{"uri": watchedURI}))
	})
	t.Run("modern client, legacy backend", func(t *testing.T) {
		t.Parallel()
		f := newGateway(t)
		c := f.start(f.config(map[string]any{"conf": f.conformanceBackend("conf", "legacy")}), Options{})
		c.Request("L", "subscriptions/listen", withMeta(map[string]any{
			"notifications": map[string]any{"resourceSubscriptions": []string{watchedURI}},
		}, meta()))
		c.waitUpdates(t, 1, `"L"`)
		toolText(t, c.Call("tools/call", withMeta(toolsCall("conf__test_update_watched_resource", map[string]any{}), meta())))
		c.waitUpdates(t, 2, `"L"`)
		c.Notify("notifications/cancelled", map[string]any{"requestId": "L"})
	})
}
