package client

import (
	"os"
	"sync"
	"time"
)

// writer owns the server's stdin. Every message is one whole line written
// by one goroutine, so concurrent callers never interleave bytes, and a
// caller whose request times out never leaves half a line behind (which
// would corrupt the stream for everyone). A request still queued when it
// is abandoned is taken back instead of being sent and then cancelled.
type writer struct {
	f      *os.File
	wake   chan struct{} // capacity 1: "the queue is not empty"
	exited chan struct{} // run returned

	mu      sync.Mutex
	queue   []queued
	closing bool // no more sends; run returns once the queue is empty
	once    sync.Once
}

type queued struct {
	id   int64 // 0 for notifications and responses
	line []byte
	buf  *[]byte // the pooled buffer line is in (see lineBuf), or nil
}

func newWriter(f *os.File) *writer {
	return &writer{f: f, wake: make(chan struct{}, 1), exited: make(chan struct{})}
}

// linePool recycles the buffers of request lines, given back once written:
// the line was the largest allocation of a call.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// maxPooledLine is the largest buffer kept for reuse.
const maxPooledLine = 16 << 10

// lineBuf returns an empty buffer of at least n bytes for a line that is
// then sent with it.
func lineBuf(n int) *[]byte {
	bp := linePool.Get().(*[]byte)
	if cap(*bp) < n {
		*bp = make([]byte, 0, n)
	}
	return bp
}

// release gives a line's buffer back once it was written.
func release(line []byte, bp *[]byte) {
	if bp != nil && cap(line) <= maxPooledLine {
		*bp = line[:0]
		linePool.Put(bp)
	}
}

// send queues a line (in buffer bp from lineBuf, or nil); it reports false
// once the writer is closing.
func (w *writer) send(id int64, line []byte, bp *[]byte) bool {
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return false
	}
	w.queue = append(w.queue, queued{id, line, bp})
	w.mu.Unlock()
	w.poke()
	return true
}

func (w *writer) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// unqueue takes back a request that was not written yet.
func (w *writer) unqueue(id int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, q := range w.queue {
		if q.id == id {
			w.queue = append(w.queue[:i], w.queue[i+1:]...)
			return true
		}
	}
	return false
}

// run writes queued lines until the writer is closing and the queue is
// empty, or a write fails (the server closed its stdin or exited). The
// lines queued meanwhile go out together, in one write: under load a
// write(2) per request was much of the client's CPU. A line of
// batchBytes or more is written on its own, not copied.
func (w *writer) run() {
	defer close(w.exited)
	var batch []byte
	var taken []queued
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			closing := w.closing
			w.mu.Unlock()
			if closing {
				return
			}
			<-w.wake
			continue
		}
		// Take the queue, and leave the slice taken last time in its place.
		taken, w.queue = w.queue, taken[:0]
		w.mu.Unlock()
		batch = batch[:0]
		ok := true
		for i, q := range taken {
			taken[i] = queued{} // the lines are not kept
			if !ok {
				continue
			}
			if len(q.line) < batchBytes {
				batch = append(append(batch, q.line...), '\n')
				release(q.line, q.buf)
				continue
			}
			ok = w.write(batch) && w.write(append(q.line, '\n'))
			batch = batch[:0]
		}
		if !ok || !w.write(batch) {
			return
		}
		if cap(batch) > 4*batchBytes {
			batch = nil // a burst is over: do not keep its buffer
		}
	}
}

// batchBytes is the size of line written apart rather than copied into a
// batch.
const batchBytes = 64 << 10

// write writes b; after a failure it closes the writer and reports false.
func (w *writer) write(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if _, err := w.f.Write(b); err != nil {
		w.mu.Lock()
		w.closing, w.queue = true, nil
		w.mu.Unlock()
		return false
	}
	return true
}

// close stops taking messages, writes the notifications and responses
// still queued (the last cancellations, mostly) for at most flush, then
// closes stdin, which is the server's signal to exit. Queued requests are
// dropped: nobody waits for their answers any more. Closing the file also
// ends a Write blocked on a server that stopped reading (our end of the
// pipe is non-blocking and polled).
func (w *writer) close(flush time.Duration) {
	w.once.Do(func() {
		w.mu.Lock()
		w.closing = true
		kept := w.queue[:0]
		for _, q := range w.queue {
			if q.id == 0 {
				kept = append(kept, q)
			}
		}
		w.queue = kept
		w.mu.Unlock()
		w.poke()
		t := time.NewTimer(flush)
		select {
		case <-w.exited:
		case <-t.C:
		}
		t.Stop()
		_ = w.f.Close()
	})
}
