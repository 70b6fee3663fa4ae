package handlers_test

import (
	"context"
	"testing"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/tasks"
)

// Tasks belong to the caller when there is one (across sessions and
// replicas), else to the legacy session, else to nobody in particular
// (stdio's one session; 2026-07-28 requests without a caller).
func TestTaskOwner(t *testing.T) {
	ctx := context.Background()
	sess := tasks.WithSession(ctx, "s1")
	withCaller := handlers.WithCaller(sess, &handlers.Caller{Subject: "alice"})
	for _, c := range []struct {
		ctx  context.Context
		want string
	}{{ctx, ""}, {sess, "session:s1"}, {withCaller, "sub:alice"}} {
		if got := handlers.TaskOwner(c.ctx); got != c.want {
			t.Errorf("TaskOwner = %q, want %q", got, c.want)
		}
	}
}
