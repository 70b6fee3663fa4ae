package stdio

import (
	"errors"
	"io"
	"os"
	goruntime "runtime"
	"syscall"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/stdio/wire"
	"github.com/mcprt/mcprt/supervisor"
)

// ErrClientGone is the cause of the writer's exit when the client closed its
// end of the stream (EPIPE). The writer exits with supervisor.Shutdown of it:
// a quiet, normal end of the session, not a failure.
var ErrClientGone = errors.New("stdio: client closed the output stream")

// maxKeep bounds the coalescing buffer the writer keeps between flushes, so
// one burst of large messages does not pin memory for the process's life.
const maxKeep = 1 << 20

// writer is the actor that owns the protocol output stream. It runs on a
// goroutine of its own (supervisor.OwnGoroutine): every response of every
// request passes through it, and hollywood would start a goroutine for each
// message that finds it idle.
type writer struct {
	w      io.Writer
	queue  [][]byte
	dones  []func()
	buf    []byte
	failed bool
}

// NewWriter returns a Producer for the writer actor over w, fed by in
// (wire.Out messages sent to in directly, or to the actor's PID). A nil in gets
// an inbox of its own, reachable through the PID only. Each message is
// written with a single w.Write call (with consecutive ones, for a message
// with Text), so w must not split a Write (os.File and pipes do not).
func NewWriter(w io.Writer, in *supervisor.Inbox) actor.Producer {
	if in == nil {
		in = supervisor.NewInbox()
	}
	return supervisor.OwnGoroutine(in, func() supervisor.Loop { return &writer{w: w} })
}

// Receive implements supervisor.Loop.
func (wr *writer) Receive(lc *supervisor.LoopContext, msg any) {
	switch m := msg.(type) {
	case wire.Out:
		wr.enqueue(lc, m)
	case *wire.Out:
		wr.enqueue(lc, *m)
	case actor.Stopped:
		// What was sent before the stop is the last batch; after a failed
		// write it is only dropped, with each Done called.
		for _, m := range lc.Pending() {
			wr.Receive(lc, m)
		}
		wr.flush(lc)
	}
}

// EndBatch implements supervisor.BatchEnder: everything that arrived
// together goes out in one write. Before writing, the writer lets the
// goroutines that are ready to run go first, once, and takes what they
// sent meanwhile: under load those are handlers finishing their answers,
// and one write(2) for many of them costs a fraction of one each. With
// nothing else to run, the yield returns at once.
func (wr *writer) EndBatch(lc *supervisor.LoopContext) {
	goruntime.Gosched()
	for _, m := range lc.Pending() {
		wr.Receive(lc, m)
	}
	wr.flush(lc)
}

func (wr *writer) enqueue(lc *supervisor.LoopContext, m wire.Out) {
	if m.Text != "" && !wr.failed {
		wr.flush(lc) // what came before goes first
	}
	if wr.failed {
		if m.Done != nil {
			m.Done()
		}
		return
	}
	if m.Text != "" {
		wr.writeParts(lc, m)
		return
	}
	wr.queue = append(wr.queue, m.Data)
	if m.Done != nil {
		wr.dones = append(wr.dones, m.Done)
	}
}

func (wr *writer) flush(lc *supervisor.LoopContext) {
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
	_, err := wr.w.Write(out)
	for i, d := range wr.dones {
		d()
		wr.dones[i] = nil
	}
	wr.dones = wr.dones[:0]
	if err != nil {
		// Messages still coming are dropped, with their Done called, until
		// the stop: Done is how producers get their credits back.
		wr.failed = true
		lc.Exit(writeExitReason(err))
	}
}

// writeParts writes a message that has Text: the writer is the stream's
// only writer, so nothing can come between its parts.
func (wr *writer) writeParts(lc *supervisor.LoopContext, m wire.Out) {
	_, err := wr.w.Write(m.Data)
	if err == nil {
		_, err = io.WriteString(wr.w, m.Text) // os.File writes a string without a copy
	}
	if err == nil {
		_, err = wr.w.Write(append(m.Tail, '\n'))
	}
	if m.Done != nil {
		m.Done()
	}
	if err != nil {
		wr.failed = true
		lc.Exit(writeExitReason(err))
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
