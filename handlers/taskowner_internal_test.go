package handlers

import (
	"context"
	"testing"
)

// Tasks belong to the caller when there is one (across sessions,
// replicas and restarts), else to nobody in particular: the task id binds
// them, a legacy HTTP session's too (it does not outlive its session). What
// they count against is the caller, else the connection's address (an
// IPv6 one by its /64), else one client (stdio).
func TestTaskOwner(t *testing.T) {
	ctx := context.Background()
	sess := WithSession(WithRemote(ctx, "127.0.0.2:4242"), "s1")
	withCaller := WithCaller(sess, &Caller{Subject: "alice"})
	v6 := WithRemote(ctx, "[2001:db8:1:2:3:4:5:6]:443")
	mapped := WithRemote(ctx, "[::ffff:10.0.0.1]:80")
	for _, c := range []struct {
		ctx           context.Context
		owner, client string
	}{
		{ctx, "", ""},
		{sess, "", "addr:127.0.0.2"},
		{withCaller, "sub:alice", "sub:alice"},
		{v6, "", "addr:2001:db8:1:2::/64"},
		{mapped, "", "addr:10.0.0.1"},
	} {
		if got := taskOwner(c.ctx); got != c.owner {
			t.Errorf("taskOwner = %q, want %q", got, c.owner)
		}
		if got := taskClient(c.ctx); got != c.client {
			t.Errorf("taskClient = %q, want %q", got, c.client)
		}
	}
}
