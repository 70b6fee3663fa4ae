package tasks

import (
	"encoding/json"
	"errors"
	"sync"
)

// Store keeps task records. Put must be durable when it returns (as far as
// the store is durable at all): a task's id is handed to the client only
// after its record is Put. Implementations are safe for concurrent use.
//
// The package has two: NewMemoryStore's and the journal (OpenJournal). A
// deployment whose replicas share a database can keep tasks there with an
// adapter of its own; storetest.Contract checks one.
type Store interface {
	// Put creates or replaces the record of t.ID.
	Put(t Task) error
	// Get returns the record of id; ok is false when there is none.
	Get(id string) (t Task, ok bool, err error)
	// Delete removes the record of id (nothing when there is none).
	Delete(id string) error
	// All returns every record, in no particular order: the manager reads
	// it once, at start, to settle what a previous process left running.
	All() ([]Task, error)
	// Close releases the store; later calls fail with ErrClosed.
	Close() error
}

// Batcher is a Store that stores many changes as one (one fsync for a
// journal): the manager settles what a previous process left, thousands
// of expired tasks perhaps, through it when its store has it.
type Batcher interface {
	// Apply puts every record of puts and deletes every id of dels, all
	// or none: when it fails, nothing of it is visible.
	Apply(puts []Task, dels []string) error
}

// ErrClosed is returned by a Store used after Close.
var ErrClosed = errors.New("tasks: store closed")

// memoryStore keeps tasks in a map: nothing survives the process.
type memoryStore struct {
	mu     sync.RWMutex
	tasks  map[string]Task
	closed bool
}

// NewMemoryStore returns an empty Store that keeps tasks in a map: nothing
// survives the process.
func NewMemoryStore() Store { return &memoryStore{tasks: map[string]Task{}} }

func (s *memoryStore) Put(t Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.tasks[t.ID] = t
	return nil
}

func (s *memoryStore) Get(id string) (Task, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return Task{}, false, ErrClosed
	}
	t, ok := s.tasks[id]
	return t, ok, nil
}

func (s *memoryStore) Delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	delete(s.tasks, id)
	return nil
}

func (s *memoryStore) All() ([]Task, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	out := make([]Task, 0, len(s.tasks))
	for _, t := range s.tasks {
		out = append(out, t)
	}
	return out, nil
}

func (s *memoryStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// Shared is a Store that several servers (replicas) use at once, as the
// etcd store (handlers/tasks/etcdstore) is: any of them answers for any
// task, and a task whose replica was lost is taken over by another. Each
// replica holds the live tasks it runs (Put of a live record by a
// replica holds it); its hold ends with it (a lease that is no longer
// renewed), and the tasks it held become orphans, which Adopt gives to
// exactly one other.
//
// With a Shared store a Put may fail with ErrTerminal (another replica
// ended the task first: a cancel) or ErrTakenOver (another replica holds
// it now): the writer's run of the task is over, and it stops it.
type Shared interface {
	Store
	// Watch has the store report what w asks for, until Close. Each is
	// called on one goroutine of the store's, in order, and must not
	// block long. Call it once, before Orphans.
	Watch(w Watchers)
	// Forward sends answers to the input requests of task id (tasks/update
	// at a replica other than the one running it) to its holder, which
	// is told of them by its Watchers.Answered.
	Forward(id string, answers map[string]json.RawMessage) error
	// Orphans returns the live records that no replica holds.
	Orphans() ([]Task, error)
	// Adopt stores t, a record Orphans returned and changed, and holds it
	// (unless t is terminal), if it is still an orphan, unchanged since:
	// ok is false when another replica was first.
	Adopt(t Task) (ok bool, err error)
}

// Watchers are what a Shared store reports.
type Watchers struct {
	// Changed is told every record another replica puts (a cancel, a
	// change of a task run elsewhere).
	Changed func(Task)
	// Answered is told answers Forwarded to a task this replica holds.
	Answered func(id string, answers map[string]json.RawMessage)
	// Orphaned is told when tasks may have lost their replica.
	Orphaned func()
	// Lost is told when this replica's own hold lapsed: its tasks may
	// run elsewhere now, and it stops them.
	Lost func()
}

// ErrUnavailable is what a Store's error wraps when the store cannot be
// reached (a shared store's database down or cut off): task calls say so,
// and may be tried again later; plain calls need no store.
var ErrUnavailable = errors.New("tasks: the task store is unreachable")

// ErrTakenOver is a Shared store's error for a write of a task another
// replica holds now (this one's hold had lapsed).
var ErrTakenOver = errors.New("tasks: the task was taken over by another server")
