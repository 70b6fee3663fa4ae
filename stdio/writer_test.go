package stdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/mcprt/mcprt/stdio/wire"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/supervisor"
)

func TestMain(m *testing.M) {
	// hollywood logs through the default logger; keep test output readable.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

const hang = 10 * time.Second // only turns a hang into a failure

func newEngine(t *testing.T) *actor.Engine {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// message returns the deterministic JSON message number i of sender g:
// mostly small, one in 100 up to 8 KiB, one in 1000 up to 1 MiB.
func message(g, i int) []byte {
	r := rand.New(rand.NewPCG(uint64(g), uint64(i)))
	n := r.IntN(200)
	switch {
	case i%1000 == 999:
		n = r.IntN(1 << 20)
	case i%100 == 42:
		n = r.IntN(8 << 10)
	}
	off := r.IntN(26)
	b := fmt.Appendf(make([]byte, 0, n+40), `{"g":%d,"i":%d,"pad":"`, g, i)
	b = append(b, alphabet[off:off+n]...)
	b = append(b, `"}`...)
	return b[:len(b):len(b)] // no spare capacity: the writer must copy or grow
}

var alphabet = bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyz"), 1<<20/26+2)

// messageID reads g and i back from the start of a line made by message.
func messageID(line []byte) (g, i int, err error) {
	_, err = fmt.Sscanf(string(line[:min(len(line), 40)]), `{"g":%d,"i":%d,`, &g, &i)
	return g, i, err
}

// TestWriterConcurrentSenders: 64 goroutines × 1,000 messages of mixed
// sizes through one writer into a pipe, one in ten with its middle as
// Text. Every line is exactly one message, whole and in its sender's
// order, and every Done is called.
func TestWriterConcurrentSenders(t *testing.T) {
	const senders, perSender = 64, 1000
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	e := newEngine(t)
	pid := e.Spawn(NewWriter(pw, nil), "writer")

	var dones atomic.Int64
	readErr := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(pr, 1<<16)
		next := make([]int, senders)
		for got := 0; got < senders*perSender; got++ {
			line, err := br.ReadBytes('\n')
			if err != nil {
				readErr <- fmt.Errorf("after %d lines: %w", got, err)
				return
			}
			line = line[:len(line)-1]
			g, i, err := messageID(line)
			if err != nil {
				readErr <- fmt.Errorf("line %d does not start a message (%.60q...): %v", got, line, err)
				return
			}
			if g < 0 || g >= senders || i != next[g] {
				readErr <- fmt.Errorf("line %d: message %d/%d out of order (want i=%d)", got, g, i, next[g])
				return
			}
			next[g]++
			// Byte equality with what was sent: whole, not split, nothing
			// of another message inside (and so valid JSON).
			if !bytes.Equal(line, message(g, i)) {
				readErr <- fmt.Errorf("message %d/%d altered (%d bytes)", g, i, len(line))
				return
			}
		}
		readErr <- nil
	}()

	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for i := range perSender {
				m := wire.Out{Data: message(g, i), Done: func() { dones.Add(1) }}
				if i%10 == 9 {
					m = withText(m) // the pad as Text, as a large tool result goes
				}
				e.Send(pid, m)
			}
		})
	}
	wg.Wait()
	select {
	case err := <-readErr:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hang):
		t.Fatal("reader did not get every message")
	}
	<-e.Poison(pid).Done()
	if n := dones.Load(); n != senders*perSender {
		t.Fatalf("%d Done callbacks, want %d", n, senders*perSender)
	}
	pw.Close()
}

// withText moves m's pad into Text, the message's end into Tail.
func withText(m wire.Out) wire.Out {
	pad := bytes.Index(m.Data, []byte(`"pad":"`)) + len(`"pad":"`)
	end := len(m.Data) - len(`"}`)
	if end == pad {
		return m // no pad: nothing to send as Text
	}
	m.Data, m.Text, m.Tail = m.Data[:pad], string(m.Data[pad:end]), m.Data[end:]
	return m
}

// recordingWriter keeps each Write call separately.
type recordingWriter struct {
	mu     sync.Mutex
	writes [][]byte
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.writes = append(r.writes, bytes.Clone(p))
	r.mu.Unlock()
	return len(p), nil
}

// TestWriterWholeMessagesPerWrite: every Write call carries whole
// messages, each followed by '\n'; *wire.Out works like wire.Out; messages queued
// before a stop are written.
func TestWriterWholeMessagesPerWrite(t *testing.T) {
	rec := &recordingWriter{}
	e := newEngine(t)
	pid := e.Spawn(NewWriter(rec, nil), "writer")
	var want []string
	for i := range 500 {
		m := fmt.Sprintf(`{"n":%d}`, i)
		want = append(want, m)
		if i%2 == 0 {
			e.Send(pid, wire.Out{Data: []byte(m)})
		} else {
			e.Send(pid, &wire.Out{Data: []byte(m)})
		}
	}
	<-e.Poison(pid).Done()
	var got []string
	for _, w := range rec.writes {
		if len(w) == 0 || w[len(w)-1] != '\n' {
			t.Fatalf("a Write call does not end a line: %q", w)
		}
		for _, l := range bytes.SplitAfter(w, []byte("\n")) {
			if len(l) > 0 {
				got = append(got, string(l[:len(l)-1]))
			}
		}
	}
	if !slicesEqual(got, want) {
		t.Fatalf("written %d messages, want %d in order", len(got), len(want))
	}
	t.Logf("500 messages in %d Write calls", len(rec.writes))
}

// startWriterTree runs a writer as the only, significant child of a root
// supervisor, as the runtime does, and reports its exit reasons.
func startWriterTree(t *testing.T, w io.Writer, restart supervisor.Restart) (*actor.Engine, *supervisor.Root, *actor.PID, chan error) {
	t.Helper()
	e := newEngine(t)
	exits := make(chan error, 4)
	root, err := supervisor.Start(e, "tree", supervisor.Spec{
		Logger: slog.New(slog.DiscardHandler),
		Children: []supervisor.ChildSpec{
			{ID: "writer", Start: NewWriter(w, nil), Restart: restart, Significant: true, Shutdown: time.Second},
		},
		EventHook: func(ev supervisor.Event) {
			if x, ok := ev.(supervisor.EventChildExited); ok && x.Child == "writer" {
				exits <- x.Reason
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, root, supervisor.ChildPID(root.PID(), "writer"), exits
}

func waitRoot(t *testing.T, root *supervisor.Root) {
	t.Helper()
	select {
	case <-root.Done():
	case <-time.After(hang):
		t.Fatal("tree did not end")
	}
}

// TestWriterEPIPE: when the client closed its end, the writer exits with a
// shutdown reason that names ErrClientGone, so the tree ends quietly.
func TestWriterEPIPE(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	pr.Close()
	e, root, pid, exits := startWriterTree(t, pw, supervisor.Transient)
	var dones atomic.Int64
	e.Send(pid, wire.Out{Data: []byte(`{}`), Done: func() { dones.Add(1) }})
	waitRoot(t, root)
	reason := <-exits
	if !errors.Is(reason, supervisor.ErrShutdown) || !errors.Is(reason, ErrClientGone) {
		t.Fatalf("exit reason %v: want a shutdown caused by ErrClientGone", reason)
	}
	if !errors.Is(reason, syscall.EPIPE) && !errors.Is(root.Err(), ErrClientGone) {
		t.Errorf("root reason %v", root.Err())
	}
	if supervisor.IsAbnormal(root.Err()) {
		t.Errorf("root exit %v is abnormal; a gone client is a normal end", root.Err())
	}
	if dones.Load() != 1 {
		t.Errorf("Done called %d times, want 1", dones.Load())
	}
}

// TestWriterClosedPipeReasons: io.ErrClosedPipe and os.ErrClosed also mean
// the client is gone; any other write error is a failure.
func TestWriterClosedPipeReasons(t *testing.T) {
	for _, tc := range []struct {
		err  error
		gone bool
	}{
		{io.ErrClosedPipe, true},
		{os.ErrClosed, true},
		{&os.PathError{Op: "write", Path: "x", Err: syscall.EPIPE}, true},
		{&os.PathError{Op: "write", Path: "x", Err: syscall.EIO}, false},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			e, root, pid, exits := startWriterTree(t, failWriter{tc.err}, supervisor.Temporary)
			e.Send(pid, wire.Out{Data: []byte(`{}`)})
			waitRoot(t, root)
			reason := <-exits
			if tc.gone {
				if !errors.Is(reason, supervisor.ErrShutdown) || !errors.Is(reason, ErrClientGone) {
					t.Fatalf("reason %v: want Shutdown(ErrClientGone)", reason)
				}
			} else if !errors.Is(reason, tc.err) || !supervisor.IsAbnormal(reason) {
				t.Fatalf("reason %v: want the abnormal write error %v", reason, tc.err)
			}
		})
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// gateWriter's first Write blocks until released and then fails with EPIPE.
type gateWriter struct {
	entered chan struct{}
	release chan struct{}
	calls   atomic.Int64
}

func (g *gateWriter) Write(p []byte) (int, error) {
	if g.calls.Add(1) == 1 {
		close(g.entered)
		<-g.release
	}
	return 0, &os.PathError{Op: "write", Path: "pipe", Err: syscall.EPIPE}
}

// TestWriterDoneAfterFailure: messages that reach the writer after a
// failed write are dropped, but their Done is still called: producers learn
// their bytes will never leave, and (in the runtime) the input credits they
// hold come back.
func TestWriterDoneAfterFailure(t *testing.T) {
	gw := &gateWriter{entered: make(chan struct{}), release: make(chan struct{})}
	e, root, pid, exits := startWriterTree(t, gw, supervisor.Transient)
	var dones atomic.Int64
	done := func() { dones.Add(1) }
	e.Send(pid, wire.Out{Data: []byte(`{"first":true}`), Done: done})
	select {
	case <-gw.entered:
	case <-time.After(hang):
		t.Fatal("the writer never wrote")
	}
	// These queue in the writer's inbox while its first write hangs.
	const later = 50
	for i := range later {
		m := wire.Out{Data: fmt.Appendf(nil, `{"n":%d,"pad":"x"}`, i), Done: done}
		if i%2 == 1 {
			m = withText(m) // nor a message with Text
		}
		e.Send(pid, m)
	}
	close(gw.release)
	waitRoot(t, root)
	if reason := <-exits; !errors.Is(reason, ErrClientGone) {
		t.Fatalf("exit reason %v, want ErrClientGone", reason)
	}
	if n := gw.calls.Load(); n != 1 {
		t.Errorf("%d Write calls, want 1: nothing is written after a failure", n)
	}
	if n := dones.Load(); n != later+1 {
		t.Fatalf("Done called %d times, want %d (every message the writer received)", n, later+1)
	}
}

// TestWriterStopFlushes: a writer stopped by its supervisor writes what it
// has received before it exits.
func TestWriterStopFlushes(t *testing.T) {
	rec := &recordingWriter{}
	e, root, pid, _ := startWriterTree(t, rec, supervisor.Transient)
	for i := range 100 {
		e.Send(pid, wire.Out{Data: fmt.Appendf(nil, `{"n":%d}`, i)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	if err := root.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range rec.writes {
		n += bytes.Count(w, []byte("\n"))
	}
	if n != 100 {
		t.Fatalf("%d messages written, want 100", n)
	}
}
