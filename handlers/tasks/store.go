package tasks

import (
	"errors"
	"sync"
)

// Store keeps task records. Put must be durable when it returns (as far as
// the store is durable at all): a task's id is handed to the client only
// after its record is Put. Implementations are safe for concurrent use.
//
// The package has two: MemoryStore and the journal (OpenJournal). A
// deployment whose replicas share a database can keep tasks there with an
// adapter of its own; ContractTest (in storetest) checks one.
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

// MemoryStore keeps tasks in a map: nothing survives the process.
type MemoryStore struct {
	mu     sync.RWMutex
	tasks  map[string]Task
	closed bool
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{tasks: map[string]Task{}} }

func (s *MemoryStore) Put(t Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.tasks[t.ID] = t
	return nil
}

func (s *MemoryStore) Get(id string) (Task, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return Task{}, false, ErrClosed
	}
	t, ok := s.tasks[id]
	return t, ok, nil
}

func (s *MemoryStore) Delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	delete(s.tasks, id)
	return nil
}

func (s *MemoryStore) All() ([]Task, error) {
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

func (s *MemoryStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}
