// Package sse reads a text/event-stream (the WHATWG server-sent events
// format), the framing of Streamable HTTP's streamed responses: the one
// reader that mcprt's client, its bench and its fault checker share.
//
// Lines end with CRLF, LF or a lone CR; a blank line ends an event; a line
// starting with a colon is a comment (a keep-alive); the fields are data
// (joined with LF), event, id and retry; other fields are ignored.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// Next's errors, with Strict, for a stream that ends inside an event, or
// inside a line.
var (
	errUnterminatedEvent = errors.New("the stream ended in the middle of an event")
	errUnterminatedLine  = errors.New("the stream ended in the middle of a line")
)

// Reader reads the message events of one stream.
type Reader struct {
	// Strict makes Next refuse what a lenient client drops or reads
	// anyway: a line that is not UTF-8, and a stream that ends inside an
	// event or a line (ErrUnterminated). A checker of servers sets it.
	Strict bool
	// Retry is the last retry field (0 if none): how long a client waits
	// before it opens the stream again.
	Retry time.Duration
	// LastID is the last event ID the stream set (its id field), which a
	// client sends back as Last-Event-ID to resume the stream; "" if none.
	LastID string

	sc   *bufio.Scanner
	max  int
	open bool // the last line read had no line end (the stream ended inside it)
}

// NewReader reads r, whose events may hold at most max bytes of data.
func NewReader(r io.Reader, max int) *Reader {
	rd := &Reader{max: max}
	rd.sc = bufio.NewScanner(r)
	rd.sc.Buffer(make([]byte, 0, min(64<<10, max+2)), max+2)
	rd.sc.Split(rd.scanLine)
	return rd
}

// Next returns the data of the next event whose type is message (or
// unset) and whose data is not empty: a JSON-RPC message. Other events (a
// priming event with an id and no data, say) are skipped. At the end of
// the stream it returns io.EOF; an event the stream ends inside is
// dropped, as the format says (with Strict, it is errUnterminatedEvent or
// errUnterminatedLine).
func (r *Reader) Next() ([]byte, error) {
	var data []byte
	event, has := "", false
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if r.Strict && !utf8.Valid(line) {
			return nil, fmt.Errorf("a line of the stream is not UTF-8: %.80q", line)
		}
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
				r.LastID = string(value)
			}
		case "retry":
			if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 {
				r.Retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("a line of the event stream is longer than %d bytes", r.max)
		}
		return nil, err
	}
	switch {
	case r.Strict && r.open:
		return nil, errUnterminatedLine
	case r.Strict && has:
		return nil, errUnterminatedEvent
	}
	return nil, io.EOF
}

// scanLine splits at CRLF, LF or a lone CR, and notes a last line that
// has no line end.
func (r *Reader) scanLine(data []byte, atEOF bool) (int, []byte, error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF && len(data) > 0 {
			r.open = true
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
