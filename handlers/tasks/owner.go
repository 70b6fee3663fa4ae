package tasks

import "context"

type sessionKey struct{}

// WithSession returns ctx carrying the id of the session a request came
// in (a legacy Streamable HTTP session): the default owner of its tasks.
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// SessionFrom returns the session id WithSession put in ctx, or "": the
// owner of the tasks of a stdio server (the process is its one session)
// and of 2026-07-28 requests, which have no session (their task ids, being
// unguessable, are what binds them, unless a caller identity is used).
func SessionFrom(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	return id
}
