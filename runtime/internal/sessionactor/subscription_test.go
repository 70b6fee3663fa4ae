package sessionactor_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/mcp"
	"github.com/mcprt/mcprt/runtime"
)

// subscriptions records what the sessions tell a server's OnSubscription
// hook.
type subscriptions struct {
	mu    sync.Mutex
	calls []string
}

func (s *subscriptions) hook(uri string, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf("%s %v", uri, on))
}

// snapshot returns the calls since the last take, leaving them.
func (s *subscriptions) snapshot() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// take returns the calls since the last take.
func (s *subscriptions) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

func subscriptionServer() (*handlers.Server, *subscriptions) {
	srv := testServer()
	srv.AddResource(handlers.Resource{Resource: mcp.Resource{URI: "test://a", Name: "a"}}, func(context.Context, *handlers.Request, string, map[string]string) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{{URI: "test://a", Text: "a"}}, nil
	})
	subs := &subscriptions{}
	srv.OnSubscription(subs.hook)
	return srv, subs
}

func wantCalls(t *testing.T, subs *subscriptions, want ...string) {
	t.Helper()
	got := subs.take()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("OnSubscription calls %q, want %q", got, want)
	}
}

// TestSubscriptionHookLegacy: resources/subscribe and unsubscribe tell
// the hook once per change of the session's subscriptions, before the
// answer; the session's end releases what it still follows.
func TestSubscriptionHookLegacy(t *testing.T) {
	srv, subs := subscriptionServer()
	c := startClientWith(t, srv, runtime.Options{})
	c.send(initLegacy)
	c.recv()
	c.send(initDone)
	call := func(id int, method, uri string) {
		t.Helper()
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"%s","params":{"uri":"%s"}}`, id, method, uri))
		if got, want := c.recv(), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, id); got != want {
			t.Fatalf("%s %s: %s", method, uri, got)
		}
	}
	call(1, "resources/subscribe", "test://a")
	wantCalls(t, subs, "test://a true")
	call(2, "resources/subscribe", "test://a") // already followed: no news
	call(3, "resources/subscribe", "test://b")
	wantCalls(t, subs, "test://b true")
	call(4, "resources/unsubscribe", "test://a")
	call(5, "resources/unsubscribe", "test://a")
	wantCalls(t, subs, "test://a false")
	c.finish()
	wantCalls(t, subs, "test://b false")
}

// TestSubscriptionHookListen: a 2026-07-28 listen stream tells the hook of
// each resource it names once, and of each again when the client cancels
// it, or when the server ends it at drain.
func TestSubscriptionHookListen(t *testing.T) {
	srv, subs := subscriptionServer()
	c := startClientWith(t, srv, runtime.Options{})
	c.send(`{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{` + modernMeta +
		`,"notifications":{"resourceSubscriptions":["test://a","test://a","test://c"]}}}`)
	if got := c.recv(); !strings.Contains(got, "notifications/subscriptions/acknowledged") {
		t.Fatalf("ack: %s", got)
	}
	wantCalls(t, subs, "test://a true", "test://c true")
	srv.NotifyResourceUpdated("test://c")
	if got := c.recv(); !strings.Contains(got, `"method":"notifications/resources/updated"`) || !strings.Contains(got, `"uri":"test://c"`) {
		t.Fatalf("update: %s", got)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L1"}}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modernMeta + `}}`)
	c.recv() // the cancel was taken before it
	wantCalls(t, subs, "test://a false", "test://c false")

	c.send(`{"jsonrpc":"2.0","id":"L2","method":"subscriptions/listen","params":{` + modernMeta +
		`,"notifications":{"resourceSubscriptions":["test://a"]}}}`)
	c.recv()
	wantCalls(t, subs, "test://a true")
	c.in.Close()
	c.recv() // the stream's result
	c.recv() // and its notifications/cancelled
	c.finish()
	wantCalls(t, subs, "test://a false")
}

// TestRootsListChangedHook: a client's notifications/roots/list_changed
// reaches the server's OnRootsListChanged hook.
func TestRootsListChangedHook(t *testing.T) {
	srv := testServer()
	changed := make(chan struct{}, 10)
	srv.OnRootsListChanged(func() { changed <- struct{}{} })
	c := startClientWith(t, srv, runtime.Options{})
	c.send(initLegacy)
	c.recv()
	c.send(initDone)
	c.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	c.recv()
	if len(changed) != 1 {
		t.Fatalf("hook called %d times, want 1", len(changed))
	}
	c.finish()
}

// TestSubscriptionNeedsAccessLegacy: over stdio, which vouches for no
// caller, resources/subscribe of a resource with an Access is answered
// and never reaches the hook.
func TestSubscriptionNeedsAccessLegacy(t *testing.T) {
	srv, subs := subscriptionServer()
	srv.AddResource(handlers.Resource{Resource: mcp.Resource{URI: "test://secret", Name: "secret"}, Access: &handlers.Access{Scopes: []string{"admin"}}},
		func(context.Context, *handlers.Request, string, map[string]string) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{{URI: "test://secret", Text: "s"}}, nil
		})
	c := startClientWith(t, srv, runtime.Options{})
	c.send(initLegacy)
	c.recv()
	c.send(initDone)
	for i, uri := range []string{"test://secret", "test://a"} {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/subscribe","params":{"uri":"%s"}}`, i, uri))
		if got, want := c.recv(), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i); got != want {
			t.Fatalf("subscribe %s: %s", uri, got)
		}
	}
	wantCalls(t, subs, "test://a true")
	c.finish()
}
