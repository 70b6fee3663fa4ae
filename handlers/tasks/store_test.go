package tasks_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/handlers/tasks/storetest"
)

func TestMemoryStoreContract(t *testing.T) {
	storetest.Contract{Open: func(*testing.T, string) (tasks.Store, error) { return tasks.NewMemoryStore(), nil }}.Run(t)
}

func TestJournalContract(t *testing.T) {
	storetest.Contract{
		Open: func(_ *testing.T, dir string) (tasks.Store, error) {
			return tasks.OpenJournal(dir, tasks.JournalOptions{})
		},
		Durable:   true,
		Exclusive: true,
		Break: func(_ *testing.T, s tasks.Store) func() {
			var f tasks.Fault
			tasks.InjectFault(s, &f)
			f.Set(syscall.ENOSPC)
			return func() { f.Set(nil) }
		},
	}.Run(t)
}

// A crash in the middle of a write leaves part of a line: the records
// before it are kept, the torn one (never acknowledged) is dropped, and
// appending goes on after the last whole line.
func TestJournalTornTail(t *testing.T) {
	dir := t.TempDir()
	j, err := tasks.OpenJournal(dir, tasks.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	j.Put(tasks.Task{ID: "a", Status: tasks.Completed, Created: time.Now()})
	j.Close()
	path := filepath.Join(dir, tasks.JournalFile)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"put":{"id":"b","sta`)
	f.Close()
	j, err = tasks.OpenJournal(dir, tasks.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := j.Get("b"); ok {
		t.Fatal("torn record replayed")
	}
	if _, ok, _ := j.Get("a"); !ok {
		t.Fatal("record before the torn one lost")
	}
	j.Put(tasks.Task{ID: "c", Status: tasks.Working})
	j.Close()
	j, _ = tasks.OpenJournal(dir, tasks.JournalOptions{})
	defer j.Close()
	all, _ := j.All()
	if len(all) != 2 {
		t.Fatalf("after append past a torn tail: %d records, want 2 (a, c)", len(all))
	}
}

// Rewriting the same few tasks many times does not grow the file without
// bound: it is compacted, and what it holds survives a reopen.
func TestJournalCompacts(t *testing.T) {
	dir := t.TempDir()
	j, err := tasks.OpenJournal(dir, tasks.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		j.Put(tasks.Task{ID: fmt.Sprint("t", i%10), Status: tasks.Working, Message: fmt.Sprint(i)})
	}
	j.Close()
	raw, _ := os.ReadFile(filepath.Join(dir, tasks.JournalFile))
	if n := bytes.Count(raw, []byte{'\n'}); n > 2100 {
		t.Fatalf("journal has %d lines for 10 records: not compacted", n)
	}
	j, _ = tasks.OpenJournal(dir, tasks.JournalOptions{})
	defer j.Close()
	r, ok, _ := j.Get("t9")
	if !ok || r.Message != "4999" {
		t.Fatalf("after compaction t9 = %+v, %v; want the last put (4999)", r, ok)
	}
}
