package taskrun_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/runtime/taskrun"
)

// writeExpired writes a journal of n completed tasks whose ttl ran out
// long ago, each put twice (working, then completed) as a server writes
// them, in the format every version reads: a line of JSON per change, in
// tasks.journal (the legacy journal file, which servers since convert).
func writeExpired(t testing.TB, dir string, n int) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "tasks.journal"))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	created := time.Now().Add(-48 * time.Hour)
	result := json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`)
	for i := range n {
		tk := tasks.Task{ID: fmt.Sprintf("%032x", i), Owner: "o", Tool: "x", Status: tasks.Working,
			Created: created, Updated: created, TTL: time.Hour}
		for _, st := range []tasks.Status{tasks.Working, tasks.Completed} {
			tk.Status = st
			if st == tasks.Completed {
				tk.Result = result
			}
			line, _ := json.Marshal(map[string]any{"put": tk})
			w.Write(line)
			w.WriteByte('\n')
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// Starting on 20,000 tasks whose ttl ran out drops them in one write, not
// one fsync each (issue 32, item 5: 9.9 s at 00335bc). The bound is loose,
// for a busy machine; the measurement is logged (go test -v -run
// TestStartOnManyExpired ./runtime/taskrun).
func TestStartOnManyExpired(t *testing.T) {
	const n = 20000
	dir := t.TempDir()
	writeExpired(t, dir, n)
	began := time.Now()
	j, err := tasks.OpenJournal(dir, tasks.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opened := time.Since(began)
	began = time.Now()
	start(t, taskrun.Config{Store: j})
	settled := time.Since(began)
	t.Logf("%d expired records: journal opened in %v, manager started (expired records dropped) in %v", n, opened, settled)
	if all, _ := j.All(); len(all) != 0 {
		t.Fatalf("%d records left after settling, want none (all expired)", len(all))
	}
	// Replaying is the same work as before; dropping took 11.6 s at
	// 00335bc, an fsync each.
	if settled > 2*time.Second {
		t.Fatalf("starting on %d expired records took %v; want one write, well under 2 s", n, settled)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, tasks.JournalFile))
	if len(raw) > 4096 {
		t.Fatalf("journal holds %d bytes after every record expired; want it compacted", len(raw))
	}
}
