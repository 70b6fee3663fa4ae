package supervisor

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
)

func TestMain(m *testing.M) {
	// hollywood logs through the global default logger; keep test output
	// readable.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

// hangTimeout only exists to turn a hang into a failure; nothing waits for
// it in a passing run.
const hangTimeout = 5 * time.Second

var discard = slog.New(slog.DiscardHandler)

// recorder keeps the order in which workers started and stopped, across
// goroutines.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

// Commands for the scriptable worker.
type (
	cmdExit  struct{ reason error }
	cmdPanic struct{ v any }
	cmdBlock struct{ release chan struct{} }
)

// worker is the one fake child: it records its lifecycle and does what it
// is told.
type worker struct {
	name          string
	rec           *recorder
	panicInStart  func() bool // nil: never
	onStartedHook func(c *actor.Context)
}

func (w *worker) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		w.rec.add("start:" + w.name)
		if w.onStartedHook != nil {
			w.onStartedHook(c)
		}
		if w.panicInStart != nil && w.panicInStart() {
			panic("boom in Started")
		}
	case actor.Stopped:
		w.rec.add("stop:" + w.name)
	case cmdExit:
		Exit(c, m.reason)
	case cmdPanic:
		panic(m.v)
	case cmdBlock:
		<-m.release
	}
}

func workerSpec(id string, rec *recorder, r Restart) ChildSpec {
	return ChildSpec{ID: id, Restart: r, Start: func() actor.Receiver { return &worker{name: id, rec: rec} }}
}

// harness collects events from the EventHook so tests can wait on them
// instead of sleeping.
type harness struct {
	t      *testing.T
	e      *actor.Engine
	rec    *recorder
	events chan Event
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, e: e, rec: &recorder{}, events: make(chan Event, 10000)}
}

func (h *harness) hook(ev Event) { h.events <- ev }

func (h *harness) spec(s Spec) Spec {
	s.EventHook = h.hook
	s.Logger = discard
	return s
}

func (h *harness) start(name string, s Spec) *Root {
	h.t.Helper()
	r, err := Start(h.e, name, h.spec(s))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
		defer cancel()
		_ = r.Stop(ctx)
	})
	return r
}

// waitFor consumes events until one matches.
func (h *harness) waitFor(what string, pred func(Event) bool) Event {
	h.t.Helper()
	deadline := time.After(hangTimeout)
	for {
		select {
		case ev := <-h.events:
			if pred(ev) {
				return ev
			}
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; log so far: %v", what, h.rec.get())
			return nil
		}
	}
}

func isStarted(child string) func(Event) bool {
	return func(ev Event) bool { e, ok := ev.(EventChildStarted); return ok && e.Child == child }
}

func isExited(child string) func(Event) bool {
	return func(ev Event) bool { e, ok := ev.(EventChildExited); return ok && e.Child == child }
}

func (h *harness) waitDone(r *Root) {
	h.t.Helper()
	select {
	case <-r.Done():
	case <-time.After(hangTimeout):
		h.t.Fatalf("supervisor did not exit; log: %v", h.rec.get())
	}
}

// barrier returns once the supervisor has processed everything sent to it
// before: TerminateChild of an unknown ID is a round trip.
func (h *harness) barrier(sup *actor.PID) {
	h.t.Helper()
	if err := TerminateChild(h.e, sup, "no-such-child"); !errors.Is(err, ErrUnknownChild) {
		h.t.Fatalf("barrier: %v", err)
	}
}

func (h *harness) assertLog(want ...string) {
	h.t.Helper()
	if got := h.rec.get(); !slices.Equal(got, want) {
		h.t.Fatalf("log mismatch\n got: %v\nwant: %v", got, want)
	}
}

func stopRoot(t *testing.T, r *Root) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	err := r.Stop(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("Stop timed out")
	}
	return err
}

// fakeClock is the injected time source for intensity tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}
