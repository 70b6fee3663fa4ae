package stdio

import (
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/supervisor"
)

// Out asks the Writer to write one message. Data must be one complete JSON
// message without a line ending; its ownership passes to the writer, which
// may append '\n' in place (producers leave one byte of spare capacity to
// save a copy). Done, if set, is called once the message has been written or
// has been dropped because the stream is gone: it is how producers learn
// that their bytes have left the process, which is what bounds memory when
// the client stops reading.
type Out struct {
	Data []byte
	Done func()
}

// ErrClientGone is the cause of the writer's exit when the client closed its
// end of the stream (EPIPE). The writer exits with supervisor.Shutdown of it:
// a quiet, normal end of the session, not a failure.
var ErrClientGone = errors.New("stdio: client closed the output stream")

type flush struct{}

// writeFailed makes the writer exit once it has dealt with the messages
// that were already in its inbox when a write failed.
type writeFailed struct{ reason error }

// maxKeep bounds the coalescing buffer the writer keeps between flushes, so
// one burst of large messages does not pin memory for the process's life.
const maxKeep = 1 << 20

// Writer is the actor that owns the protocol output stream.
type Writer struct {
	w       io.Writer
	queue   [][]byte
	dones   []func()
	buf     []byte
	pending bool
	failed  bool
}

// NewWriter returns a Producer for the writer actor over w. Each message is
// written with a single w.Write call, so w must not split a Write (os.File and
// pipes do not).
func NewWriter(w io.Writer) actor.Producer {
	return func() actor.Receiver { return &Writer{w: w} }
}

// Receive implements actor.Receiver.
func (wr *Writer) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case Out:
		wr.enqueue(c, m)
	case *Out:
		wr.enqueue(c, *m)
	case flush:
		wr.pending = false
		wr.flush(c)
	case writeFailed:
		supervisor.Exit(c, m.reason)
	case actor.Stopped:
		// Messages queued before the stop were processed before Stopped:
		// whatever is still in the queue is the last batch.
		wr.flush(c)
	}
}

func (wr *Writer) enqueue(c *actor.Context, m Out) {
	if wr.failed {
		if m.Done != nil {
			m.Done()
		}
		return
	}
	wr.queue = append(wr.queue, m.Data)
	if m.Done != nil {
		wr.dones = append(wr.dones, m.Done)
	}
	if !wr.pending {
		// The flush marker queues behind everything already in the inbox,
		// so all messages that arrived together go out in one write.
		wr.pending = true
		c.Send(c.PID(), flush{})
	}
}

func (wr *Writer) flush(c *actor.Context) {
	if len(wr.queue) == 0 {
		return
	}
	var out []byte
	if len(wr.queue) == 1 {
		out = append(wr.queue[0], '\n')
	} else {
		out = wr.buf[:0]
		for _, m := range wr.queue {
			out = append(out, m...)
			out = append(out, '\n')
		}
		if cap(out) <= maxKeep {
			wr.buf = out
		} else {
			wr.buf = nil
		}
	}
	clear(wr.queue)
	wr.queue = wr.queue[:0]
	var err error
	if !wr.failed {
		_, err = wr.w.Write(out)
	}
	for i, d := range wr.dones {
		d()
		wr.dones[i] = nil
	}
	wr.dones = wr.dones[:0]
	if err != nil && !wr.failed {
		wr.failed = true
		// Not Exit at once: after Exit the supervisor drops the messages
		// still queued, unseen, and their Done would never be called. The
		// marker queues behind them, so they are dropped here, with Done.
		c.Send(c.PID(), writeFailed{writeExitReason(err)})
	}
}

// writeExitReason classifies a write error: a client that went away ends the
// session quietly; anything else is a failure the supervisor should see.
func writeExitReason(err error) error {
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
		return supervisor.Shutdown(ErrClientGone)
	}
	return err
}
