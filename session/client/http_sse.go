package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// sseReader reads a text/event-stream (the WHATWG server-sent events
// format): lines end with CRLF, LF or CR; a blank line ends an event; a
// line starting with a colon is a comment (a keep-alive); the fields are
// data (joined with LF), event, id and retry.
type sseReader struct {
	sc    *bufio.Scanner
	max   int
	retry time.Duration // the last retry field, 0 if none
	// lastID is the last event ID the stream set (its id field), which a
	// client sends back as Last-Event-ID to resume the stream; "" if none.
	lastID string
}

func newSSEReader(r io.Reader, max int) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), max+2)
	sc.Split(scanSSELine)
	return &sseReader{sc: sc, max: max}
}

// next returns the data of the next event whose type is message (or
// unset) and whose data is not empty: a JSON-RPC message. Other events
// (a priming event with an id and no data, say) are skipped. At the end of
// the stream it returns io.EOF; an event the stream ends inside is
// dropped, as the format says.
func (r *sseReader) next() ([]byte, error) {
	var data []byte
	event, has := "", false
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if has && len(data) > 0 && (event == "" || event == "message") {
				return data, nil
			}
			data, event, has = nil, "", false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if has {
				data = append(data, '\n')
			}
			if len(data)+len(value) > r.max {
				return nil, fmt.Errorf("an event is longer than %d bytes", r.max)
			}
			data = append(data, value...) // a copy: the scanner reuses its buffer
			has = true
		case "event":
			event = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 { // an id with NULL is ignored
				r.lastID = string(value)
			}
		case "retry":
			if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 {
				r.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("a line of the event stream is longer than %d bytes", r.max)
		}
		return nil, err
	}
	return nil, io.EOF
}

// scanSSELine splits at CRLF, LF or a lone CR.
func scanSSELine(data []byte, atEOF bool) (int, []byte, error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	}
	return 0, nil, nil // a CR at the end: wait to see whether LF follows
}
