package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
)

// TestLegacyQuestionGoesToItsClient: a legacy backend's elicitation names
// no request. With many clients it is asked through the one call in flight
// to the backend, and refused when several are (either client could be
// the wrong one); with one client (SingleClient) through the latest.
func TestLegacyQuestionGoesToItsClient(t *testing.T) {
	for _, single := range []bool{false, true} {
		legacy := serve("one")
		legacy.Protocol = "legacy"
		g := unstarted(t, Options{SingleClient: single}, legacy)
		g.start()
		var asked atomic.Int32
		answering := &peer{ask: func(method string, _ any) (json.RawMessage, error) {
			if method == "roots/list" { // the gateway's own, in the first request
				return json.RawMessage(`{"roots":[]}`), nil
			}
			asked.Add(1)
			return json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`), nil
		}}
		bystander := &peer{ask: func(method string, _ any) (json.RawMessage, error) {
			if method == "roots/list" {
				return json.RawMessage(`{"roots":[]}`), nil
			}
			t.Errorf("single %v: the bystander's client was asked %s", single, method)
			return nil, context.Canceled
		}}

		// Alone in flight: asked through it, whatever the clients.
		if got, err := g.run(nil, req("tools/call", `{"name":"one__elicit","arguments":{}}`, answering)); err != nil || !strings.Contains(got, "Hello, Ada!") {
			t.Fatalf("single %v, one call in flight: %s %v", single, got, err)
		}

		// Beside another client's call.
		ctx, cancel := context.WithCancel(context.Background())
		slept := make(chan struct{})
		go func() {
			defer close(slept)
			g.run(ctx, req("tools/call", `{"name":"one__sleep","arguments":{"ms":60000}}`, bystander))
		}()
		waitFor(t, "the sleep to be in flight", func() bool { return g.Gateway.all()[0].inFlight() == 1 })
		got, err := g.run(nil, req("tools/call", `{"name":"one__elicit","arguments":{}}`, answering))
		cancel()
		<-slept
		// Refused, the backend's tool fails with the gateway's reason (the
		// reference server's answer is a JSON-RPC error).
		if err != nil {
			got = err.Error()
		}
		switch {
		case single && !strings.Contains(got, "Hello, Ada!"):
			t.Errorf("single client, two calls in flight: %s, want the question asked through the latest", got)
		case !single && !strings.Contains(got, "cannot tell which of its clients to ask"):
			t.Errorf("many clients, two calls in flight: %s, want the question refused", got)
		}
		if want := map[bool]int32{false: 1, true: 2}[single]; asked.Load() != want {
			t.Errorf("single %v: asked %d times, want %d", single, asked.Load(), want)
		}
	}
}
