package tasks

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Status is where a task is in its life. Working and InputRequired are
// live; the other three are terminal, and a task never leaves one.
type Status string

const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is an end state.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Error is a JSON-RPC error a failed task holds.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Task is one task's record: what the Store keeps, what tasks/get reads.
// It is a value; a Store keeps copies.
type Task struct {
	ID     string `json:"id"`
	Owner  string `json:"owner,omitempty"`
	Tool   string `json:"tool,omitempty"`
	Modern bool   `json:"modern,omitempty"` // made for a 2026-07-28 request (the extension)
	Status Status `json:"status"`
	// Message is the statusMessage.
	Message string        `json:"message,omitempty"`
	Created time.Time     `json:"created"`
	Updated time.Time     `json:"updated"`
	TTL     time.Duration `json:"ttl,omitempty"` // from Created; 0: kept until deleted
	// Result is the request's result, once completed (in 2025-11-25 also
	// a failed tool's result with isError).
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the JSON-RPC error of a failed task.
	Error *Error `json:"error,omitempty"`
	// Input is the inputRequests object (2026-07-28) while InputRequired.
	Input json.RawMessage `json:"input,omitempty"`
	// Rerun, set for a task of a resumable tool (handlers.Tool.Resumable),
	// is what a server starting on the store after a crash needs to run
	// the call again. Nil for the others. A Store keeps it as it is given;
	// it is never changed in place (a new one replaces it).
	Rerun *Rerun `json:"rerun,omitempty"`

	// Owner (above), Session and Client are its Requestor's (see there):
	// whom it is bound to ("": its id alone), the legacy HTTP session it
	// was made in, and what its bounds count against.
	Session string `json:"session,omitempty"`
	Client  string `json:"client,omitempty"`
}

// Rerun is what a task of a resumable tool keeps to be run again: the
// call (Task.Tool, Task.Owner and these) and who made it, never a
// credential (a handlers.Caller holds the token's claims, not the token).
type Rerun struct {
	// Args is the call's arguments object.
	Args json.RawMessage `json:"args,omitempty"`
	// Version is the protocol revision the call was made in.
	Version string `json:"version,omitempty"`
	// ClientCapabilities are the capabilities the client declared.
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"`
	// InputResponses are the answers the call held when it became a task
	// (a tool that asks before it is a task, 2026-07-28).
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	// Caller is the handlers.Caller its transport vouched for, encoded;
	// nil for none.
	Caller json.RawMessage `json:"caller,omitempty"`
	// Resumed counts the times the call was run again after a restart. A
	// task is resumed once at most: one that was resumed and whose server
	// died again is failed (with a message saying so), so that a call that
	// brings its process down is not run again on every start.
	Resumed int `json:"resumed,omitempty"`
}

// Expired reports whether the task's TTL has run out at now.
func (t *Task) Expired(now time.Time) bool {
	return t.TTL > 0 && now.Sub(t.Created) >= t.TTL
}

// NewID returns an unguessable task id: 128 bits from crypto/rand, in hex,
// after tag and a dot when tag is set (a replica's tag, so that a proxy
// routing on Mcp-Name finds the replica holding the task, as it does for
// session ids).
func NewID(tag string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("tasks: crypto/rand failed: " + err.Error()) // rand.Read does not fail on supported systems
	}
	id := hex.EncodeToString(b[:])
	if tag != "" {
		return tag + "." + id
	}
	return id
}
