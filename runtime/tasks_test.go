package runtime_test

import (
	"context"
	"testing"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/resourceserver"
)

// Tasks belong to the authenticated caller when there is one (across
// sessions and replicas), else to the legacy session, else to nobody in
// particular (stdio's one session; unauthenticated 2026-07-28 requests).
func TestTaskOwner(t *testing.T) {
	ctx := context.Background()
	sess := tasks.WithSession(ctx, "s1")
	withCaller := resourceserver.WithCaller(sess, &resourceserver.Caller{Subject: "alice"})
	for _, c := range []struct {
		ctx  context.Context
		want string
	}{{ctx, ""}, {sess, "session:s1"}, {withCaller, "sub:alice"}} {
		if got := runtime.TaskOwner(c.ctx); got != c.want {
			t.Errorf("TaskOwner = %q, want %q", got, c.want)
		}
	}
}
