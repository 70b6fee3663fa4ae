package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Manager is what serves tasks over MCP needs of whatever runs them
// (handlers.Server.ServeTasks): runtime/taskrun's Manager runs each on an
// actor. Every method that names a task acts for its owner only: another
// owner's task is ErrNotFound.
type Manager interface {
	// Create stores a new task of r's and starts work; once it returns,
	// Get finds the task. ttl 0 asks for the default.
	Create(r Requestor, tool string, modern bool, ttl time.Duration, work Work) (Task, error)
	Get(owner, id string) (Task, error)
	// List returns owner's tasks, newest first; for owner "" (no
	// caller), only those made in session (see Requestor).
	List(owner, session string) ([]Task, error)
	// EndSession cancels the tasks made in the legacy HTTP session id
	// that are still running: its client ended it (DELETE), and nobody
	// is left to want their work. Those that ended are kept, for whoever
	// holds their ids.
	EndSession(id string)
	// Wait blocks until the task has ended, or ctx has.
	Wait(ctx context.Context, owner, id string) (Task, error)
	// Cancel moves a live task to cancelled (ErrTerminal if it ended).
	Cancel(owner, id string) (Task, error)
	// Answer gives the task answers to its input requests (2026-07-28).
	Answer(owner, id string, answers map[string]json.RawMessage) error
	// Waiting marks a live task input_required (on) or working again,
	// for work that asks its client directly (2025-11-25).
	Waiting(id string, on bool)
	// PollInterval is the interval suggested to clients.
	PollInterval() time.Duration
	// OnStatus adds a function told of every change of every task, until
	// stop is called (several servers may serve one manager's tasks).
	OnStatus(fn func(Task)) (stop func())
}

// RestartedMessage is the statusMessage of a task that was running when
// its server stopped without finishing it; a new server on the same store
// marks it failed with this message when it starts.
const RestartedMessage = "the server restarted while the task was running; its work was lost"

// Resumer is a Manager that can run the tasks of resumable tools again
// after a restart (runtime/taskrun's is one).
type Resumer interface {
	// CreateResumable is Create for a task whose record keeps rerun, so
	// that it can be run again after a restart.
	CreateResumable(r Requestor, tool string, modern bool, ttl time.Duration, rerun *Rerun, work Work) (Task, error)
	// Resume runs again the tasks a previous process left working whose
	// records keep a Rerun, each with the work rework makes of its record:
	// nil (its tool is gone, or no longer resumable) fails it with
	// RestartedMessage. The first server to serve the tasks calls it when
	// its tools are in place (until then they stay working); any later
	// call, by another server sharing the manager, does nothing.
	Resume(rework func(Task) Work)
}

// Errors of a Manager's methods. Each says what the client did wrong
// or what bound it ran into.
var (
	ErrNotFound = errors.New("tasks: no such task")
	ErrTerminal = errors.New("tasks: the task has already ended")
	ErrStopped  = errors.New("tasks: the server is shutting down")
)

// LimitError says a new task was refused by a bound on live tasks.
type LimitError struct {
	PerOwner bool // the client's bound (Requestor.Client), not the overall one
	Limit    int
}

func (e *LimitError) Error() string {
	if e.PerOwner {
		return fmt.Sprintf("too many tasks in progress for this client (limit %d); wait for some to finish, or cancel them", e.Limit)
	}
	return fmt.Sprintf("too many tasks in progress on this server (limit %d); retry later", e.Limit)
}

// Work is what a task does: the request it was made for, run on the task's
// actor. answers holds the client's answers to the task's input requests so
// far (2026-07-28), by key. It returns the task's outcome; a panic fails
// the task.
type Work func(ctx context.Context, answers map[string]json.RawMessage) Outcome

// Outcome is how one run of a Work ended.
type Outcome struct {
	// Result is the result of a request that completed.
	Result json.RawMessage
	// Failed marks Result as a failure (a tool's isError result, which
	// 2025-11-25 reports as failed).
	Failed bool
	// Error is the JSON-RPC error of a request that failed.
	Error *Error
	// Input, when set, are requests to the client (inputRequests, by key)
	// that must all be answered before the Work is run again, from the
	// start, with the answers.
	Input map[string]json.RawMessage
}

type idKey struct{}

// WithID returns ctx carrying a task's id: a Manager gives each task's
// Work such a context.
func WithID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, idKey{}, id)
}

// IDFrom returns the id of the task whose Work ctx is ("" for another
// context).
func IDFrom(ctx context.Context) string {
	id, _ := ctx.Value(idKey{}).(string)
	return id
}
