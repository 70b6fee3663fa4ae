package tasks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// lockName is the file in a journal's directory that its holder locks,
// and writes its pid in, for as long as the journal is open.
const lockName = "tasks.lock"

// lockDir takes the lock of a journal's directory, or says who holds it:
// two processes appending to one journal would each write at their own
// offset, over the other's lines. The lock is the system's (flock, or
// LockFileEx on Windows), so a holder that dies releases it.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("tasks: journal lock: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			holder := "unknown"
			if b, rerr := os.ReadFile(path); rerr == nil && strings.TrimSpace(string(b)) != "" {
				holder = strings.TrimSpace(string(b))
			}
			return nil, fmt.Errorf("tasks: the journal directory %s is in use by another process (pid %s): "+
				"two servers on one tasks directory would overwrite each other's tasks; give each its own", dir, holder)
		}
		return nil, fmt.Errorf("tasks: journal lock %s: %w", path, err)
	}
	// The pid is for the message above; the lock is what counts.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}
