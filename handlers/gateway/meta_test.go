package gateway

import (
	"context"
	"encoding/json"
	"testing"
)

// TestClientMetaReachesTheBackend: what the client puts in its request's
// _meta reaches the backend, on both of the gateway's ways of forwarding a
// tool call (started from the session, and on a handler actor), except
// progressToken (the gateway sends its own) and the keys under the
// protocol's reserved prefixes, which are the client's hop's.
func TestClientMetaReachesTheBackend(t *testing.T) {
	g := start(t, dynamic("d"))
	const params = `{"name":"d__meta","arguments":{},"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","progressToken":7,` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"dev.mcp/x":1,"example.com/app":{"k":[1,2]},"mcp":"plain"}}`
	// The backend speaks 2026-07-28: besides the client's keys it gets
	// the gateway's own hop's.
	check := func(how, got string) {
		t.Helper()
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(got), &m); err != nil {
			t.Fatalf("%s: the backend got _meta %s: %v", how, got, err)
		}
		for k, want := range map[string]string{
			"traceparent":                        `"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"`,
			"example.com/app":                    `{"k":[1,2]}`,
			"mcp":                                `"plain"`,
			"io.modelcontextprotocol/clientInfo": `{"name":"mcprt-gateway","version":"0.1.0"}`,
			"dev.mcp/x":                          "",
		} {
			if string(m[k]) != want {
				t.Errorf("%s: the backend got _meta[%q] = %s, want %s (all: %s)", how, k, m[k], want, got)
			}
		}
		// The gateway asks for progress with a token of its own (a
		// backend's progress extends the call's timeout).
		if tok := string(m["progressToken"]); tok == "" || tok == "7" {
			t.Errorf("%s: the backend got progressToken %s, want the gateway's own", how, tok)
		}
	}
	m, _ := g.Server().Method("tools/call")
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()

	res, err := m.Run(ctx, req("tools/call", params, &peer{}))
	check("on a handler actor", textOf(t, res, err))
	d := &deferred{done: make(chan struct{})}
	if m.Start == nil || !m.Start(ctx, req("tools/call", params, &peer{}), d) {
		t.Fatal("the tool call was not started")
	}
	<-d.done
	check("started", textOf(t, d.res, d.err))
}

func textOf(t *testing.T, res any, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("result %s: %v", b, err)
	}
	return r.Content[0].Text
}

func TestReservedMetaKey(t *testing.T) {
	for k, want := range map[string]bool{
		"io.modelcontextprotocol/protocolVersion": true,
		"dev.mcp/x":                  true,
		"com.example/x":              false,
		"modelcontextprotocol.io/x":  false, // its second label is io
		"traceparent":                false,
		"progressToken":              false,
		"a.b.modelcontextprotocol/x": false,
	} {
		if got := reservedMetaKey(k); got != want {
			t.Errorf("reservedMetaKey(%q) = %v", k, got)
		}
	}
}
