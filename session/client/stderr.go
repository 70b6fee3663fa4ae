package client

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"
)

// maxStderrLine bounds one kept or logged stderr line; a server printing a
// megabyte without a newline must not grow the client without bound.
const maxStderrLine = 1024

// maxPassedLine bounds one line handed to Options.OnStderr, which shows
// lines as they are and so gets more of a long one than is kept.
const maxPassedLine = 64 << 10

// stderrSink keeps the server's first and last stderr lines, and passes
// each line on: to Options.OnStderr when it is set, else to the log
// through a throttle. Servers may write anything to stderr and the
// specification says it is not an error signal, so it is only ever
// informational; a crash-looping or chatty server must not flood the
// client's logs.
//
// Both ends are kept because both explain failures: a server that rejects
// its command line says why in its first line and then prints its usage,
// while one that crashes later says why in its last lines.
type stderrSink struct {
	mu    sync.Mutex
	head  []string // the first cap(head) lines
	ring  []string // the last len(ring) lines after the head
	next  int
	full  bool
	total int // lines seen, head included

	pass func(string) // Options.OnStderr; nil: log through thr
	thr  Throttle
	log  *slog.Logger
}

func newStderrSink(keep, limit int, window time.Duration, log *slog.Logger, pass func(string)) *stderrSink {
	return &stderrSink{
		head: make([]string, 0, keep),
		ring: make([]string, keep),
		thr:  Throttle{Limit: limit, Window: window},
		log:  log,
		pass: pass,
	}
}

// consume reads r until EOF or error.
func (s *stderrSink) consume(r io.Reader) {
	limit := maxStderrLine
	if s.pass != nil {
		limit = maxPassedLine
	}
	// A few bytes over the limit, so that cut can end the line on a whole
	// UTF-8 sequence.
	grab := limit + utf8.UTFMax
	br := bufio.NewReaderSize(r, 4096)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line) < grab {
			line = append(line, chunk[:min(len(chunk), grab-len(line))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 || err == nil {
			s.add(cut(string(bytes.TrimRight(line, "\r\n")), limit))
		}
		line = line[:0]
		if err != nil {
			return
		}
	}
}

func (s *stderrSink) add(line string) {
	if line == "" {
		return
	}
	kept := cut(line, maxStderrLine)
	s.mu.Lock()
	s.total++
	switch {
	case len(s.head) < cap(s.head):
		s.head = append(s.head, kept)
	case len(s.ring) > 0:
		s.ring[s.next] = kept
		s.next = (s.next + 1) % len(s.ring)
		if s.next == 0 {
			s.full = true
		}
	}
	if s.pass != nil {
		s.mu.Unlock()
		// Outside the lock: the callback may be slow, and lines() must
		// not wait for it.
		s.pass(line)
		return
	}
	verdict, dropped := s.thr.Admit()
	s.mu.Unlock()
	ctx := context.Background()
	if dropped > 0 {
		s.log.LogAttrs(ctx, slog.LevelWarn, "server stderr: lines were dropped by the throttle", slog.Int("dropped", dropped))
	}
	switch verdict {
	case PassLine:
		s.log.LogAttrs(ctx, slog.LevelInfo, "server stderr", slog.String("line", kept))
	case SayThrottled:
		s.log.LogAttrs(ctx, slog.LevelWarn, "server stderr: throttling",
			slog.Int("limit", s.thr.Limit), slog.Duration("window", s.thr.Window))
	}
}

// cut shortens s to at most n bytes without splitting a UTF-8 sequence.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// omitted is the line that stands for the lines left out between the
// first and the last ones kept.
func omitted(n int) string {
	if n == 1 {
		return "… 1 line omitted …"
	}
	return fmt.Sprintf("… %d lines omitted …", n)
}

// lines returns the first and the last kept lines in order, with an
// omitted line between them when some were left out.
func (s *stderrSink) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.head...)
	var tail []string
	if s.full {
		tail = append(append(tail, s.ring[s.next:]...), s.ring[:s.next]...)
	} else {
		tail = s.ring[:s.next]
	}
	if gap := s.total - len(s.head) - len(tail); gap > 0 {
		out = append(out, omitted(gap))
	}
	return append(out, tail...)
}

// Verdict is what a Throttle says of one line.
type Verdict int

const (
	PassLine     Verdict = iota // pass the line on
	SayThrottled                // the window's limit is reached: say so, drop the line
	DropLine                    // drop the line
)

// Throttle admits Limit lines per fixed Window, then one SayThrottled,
// then nothing until the window ends; the first line of the next window
// also reports how many were dropped. The client passes a server's stderr
// through one; a supervisor of servers (the gateway) uses the same for the
// lines it prints. Now is the clock (nil: time.Now). Not safe for
// concurrent use.
type Throttle struct {
	Limit   int
	Window  time.Duration
	Now     func() time.Time
	start   time.Time
	count   int
	dropped int
}

// Admit judges the next line, and says how many lines the window that
// just ended dropped (0 unless this line starts a new window).
func (t *Throttle) Admit() (v Verdict, droppedBefore int) {
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	if t.start.IsZero() || now.Sub(t.start) >= t.Window {
		droppedBefore = t.dropped
		t.start, t.count, t.dropped = now, 0, 0
	}
	t.count++
	switch {
	case t.count <= t.Limit:
		return PassLine, droppedBefore
	case t.count == t.Limit+1:
		t.dropped++
		return SayThrottled, droppedBefore
	}
	t.dropped++
	return DropLine, droppedBefore
}
