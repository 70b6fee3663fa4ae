// Package tasks keeps the tasks of an MCP server: tool calls that outlive
// the request that made them, its connection and, with a journal, the
// process.
//
// A Task is a record (id, owner, status, times, ttl, and the result, the
// JSON-RPC error or the questions for the client); a Store keeps the
// records. NewMemoryStore's keeps them in a map; the journal (OpenJournal)
// appends every change to a file in a directory and fsyncs it before the
// change is applied and acknowledged (writers arriving together share one
// fsync; a write that fails fails its change, which nothing then sees,
// and the next write tries again), replays the file when opened, and
// compacts the file when it holds more than twice as many lines as
// records. Each line carries a CRC-32C: a last line cut short by a crash
// is dropped, a damaged line elsewhere is skipped and reported, costing
// its own record and no other. The directory is locked while a journal
// is open on it: a second process is refused, told the holder's pid. The
// Store interface is small on purpose: a deployment whose replicas share
// a database can keep tasks there with an adapter in its own module,
// checked by storetest.Contract (with the failure cases it opts into),
// the contract the built-in stores pass.
//
// A Manager (the interface here; runtime/taskrun's is the one the runtime
// uses) runs the tasks. Create stores the new record (so a get of its
// id succeeds as soon as Create returns) and starts the task's Work on an
// actor of its own under the manager's supervisor, apart from the session
// that asked: the session may end, the connection drop, and the task goes
// on. A panic in the Work fails the task, not the process. Get, List,
// Wait, Cancel and Answer act for the task's owner only; anyone else is
// told ErrNotFound, as for an id that never existed. The owner is the
// caller's principal, or "" without one: the id alone then binds the task
// (see Requestor for why, and what tasks/list and a session's DELETE do).
// Ids are 128 random bits (crypto/rand), after the replica's tag when
// there is one. Bounds on live tasks (overall, per client) refuse new ones
// with a *LimitError; ended ones past a bound per client are deleted,
// oldest first; a task is deleted once its ttl has passed. When a Manager starts on a
// store that holds tasks a previous process left working, it fails them
// with RestartedMessage: their work died with that process, and the
// client is told so rather than left polling. The exception is a task of
// a tool that declares itself resumable (handlers.Tool.Resumable): its
// record keeps the call (a Rerun: arguments, revision, client
// capabilities, the vouched-for caller; never a credential), and the
// manager (a Resumer) runs it again once the server's tools are in place,
// its statusMessage saying so. Once only: a task that was run again and
// whose server died again is failed, so that a call
// that brings its process down does not do so on every start. Its
// outcome is stored once, as any task's.
//
// A Shared store (handlers/tasks/etcdstore: etcd) is one that replicas
// use at once: any of them answers for any task, a cancel or an answer
// given at one reaches the work where it runs, and a replica holds the
// live tasks it runs with a lease, so that when it is lost exactly one
// other takes each over (a resumable tool's task is run again once; any
// other is failed; its statusMessage says which). A store that
// cannot be reached is ErrUnavailable.
//
// handlers.Server.ServeTasks serves a Manager's tasks over MCP, in the
// 2025-11-25 revision and as the 2026-07-28 extension
// io.modelcontextprotocol/tasks; runtime.StartTasks starts one for a
// server, with the journal when given a directory. This package starts
// no actors itself: running them is the runtime's.
package tasks
