package client_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/session/client"
)

// TestRootsListChanged: with RootsListChanged the roots capability says
// listChanged, and Client.RootsListChanged sends the notification to a
// legacy server; without it nothing is declared nor sent.
func TestRootsListChanged(t *testing.T) {
	t.Parallel()
	roots := func(context.Context) ([]mcp.Root, error) { return []mcp.Root{{URI: "file:///r"}}, nil }
	for _, declared := range []bool{true, false} {
		cmd, log := fakeCmd(t, "legacy")
		c := connect(t, cmd, opts(client.Options{Roots: roots, RootsListChanged: declared}))
		c.RootsListChanged()
		if err := c.Ping(ctx(t)); err != nil { // the notification was written before it
			t.Fatal(err)
		}
		var init struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
		}
		ms := sent(t, log)
		json.Unmarshal(ms[1].Params, &init)
		n := 0
		for _, m := range ms {
			if m.Method == "notifications/roots/list_changed" {
				n++
			}
		}
		wantCaps, wantN := `{}`, 0
		if declared {
			wantCaps, wantN = `{"listChanged":true}`, 1
		}
		if string(init.Capabilities["roots"]) != wantCaps || n != wantN {
			t.Errorf("declared %v: roots capability %s, %d notifications", declared, init.Capabilities["roots"], n)
		}
	}
}
