package tasks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// JournalFile is the journal's file name inside its directory.
const JournalFile = "tasks.journal"

// Journal is the durable Store: every Put and Delete is a line appended to
// a file and fsync'd before it returns; the records live in memory too, so
// reads touch no disk. Opening replays the file. When the file holds many
// more lines than live records, it is compacted: rewritten with one line
// per record to a temporary file, fsync'd, and renamed over the old one.
//
// Writers that arrive while an fsync is under way share the next one
// (group commit), so concurrent tasks do not queue one fsync each.
type Journal struct {
	dir  string
	path string

	mu       sync.Mutex
	cond     *sync.Cond
	f        *os.File
	tasks    map[string]Task
	pending  []byte // appended, not yet written
	seq      uint64 // records appended so far
	synced   uint64 // records durable so far
	flushing bool
	lines    int // lines in the file, for compaction
	err      error
	closed   bool
}

// journalRecord is one line: a put (Task) or a delete (Del).
type journalRecord struct {
	Task *Task  `json:"put,omitempty"`
	Del  string `json:"del,omitempty"`
}

// compactMin is the number of lines below which the journal is never
// compacted; above it, the file is rewritten when it has more than twice
// as many lines as records.
const compactMin = 1024

// OpenJournal opens (or creates) the journal in dir, replaying what it
// holds. A last line cut short by a crash is dropped: its write had not
// returned, so no client was told of it.
func OpenJournal(dir string) (*Journal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tasks: journal directory: %w", err)
	}
	j := &Journal{dir: dir, path: filepath.Join(dir, JournalFile), tasks: map[string]Task{}}
	j.cond = sync.NewCond(&j.mu)
	f, err := os.OpenFile(j.path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("tasks: journal: %w", err)
	}
	good, err := j.replay(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	// Drop a torn tail, then append after the last good line.
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("tasks: journal: %w", err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("tasks: journal: %w", err)
	}
	j.f = f
	if j.lines > compactMin && j.lines > 2*len(j.tasks) {
		j.mu.Lock()
		err = j.compactLocked()
		j.mu.Unlock()
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return j, nil
}

// replay reads every whole line of f into j.tasks and returns the offset
// after the last one that decoded.
func (j *Journal) replay(f *os.File) (good int64, err error) {
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return good, nil // a partial last line (no '\n') is a torn write
		}
		if err != nil {
			return 0, fmt.Errorf("tasks: journal: %w", err)
		}
		var rec journalRecord
		if json.Unmarshal(bytes.TrimSpace(line), &rec) != nil {
			// A whole line that does not decode is damage, not a torn
			// write: stop here rather than guess, and keep what came before.
			return good, nil
		}
		switch {
		case rec.Task != nil:
			j.tasks[rec.Task.ID] = *rec.Task
		case rec.Del != "":
			delete(j.tasks, rec.Del)
		}
		j.lines++
		good += int64(len(line))
	}
}

// Put implements Store.
func (j *Journal) Put(t Task) error {
	line, err := json.Marshal(journalRecord{Task: &t})
	if err != nil {
		return fmt.Errorf("tasks: journal: %w", err)
	}
	return j.append(line, func() { j.tasks[t.ID] = t })
}

// Delete implements Store.
func (j *Journal) Delete(id string) error {
	j.mu.Lock()
	_, ok := j.tasks[id]
	j.mu.Unlock()
	if !ok {
		return nil
	}
	line, _ := json.Marshal(journalRecord{Del: id})
	return j.append(line, func() { delete(j.tasks, id) })
}

// append applies a record to memory and the file and returns once the
// file holds it durably.
func (j *Journal) append(line []byte, apply func()) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return ErrClosed
	}
	if j.err != nil {
		return j.err
	}
	apply()
	j.pending = append(j.pending, line...)
	j.pending = append(j.pending, '\n')
	j.seq++
	mine := j.seq
	for j.synced < mine && j.err == nil {
		if j.flushing {
			j.cond.Wait()
			continue
		}
		j.flushLocked()
	}
	if j.err != nil {
		return j.err
	}
	if !j.flushing && j.lines > compactMin && j.lines > 2*len(j.tasks) {
		if err := j.compactLocked(); err != nil {
			j.err = err
			return err
		}
	}
	return nil
}

// flushLocked writes and fsyncs everything pending, with j.mu released
// meanwhile so that others can append to the next batch.
func (j *Journal) flushLocked() {
	j.flushing = true
	buf, upto := j.pending, j.seq
	j.pending = nil
	n := bytes.Count(buf, []byte{'\n'})
	j.mu.Unlock()
	_, err := j.f.Write(buf)
	if err == nil {
		err = j.f.Sync()
	}
	j.mu.Lock()
	j.flushing = false
	if err != nil {
		// The file may now end in part of a line; the next open drops it.
		// Every later write fails: a journal that cannot write is broken.
		j.err = fmt.Errorf("tasks: journal write: %w", err)
	} else {
		j.synced = upto
		j.lines += n
	}
	j.cond.Broadcast()
}

// compactLocked rewrites the file with one line per record. The caller
// holds j.mu and nothing is pending or being flushed.
func (j *Journal) compactLocked() error {
	tmp := j.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("tasks: journal compaction: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	for _, t := range j.tasks {
		line, _ := json.Marshal(journalRecord{Task: &t})
		w.Write(line)
		w.WriteByte('\n')
	}
	err = w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, j.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("tasks: journal compaction: %w", err)
	}
	syncDir(j.dir) // the rename itself, durably
	nf, err := os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("tasks: journal compaction: %w", err)
	}
	j.f.Close()
	j.f = nf
	j.lines = len(j.tasks)
	return nil
}

// syncDir fsyncs a directory, where the system allows it (not on Windows).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Get implements Store.
func (j *Journal) Get(id string) (Task, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return Task{}, false, ErrClosed
	}
	t, ok := j.tasks[id]
	return t, ok, nil
}

// All implements Store.
func (j *Journal) All() ([]Task, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil, ErrClosed
	}
	out := make([]Task, 0, len(j.tasks))
	for _, t := range j.tasks {
		out = append(out, t)
	}
	return out, nil
}

// Close implements Store; it waits for a flush under way.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.flushing {
		j.cond.Wait()
	}
	if j.closed {
		return nil
	}
	j.closed = true
	return j.f.Close()
}
