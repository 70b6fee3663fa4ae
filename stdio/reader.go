package stdio

import (
	"bufio"
	"cmp"
	"errors"
	"io"
)

// DefaultMaxLine is the default cap on one input line: large enough for the
// multi-MiB requests real clients send, small enough that one line cannot
// take the process's memory.
const DefaultMaxLine = 64 << 20

// lineMsg is one input line without its line ending. The receiver owns Data.
type lineMsg struct {
	Data []byte
}

// LineTooLong reports a line over the cap that was discarded. Head holds its
// first bytes, so the receiver can still try to find the request's id.
type LineTooLong struct {
	Size int // bytes discarded, line ending excluded
	Max  int
	Head []byte
}

// eof reports the end of the input: the client closed stdin.
type eof struct{}

// readError reports a read failure other than eof; reading has stopped.
type readError struct{ Err error }

// headKeep is how much of an over-long line is kept for id recovery.
const headKeep = 4096

// readLines reads r until eof or error and calls emit with a *lineMsg,
// *LineTooLong, *eof or *readError. It stops early, without a final message,
// when emit returns false. maxLine <= 0 means DefaultMaxLine.
//
// A last line without a newline is still delivered before eof: a client that
// forgets the final '\n' should not lose its last request.
func readLines(r io.Reader, maxLine int, emit func(msg any) bool) {
	stopped := false
	err := ScanLines(r, maxLine, func(line []byte) bool {
		stopped = !emit(&lineMsg{Data: line})
		return !stopped
	}, func(t LineTooLong) bool {
		stopped = !emit(&t)
		return !stopped
	})
	switch {
	case stopped:
	case err == nil:
		emit(&eof{})
	default:
		emit(&readError{Err: err})
	}
}

// ScanLines is readLines without the messages, for a reader that handles
// each line where it is read (session/client reads a server's stdout so):
// onLine gets each non-blank line, without its ending, in a fresh buffer the
// receiver owns; onTooLong gets each line over the cap, discarded. It
// returns nil at eof or when a callback returns false, else the read error.
func ScanLines(r io.Reader, maxLine int, onLine func([]byte) bool, onTooLong func(LineTooLong) bool) error {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	br := bufio.NewReaderSize(r, bufSize)
	var (
		acc     []byte // the line so far, when it spans more than one buffer
		hint    int    // what the last line longer than a buffer needed
		over    bool   // the current line is over the cap: discarding
		size    int    // bytes of the current line seen so far
		headBuf []byte
		prevCR  bool // the previous buffer of this line ended in '\r'
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			size += len(chunk)
			// A '\r' ending the buffer may be the start of "\r\n": it
			// does not count against the cap until we know.
			prevCR = chunk[len(chunk)-1] == '\r'
			switch {
			case over:
			case size-b2i(prevCR) > maxLine:
				over = true
				headBuf = keepHead(acc, chunk)
				acc = nil
			default:
				acc = append(growLine(acc, len(chunk), hint, maxLine), chunk...)
			}
			continue
		}
		complete := err == nil
		if complete {
			chunk = chunk[:len(chunk)-1]
		}
		size += len(chunk)
		if complete {
			// Drop the '\r' of "\r\n", also when it ended the previous buffer.
			switch {
			case len(chunk) > 0 && chunk[len(chunk)-1] == '\r':
				chunk = chunk[:len(chunk)-1]
				size--
			case len(chunk) == 0 && prevCR:
				size--
				if len(acc) > 0 {
					acc = acc[:len(acc)-1]
				}
			}
		}
		switch {
		case over || size > maxLine:
			if !over {
				headBuf = keepHead(acc, chunk)
			}
			if !onTooLong(LineTooLong{Size: size, Max: maxLine, Head: headBuf}) {
				return nil
			}
		case len(acc) > 0:
			line := append(growLine(acc, len(chunk), hint, maxLine), chunk...)
			// A little over: the next request of the same payload may
			// carry a longer id.
			hint = len(line) + len(line)/32 + 512
			if cap(line) > 2*len(line) {
				// Sized for an earlier, longer line: do not hand the
				// receiver (or the garbage collector) the difference.
				line = append([]byte(nil), line...)
			}
			if !blank(line) && !onLine(line) {
				return nil
			}
		case !blank(chunk):
			if !onLine(append([]byte(nil), chunk...)) {
				return nil
			}
		}
		acc, over, size, headBuf, prevCR = nil, false, 0, nil, false
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// bufSize is the reader's buffer: lines up to this size (nearly all) are
// read with one copy out of it.
const bufSize = 64 << 10

// growLine makes room in acc, the start of a line longer than the buffer,
// for n more bytes. Left to append, a 1 MiB line would be copied into a
// slice grown by a quarter at a time, a dozen allocations and 4 MiB of
// copying; here the first allocation is the size of the last long line
// (hint), which a client sending large payloads usually repeats, and
// growth past it doubles. Only the size is remembered, never a buffer: each
// line is handed to its receiver, and an idle reader holds nothing but its
// 64 KiB buffer.
func growLine(acc []byte, n, hint, maxLine int) []byte {
	if cap(acc)-len(acc) >= n {
		return acc
	}
	c := 2 * cap(acc)
	if c == 0 {
		c = cmp.Or(hint, 2*bufSize)
	}
	// A line is cut off past maxLine (+1 for a '\r' that may end it).
	c = min(c, maxLine+2)
	grown := make([]byte, len(acc), max(c, len(acc)+n))
	copy(grown, acc)
	return grown
}

func keepHead(acc, chunk []byte) []byte {
	h := make([]byte, 0, headKeep)
	h = append(h, acc[:min(len(acc), headKeep)]...)
	return append(h, chunk[:min(len(chunk), headKeep-len(h))]...)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}
