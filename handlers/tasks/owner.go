package tasks

// Requestor is who asks for a task, as its record keeps it.
//
// Owner binds the task: only a request with the same owner finds it again
// (Get, Wait, Cancel, Answer). It is the caller's principal when the
// transport vouched for one (an OAuth access token's subject): the MCP
// specification (2025-11-25, basic/utilities/tasks, "Task Isolation and
// Access Control") has a receiver bind tasks to the authorization context
// when there is one. Without one it is "": the task is bound by its id
// alone, 128 bits from crypto/rand, which that same section allows when
// context-binding is unavailable ("receivers MUST generate cryptographically
// secure task IDs with enough entropy to prevent guessing"), and which the
// 2026-07-28 extension does throughout. A 2025-11-25 task over HTTP is not
// bound to its Mcp-Session-Id: a session is no authorization context, it
// ends (DELETE, idle, eviction, the server's restart), and a task bound
// to it would be lost with it, completed result and all, though the client
// still holds the id.
//
// Session is the legacy Streamable HTTP session the task was made in ("":
// none). It scopes tasks/list for a requestor without an owner (the
// session lists the tasks it made, not every anonymous client's ids), and
// a DELETE of the session cancels its tasks still running (Manager
// EndSession).
//
// Client is what the bounds on tasks count against (live and ended ones
// per client): the caller's principal, else the connection's remote
// address (an IPv6 one by its /64 prefix), else "" (stdio: one client). Not the owner,
// which is "" for every anonymous client: that would make one budget of
// them all, which one client could use up for everyone.
type Requestor struct {
	Owner, Session, Client string
}
