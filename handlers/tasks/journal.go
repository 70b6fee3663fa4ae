package tasks

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"sync"
)

// JournalFile is the journal's file name inside its directory.
const JournalFile = "tasks.v2.journal"

// legacyJournalFile is the journal's file as servers wrote it before its
// lines had checksums. Opening a directory that has only it converts it:
// its records are written to JournalFile, which then replaces it. The new
// format has a file of its own so that a line without a checksum is never
// taken for a record in it (damage that strips a checksum cannot pass for
// an old line), and so that an older server started on the directory
// finds no journal it would misread and cut, rather than the new one.
const legacyJournalFile = "tasks.journal"

// journal is the durable Store: every Put and Delete is a line appended to
// a file and fsync'd before it returns; the records live in memory too, so
// reads touch no disk. Opening replays the file. When the file holds many
// more lines than live records, it is compacted: rewritten with one line
// per record to a temporary file, fsync'd, and renamed over the old one.
//
// A change is written first and applied to memory only once it is
// durable: a write that fails (a full disk) fails the Put or Delete that
// made it, leaves nothing behind that a read could see, and is rolled
// back from the file; the next write tries again, so the journal works
// again as soon as the disk does.
//
// Writers that arrive while an fsync is under way share the next one
// (group commit), so concurrent tasks do not queue one fsync each.
//
// The journal holds a lock on its directory (lockName) while open: a
// second process on the same directory is refused, not let to write over
// the first one's lines.
type journal struct {
	dir  string
	path string
	log  *slog.Logger
	fs   journalFS
	lock *os.File

	mu    sync.Mutex
	cond  *sync.Cond
	f     journalFile // nil after a failed reopen: opened again before the next write
	size  int64       // bytes of whole, durable lines in the file
	torn  bool        // a failed write may have left bytes past size: cut them first
	tasks map[string]Task
	next  *batch // changes waiting for the next flush
	// flushing is set while one writer writes a batch with mu released;
	// only that writer touches f, size and torn meanwhile.
	flushing bool
	lines    int // lines in the file, for compaction
	// compactAt is the line count below which no compaction is tried:
	// raised after a failed one, so that a full disk is not rewritten on
	// every write.
	compactAt int
	failing   error // the write failure not yet followed by a success, logged once
	closed    bool
}

// batch is the changes of one group commit: their lines, and what
// applies them to memory once they are durable, in order.
type batch struct {
	buf     []byte
	lines   int
	applies []func()
	done    bool
	err     error
}

// compactMin is the number of lines below which the journal is never
// compacted; above it, the file is rewritten when it has more than twice
// as many lines as records.
const compactMin = 1024

// JournalOptions configure OpenJournal.
type JournalOptions struct {
	// Logger receives what the journal reports: damaged lines skipped at
	// replay, failed writes and compactions (nil: slog.Default()).
	Logger *slog.Logger

	fs journalFS // tests: a file system whose writes fail on demand
}

// OpenJournal opens (or creates) the journal in dir, replaying what it
// holds. A last line cut short by a crash is dropped: its write had not
// returned, so no client was told of it. A damaged line elsewhere is
// skipped and reported (its one record is lost, no other). It fails when
// another process holds the directory, and when the directory or the
// journal cannot be written, rather than at the first write.
func OpenJournal(dir string, o JournalOptions) (Store, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.fs == nil {
		o.fs = osFS{}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tasks: journal directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	j := &journal{dir: dir, path: filepath.Join(dir, JournalFile), log: o.Logger, fs: o.fs, lock: lock,
		tasks: map[string]Task{}, compactAt: compactMin}
	j.cond = sync.NewCond(&j.mu)
	if err := j.open(); err != nil {
		if j.f != nil {
			j.f.Close()
		}
		lock.Close()
		return nil, err
	}
	return j, nil
}

// open replays the file and readies it for appending.
func (j *journal) open() error {
	if err := j.convertLegacy(); err != nil {
		return err
	}
	// Opening for appending first creates the file, and says at once when
	// it cannot be written (a directory in its place, no permission).
	f, err := j.fs.OpenFile(j.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("tasks: journal: %w", err)
	}
	j.f = f
	r, err := os.Open(j.path)
	if err != nil {
		return fmt.Errorf("tasks: journal: %w", err)
	}
	rp, err := replay(r, j.log, false)
	r.Close()
	if err != nil {
		return err
	}
	j.tasks, j.lines, j.size = rp.tasks, rp.lines, rp.keep
	if rp.keep < rp.size {
		// Nothing good follows keep: a torn last line, or damaged ones.
		if err := j.fs.Truncate(j.path, rp.keep); err != nil {
			return fmt.Errorf("tasks: journal: dropping its torn end: %w", err)
		}
	}
	// Compaction writes a new file beside the journal and renames it:
	// find out now, not at the first compaction, that it cannot.
	tmp, err := j.fs.OpenFile(j.tmpPath(), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err == nil {
		err = tmp.Close()
		if rerr := j.fs.Remove(j.tmpPath()); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("tasks: journal directory %s is not writable: %w", j.dir, err)
	}
	if j.lines > compactMin && j.lines > 2*len(j.tasks) {
		j.mu.Lock()
		err = j.compactLocked(j.tasks)
		j.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// convertLegacy writes the records of a legacyJournalFile, when the
// directory has one and no JournalFile, to a new JournalFile (as a
// compaction does: all or nothing), then removes the old file.
func (j *journal) convertLegacy() error {
	legacy := filepath.Join(j.dir, legacyJournalFile)
	if _, err := os.Stat(j.path); err == nil {
		if _, err := os.Stat(legacy); err == nil {
			j.log.Warn("tasks: journal: a journal in the old format is beside the current one (an older server ran here since, or a conversion was cut short); it is not read",
				"file", legacy)
		}
		return nil
	}
	r, err := os.Open(legacy)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tasks: journal: %w", err)
	}
	rp, err := replay(r, j.log, true)
	r.Close()
	if err != nil {
		return err
	}
	j.mu.Lock()
	err = j.compactTo(rp.tasks)
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
	j.mu.Unlock()
	if err != nil {
		return fmt.Errorf("tasks: journal: converting %s to checksummed lines: %w", legacy, err)
	}
	if err := j.fs.Remove(legacy); err != nil {
		j.log.Warn("tasks: journal: cannot remove the old journal after converting it", "file", legacy, "err", err)
	}
	j.log.Info("tasks: journal converted to checksummed lines", "from", legacy, "to", j.path, "records", len(rp.tasks))
	return nil
}

func (j *journal) tmpPath() string { return j.path + ".tmp" }

// Put implements Store.
func (j *journal) Put(t Task) error {
	line, err := encodeRecord(journalRecord{Task: &t})
	if err != nil {
		return fmt.Errorf("tasks: journal: %w", err)
	}
	return j.append(line, 1, func() { j.tasks[t.ID] = t })
}

// Delete implements Store.
func (j *journal) Delete(id string) error {
	j.mu.Lock()
	_, ok := j.tasks[id]
	j.mu.Unlock()
	if !ok {
		return nil
	}
	line, _ := encodeRecord(journalRecord{Del: id})
	return j.append(line, 1, func() { delete(j.tasks, id) })
}

// Apply implements Batcher: the changes are one write. Many of them (a
// start that drops thousands of expired tasks) are one compaction: the
// records that remain are written to a new file, not a line per change
// after the old ones.
func (j *journal) Apply(puts []Task, dels []string) error {
	if len(puts)+len(dels) == 0 {
		return nil
	}
	if len(puts)+len(dels) > compactMin {
		j.mu.Lock()
		defer j.mu.Unlock()
		for j.flushing {
			j.cond.Wait()
		}
		if j.closed {
			return ErrClosed
		}
		next := maps.Clone(j.tasks)
		applyChanges(next, puts, dels)
		return j.compactLocked(next)
	}
	var lines []byte
	for i := range puts {
		line, err := encodeRecord(journalRecord{Task: &puts[i]})
		if err != nil {
			return fmt.Errorf("tasks: journal: %w", err)
		}
		lines = append(lines, line...)
	}
	for _, id := range dels {
		line, _ := encodeRecord(journalRecord{Del: id})
		lines = append(lines, line...)
	}
	return j.append(lines, len(puts)+len(dels), func() { applyChanges(j.tasks, puts, dels) })
}

func applyChanges(m map[string]Task, puts []Task, dels []string) {
	for _, t := range puts {
		m[t.ID] = t
	}
	for _, id := range dels {
		delete(m, id)
	}
}

// append writes lines (n of them, each ending in '\n') durably, then
// applies them to memory, and returns; or returns the write's error, with
// nothing applied.
func (j *journal) append(lines []byte, n int, apply func()) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return ErrClosed
	}
	if j.next == nil {
		j.next = &batch{}
	}
	b := j.next
	b.buf = append(b.buf, lines...)
	b.lines += n
	b.applies = append(b.applies, apply)
	for !b.done {
		if j.flushing {
			j.cond.Wait()
			continue
		}
		j.flushLocked()
	}
	if b.err != nil {
		return b.err
	}
	if !j.flushing && j.lines > j.compactAt && j.lines > 2*len(j.tasks) {
		// A failed compaction costs no record: the old file stays, and
		// keeps being appended to.
		_ = j.compactLocked(j.tasks)
	}
	return nil
}

// flushLocked writes and fsyncs the next batch, with j.mu released
// meanwhile so that others can add to the one after; then applies it, or
// fails every change in it.
func (j *journal) flushLocked() {
	b := j.next
	j.next = nil
	if j.closed {
		b.done, b.err = true, ErrClosed
		j.cond.Broadcast()
		return
	}
	j.flushing = true
	j.mu.Unlock()
	err := j.write(b.buf)
	j.mu.Lock()
	j.flushing = false
	b.done = true
	if err != nil {
		b.err = err
		if j.failing == nil {
			j.log.Error("tasks: journal write failed: the changes it held are refused (their requests fail); later writes try again",
				"dir", j.dir, "err", err)
		}
		j.failing = err
	} else {
		for _, apply := range b.applies {
			apply()
		}
		j.lines += b.lines
		if j.failing != nil {
			j.log.Warn("tasks: journal writes succeed again", "dir", j.dir, "after", j.failing)
			j.failing = nil
		}
	}
	j.cond.Broadcast()
}

// write appends buf to the file and fsyncs it. On failure it cuts the
// file back to its last whole line, so that a change that was refused is
// not replayed by the next start; if even that fails, the next write
// does it first. Called by the flushing writer alone.
func (j *journal) write(buf []byte) error {
	if j.f == nil {
		f, err := j.fs.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("tasks: journal write: %w", err)
		}
		j.f = f
	}
	if j.torn {
		if err := j.cut(); err != nil {
			return fmt.Errorf("tasks: journal write: cutting a failed write: %w", err)
		}
	}
	_, err := j.f.Write(buf)
	if err == nil {
		err = j.f.Sync()
	}
	if err != nil {
		if j.cut() != nil {
			j.torn = true
		}
		return fmt.Errorf("tasks: journal write: %w", err)
	}
	j.size += int64(len(buf))
	return nil
}

// cut truncates the file to its last whole, durable line.
func (j *journal) cut() error {
	if err := j.fs.Truncate(j.path, j.size); err != nil {
		return err
	}
	j.torn = false
	return j.f.Sync()
}

// compactLocked rewrites the file with one line per record of next, and
// makes next the journal's records once the new file is in place. The
// caller holds j.mu and no flush is under way. A failure is logged and
// leaves the old file and records as they were.
func (j *journal) compactLocked(next map[string]Task) error {
	err := j.compactTo(next)
	if err != nil {
		j.compactAt = j.lines + max(compactMin, j.lines/2)
		j.log.Error("tasks: journal compaction failed; the journal goes on growing until one succeeds",
			"dir", j.dir, "lines", j.lines, "records", len(j.tasks), "err", err)
		return err
	}
	j.compactAt = compactMin
	return nil
}

func (j *journal) compactTo(next map[string]Task) error {
	tmp := j.tmpPath()
	f, err := j.fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("tasks: journal compaction: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	var size int64
	for _, t := range next {
		line, err := encodeRecord(journalRecord{Task: &t})
		if err != nil {
			f.Close()
			j.fs.Remove(tmp)
			return fmt.Errorf("tasks: journal compaction: %w", err)
		}
		w.Write(line)
		size += int64(len(line))
	}
	err = w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		j.fs.Remove(tmp)
		return fmt.Errorf("tasks: journal compaction: %w", err)
	}
	// The old file is closed before the rename (Windows renames no open
	// file), and the journal reopened after it: the old handle would
	// write to a file no longer in the directory. If reopening fails, the
	// next write reopens.
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
	if err := j.fs.Rename(tmp, j.path); err != nil {
		j.fs.Remove(tmp)
		return fmt.Errorf("tasks: journal compaction: %w", err)
	}
	syncDir(j.dir) // the rename itself, durably
	j.tasks, j.lines, j.size, j.torn = next, len(next), size, false
	if f, err := j.fs.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
		j.f = f
	}
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
func (j *journal) Get(id string) (Task, bool, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return Task{}, false, ErrClosed
	}
	t, ok := j.tasks[id]
	return t, ok, nil
}

// All implements Store.
func (j *journal) All() ([]Task, error) {
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

// Close implements Store; it waits for a flush under way, and releases
// the directory's lock.
func (j *journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.flushing {
		j.cond.Wait()
	}
	if j.closed {
		return nil
	}
	j.closed = true
	j.cond.Broadcast() // writers of a batch not yet flushed: it fails
	var err error
	if j.torn && j.f != nil {
		_ = j.cut() // a refused write's bytes, best effort: a start drops them only when they are a torn last line
	}
	if j.f != nil {
		err = j.f.Close()
	}
	if lerr := j.lock.Close(); err == nil {
		err = lerr
	}
	return err
}

// journalFile is the journal's open file, as it writes it.
type journalFile interface {
	io.Writer
	Sync() error
	Close() error
}

// journalFS is what the journal does to its directory: the os, or in
// tests one whose writes fail as a full disk's do.
type journalFS interface {
	OpenFile(name string, flag int, perm os.FileMode) (journalFile, error)
	Truncate(name string, size int64) error
	Rename(from, to string) error
	Remove(name string) error
}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (journalFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // not a nil *os.File in an interface
	}
	return f, nil
}
func (osFS) Truncate(name string, size int64) error { return os.Truncate(name, size) }
func (osFS) Rename(from, to string) error           { return os.Rename(from, to) }
func (osFS) Remove(name string) error               { return os.Remove(name) }

var _ Batcher = (*journal)(nil)

// errLocked is what lockFile returns when another holds the lock.
var errLocked = errors.New("locked")
