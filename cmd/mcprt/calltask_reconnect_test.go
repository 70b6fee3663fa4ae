package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/session/client"
)

// TestLostServer: what makes a task's poller connect again (the server
// went away) and what does not (the server answered).
func TestLostServer(t *testing.T) {
	refused := fmt.Errorf("client: tasks/get: %w", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")})
	for _, c := range []struct {
		name     string
		err      error
		overHTTP bool
		want     bool
	}{
		{"exited", fmt.Errorf("client: tasks/get: %w", &client.ExitError{Exited: true, Code: -1}), false, true},
		{"refused", refused, true, true},
		{"session ended", fmt.Errorf("client: %w", client.ErrSessionEnded), true, true},
		{"502", &client.HTTPError{Status: 502}, true, true},
		{"401", &client.HTTPError{Status: 401}, true, false},
		{"poll timeout over HTTP", fmt.Errorf("client: tasks/get: %w", context.DeadlineExceeded), true, true},
		// Connecting again would kill the process that runs the task.
		{"poll timeout over stdio", fmt.Errorf("client: tasks/get: %w", context.DeadlineExceeded), false, false},
		{"answer", fmt.Errorf("client: %w", &client.RPCError{Method: "tasks/get", Err: &jsonrpc.Error{Code: -32602, Message: "unknown task"}}), true, false},
		{"cancelled", fmt.Errorf("client: task x: %w", client.ErrTaskCancelled), true, false},
	} {
		if got := lostServer(c.err, c.overHTTP); got != c.want {
			t.Errorf("%s: lostServer(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

// TestReconnectUntil: -task-reconnect wins; else the task's ttl from its
// creation; else defaultReconnect; negative: no reconnecting.
func TestReconnectUntil(t *testing.T) {
	created := time.Now().Add(-time.Minute)
	cv := &clientRun{}
	if until, ok := cv.reconnectUntil(&client.Task{TTL: time.Hour}, created); !ok || !until.Equal(created.Add(time.Hour)) {
		t.Errorf("ttl: %v %v", until, ok)
	}
	if until, ok := cv.reconnectUntil(&client.Task{TTL: -1}, created); !ok || time.Until(until) < defaultReconnect-time.Minute {
		t.Errorf("no ttl: %v %v", until, ok)
	}
	cv.reconnectFor = 30 * time.Second
	if until, ok := cv.reconnectUntil(&client.Task{TTL: time.Hour}, created); !ok || time.Until(until) > 30*time.Second {
		t.Errorf("-task-reconnect 30s: %v %v", until, ok)
	}
	cv.reconnectFor = -1
	if _, ok := cv.reconnectUntil(&client.Task{TTL: time.Hour}, created); ok {
		t.Error("-task-reconnect negative: reconnects")
	}
}
