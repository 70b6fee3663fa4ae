package tasks

import (
	"os"
	"sync/atomic"
)

// Fault is a failure the tests inject into a journal's file system: while
// set, every write, fsync, truncation, rename and file creation fails
// with it, as on a full disk; a write first lets half its bytes through,
// as a real one may.
type Fault struct{ err, create atomic.Pointer[error] }

// SetCompaction makes only the creation of new files and renames fail with
// err, as in a directory that cannot be written: appends to the journal
// succeed, compactions fail.
func (f *Fault) SetCompaction(err error) { f.create.Store(&err) }

// Set makes the journal's writes fail with err; Set(nil) lets them through
// again (the disk has room).
func (f *Fault) Set(err error) {
	f.create.Store(nil)
	if err == nil {
		f.err.Store(nil)
		return
	}
	f.err.Store(&err)
}

func (f *Fault) getCreate() error {
	if p := f.create.Load(); p != nil {
		return *p
	}
	return f.get()
}

func (f *Fault) get() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

// OpenJournalFault opens a journal whose file system fails while fault is
// set.
func OpenJournalFault(dir string, fault *Fault) (Store, error) {
	return OpenJournal(dir, JournalOptions{fs: faultFS{inner: osFS{}, fault: fault}})
}

// InjectFault makes an open journal's file system fail while fault is set.
func InjectFault(s Store, fault *Fault) {
	j := s.(*journal)
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.flushing {
		j.cond.Wait()
	}
	j.fs = faultFS{inner: j.fs, fault: fault}
	if j.f != nil {
		j.f = &faultFile{inner: j.f, fault: fault}
	}
}

type faultFS struct {
	inner journalFS
	fault *Fault
}

func (fs faultFS) OpenFile(name string, flag int, perm os.FileMode) (journalFile, error) {
	if err := fs.fault.getCreate(); err != nil && flag&os.O_CREATE != 0 {
		if _, serr := os.Stat(name); serr != nil || flag&os.O_TRUNC != 0 || fs.fault.get() != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
	}
	f, err := fs.inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{inner: f, fault: fs.fault}, nil
}

func (fs faultFS) Truncate(name string, size int64) error {
	if err := fs.fault.get(); err != nil {
		return &os.PathError{Op: "truncate", Path: name, Err: err}
	}
	return fs.inner.Truncate(name, size)
}

func (fs faultFS) Rename(from, to string) error {
	if err := fs.fault.getCreate(); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return fs.inner.Rename(from, to)
}

func (fs faultFS) Remove(name string) error { return fs.inner.Remove(name) }

type faultFile struct {
	inner journalFile
	fault *Fault
}

func (f *faultFile) Write(b []byte) (int, error) {
	if err := f.fault.get(); err != nil {
		n, _ := f.inner.Write(b[:len(b)/2])
		return n, &os.PathError{Op: "write", Path: "journal", Err: err}
	}
	return f.inner.Write(b)
}

func (f *faultFile) Sync() error {
	if err := f.fault.get(); err != nil {
		return &os.PathError{Op: "sync", Path: "journal", Err: err}
	}
	return f.inner.Sync()
}

func (f *faultFile) Close() error { return f.inner.Close() }
