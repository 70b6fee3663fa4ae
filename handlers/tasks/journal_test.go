package tasks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
)

// logs collects what a journal reports.
type logs struct {
	mu   sync.Mutex
	recs []string
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.recs = append(l.recs, b.String())
	l.mu.Unlock()
	return nil
}
func (l *logs) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logs) WithGroup(string) slog.Handler      { return l }

// matching returns the records that contain every one of subs.
func (l *logs) matching(subs ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
next:
	for _, r := range l.recs {
		for _, s := range subs {
			if !strings.Contains(r, s) {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

func openLogged(t *testing.T, dir string) (tasks.Store, *logs) {
	t.Helper()
	l := &logs{}
	j, err := tasks.OpenJournal(dir, tasks.JournalOptions{Logger: slog.New(l)})
	if err != nil {
		t.Fatal(err)
	}
	return j, l
}

func completed(id string) tasks.Task {
	now := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	return tasks.Task{ID: id, Owner: "o", Tool: "x", Status: tasks.Completed, Created: now, Updated: now,
		TTL: time.Hour, Result: json.RawMessage(`{"content":[{"type":"text","text":"` + id + `"}]}`)}
}

// legacyJournal writes five tasks, working then completed, as a server
// before the checksums wrote them: 10 lines of bare JSON.
func legacyJournal(t *testing.T, dir string) []string {
	t.Helper()
	var lines []string
	for i := range 5 {
		tk := completed(fmt.Sprint("t", i))
		w := tk
		w.Status, w.Result = tasks.Working, nil
		for _, r := range []tasks.Task{w, tk} {
			b, _ := json.Marshal(map[string]any{"put": r})
			lines = append(lines, string(b))
		}
	}
	return lines
}

func writeLines(t *testing.T, dir string, lines []string) {
	writeFile(t, dir, tasks.JournalFile, lines)
}

// writeLegacy writes lines where a server before the checksums kept its
// journal (the legacy journal file, spelled out: that server knew it as
// tasks.JournalFile).
func writeLegacy(t *testing.T, dir string, lines []string) { writeFile(t, dir, "tasks.journal", lines) }

func writeFile(t *testing.T, dir, name string, lines []string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func fileLines(t *testing.T, dir string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, tasks.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(string(raw), "\n")[:bytes.Count(raw, []byte{'\n'})]
}

func insert(lines []string, at int, line string) []string {
	out := append([]string{}, lines[:at]...)
	out = append(out, line)
	return append(out, lines[at:]...)
}

func wantFive(t *testing.T, j tasks.Store) {
	t.Helper()
	all, _ := j.All()
	if len(all) != 5 {
		t.Fatalf("%d tasks survived, want all 5", len(all))
	}
	for i := range 5 {
		r, ok, _ := j.Get(fmt.Sprint("t", i))
		if !ok || r.Status != tasks.Completed || !strings.Contains(string(r.Result), r.ID) {
			t.Fatalf("t%d = %+v, %v; want it completed with its result", i, r, ok)
		}
	}
}

// Issue 32, item 1: five completed tasks, one GARBAGE line inserted as
// line 3; all five survive, and the file is not cut (at 00335bc one task
// survived and the journal went from 11 lines to 2). Both in the format
// older servers wrote (converted on open: its five records are in the
// new file) and in the checksummed one; and for a line that is valid JSON
// with the wrong types.
func TestJournalDamagedMiddleLine(t *testing.T) {
	for _, tc := range []struct{ name, bad string }{
		{"garbage", "GARBAGE"},
		{"wrong types", `{"put":{"id":7,"status":true,"created":"yesterday"}}`},
	} {
		t.Run("legacy/"+tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLegacy(t, dir, insert(legacyJournal(t, dir), 2, tc.bad))
			j, err := tasks.OpenJournal(dir, tasks.JournalOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantFive(t, j)
			j.Close()
			// And it goes on: appended after, read back after.
			j, _ = tasks.OpenJournal(dir, tasks.JournalOptions{})
			if err := j.Put(completed("t5")); err != nil {
				t.Fatal(err)
			}
			j.Close()
			j, _ = tasks.OpenJournal(dir, tasks.JournalOptions{})
			defer j.Close()
			if all, _ := j.All(); len(all) != 6 {
				t.Fatalf("after appending to a journal with a damaged line: %d tasks, want 6", len(all))
			}
		})
		t.Run("checksummed/"+tc.name, func(t *testing.T) {
			dir := t.TempDir()
			j, _ := tasks.OpenJournal(dir, tasks.JournalOptions{})
			for i := range 5 {
				tk := completed(fmt.Sprint("t", i))
				w := tk
				w.Status, w.Result = tasks.Working, nil
				j.Put(w)
				j.Put(tk)
			}
			j.Close()
			lines := fileLines(t, dir)
			writeLines(t, dir, insert(trimNL(lines), 2, tc.bad))
			j, l := openLogged(t, dir)
			defer j.Close()
			wantFive(t, j)
			if got := l.matching("damaged", "line=3"); len(got) != 1 {
				t.Fatalf("reports of the damaged line 3: %q; want one (all: %q)", got, l.recs)
			}
			if n := len(fileLines(t, dir)); n != 11 {
				t.Fatalf("journal has %d lines after open, want all 11", n)
			}
		})
	}
}

func trimNL(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSuffix(l, "\n")
	}
	return out
}

// A damaged line in the middle loses its own record and no other; it is
// reported with its line number and the task whose record it held.
func TestJournalDamagedRecordReported(t *testing.T) {
	dir := t.TempDir()
	j, _ := tasks.OpenJournal(dir, tasks.JournalOptions{})
	for i := range 5 {
		j.Put(completed(fmt.Sprint("t", i)))
	}
	j.Close()
	lines := trimNL(fileLines(t, dir))
	// Flip a byte of t2's result: the line still parses, its checksum
	// does not match.
	lines[2] = strings.Replace(lines[2], `"text":"t2"`, `"text":"T2"`, 1)
	writeLines(t, dir, lines)
	j, l := openLogged(t, dir)
	defer j.Close()
	if _, ok, _ := j.Get("t2"); ok {
		t.Fatal("a record whose checksum does not match was replayed")
	}
	if all, _ := j.All(); len(all) != 4 {
		t.Fatalf("%d tasks, want the 4 undamaged", len(all))
	}
	if got := l.matching("WARN", "damaged", "line=3", "task=t2", "checksum"); len(got) != 1 {
		t.Fatalf("report: %q; want one warning naming line 3 and task t2", l.recs)
	}
}

// Lines that decode but that no server writes (an empty id, a status that
// does not exist, a forged result that is not an object, a line with both
// a put and a del) are skipped and reported, whatever their format.
func TestJournalInvalidRecordsSkipped(t *testing.T) {
	bad := []string{
		`{"put":{"id":"","status":"completed"}}`,
		`{"put":{"id":"x1","status":"finished"}}`,
		`{"put":{"id":"x2","status":"completed","result":"forged"}}`,
		`{"put":{"id":"x3","status":"completed","result":[1,2]}}`,
		`{"put":{"id":"x4","status":"working"},"del":"t0"}`,
		`{}`,
	}
	for _, format := range []string{"legacy", "checksummed"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			lines := legacyJournal(t, dir)
			for _, b := range bad {
				lines = insert(lines, 4, b)
			}
			if format == "legacy" {
				writeLegacy(t, dir, lines)
			} else {
				for i, l := range lines {
					lines[i] = fmt.Sprintf("%08x %s", crc32.Checksum([]byte(l), crc32.MakeTable(crc32.Castagnoli)), l)
				}
				writeLines(t, dir, lines)
			}
			j, l := openLogged(t, dir)
			defer j.Close()
			wantFive(t, j)
			if got := l.matching("damaged"); len(got) != len(bad) {
				t.Fatalf("%d reports, want %d: %q", len(got), len(bad), l.recs)
			}
		})
	}
}

// A journal written before the checksums opens: it is converted, its
// records written to the new file with checksums, and the old file
// removed; a bare JSON line in the new file is not a record.
func TestJournalReadsLegacyFormat(t *testing.T) {
	dir := t.TempDir()
	writeLegacy(t, dir, legacyJournal(t, dir))
	j, l := openLogged(t, dir)
	wantFive(t, j)
	if got := l.matching("converted", "records=5"); len(got) != 1 {
		t.Fatalf("logged %q; want the conversion said", l.recs)
	}
	j.Put(completed("t5"))
	j.Close()
	if _, err := os.Stat(filepath.Join(dir, "tasks.journal")); err == nil {
		t.Fatal("the old journal is still there after its conversion")
	}
	lines := fileLines(t, dir)
	if len(lines) != 6 {
		t.Fatalf("new journal has %d lines, want 6", len(lines))
	}
	for _, line := range lines {
		if line[0] == '{' {
			t.Fatalf("line %q: want a checksum before the JSON", line)
		}
	}
	b, _ := json.Marshal(map[string]any{"put": completed("bare")})
	f, _ := os.OpenFile(filepath.Join(dir, tasks.JournalFile), os.O_APPEND|os.O_WRONLY, 0)
	f.Write(append(b, '\n'))
	f.Close()
	j, l = openLogged(t, dir)
	defer j.Close()
	if all, _ := j.All(); len(all) != 6 {
		t.Fatalf("%d tasks, want 6 (not the bare line's)", len(all))
	}
	if len(l.recs) != 1 || !strings.Contains(l.recs[0], "damaged") {
		t.Fatalf("reports: %q; want the bare last line reported as damage", l.recs)
	}
}

// Issue 32, item 2: a second server on the same directory is refused,
// with a message naming the directory and the holder's pid (at 00335bc
// both opened, and wrote over each other's lines).
func TestJournalSecondOpenerRefused(t *testing.T) {
	dir := t.TempDir()
	j, err := tasks.OpenJournal(dir, tasks.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	j2, err := tasks.OpenJournal(dir, tasks.JournalOptions{})
	if err == nil {
		j2.Close()
		t.Fatal("a second journal opened on a directory in use")
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("refusal %q: want it to name %s and pid %d", msg, dir, os.Getpid())
	}
	j.Close()
	j, err = tasks.OpenJournal(dir, tasks.JournalOptions{})
	if err != nil {
		t.Fatalf("open after the holder closed: %v", err)
	}
	j.Close()
}

// Issue 32, item 4: a write that fails (ENOSPC) fails its Put, applies
// nothing, is logged once with its cause however many writes fail, and
// the journal works again when the disk does; what the file holds after
// is whole lines only.
func TestJournalWriteFailureRecovers(t *testing.T) {
	dir := t.TempDir()
	var fault tasks.Fault
	l := &logs{}
	j, err := tasks.OpenJournal(dir, tasks.JournalOptions{Logger: slog.New(l)})
	if err != nil {
		t.Fatal(err)
	}
	tasks.InjectFault(j, &fault)
	w := completed("a")
	w.Status, w.Result = tasks.Working, nil
	if err := j.Put(w); err != nil {
		t.Fatal(err)
	}
	fault.Set(syscall.ENOSPC)
	for i := range 3 {
		err := j.Put(completed("a"))
		if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "journal write") {
			t.Fatalf("Put %d on a full disk: %v; want the cause", i, err)
		}
		if err := j.Put(completed(fmt.Sprint("new", i))); err == nil {
			t.Fatal("a new task's Put succeeded on a full disk")
		}
	}
	if r, _, _ := j.Get("a"); r.Status != tasks.Working {
		t.Fatalf("a = %s after its completion failed to write; want working (nothing served that is not durable)", r.Status)
	}
	if all, _ := j.All(); len(all) != 1 {
		t.Fatalf("tasks after failed creates: %d, want 1 (no phantoms)", len(all))
	}
	if got := l.matching("ERROR", "journal write failed", "no space"); len(got) != 1 {
		t.Fatalf("logged %q; want the failure once, with its cause", l.recs)
	}
	fault.Set(nil)
	if err := j.Put(completed("a")); err != nil {
		t.Fatalf("Put once the disk has room: %v; want the journal to recover", err)
	}
	if err := j.Put(completed("b")); err != nil {
		t.Fatal(err)
	}
	if got := l.matching("succeed again"); len(got) != 1 {
		t.Fatalf("logged %q; want the recovery said once", l.recs)
	}
	j.Close()
	j, l = openLogged(t, dir)
	defer j.Close()
	if len(l.recs) != 0 {
		t.Fatalf("replay after a recovered failure reported %q; want a clean file", l.recs)
	}
	if r, _, _ := j.Get("a"); r.Status != tasks.Completed {
		t.Fatalf("a after reopen: %s, want completed", r.Status)
	}
	if all, _ := j.All(); len(all) != 2 {
		t.Fatalf("after reopen: %d tasks, want a and b", len(all))
	}
}

// A compaction that fails is logged, costs no record, is not tried again
// on every write, and succeeds once the disk does.
func TestJournalCompactionFailureLogged(t *testing.T) {
	dir := t.TempDir()
	var fault tasks.Fault
	l := &logs{}
	j, err := tasks.OpenJournal(dir, tasks.JournalOptions{Logger: slog.New(l)})
	if err != nil {
		t.Fatal(err)
	}
	tasks.InjectFault(j, &fault)
	fault.SetCompaction(syscall.ENOSPC)
	// Past compactMin (1024 lines): one compaction tried, and failed.
	for i := range 1200 {
		if err := j.Put(tasks.Task{ID: fmt.Sprint("t", i%10), Status: tasks.Working, Message: fmt.Sprint(i)}); err != nil {
			t.Fatalf("Put %d while compaction fails: %v", i, err)
		}
	}
	got := l.matching("ERROR", "compaction failed", "no space")
	if len(got) != 1 {
		t.Fatalf("compaction failures logged %d times: %q; want once (not one per write)", len(got), got)
	}
	fault.Set(nil)
	for i := 1200; i < 3000; i++ {
		j.Put(tasks.Task{ID: fmt.Sprint("t", i%10), Status: tasks.Working, Message: fmt.Sprint(i)})
	}
	j.Close()
	if n := len(fileLines(t, dir)); n > 1100 {
		t.Fatalf("journal has %d lines for 10 records once the disk has room: not compacted", n)
	}
	j, _ = tasks.OpenJournal(dir, tasks.JournalOptions{})
	defer j.Close()
	if r, _, _ := j.Get("t9"); r.Message != "2999" {
		t.Fatalf("t9 = %+v; want the last put", r)
	}
}

// Issue 32, item 4: a directory the journal cannot write in fails at
// open, not at the first compaction; so does a directory where the
// journal's file should be.
func TestJournalUnwritableFailsAtOpen(t *testing.T) {
	t.Run("fault", func(t *testing.T) {
		dir := t.TempDir()
		writeLegacy(t, dir, legacyJournal(t, dir))
		j, _ := tasks.OpenJournal(dir, tasks.JournalOptions{}) // converted, so that the fault meets an existing file
		j.Close()
		var fault tasks.Fault
		fault.SetCompaction(syscall.EROFS)
		if j, err := tasks.OpenJournalFault(dir, &fault); err == nil {
			j.Close()
			t.Fatal("opened on a directory where no file can be created")
		} else if !strings.Contains(err.Error(), "not writable") {
			t.Fatalf("error %q: want it to say the directory is not writable", err)
		}
	})
	t.Run("read-only dir", func(t *testing.T) {
		dir := t.TempDir()
		j, _ := tasks.OpenJournal(dir, tasks.JournalOptions{})
		j.Put(completed("a"))
		j.Close()
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o700)
		if f, err := os.Create(filepath.Join(dir, "probe")); err == nil {
			f.Close()
			os.Remove(f.Name())
			t.Skip("this user writes in a read-only directory (root); the fault case covers it")
		}
		if j, err := tasks.OpenJournal(dir, tasks.JournalOptions{}); err == nil {
			j.Close()
			t.Fatal("opened on a read-only directory")
		}
	})
	t.Run("directory for the file", func(t *testing.T) {
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, tasks.JournalFile), 0o700)
		if j, err := tasks.OpenJournal(dir, tasks.JournalOptions{}); err == nil {
			j.Close()
			t.Fatal("opened with a directory where the journal's file should be")
		}
	})
}
