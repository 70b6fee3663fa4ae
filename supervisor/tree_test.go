package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"
)

func TestNestedShutdownOrder(t *testing.T) {
	h := newHarness(t)
	inner := ChildSpec{ID: "inner", Start: New(h.spec(Spec{Children: []ChildSpec{
		workerSpec("x", h.rec, Permanent), workerSpec("y", h.rec, Permanent),
	}}))}
	root := h.start("n", Spec{Children: []ChildSpec{workerSpec("a", h.rec, Permanent), inner, workerSpec("c", h.rec, Permanent)}})
	if got := ChildPID(ChildPID(root.PID(), "inner"), "x").ID; got != "/n/inner/x" {
		t.Fatalf("grandchild PID ID = %q", got)
	}
	if h.e.Registry.GetPID("/n/inner", "x") == nil {
		t.Fatal("grandchild not running after Start returned")
	}
	if err := stopRoot(t, root); err != nil {
		t.Fatal(err)
	}
	h.assertLog("start:a", "start:x", "start:y", "start:c", "stop:c", "stop:y", "stop:x", "stop:a")
}

// TestExternalPoison: a root poisoned behind the supervisor's back still
// stops its children in reverse order before Done.
func TestExternalPoison(t *testing.T) {
	h := newHarness(t)
	root := h.start("p", Spec{Children: []ChildSpec{workerSpec("a", h.rec, Permanent), workerSpec("b", h.rec, Permanent)}})
	<-h.e.Poison(root.PID()).Done()
	h.waitDone(root)
	if !errors.Is(root.Err(), ErrShutdown) {
		t.Fatalf("Err = %v", root.Err())
	}
	h.assertLog("start:a", "start:b", "stop:b", "stop:a")
	if _, err := StartChild(h.e, root.PID(), workerSpec("x", h.rec, Temporary)); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("StartChild: %v", err)
	}
}

// TestPanicStorm runs 10,000 panics in a child process: if any reached
// hollywood's restart path, hollywood would kill that process (nil cancel
// at MaxRestarts), which must not take the test binary down with it.
func TestPanicStorm(t *testing.T) {
	if os.Getenv("SUPERVISOR_PANIC_STORM") == "1" {
		panicStorm(t)
		return
	}
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPanicStorm$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "SUPERVISOR_PANIC_STORM=1")
	out, err := cmd.CombinedOutput()
	if err != nil || cmd.ProcessState.ExitCode() != 0 {
		if len(out) > 4000 {
			out = out[len(out)-4000:]
		}
		t.Fatalf("storm process: %v\n%s", err, out)
	}
}

func panicStorm(t *testing.T) {
	const total = 10000
	h := newHarness(t)
	var starts, exits atomic.Int64
	done := make(chan struct{})
	count := func(ev Event) {
		if e, ok := ev.(EventChildExited); ok && IsAbnormal(e.Reason) {
			if exits.Add(1) == total {
				close(done)
			}
		}
	}
	// Every start below the total fails, half in Started and half in the
	// first message, with assorted panic values.
	stormy := func(id string) ChildSpec {
		return ChildSpec{ID: id, Options: []actor.OptFunc{actor.WithInboxSize(8)}, Start: func() actor.Receiver {
			return &worker{name: id, rec: &recorder{}, onStartedHook: func(c *actor.Context) {
				n := starts.Add(1)
				if n > total {
					return
				}
				switch n % 4 {
				case 0:
					panic(fmt.Sprintf("storm %d", n))
				case 1:
					panic(&PanicError{Value: n})
				case 2:
					c.Send(c.PID(), cmdPanic{errBoom})
				case 3:
					c.Send(c.PID(), cmdExit{errBoom})
				}
			}}
		}}
	}
	var flat, grouped []ChildSpec
	for i := range 40 {
		flat = append(flat, stormy(fmt.Sprintf("w%d", i)))
	}
	for i := range 10 {
		grouped = append(grouped, stormy(fmt.Sprintf("g%d", i)))
	}
	inner := Spec{Strategy: OneForAll, Intensity: 1 << 30, Period: time.Second, Children: grouped, EventHook: count, Logger: discard}
	flat = append(flat, ChildSpec{ID: "group", Start: New(inner), Shutdown: 10 * time.Second})
	root, err := Start(h.e, "storm", Spec{Strategy: OneForOne, Intensity: 1 << 30, Period: time.Second,
		Children: flat, EventHook: count, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("only %d of %d failures seen", exits.Load(), total)
	}
	if err := stopRoot(t, root); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d starts, %d abnormal exits", starts.Load(), exits.Load())
}

// TestNoGoroutineLeak starts and stops a small tree (with a restart in it)
// 100 times; the goroutine count must come back to where it was.
func TestNoGoroutineLeak(t *testing.T) {
	h := newHarness(t)
	spec := func() Spec {
		inner := ChildSpec{ID: "inner", Start: New(Spec{Logger: discard, Strategy: OneForAll, Children: []ChildSpec{
			workerSpec("x", h.rec, Permanent), workerSpec("y", h.rec, Transient),
		}})}
		return Spec{Logger: discard, Children: []ChildSpec{workerSpec("a", h.rec, Permanent), inner, workerSpec("c", h.rec, Temporary)}}
	}
	settle := func() int {
		n := runtime.NumGoroutine()
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if n = runtime.NumGoroutine(); n <= baselineGoroutines {
				break
			}
		}
		return n
	}
	baselineGoroutines = runtime.NumGoroutine()
	for i := range 100 {
		root, err := Start(h.e, "leak", spec())
		if err != nil {
			t.Fatal(i, err)
		}
		h.e.Send(ChildPID(ChildPID(root.PID(), "inner"), "y"), cmdPanic{i})
		if err := stopRoot(t, root); err != nil {
			t.Fatal(err)
		}
	}
	// hollywood's eventstream may be mid-batch; allow it one goroutine.
	if n := settle(); n > baselineGoroutines+1 {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines: %d, baseline %d\n%s", n, baselineGoroutines, buf[:runtime.Stack(buf, true)])
	}
}

var baselineGoroutines int

// TestAbandonedChildBlocksRestart: a stuck child abandoned during a
// OneForAll restart still holds its ID, so restarting it fails, counts
// against the intensity and finally makes the supervisor give up.
func TestAbandonedChildBlocksRestart(t *testing.T) {
	h := newHarness(t)
	b := workerSpec("b", h.rec, Permanent)
	b.Shutdown = 20 * time.Millisecond
	root := h.start("ab", Spec{Strategy: OneForAll, Intensity: 2, Children: []ChildSpec{
		workerSpec("a", h.rec, Permanent), b, workerSpec("c", h.rec, Permanent),
	}})
	release := make(chan struct{})
	defer close(release)
	h.e.Send(ChildPID(root.PID(), "b"), cmdBlock{release})
	h.e.Send(ChildPID(root.PID(), "a"), cmdPanic{"a down"})
	h.waitFor("b abandoned", func(ev Event) bool { e, ok := ev.(EventStopTimeout); return ok && e.Child == "b" })
	h.waitFor("b restart refused", func(ev Event) bool {
		e, ok := ev.(EventChildExited)
		return ok && e.Child == "b" && errors.Is(e.Reason, errIDInUse)
	})
	h.waitDone(root)
	var g *GaveUpError
	if !errors.As(root.Err(), &g) || !errors.Is(g, errIDInUse) {
		t.Fatalf("Err = %v", root.Err())
	}
}

type captureHandler struct {
	mu      *sync.Mutex
	records *[]slog.Record
}

func (c captureHandler) Enabled(context.Context, slog.Level) bool { return true }
func (c captureHandler) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	*c.records = append(*c.records, r.Clone())
	c.mu.Unlock()
	return nil
}
func (c captureHandler) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c captureHandler) WithGroup(string) slog.Handler      { return c }

func TestLogging(t *testing.T) {
	h := newHarness(t)
	var mu sync.Mutex
	var records []slog.Record
	s := h.spec(Spec{Children: []ChildSpec{workerSpec("w", h.rec, Permanent)}})
	s.Logger = slog.New(captureHandler{&mu, &records})
	root, err := Start(h.e, "log", s)
	if err != nil {
		t.Fatal(err)
	}
	h.e.Send(ChildPID(root.PID(), "w"), cmdPanic{"logged"})
	h.waitFor("restart", isStarted("w"))
	h.waitFor("restart", isStarted("w"))
	if err := stopRoot(t, root); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, r := range records {
		line := r.Level.String() + " " + r.Message
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "stack" && strings.Contains(a.Value.String(), "worker") {
				line += " +stack"
			}
			return true
		})
		got = append(got, line)
	}
	want := []string{"DEBUG child started", "ERROR child exited +stack", "INFO child restarting", "DEBUG child started", "DEBUG child exited"}
	if !slices.Equal(got, want) {
		t.Fatalf("log records\n got: %v\nwant: %v", got, want)
	}
}
