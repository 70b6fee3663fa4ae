package tasks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"
)

// damageJournal is a journal of records made from seed, and the byte
// range of each line ('\n' included).
func damageJournal(seed uint64) (recs []journalRecord, file []byte, spans [][2]int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	const alphabet = "abcdef0123456789 {}[]\":,\\\u00e9\u2028\t"
	text := func() string {
		runes := []rune(alphabet)
		b := make([]rune, rng.IntN(120))
		for i := range b {
			b[i] = runes[rng.IntN(len(runes))]
		}
		return string(b)
	}
	var live []string
	base := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	for n := range 5 + rng.IntN(40) {
		var rec journalRecord
		switch k := rng.IntN(10); {
		case k < 2 && len(live) > 0:
			i := rng.IntN(len(live))
			rec.Del = live[i]
			live = slices.Delete(live, i, i+1)
		default:
			id := fmt.Sprintf("%08x", rng.Uint32())
			if k < 6 && len(live) > 0 {
				id = live[rng.IntN(len(live))]
			} else {
				live = append(live, id)
			}
			t := Task{ID: id, Owner: text(), Tool: "x", Status: Working, Message: fmt.Sprint(n, text()),
				Created: base, Updated: base.Add(time.Duration(n) * time.Second), TTL: time.Hour}
			if rng.IntN(2) == 0 {
				t.Status = Completed
				t.Result, _ = json.Marshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": text()}}})
			}
			rec.Task = &t
		}
		line, err := encodeRecord(rec)
		if err != nil {
			panic(err)
		}
		spans = append(spans, [2]int{len(file), len(file) + len(line)})
		file = append(file, line...)
		recs = append(recs, rec)
	}
	return recs, file, spans
}

type edit struct {
	kind     byte // 0 overwrite, 1 delete, 2 insert, 3 flip a bit
	off, end int  // in the original file; end == off for an insert
	junk     []byte
}

// damageEdits reads up to 4 edits of a file of size n from d.
func damageEdits(d []byte, n int) []edit {
	var edits []edit
	for len(d) >= 7 && len(edits) < 4 {
		e := edit{kind: d[0] % 4, off: int(uint32(d[1])|uint32(d[2])<<8|uint32(d[3])<<16) % (n + 1)}
		size := 1 + int(uint16(d[4])|uint16(d[5])<<8)%64
		d = d[6:]
		switch e.kind {
		case 0, 2:
			k := min(size, len(d))
			// Damage, not a forger: junk holds no '{', so it cannot
			// carry a record of its own, checksum and all.
			e.junk = bytes.ReplaceAll(slices.Clone(d[:k]), []byte{'{'}, []byte{'#'})
			d = d[k:]
			if e.kind == 0 {
				e.end = min(n, e.off+len(e.junk))
				e.junk = e.junk[:e.end-e.off]
			} else {
				e.end = e.off
			}
		case 1:
			e.end = min(n, e.off+size)
		case 3:
			e.end = min(n, e.off+1)
			e.junk = []byte{1 << (size % 8)}
		}
		edits = append(edits, e)
	}
	// Applied from the end of the file backwards, each clipped to end
	// where the next begins, so that every edit touches only its own range
	// of the original bytes.
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].off > edits[j].off })
	for i := 1; i < len(edits); i++ {
		if edits[i].end > edits[i-1].off {
			edits[i].end = edits[i-1].off
			if edits[i].kind == 0 {
				edits[i].junk = edits[i].junk[:edits[i].end-edits[i].off]
			}
		}
	}
	return edits
}

func applyEdits(file []byte, edits []edit) []byte {
	out := slices.Clone(file)
	for _, e := range edits {
		switch e.kind {
		case 0:
			copy(out[e.off:e.end], e.junk)
		case 1:
			out = slices.Delete(out, e.off, e.end)
		case 2:
			out = slices.Insert(out, e.off, e.junk...)
		case 3:
			if e.end > e.off {
				out[e.off] ^= e.junk[0]
			}
		}
	}
	return out
}

func (e edit) touches(s, end int) bool {
	if e.kind == 2 {
		return s < e.off && e.off < end
	}
	return e.off < end && e.end > s && e.end > e.off
}

// checkRecovery damages a journal and replays it: every record no edit
// touched is kept, every record kept is one that was written (nothing is
// invented), in the order written; and the journal opened on the damaged
// file holds exactly those, and goes on working.
func checkRecovery(t *testing.T, seed uint64, damage []byte) {
	recs, file, spans := damageJournal(seed)
	edits := damageEdits(damage, len(file))
	damaged := applyEdits(file, edits)
	index := map[string]int{}
	for i, r := range recs {
		b, _ := json.Marshal(r)
		index[string(b)] = i
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var kept []int
	_, err := replayEach(bytes.NewReader(damaged), quiet, false, func(r journalRecord) {
		b, _ := json.Marshal(r)
		i, ok := index[string(b)]
		if !ok {
			t.Fatalf("replay invented a record: %s\nedits: %+v", b, edits)
		}
		if len(kept) > 0 && i <= kept[len(kept)-1] {
			t.Fatalf("record %d replayed after record %d", i, kept[len(kept)-1])
		}
		kept = append(kept, i)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, sp := range spans {
		hit := false
		for _, e := range edits {
			hit = hit || e.touches(sp[0], sp[1])
		}
		if !hit && !slices.Contains(kept, i) {
			t.Fatalf("undamaged record %d (bytes %d-%d) lost; kept %v; edits %+v\nfile:\n%s", i, sp[0], sp[1], kept, edits, damaged)
		}
	}
	want := map[string]Task{}
	for _, i := range kept {
		applyRecord(want, recs[i])
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, JournalFile), damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJournal(dir, JournalOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	sameTasks(t, "open", j, want)
	extra := Task{ID: "after", Status: Working}
	if err := j.Put(extra); err != nil {
		t.Fatal(err)
	}
	want[extra.ID] = extra
	j.Close()
	j, err = OpenJournal(dir, JournalOptions{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	sameTasks(t, "reopen after a write", j, want)
}

func applyRecord(m map[string]Task, r journalRecord) {
	if r.Task != nil {
		m[r.Task.ID] = *r.Task
	} else {
		delete(m, r.Del)
	}
}

func sameTasks(t *testing.T, when string, j Store, want map[string]Task) {
	t.Helper()
	all, _ := j.All()
	got := map[string]Task{}
	for _, r := range all {
		got[r.ID] = r
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("%s: journal holds\n%s\nwant\n%s", when, gb, wb)
	}
}

// FuzzJournalRecovery: random damage at random offsets of a journal
// (overwritten, deleted and inserted bytes, flipped bits; up to four
// places): every undamaged record survives, nothing is invented.
//
//	go test -run '^$' -fuzz FuzzJournalRecovery -fuzztime 30s ./handlers/tasks
func FuzzJournalRecovery(f *testing.F) {
	f.Add(uint64(1), []byte("\x00\x10\x00\x00\x05\x00GARBAGE"))
	f.Add(uint64(2), []byte("\x01\x40\x00\x00\x20\x00"))
	f.Add(uint64(3), []byte("\x02\x00\x01\x00\x07\x00GARBAGE\n"))
	f.Add(uint64(4), []byte("\x03\x33\x00\x00\x01\x00\x01\x80\x00\x00\x30\x00"))
	f.Fuzz(checkRecovery)
}

// The fuzz target's check, on seeds drawn at random: a few hundred cases
// on every run of the tests, without -fuzz.
func TestJournalRandomDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 32))
	n := 300
	if testing.Short() {
		n = 50
	}
	for range n {
		seed := rng.Uint64()
		damage := make([]byte, rng.IntN(120))
		for i := range damage {
			damage[i] = byte(rng.Uint32())
		}
		ok := t.Run("", func(t *testing.T) { checkRecovery(t, seed, damage) })
		if !ok {
			t.Fatalf("seed %d damage %q", seed, damage)
		}
	}
}
