package sessionactor_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	mcprt "github.com/mcprt/mcprt/runtime"
)

// deferredServer has a tool whose Start takes its calls (save those that
// ask otherwise) and answers them from a goroutine of its own, as a
// gateway answers from the goroutine that reads its backend.
func deferredServer(t *testing.T, timeout time.Duration) *handlers.Server {
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	srv := testServer()
	start := func(ctx context.Context, req *handlers.Request, args json.RawMessage, reply handlers.ToolReply) bool {
		var a struct{ Mode, Text string }
		_ = json.Unmarshal(args, &a)
		switch a.Mode {
		case "decline":
			return false
		case "panic":
			panic("in Start")
		case "now": // answered before Start returns
			reply.Done(mcp.TextResult("at once: "+a.Text), nil)
			return true
		case "fallback-now":
			reply.Fallback()
			return true
		}
		wg.Go(func() {
			switch a.Mode {
			case "fallback":
				reply.Fallback()
			case "wait":
				// Answered only once the request is over: the answer
				// must then go nowhere.
				<-ctx.Done()
				reply.Done(mcp.TextResult("too late"), nil)
			default:
				reply.Done(mcp.TextResult("started: "+a.Text), nil)
			}
		})
		return true
	}
	srv.AddTool(handlers.Tool{Tool: mcp.Tool{Name: "relay"}, Start: start, Timeout: timeout}, func(context.Context, *handlers.Request, json.RawMessage) (*mcp.CallToolResult, error) {
		return mcp.TextResult("handler"), nil
	})
	return srv
}

// TestDeferredTool: a tool's Start takes a call and answers it from
// another goroutine, declines it (the handler runs), hands it back
// (Fallback: the handler runs), or panics (an isError result, as a
// handler's panic); the call's context ends when the client cancels it,
// and the late answer is dropped.
func TestDeferredTool(t *testing.T) {
	c := startClientWith(t, deferredServer(t, 0), mcprt.Options{})
	c.handshake()
	for i, tc := range []struct{ args, want string }{
		{`{"text":"hi"}`, `"text":"started: hi"`},
		{`{"mode":"decline"}`, `"text":"handler"`},
		{`{"mode":"fallback"}`, `"text":"handler"`},
		{`{"mode":"now","text":"x"}`, `"text":"at once: x"`},
		{`{"mode":"fallback-now"}`, `"text":"handler"`},
		{`{"mode":"panic"}`, `"text":"Tool \"relay\" failed with an internal error."}],"isError":true`},
		{`{"text":"after the panic"}`, `"text":"started: after the panic"`},
	} {
		id := string(rune('1' + i))
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"relay","arguments":` + tc.args + `}}`)
		if got := c.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":`+id+`,"result":`) || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %s, want %s", tc.args, got, tc.want)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"relay","arguments":{"mode":"wait"}}}`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":10}}`)
	c.send(`{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	if got := c.recv(); got != `{"jsonrpc":"2.0","id":11,"result":{}}` {
		t.Fatalf("after the cancel: %s", got)
	}
	// The id is free again once the call is cancelled.
	c.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"relay","arguments":{"text":"again"}}}`)
	if got := c.recv(); !strings.Contains(got, `"id":10,`) || !strings.Contains(got, "started: again") {
		t.Fatalf("id 10 again: %s", got)
	}
	c.finish()
}

// TestDeferredToolTimeout: the tool's Timeout bounds a call its Start
// took, as it bounds its handler's.
func TestDeferredToolTimeout(t *testing.T) {
	c := startClientWith(t, deferredServer(t, 100*time.Millisecond), mcprt.Options{})
	c.handshake()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"relay","arguments":{"mode":"wait"}}}`)
	if got, want := c.recv(), `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Request timed out after 100ms"}}`; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	c.finish()
}

// TestDeferredToolDrain: stdin's EOF waits for the calls Start took, as
// for those on handler actors, and their answers are written before the
// server ends.
func TestDeferredToolDrain(t *testing.T) {
	c := startClientWith(t, deferredServer(t, 0), mcprt.Options{})
	c.handshake()
	for i := range 50 {
		c.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(100+i) + `,"method":"tools/call","params":{"name":"relay","arguments":{"text":"x"}}}`)
	}
	c.in.Close()
	seen := map[string]bool{}
	for range 50 {
		got := c.recv()
		if !strings.Contains(got, "started: x") || seen[got] {
			t.Fatalf("answer %d: %s", len(seen), got)
		}
		seen[got] = true
	}
	c.finish()
}
