//go:build unix

package stdio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"
)

// Capture is a running capture of fd 1. Build it with CaptureStdout.
type Capture struct {
	fd      int
	saved   int      // what fd pointed at before; restored by Stop
	r       *os.File // the pipe's read end: non-blocking, so deadlines work
	deliver func(line []byte, partial bool)
	opts    CaptureOptions
	// queue feeds the delivering goroutine. Both are started by the reader
	// with the first delivery (see startDelivery), so that a process that
	// prints nothing, the usual case, holds neither the queue's buffer nor
	// the goroutine.
	queue chan capItem

	// mu orders the reader's deadline changes against Stop's: both compute
	// the deadline from the other's state, and a lost update would leave
	// the reader blocked past StopWait or spinning on an expired deadline.
	mu       sync.Mutex
	deadline time.Time
	stopAt   time.Time // zero until Stop

	readerDone, deliverDone chan struct{}
	held                    bool  // written by the reader before readerDone
	readErr                 error // likewise

	// Reader-owned: drops not yet reported, and whether the reader is
	// dropping (the callback stalled) rather than waiting.
	dropping               bool
	unrepLines, unrepBytes int64
	stall                  *time.Timer

	lines, bytes, droppedLines, droppedBytes atomic.Int64

	stopOnce sync.Once
	stopErr  error
}

// capItem is one delivery and/or the drops that preceded it.
type capItem struct {
	data                 []byte
	line, partial        bool
	dropLines, dropBytes int64
}

// CaptureStdout points fd 1 at a pipe and calls deliver with every line
// written there, by anyone: Go code, C code through cgo, and child processes
// that inherited fd 1. Lines come without their "\n" (or "\r\n"); partial is
// true when the line was cut before its newline, by Chunk or by Idle, and
// its rest (if any) follows in the next calls. deliver runs on one goroutine
// owned by the Capture, one call at a time, in output order; it owns line.
//
// deliver must not write to fd 1 (that would feed itself), must not call
// Stop, and should not block for long: past Queue waiting deliveries and
// MaxStall, output is dropped (and reported) so that no writer of fd 1 is
// held up indefinitely.
//
// Use it only in a process that owns its standard streams, after Claim, so
// that Stop puts fd 1 back on stderr rather than on the protocol stream. C
// stdio buffers its output: C code must fflush(stdout) for its lines to
// arrive; what C leaves in its buffer at exit is not seen.
func CaptureStdout(deliver func(line []byte, partial bool), opts CaptureOptions) (*Capture, error) {
	return captureFD(1, deliver, opts)
}

// captureFD captures any descriptor; tests use scratch ones so that they do
// not take the test binary's own stdout.
func captureFD(fd int, deliver func([]byte, bool), opts CaptureOptions) (*Capture, error) {
	if opts.Idle <= 0 {
		opts.Idle = defaultCaptureIdle
	}
	if opts.Chunk <= 0 {
		opts.Chunk = defaultCaptureChunk
	}
	opts.Chunk = max(opts.Chunk, utf8.UTFMax)
	if opts.Queue <= 0 {
		opts.Queue = defaultCaptureQueue
	}
	if opts.MaxStall == 0 {
		opts.MaxStall = defaultCaptureMaxStall
	}
	if opts.StopWait <= 0 {
		opts.StopWait = defaultCaptureStopWait
	}

	var p [2]int
	// Under ForkLock, so no child started meanwhile inherits either end:
	// a stray write end would keep Stop from ever seeing eof.
	syscall.ForkLock.RLock()
	err := syscall.Pipe(p[:])
	if err == nil {
		syscall.CloseOnExec(p[0])
		syscall.CloseOnExec(p[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, fmt.Errorf("stdio: capture pipe: %w", err)
	}
	growPipe(p[1])
	// The read end is non-blocking so the runtime poller can time out a
	// read (Idle, StopWait). The write end stays blocking: it becomes fd 1,
	// shared with C code and children that do not expect EAGAIN.
	if err := syscall.SetNonblock(p[0], true); err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, fmt.Errorf("stdio: capture pipe: %w", err)
	}
	saved, err := dupCloexec(fd)
	if err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, fmt.Errorf("stdio: capture: dup fd %d: %w", fd, err)
	}
	if err := redirect(p[1], fd); err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		syscall.Close(saved)
		return nil, fmt.Errorf("stdio: capture: point fd %d at the pipe: %w", fd, err)
	}
	// From here fd is the only write end in this process: once Stop points
	// it back, the reader sees eof as soon as the pipe is empty.
	syscall.Close(p[1])

	c := &Capture{
		fd:          fd,
		saved:       saved,
		r:           os.NewFile(uintptr(p[0]), "mcprt-capture"),
		deliver:     deliver,
		opts:        opts,
		readerDone:  make(chan struct{}),
		deliverDone: make(chan struct{}),
	}
	go c.read()
	return c, nil
}

// redirect points fd at the file of from. The standard streams are meant to
// be inherited by children; any other descriptor keeps close-on-exec, which
// dup2 clears.
func redirect(from, fd int) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := dup2(from, fd); err != nil {
		return err
	}
	if fd > 2 {
		syscall.CloseOnExec(fd)
	}
	return nil
}

// stats returns the counts so far; after Stop they are final.
func (c *Capture) stats() captureStats {
	return captureStats{
		Lines:        c.lines.Load(),
		Bytes:        c.bytes.Load(),
		DroppedLines: c.droppedLines.Load(),
		DroppedBytes: c.droppedBytes.Load(),
	}
}

// Stop points fd 1 back where it was before CaptureStdout, delivers
// everything still in the pipe, and returns once the capture's goroutines
// have exited and the last delivery has returned. If another process still
// holds the pipe, it waits StopWait for it to let go, then delivers what
// was there and returns errCaptureHeld. Later calls return the same result.
func (c *Capture) Stop() error {
	c.stopOnce.Do(func() {
		err := redirect(c.saved, c.fd)
		syscall.Close(c.saved)
		c.mu.Lock()
		c.stopAt = time.Now().Add(c.opts.StopWait)
		if c.deadline.IsZero() || c.stopAt.Before(c.deadline) {
			c.deadline = c.stopAt
			_ = c.r.SetReadDeadline(c.stopAt)
		}
		c.mu.Unlock()
		<-c.readerDone
		<-c.deliverDone
		c.r.Close()
		if err != nil {
			err = fmt.Errorf("stdio: capture: restore fd %d: %w", c.fd, err)
		}
		if c.held {
			err = errors.Join(err, errCaptureHeld)
		}
		if c.readErr != nil {
			err = errors.Join(err, fmt.Errorf("stdio: capture: read: %w", c.readErr))
		}
		c.stopErr = err
	})
	return c.stopErr
}

// read is the only reader of the pipe.
func (c *Capture) read() {
	defer close(c.readerDone)
	defer c.endDelivery()
	s := splitter{chunk: c.opts.Chunk, emit: c.push}
	// The buffer starts small and doubles whenever a read fills it, up to
	// captureMaxRead: a few short lines never need more, and a burst soon
	// gets reads as large as before.
	buf := make([]byte, captureMinRead)
	var lastData time.Time
	for {
		var idleAt time.Time
		if len(s.buf) > 0 {
			idleAt = lastData.Add(c.opts.Idle)
		}
		c.mu.Lock()
		want := idleAt
		if !c.stopAt.IsZero() && (want.IsZero() || c.stopAt.Before(want)) {
			want = c.stopAt
		}
		if !want.Equal(c.deadline) {
			c.deadline = want
			_ = c.r.SetReadDeadline(want)
		}
		stopAt := c.stopAt
		c.mu.Unlock()

		n, err := c.r.Read(buf)
		if n > 0 {
			s.feed(buf[:n])
			if n == len(buf) && len(buf) < captureMaxRead {
				buf = make([]byte, 2*len(buf))
			}
			// Idle counts from here: time spent stalled on a full queue is
			// the callback's, not a pause of the writer.
			lastData = time.Now()
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			now := time.Now()
			if !stopAt.IsZero() && !now.Before(stopAt) {
				c.held = !c.drainNow(buf, &s)
				c.finish(&s)
				return
			}
			if !idleAt.IsZero() && !now.Before(idleAt) {
				// The deadline may have passed while this goroutine was
				// not scheduled, with the rest of the line already in the
				// pipe (a read that filled buf ends mid-line): the poller
				// then reports a timeout without reading. Only a pipe
				// that is empty now means the writer paused.
				if n := c.readNow(buf); n > 0 {
					s.feed(buf[:n])
					lastData = time.Now()
					continue
				}
				s.cutIdle()
			}
		case errors.Is(err, io.EOF):
			c.finish(&s)
			return
		default:
			c.readErr = err
			c.finish(&s)
			return
		}
	}
}

// readNow reads what is in the pipe right now, without waiting: 0 when it
// is empty (or the read fails; the next Read reports that).
func (c *Capture) readNow(buf []byte) int {
	// A raw read, too, is refused while the deadline is past: clear it
	// (the loop sets the next one).
	c.mu.Lock()
	c.deadline = time.Time{}
	_ = c.r.SetReadDeadline(time.Time{})
	c.mu.Unlock()
	rc, err := c.r.SyscallConn()
	if err != nil {
		return 0
	}
	var n int
	var rerr error
	if err := rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Read(int(fd), buf)
			if rerr != syscall.EINTR {
				return true
			}
		}
	}); err != nil || rerr != nil {
		return 0
	}
	return max(n, 0)
}

// drainNow reads what is in the pipe right now, without waiting for more,
// and reports whether it reached eof. It is bounded: a holder that keeps
// writing cannot keep Stop from returning.
func (c *Capture) drainNow(buf []byte, s *splitter) (eof bool) {
	_ = c.r.SetReadDeadline(time.Time{})
	rc, err := c.r.SyscallConn()
	if err != nil {
		return false
	}
	for total := 0; total < 4<<20; {
		var n int
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			n, rerr = syscall.Read(int(fd), buf)
			return true
		}); err != nil {
			return false
		}
		switch {
		case n > 0:
			total += n
			s.feed(buf[:n])
		case rerr == syscall.EINTR:
		default:
			return n == 0 && rerr == nil
		}
	}
	return false
}

// finish delivers what is left of the last line, and reports drops that no
// later delivery carried.
func (c *Capture) finish(s *splitter) {
	if len(s.buf) > 0 {
		s.emit(bytes.Clone(s.buf), false)
		s.buf = s.buf[:0]
	}
	if c.unrepLines > 0 {
		it := capItem{dropLines: c.unrepLines, dropBytes: c.unrepBytes}
		if c.enqueue(it) {
			c.unrepLines, c.unrepBytes = 0, 0
		}
	}
	if c.stall != nil {
		c.stall.Stop()
	}
}

// Bounds of the reader's buffer (see read).
const (
	captureMinRead = 4 << 10
	captureMaxRead = 64 << 10
)

// startDelivery makes the queue and starts the delivering goroutine, on the
// first delivery. Only the reader calls it, as it is the only sender.
func (c *Capture) startDelivery() {
	if c.queue == nil {
		c.queue = make(chan capItem, c.opts.Queue)
		go c.deliverAll()
	}
}

// endDelivery lets the delivering goroutine finish what is queued and
// exit, or, if nothing was ever delivered, reports delivery done at once.
func (c *Capture) endDelivery() {
	if c.queue == nil {
		close(c.deliverDone)
		return
	}
	close(c.queue)
}

// push queues one delivery. When the queue is full it waits up to
// MaxStall, then drops until the queue has room again, so that a stuck
// callback costs writers of fd 1 one stall, not an endless block.
func (c *Capture) push(data []byte, partial bool) {
	c.startDelivery()
	it := capItem{data: data, line: true, partial: partial}
	if c.dropping {
		it.dropLines, it.dropBytes = c.unrepLines, c.unrepBytes
		select {
		case c.queue <- it:
			c.dropping = false
			c.unrepLines, c.unrepBytes = 0, 0
		default:
			c.drop(len(data))
		}
		return
	}
	if !c.enqueue(it) {
		c.dropping = true
		c.drop(len(data))
	}
}

// enqueue sends it, waiting up to MaxStall when the queue is full.
func (c *Capture) enqueue(it capItem) bool {
	c.startDelivery()
	select {
	case c.queue <- it:
		return true
	default:
	}
	if c.opts.MaxStall < 0 {
		c.queue <- it
		return true
	}
	if c.stall == nil {
		c.stall = time.NewTimer(c.opts.MaxStall)
	} else {
		c.stall.Reset(c.opts.MaxStall)
	}
	select {
	case c.queue <- it:
		c.stall.Stop()
		return true
	case <-c.stall.C:
		return false
	}
}

func (c *Capture) drop(n int) {
	c.unrepLines++
	c.unrepBytes += int64(n)
	c.droppedLines.Add(1)
	c.droppedBytes.Add(int64(n))
}

// deliverAll is the only caller of deliver.
func (c *Capture) deliverAll() {
	defer close(c.deliverDone)
	for it := range c.queue {
		if it.dropLines > 0 && c.opts.Dropped != nil {
			c.opts.Dropped(it.dropLines, it.dropBytes)
		}
		if it.line {
			c.deliver(it.data, it.partial)
			c.lines.Add(1)
			c.bytes.Add(int64(len(it.data)))
		}
	}
}

// splitter turns the pipe's bytes into deliveries.
type splitter struct {
	chunk int
	buf   []byte // the current line so far, under chunk bytes after cut
	emit  func(data []byte, partial bool)
}

func (s *splitter) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.buf = append(s.buf, b...)
			s.cut()
			return
		}
		line := b[:i]
		b = b[i+1:]
		if len(s.buf) == 0 && len(line) <= s.chunk {
			s.emit(bytes.Clone(trimCR(line)), false)
			continue
		}
		s.buf = append(s.buf, line...)
		s.cut()
		s.emit(bytes.Clone(trimCR(s.buf)), false)
		s.buf = s.buf[:0]
	}
}

// cut delivers whole chunks while more than one is pending: only then is it
// known that the line goes on past the chunk.
func (s *splitter) cut() {
	for len(s.buf) > s.chunk {
		n := runeCut(s.buf, s.chunk)
		s.emit(bytes.Clone(s.buf[:n]), true)
		s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	}
}

// cutIdle delivers the line so far: its writer has paused without a newline.
func (s *splitter) cutIdle() {
	s.emit(bytes.Clone(s.buf), true)
	s.buf = s.buf[:0]
}

// runeCut returns where to cut b at or before n so that a UTF-8 sequence
// is not split (forwarded lines become JSON strings, where a split sequence
// would turn into two U+FFFD). Invalid input is cut at n.
func runeCut(b []byte, n int) int {
	for k := n; k > 0 && k > n-utf8.UTFMax; k-- {
		if utf8.RuneStart(b[k]) {
			if k < n && !utf8.FullRune(b[k:n]) {
				return k
			}
			return n
		}
	}
	return n
}

func trimCR(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		return b[:len(b)-1]
	}
	return b
}
