package client

import (
	"os"
	"sync"
)

// writer owns the server's stdin. Every message is one whole line written
// by one goroutine, so concurrent callers never interleave bytes, and a
// caller whose request times out never leaves half a line behind (which
// would corrupt the stream for everyone). A request still queued when it
// is abandoned is taken back instead of being sent and then cancelled.
type writer struct {
	f    *os.File
	wake chan struct{} // capacity 1: "the queue is not empty"
	stop chan struct{}

	mu     sync.Mutex
	queue  []queued
	closed bool
}

type queued struct {
	id   int64 // 0 for notifications and responses
	line []byte
}

func newWriter(f *os.File) *writer {
	return &writer{f: f, wake: make(chan struct{}, 1), stop: make(chan struct{})}
}

// send queues a line; it reports false once the writer is closed.
func (w *writer) send(id int64, line []byte) bool {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return false
	}
	w.queue = append(w.queue, queued{id, line})
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return true
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

// run writes queued lines until close is called or a write fails (the
// server closed its stdin or exited).
func (w *writer) run() {
	for {
		select {
		case <-w.wake:
		case <-w.stop:
			return
		}
		for {
			w.mu.Lock()
			if len(w.queue) == 0 || w.closed {
				w.mu.Unlock()
				break
			}
			q := w.queue[0]
			w.queue = w.queue[1:]
			w.mu.Unlock()
			if _, err := w.f.Write(append(q.line, '\n')); err != nil {
				w.close()
				return
			}
		}
	}
}

// close drops what is queued and closes stdin, which is the server's
// signal to exit. Closing the file also ends a Write blocked on a server
// that stopped reading (our end of the pipe is non-blocking and polled).
func (w *writer) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.queue = nil
	w.mu.Unlock()
	close(w.stop)
	_ = w.f.Close()
}
