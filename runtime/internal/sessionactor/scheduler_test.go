package sessionactor

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers"
	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/stdio/wire"
	"github.com/mcprt/mcprt/supervisor"
)

// The scheduler alone, without the protocol half: a loop on its own
// goroutine stands in for the Session, takes the scheduler's messages as
// the Session does, and runs the test's steps (do) there. fakeHost is the
// whole of what the scheduler needs back.

var schedQuiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type fakeHost struct {
	mu      sync.Mutex
	crashes []string // the methods of the calls whose handlers panicked
}

func (h *fakeHost) crashed(cl *call) {
	h.mu.Lock()
	h.crashes = append(h.crashes, cl.method)
	h.mu.Unlock()
}

func (h *fakeHost) checkDrain() bool { return false }

func (h *fakeHost) crashed1() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.crashes...)
}

// do is a step run on the loop's goroutine, where the scheduler lives.
type do func(sc *scheduler)

type schedLoop struct {
	host *fakeHost
	cfg  Config
	sc   *scheduler
}

func (l *schedLoop) Receive(lc *supervisor.LoopContext, msg any) {
	switch m := msg.(type) {
	case actor.Started:
		lc.Inbox().WakeOnPost(false)
		e := &env{engine: lc.Engine(), inbox: lc.Inbox(), backlog: wire.NewBacklog(1 << 30), logger: schedQuiet, load: l.cfg.Overload,
			deliver: func(m wire.Out) {
				if m.Done != nil {
					m.Done()
				}
			}}
		e.slots.max = int32(l.cfg.MaxInFlight)
		e.waits.max = int32(l.cfg.MaxWaiting)
		e.written = e.backlog.Done
		l.sc = newScheduler(l.host, e, &l.cfg)
	case do:
		m(l.sc)
	case workerIdle:
		l.sc.workerIdle(m.w)
	case workerCrashed:
		l.sc.workerCrashed(m.w, m.value)
	case WorkersLost:
		l.sc.workersLost()
	case retryWorkers:
		l.sc.retryWorkers()
	case slotFreed:
		l.sc.slotFreed()
	case deferredDone:
		l.sc.forget(m.cl)
	case fallback:
		l.sc.fallback(m.cl)
	case deadlineTick:
		m.dl.expire()
	case actor.Stopped:
		l.sc.stop(errShuttingDown)
	}
}

func (l *schedLoop) EndBatch(lc *supervisor.LoopContext) { l.sc.endBatch(lc.Inbox(), false) }

type schedHarness struct {
	t     *testing.T
	inbox *supervisor.Inbox
	host  *fakeHost
	n     int
}

var schedRoots atomic.Int32

func startScheduler(t *testing.T, cfg Config) *schedHarness {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	name := "sched-" + strconv.Itoa(int(schedRoots.Add(1)))
	h := &schedHarness{t: t, inbox: supervisor.NewInbox(), host: &fakeHost{}}
	cfg.Handlers = supervisor.ChildPID(supervisor.RootPID(e, name), "handlers")
	cfg.Logger = schedQuiet
	cfg.Runners = supervisor.NewRunners()
	if cfg.MaxWaiting == 0 {
		cfg.MaxWaiting = defaultMaxWaiting
	}
	root, err := supervisor.Start(e, name, supervisor.Spec{
		Name: name, Strategy: supervisor.OneForOne, Logger: schedQuiet,
		Children: []supervisor.ChildSpec{
			{ID: "runners", Start: cfg.Runners.Actor(), Restart: supervisor.Permanent, Shutdown: 2 * time.Second},
			{ID: "handlers", Start: supervisor.New(supervisor.Spec{Name: name + "/handlers", Strategy: supervisor.OneForOne, Logger: schedQuiet}),
				Restart: supervisor.Permanent, Shutdown: 2 * time.Second},
			{ID: "loop", Start: supervisor.OwnGoroutine(h.inbox, func() supervisor.Loop { return &schedLoop{host: h.host, cfg: cfg} }),
				Restart: supervisor.Transient, Significant: true, Shutdown: 2 * time.Second},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = root.Stop(context.Background()) })
	return h
}

// answer is what a call's Replier took.
type answer struct {
	data string
	o    Outcome
}

type oneReply chan answer

func (r oneReply) Notify(m wire.Out) {
	if m.Done != nil {
		m.Done()
	}
}

func (r oneReply) Respond(m wire.Out, o Outcome) {
	r <- answer{string(m.Bytes()), o}
	if m.Done != nil {
		m.Done()
	}
}

func (r oneReply) wait(t *testing.T) answer {
	t.Helper()
	select {
	case a := <-r:
		return a
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		return answer{}
	}
}

func (r oneReply) none(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case a := <-r:
		t.Fatalf("unexpected answer %+v", a)
	case <-time.After(within):
	}
}

// submit hands the scheduler a call of method, as Session.dispatch does,
// and returns where its answer goes.
func (h *schedHarness) submit(method string, waits bool, params string, run handlers.MethodFunc) oneReply {
	h.n++
	key := strconv.Itoa(h.n)
	r := make(oneReply, 1)
	h.inbox.Send(do(func(sc *scheduler) {
		t := ticket{env: sc.env, in: &In{Key: key, Reply: r}}
		id := json.RawMessage(key)
		park, busy := sc.admit(&t, waits)
		if busy != nil {
			t.answerError(id, busy)
			return
		}
		cl := &call{key: key, id: id, env: sc.env, ticket: t, method: method, run: run}
		cl.cx.in = t.in
		cl.req = handlers.Request{Method: method, Params: json.RawMessage(params)}
		sc.enter(cl, park)
	}))
	return r
}

// on runs fn on the scheduler's goroutine and waits for it.
func (h *schedHarness) on(fn func(sc *scheduler)) {
	done := make(chan struct{})
	h.inbox.Send(do(func(sc *scheduler) { fn(sc); close(done) }))
	<-done
}

func blockUntil(release <-chan struct{}, started chan<- string, name string) handlers.MethodFunc {
	return func(ctx context.Context, _ *handlers.Request) (any, error) {
		if started != nil {
			started <- name
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return map[string]string{"who": name}, nil
	}
}

// Past MaxInFlight a call waits for a slot, in arrival order; past
// MaxQueued it is refused at once with CodeServerBusy (503 over HTTP).
func TestSchedulerParksPastSlots(t *testing.T) {
	overload := &session.Overload{}
	h := startScheduler(t, Config{Options: session.Options{MaxInFlight: 1, MaxQueued: 1, Overload: overload}})
	release, started := make(chan struct{}), make(chan string, 3)
	a := h.submit("x/a", false, "", blockUntil(release, started, "a"))
	if got := <-started; got != "a" {
		t.Fatalf("started %s, want a", got)
	}
	b := h.submit("x/b", false, "", blockUntil(release, started, "b"))
	c := h.submit("x/c", false, "", blockUntil(release, started, "c"))
	if got := c.wait(t); got.o.Code != jsonrpc.CodeServerBusy || got.o.Status != 503 {
		t.Fatalf("third call: %+v, want busy, 503", got)
	}
	if n := overload.Refused.Load(); n != 1 {
		t.Errorf("Overload.Refused = %d, want 1", n)
	}
	h.on(func(sc *scheduler) {
		if len(sc.parked) != 1 || sc.env.slots.busy.Load() != 1 {
			t.Errorf("parked %d, slots busy %d; want 1 and 1", len(sc.parked), sc.env.slots.busy.Load())
		}
	})
	if q, f := overload.Queued.Load(), overload.InFlight.Load(); q != 1 || f != 1 {
		t.Errorf("Overload: queued %d, in flight %d; want 1 and 1", q, f)
	}
	b.none(t, 20*time.Millisecond)
	close(release)
	if got := a.wait(t); !strings.Contains(got.data, `"who":"a"`) {
		t.Fatalf("a: %+v", got)
	}
	if got := b.wait(t); !strings.Contains(got.data, `"who":"b"`) || got.o.Code != 0 {
		t.Fatalf("b: %+v", got)
	}
	// Every slot is given back as its answer goes out: nothing in flight
	// (polled: the answer may reach us just before its slot is back).
	for deadline := time.Now().Add(5 * time.Second); overload.InFlight.Load() != 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if q, f := overload.Queued.Load(), overload.InFlight.Load(); q != 0 || f != 0 {
		t.Errorf("Overload after the answers: queued %d, in flight %d; want 0 and 0", q, f)
	}
}

// A parked call the client cancels never runs, and the slot goes to the
// next in line.
func TestSchedulerCancelParked(t *testing.T) {
	h := startScheduler(t, Config{Options: session.Options{MaxInFlight: 1, MaxQueued: 4}})
	release, started := make(chan struct{}), make(chan string, 3)
	a := h.submit("x/a", false, "", blockUntil(release, started, "a"))
	<-started
	b := h.submit("x/b", false, "", blockUntil(release, started, "b"))
	c := h.submit("x/c", false, "", blockUntil(release, started, "c"))
	h.on(func(sc *scheduler) {
		if !sc.cancel("2") {
			t.Error("cancel of the parked call found nothing to settle")
		}
	})
	close(release)
	a.wait(t)
	if got := c.wait(t); !strings.Contains(got.data, `"who":"c"`) {
		t.Fatalf("c: %+v", got)
	}
	b.none(t, 20*time.Millisecond)
	if s := <-started; s != "c" {
		t.Fatalf("%s ran after a; want c (b was cancelled)", s)
	}
	select {
	case s := <-started:
		t.Fatalf("%s ran; the cancelled call must not", s)
	default:
	}
}

// Requests of a method that waits long (tasks/result) take places of
// their own (MaxWaiting), not the slots plain calls need.
func TestSchedulerWaitingPool(t *testing.T) {
	h := startScheduler(t, Config{Options: session.Options{MaxInFlight: 1, MaxQueued: 4}, MaxWaiting: 1})
	release, started := make(chan struct{}), make(chan string, 3)
	w := h.submit("tasks/result", true, "", blockUntil(release, started, "w"))
	<-started
	quick := h.submit("x/quick", false, "", func(context.Context, *handlers.Request) (any, error) { return map[string]int{}, nil })
	if got := quick.wait(t); got.o.Code != 0 {
		t.Fatalf("a plain call behind a waiting one: %+v", got)
	}
	// Past MaxWaiting, a waiting request takes a slot as any other.
	w2 := h.submit("tasks/result", true, "", blockUntil(release, started, "w2"))
	<-started
	h.on(func(sc *scheduler) {
		if sc.env.waits.busy.Load() != 1 || sc.env.slots.busy.Load() != 1 {
			t.Errorf("waits %d, slots %d; want 1 and 1", sc.env.waits.busy.Load(), sc.env.slots.busy.Load())
		}
	})
	close(release)
	w.wait(t)
	w2.wait(t)
}

// A handler's panic is answered at once: a tool's as a tool error (the
// model can read it), any other method's as errHandlerPanic. The host
// counts it against the tool, and the next call gets a fresh worker.
func TestSchedulerCrashAnswers(t *testing.T) {
	h := startScheduler(t, Config{Options: session.Options{MaxInFlight: 4, MaxQueued: 4}})
	boom := func(context.Context, *handlers.Request) (any, error) { panic("boom") }
	tool := h.submit("tools/call", false, `{"name":"bomb"}`, boom)
	if got := tool.wait(t); got.o.Code != 0 || !strings.Contains(got.data, `"isError":true`) || !strings.Contains(got.data, `Tool \"bomb\" failed`) {
		t.Fatalf("tool panic: %+v", got)
	}
	other := h.submit("x/other", false, "", boom)
	if got := other.wait(t); got.o.Code != errHandlerPanic.Code || strings.Contains(got.data, "boom") {
		t.Fatalf("method panic: %+v", got)
	}
	if got := h.host.crashed1(); len(got) != 2 || got[0] != "tools/call" || got[1] != "x/other" {
		t.Fatalf("host told of crashes %q", got)
	}
	ok := h.submit("x/ok", false, "", func(context.Context, *handlers.Request) (any, error) { return map[string]int{"n": 1}, nil })
	if got := ok.wait(t); got.o.Code != 0 {
		t.Fatalf("after the crashes: %+v", got)
	}
}

// When the handler supervisor is lost, the calls its actors ran are
// answered at once, and the next call runs on a worker of the new
// generation.
func TestSchedulerWorkersLost(t *testing.T) {
	h := startScheduler(t, Config{Options: session.Options{MaxInFlight: 4, MaxQueued: 4}})
	release, started := make(chan struct{}), make(chan string, 1)
	defer close(release)
	stuck := h.submit("x/stuck", false, "", blockUntil(release, started, "stuck"))
	<-started
	h.inbox.Send(WorkersLost{})
	if got := stuck.wait(t); got.o.Code != jsonrpc.CodeInternalError || !strings.Contains(got.data, "handler was stopped") {
		t.Fatalf("the lost call: %+v", got)
	}
	next := h.submit("x/next", false, "", func(context.Context, *handlers.Request) (any, error) { return map[string]int{}, nil })
	if got := next.wait(t); got.o.Code != 0 {
		t.Fatalf("after the loss: %+v", got)
	}
	h.on(func(sc *scheduler) {
		if sc.gen != 1 {
			t.Errorf("gen %d, want 1", sc.gen)
		}
		for w := range sc.workers {
			if w.gen != sc.gen {
				t.Errorf("a worker of generation %d is still in the pool", w.gen)
			}
		}
	})
}
