package client

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// maxStderrLine bounds one kept or logged stderr line; a server printing a
// megabyte without a newline must not grow the client without bound.
const maxStderrLine = 1024

// stderrSink keeps the server's last stderr lines and logs them through a
// throttle. Servers may write anything to stderr and the specification
// says it is not an error signal, so it is only ever informational; a
// crash-looping or chatty server must not flood the client's logs.
type stderrSink struct {
	mu    sync.Mutex
	lines []string // ring of the last cap(lines) lines
	next  int
	full  bool

	thr throttle
	log *slog.Logger
}

func newStderrSink(keep, limit int, window time.Duration, log *slog.Logger) *stderrSink {
	return &stderrSink{
		lines: make([]string, keep),
		thr:   throttle{limit: limit, window: window, now: time.Now},
		log:   log,
	}
}

// consume reads r until EOF or error.
func (s *stderrSink) consume(r io.Reader) {
	br := bufio.NewReaderSize(r, 4096)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line) < maxStderrLine {
			line = append(line, chunk[:min(len(chunk), maxStderrLine-len(line))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 || err == nil {
			s.add(string(bytes.TrimRight(line, "\r\n")))
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
	s.mu.Lock()
	s.lines[s.next] = line
	s.next = (s.next + 1) % len(s.lines)
	if s.next == 0 {
		s.full = true
	}
	verdict, dropped := s.thr.admit()
	s.mu.Unlock()
	ctx := context.Background()
	if dropped > 0 {
		s.log.LogAttrs(ctx, slog.LevelWarn, "server stderr: lines were dropped by the throttle", slog.Int("dropped", dropped))
	}
	switch verdict {
	case logLine:
		s.log.LogAttrs(ctx, slog.LevelInfo, "server stderr", slog.String("line", line))
	case logThrottling:
		s.log.LogAttrs(ctx, slog.LevelWarn, "server stderr: throttling",
			slog.Int("limit", s.thr.limit), slog.Duration("window", s.thr.window))
	}
}

// tail returns the kept lines, oldest first.
func (s *stderrSink) tail() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.full {
		return append([]string(nil), s.lines[:s.next]...)
	}
	return append(append([]string(nil), s.lines[s.next:]...), s.lines[:s.next]...)
}

type verdict int

const (
	logLine verdict = iota
	logThrottling
	dropLine
)

// throttle admits limit lines per fixed window, then one throttling line,
// then nothing until the window ends; the first line of the next window
// also reports how many were dropped.
type throttle struct {
	limit   int
	window  time.Duration
	now     func() time.Time
	start   time.Time
	count   int
	dropped int
}

func (t *throttle) admit() (v verdict, droppedBefore int) {
	now := t.now()
	if t.start.IsZero() || now.Sub(t.start) >= t.window {
		droppedBefore = t.dropped
		t.start, t.count, t.dropped = now, 0, 0
	}
	t.count++
	switch {
	case t.count <= t.limit:
		return logLine, droppedBefore
	case t.count == t.limit+1:
		t.dropped++
		return logThrottling, droppedBefore
	}
	t.dropped++
	return dropLine, droppedBefore
}
