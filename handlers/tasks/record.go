package tasks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"strconv"
	"sync"
)

// A journal line is a record's JSON after its CRC-32C, in 8 hex digits and
// a space:
//
//	1c2d3e4f {"put":{"id":"…","status":"completed",…}}
//
// The checksum is what lets replay tell damage from a record: a line
// whose bytes changed is skipped and reported, and only that record is
// lost. A line without the checksum (starting with '{') is the format
// before it, read only from a legacyJournalFile (which the journal
// converts), never from a JournalFile.

// journalRecord is one line: a put (Task) or a delete (Del).
type journalRecord struct {
	Task *Task  `json:"put,omitempty"`
	Del  string `json:"del,omitempty"`
}

// castagnoli is made on first use: making it costs 0.2 ms of every mcprt
// start-up (GODEBUG=inittrace=1), journal or not.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// sumLen is the length of a line's checksum and the space after it.
const sumLen = 9

// encodeRecord returns rec's line, '\n' included.
func encodeRecord(rec journalRecord) ([]byte, error) {
	body, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	line := make([]byte, 0, sumLen+len(body)+1)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(body, castagnoli()))
	line = append(line, body...)
	return append(line, '\n'), nil
}

// decodeLine reads one line (without its '\n'): a checksummed one, or
// with legacy a line of the old format, bare JSON.
func decodeLine(line []byte, legacy bool) (rec journalRecord, err error) {
	body := line
	switch {
	case legacy:
		if len(line) == 0 || line[0] != '{' {
			return rec, errors.New("not a record")
		}
	case hasSum(line):
		want, _ := strconv.ParseUint(string(line[:8]), 16, 32)
		body = line[sumLen:]
		if crc32.Checksum(body, castagnoli()) != uint32(want) {
			return rec, errors.New("checksum mismatch")
		}
	default:
		return rec, errors.New("not a record")
	}
	if err := json.Unmarshal(body, &rec); err != nil {
		return rec, fmt.Errorf("undecodable: %w", err)
	}
	return rec, rec.valid()
}

// hasSum reports whether line starts as a checksummed line does.
func hasSum(line []byte) bool {
	if len(line) <= sumLen || line[8] != ' ' || line[sumLen] != '{' {
		return false
	}
	for _, c := range line[:8] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// valid checks what a record claims, so that a line that decodes but
// could not have been written by a server (an empty id, a status that
// does not exist, a result that is not an object) is not served.
func (r *journalRecord) valid() error {
	switch {
	case r.Task != nil && r.Del != "":
		return errors.New("both a put and a del")
	case r.Task == nil && r.Del == "":
		return errors.New("neither a put nor a del")
	case r.Task == nil:
		return nil
	}
	t := r.Task
	switch {
	case t.ID == "":
		return errors.New("a task without an id")
	case t.Status != Working && t.Status != InputRequired && !t.Status.Terminal():
		return fmt.Errorf("task %s: status %q", t.ID, t.Status)
	case t.TTL < 0:
		return fmt.Errorf("task %s: negative ttl", t.ID)
	case !isObject(t.Result):
		return fmt.Errorf("task %s: a result that is not an object", t.ID)
	case !isObject(t.Input):
		return fmt.Errorf("task %s: input requests that are not an object", t.ID)
	case t.Rerun != nil && !isObject(t.Rerun.Args):
		return fmt.Errorf("task %s: arguments that are not an object", t.ID)
	}
	return nil
}

// isObject reports whether raw is absent or a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || raw[0] == '{' || string(raw) == "null"
}

// replayed is what replay read from a journal.
type replayed struct {
	tasks map[string]Task
	lines int   // lines kept in the file, good or damaged
	keep  int64 // where the file is to end: after its last good line
	size  int64 // bytes read
}

// replay reads a journal. A damaged line (it does not decode, its
// checksum is wrong, its record is not one a server writes) is skipped
// and reported: its record is lost, and nothing else. When two lines ran
// together (damage ate a '\n'), the record at the end of the run is still
// found by its checksum. What follows the last good line is dropped: a
// torn last write (no '\n') quietly, damaged whole lines with a report;
// the file is never cut before a good line.
//
// legacy reads the old format, lines without checksums.
func replay(r io.Reader, log *slog.Logger, legacy bool) (replayed, error) {
	return replayEach(r, log, legacy, nil)
}

// replayEach is replay that also calls each, when set, with every record
// it keeps, in order (tests).
func replayEach(r io.Reader, log *slog.Logger, legacy bool, each func(journalRecord)) (replayed, error) {
	rp := replayed{tasks: map[string]Task{}}
	br := bufio.NewReaderSize(r, 64<<10)
	pendingLines := 0 // damaged lines after the last good one
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				log.Info("tasks: journal: dropped a last line cut short (a write that never returned)",
					"line", n, "offset", rp.size, "bytes", len(line))
				rp.size += int64(len(line))
			}
			break
		}
		if err != nil {
			return rp, fmt.Errorf("tasks: journal: %w", err)
		}
		offset := rp.size
		rp.size += int64(len(line))
		body := bytes.TrimRight(line, "\r\n")
		if len(body) == 0 {
			pendingLines++
			continue // a blank line holds no record
		}
		rec, derr := decodeLine(body, legacy)
		lost := body
		if derr != nil {
			// The record at the end of a run of lines whose '\n' was lost.
			if at, r2, ok := resync(body, legacy); ok {
				lost, rec, derr = body[:at], r2, nil
			}
		}
		if derr != nil || len(lost) != len(body) {
			reason := "not a record, before one"
			if derr != nil {
				reason = derr.Error()
			}
			log.Warn("tasks: journal: skipped a damaged line; the one record it held is lost",
				"line", n, "offset", offset, "bytes", len(lost), "task", guessID(lost), "reason", reason)
		}
		if derr != nil {
			pendingLines++
			continue
		}
		if each != nil {
			each(rec)
		}
		switch {
		case rec.Task != nil:
			rp.tasks[rec.Task.ID] = *rec.Task
		default:
			delete(rp.tasks, rec.Del)
		}
		rp.lines += pendingLines + 1
		pendingLines = 0
		rp.keep = rp.size
	}
	return rp, nil
}

// resync finds a whole record at the end of a damaged line: at is where
// it starts.
func resync(line []byte, legacy bool) (at int, rec journalRecord, ok bool) {
	for i := 1; i < len(line); i++ {
		start := -1
		switch {
		case !legacy && line[i] == ' ':
			if i > 8 && hasSum(line[i-8:]) {
				start = i - 8
			}
		case legacy && line[i] == '{':
			if bytes.HasPrefix(line[i:], []byte(`{"put":`)) || bytes.HasPrefix(line[i:], []byte(`{"del":`)) {
				start = i
			}
		}
		if start < 0 {
			continue
		}
		if r, err := decodeLine(line[start:], legacy); err == nil {
			return start, r, true
		}
	}
	return 0, rec, false
}

// guessID finds a task id in a damaged record, for the report: the
// record is lost, but whose it was need not be.
func guessID(b []byte) string {
	for _, key := range []string{`"id":"`, `"del":"`} {
		if i := bytes.Index(b, []byte(key)); i >= 0 {
			rest := b[i+len(key):]
			if k := bytes.IndexByte(rest, '"'); k > 0 && k <= 128 {
				return string(rest[:k])
			}
		}
	}
	return ""
}
