// Package taskrun runs tasks (see handlers/tasks): each on an actor of its
// own under a tasks supervisor, apart from the session that asked for it,
// with its record in a tasks.Store. Its Manager is the tasks.Manager that
// runtime.StartTasks gives handlers.Server.ServeTasks.
package taskrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/supervisor"
)

// Defaults of Config.
const (
	defaultMaxLive         = 10000
	defaultMaxLivePerOwner = 1000
	defaultTTL             = time.Hour
	defaultMaxTTL          = 24 * time.Hour
	defaultPollInterval    = time.Second

	// defaultMaxEndedPerClient bounds the ended tasks a client keeps
	// (about 1 KiB each, in memory and in the journal, besides its
	// result): ten times its live ones.
	defaultMaxEndedPerClient = 10000
)

// Config configures a Manager.
type Config struct {
	// Store keeps the records; nil means tasks.NewMemoryStore's (nothing survives
	// the process).
	Store tasks.Store
	// Tag prefixes every task id ("tag.hex"): a replica's tag
	// (-http-session-tag), for a proxy that routes on Mcp-Name.
	Tag string
	// MaxLive bounds the tasks working or waiting for input at once, over
	// all clients; MaxLivePerOwner bounds them per client (Task.Client:
	// the caller, else the connection's address; see tasks.Requestor).
	// Past either a new task is refused. 0: the defaults; negative: no
	// bound.
	MaxLive, MaxLivePerOwner int
	// MaxEndedPerClient bounds the ended tasks (completed, failed,
	// cancelled) kept per client within their ttl: when one more ends,
	// the client's task that ended first is deleted, as if its ttl had
	// run out. New tasks are never refused for it: a client that
	// collects its results as they come never notices, and one that
	// never does cannot fill the memory or the journal. 0:
	// 10000; negative: no bound.
	MaxEndedPerClient int
	// TTL is how long a task is kept after its creation when the client
	// asks for no ttl; MaxTTL caps what a client may ask. 0: the defaults.
	TTL, MaxTTL time.Duration
	// PollInterval is suggested to clients (pollInterval, pollIntervalMs).
	PollInterval time.Duration
	// ShutdownGrace bounds how long the tasks' handlers are waited for,
	// all together, when the manager stops (their contexts are all
	// cancelled first). 0: 5 s.
	ShutdownGrace time.Duration
	// OnStatus, when set, is called after each change of a task's record
	// is stored, on the goroutine that made it: for status notifications.
	// It must not block. (Manager.OnStatus adds one later.)
	OnStatus func(tasks.Task)
	// Name is the tasks supervisor's name on the engine ("tasks").
	Name   string
	Logger *slog.Logger
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Manager owns the tasks of a server: their records (through the Store),
// the actors running them (under a supervisor of its own), their owners,
// bounds and expiry.
type Manager struct {
	cfg   Config
	store tasks.Store
	e     *actor.Engine
	root  *supervisor.Root
	log   *slog.Logger

	mu     sync.Mutex
	live   map[string]*runner // by task id
	owners map[string]int     // live tasks by client (Task.Client)
	// ended are the ended tasks kept, by client (MaxEndedPerClient).
	ended endedTasks
	// running are the runners whose work has not returned yet: the live
	// ones and those that ended (cancelled, expired) while their handler
	// still runs. Stop waits for them all at once.
	running map[*runner]struct{}
	// abandon is closed by Stop once its one bound on all the handlers
	// has passed: an actor whose handler ignores its cancellation then
	// stops at once instead of holding the supervisor for its own bound.
	abandon chan struct{}
	stopped bool
	changed *sync.Cond // broadcast on every change, for Wait

	// onStatus are the servers' listeners (OnStatus), replaced whole
	// under mu so that notify reads them without it.
	onStatus atomic.Pointer[[]*func(tasks.Task)]
	counts   counters
	// pending are the tasks of resumable tools a previous process left
	// working, until Resume runs them again (or fails them).
	pending   []tasks.Task
	resumed   bool
	stopSweep chan struct{}
	sweepDone chan struct{}
	sweeping  atomic.Bool // the sweep was started: drain waits for it

	up          bool                        // the tree runs: tasks can be started (under mu)
	deferred    func(tasks.Task) tasks.Work // Resume's, called before the tree ran (under mu)
	parent      *actor.PID                  // the supervisor the tasks' tree is under (ChildSpec)
	runs        *actor.PID                  // the supervisor of the tasks' actors
	closeOnce   sync.Once
	storeErr    error
	storeClosed chan struct{}

	// shared is the store when replicas share it (tasks.Shared): tasks
	// run elsewhere are watched, not settled, and orphans are adopted.
	shared tasks.Shared
	// rework is Resume's, for orphans of resumable tools (under mu).
	rework    func(tasks.Task) tasks.Work
	adoptKick chan struct{}
	adoptDone chan struct{}
	// wakes are the waiters for tasks running elsewhere, by id (under mu).
	wakes map[string]*wake
}

// runner is a live task's state outside its record: what only this process
// has (the actor, the answers so far), lost with the process.
type runner struct {
	id      string
	client  string // Task.Client: what its bounds count against
	session string // Task.Session: the legacy HTTP session it was made in
	work    tasks.Work
	ctx     context.Context
	cancel  context.CancelFunc
	answers map[string]json.RawMessage
	wake    chan struct{} // answers complete: run again
	done    chan struct{} // closed when its work has returned (or never started)

	mu     sync.Mutex   // guards what follows, and serializes record changes
	ended  bool         // its record is terminal
	status tasks.Status // its record's, for Counts
	asked  map[string]json.RawMessage
}

// Start makes a manager on e and runs its tree there, as a root of its
// own: New, then ChildSpec's supervisor started with supervisor.Start.
// A program with a tree of its own (runtime.Serve) puts ChildSpec in it
// instead, so that the tasks start and stop in order with the rest.
//
// e may be nil: the manager then runs its actors on an engine of its own
// (a second engine in a process that has one: use New and ChildSpec).
func Start(e *actor.Engine, cfg Config) (*Manager, error) {
	if e == nil {
		var err error
		if e, err = actor.NewEngine(actor.NewEngineConfig()); err != nil {
			return nil, err
		}
	}
	m, err := New(cfg)
	if err != nil {
		return nil, err
	}
	root, err := supervisor.Start(e, m.cfg.Name, m.spec(e, supervisor.RootPID(e, m.cfg.Name)))
	if err != nil {
		return nil, err
	}
	m.root = root
	return m, nil
}

// New makes a manager and settles what a previous process left in the
// store (tasks that were running are failed with tasks.RestartedMessage,
// but those of resumable tools wait for Resume; expired ones are
// deleted). It starts nothing: its actors and its expiry sweep run once
// its ChildSpec is started in a tree (or by Start). Settling a large
// journal takes a while, which is why it comes before the tree: a caller
// may give it up on a signal.
func New(cfg Config) (*Manager, error) {
	if cfg.Store == nil {
		cfg.Store = tasks.NewMemoryStore()
	}
	if cfg.MaxLive == 0 {
		cfg.MaxLive = defaultMaxLive
	}
	if cfg.MaxLivePerOwner == 0 {
		cfg.MaxLivePerOwner = defaultMaxLivePerOwner
	}
	if cfg.MaxEndedPerClient == 0 {
		cfg.MaxEndedPerClient = defaultMaxEndedPerClient
	}
	if cfg.TTL <= 0 {
		cfg.TTL = defaultTTL
	}
	if cfg.MaxTTL <= 0 {
		cfg.MaxTTL = defaultMaxTTL
	}
	if cfg.TTL > cfg.MaxTTL {
		cfg.TTL = cfg.MaxTTL
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = defaultPollInterval
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 5 * time.Second
	}
	if cfg.Name == "" {
		cfg.Name = "tasks"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Manager{cfg: cfg, store: cfg.Store, log: cfg.Logger,
		live: map[string]*runner{}, owners: map[string]int{}, running: map[*runner]struct{}{}, abandon: make(chan struct{}),
		stopSweep: make(chan struct{}), sweepDone: make(chan struct{}), storeClosed: make(chan struct{})}
	m.changed = sync.NewCond(&m.mu)
	if cfg.OnStatus != nil {
		m.OnStatus(cfg.OnStatus) // the first listener
	}
	m.shared, _ = cfg.Store.(tasks.Shared)
	m.adoptKick, m.adoptDone = make(chan struct{}, 1), make(chan struct{})
	m.wakes = map[string]*wake{}
	if err := m.settle(); err != nil {
		return nil, err
	}
	if err := m.indexEnded(); err != nil {
		return nil, err
	}
	return m, nil
}

// ChildSpec is the manager as a child of parent, a supervisor on e: the
// tasks supervisor (Config.Name), whose children are, in start order, the
// store (closed last), the tasks' actors ("runs"), and the expiry sweep,
// whose stop cancels every task and waits for their handlers (up to
// ShutdownGrace) before the actors are stopped. It is significant: if the
// tasks supervisor fails, so does its parent. Put it in the tree before
// the transports, so that tasks outlive the requests that made them but
// not the process. Call it once.
func (m *Manager) ChildSpec(e *actor.Engine, parent *actor.PID) supervisor.ChildSpec {
	m.parent = parent
	return supervisor.ChildSpec{
		ID:          m.cfg.Name,
		Start:       supervisor.New(m.spec(e, supervisor.ChildPID(parent, m.cfg.Name))),
		Restart:     supervisor.Transient,
		Significant: true,
		Shutdown:    2*m.cfg.ShutdownGrace + 10*time.Second,
	}
}

// spec is the tasks supervisor's, to run as self on e.
func (m *Manager) spec(e *actor.Engine, self *actor.PID) supervisor.Spec {
	m.e, m.runs = e, supervisor.ChildPID(self, "runs")
	return supervisor.Spec{
		Name:     m.cfg.Name,
		Strategy: supervisor.OneForOne,
		Logger:   m.cfg.Logger,
		Children: []supervisor.ChildSpec{
			{ID: "store", Start: supervisor.Service(nil, m.closeStore), Shutdown: 5 * time.Second},
			{ID: "runs", Start: supervisor.New(supervisor.Spec{
				Name: m.cfg.Name + "/runs", Strategy: supervisor.OneForOne, Logger: m.cfg.Logger,
			}), Shutdown: m.cfg.ShutdownGrace + 2*time.Second},
			{ID: "sweep", Start: supervisor.Service(func(func(error)) error {
				m.sweeping.Store(true)
				go m.sweep() // owned: drain waits for it
				if m.shared != nil {
					m.shared.Watch(tasks.Watchers{Changed: m.remoteChange, Answered: m.remoteAnswers,
						Orphaned: m.kickAdopt, Lost: m.holdLost})
					go m.adoptLoop() // owned: drain waits for it
				} else {
					close(m.adoptDone)
				}
				m.mu.Lock()
				m.up = true
				rework := m.deferred
				m.mu.Unlock()
				if rework != nil {
					m.resume(rework)
				}
				return nil
			}, m.drain), Shutdown: m.cfg.ShutdownGrace + 2*time.Second},
		},
	}
}

// settle fails what a previous process left live and deletes what expired.
// A live task with a Rerun that was never resumed is kept, working, for
// Resume; one that was resumed already is failed (resumedAgainMessage).
// With a store that is a tasks.Batcher the changes are one write (with a
// journal, tens of thousands of expired tasks are one compaction, not an
// fsync each).
func (m *Manager) settle() error {
	all, err := m.store.All()
	if err != nil {
		return err
	}
	now := m.cfg.Now()
	var puts []tasks.Task
	var dels []string
	for _, t := range all {
		switch {
		case t.Expired(now) && (m.shared == nil || t.Status.Terminal()):
			dels = append(dels, t.ID)
		case m.shared != nil:
			// Live tasks of a shared store run on other replicas, or
			// are orphans, which the adoption takes over.
		case !t.Status.Terminal() && t.Rerun != nil && t.Rerun.Resumed == 0:
			m.pending = append(m.pending, t)
		case !t.Status.Terminal():
			msg := tasks.RestartedMessage
			if t.Rerun != nil {
				msg = resumedAgainMessage
			}
			puts = append(puts, restarted(t, msg, now))
		}
	}
	if b, ok := m.store.(tasks.Batcher); ok {
		return b.Apply(puts, dels)
	}
	for _, t := range puts {
		if err := m.store.Put(t); err != nil {
			return err
		}
	}
	for _, id := range dels {
		if err := m.store.Delete(id); err != nil {
			return err
		}
	}
	return nil
}

// restarted is t failed because its work was lost with its process.
func restarted(t tasks.Task, msg string, now time.Time) tasks.Task {
	t.Status, t.Message, t.Updated, t.Input = tasks.Failed, msg, now, nil
	t.Error = &tasks.Error{Code: -32603, Message: "Internal error: " + msg}
	return t
}

// Resume runs again the tasks of resumable tools that a previous process
// left working (tasks.Resumer): each once, its record first marked
// resumed (durably, with a journal), so that if this process dies too the
// next start fails it instead. Their work starts as a new task's does,
// whatever the bounds on live tasks (they were admitted before). Only the
// first call does anything: the first server to serve the manager's tasks
// (the gateway's own, not one of its endpoints) runs them, and adopts
// lost replicas' tasks, with its tools.
func (m *Manager) Resume(rework func(tasks.Task) tasks.Work) {
	m.mu.Lock()
	if m.deferred != nil || m.rework != nil {
		m.mu.Unlock()
		return
	}
	if !m.up {
		// Before the tree runs (New, then ServeTasks, then the tree):
		// the sweep's start resumes them, once there are actors to run
		// them on.
		m.deferred = rework
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	m.resume(rework)
}

func (m *Manager) resume(rework func(tasks.Task) tasks.Work) {
	m.mu.Lock()
	pending, done := m.pending, m.resumed
	m.pending, m.resumed = nil, true
	m.rework = rework
	m.mu.Unlock()
	m.kickAdopt()
	if done {
		return
	}
	for _, t := range pending {
		now := m.cfg.Now()
		var work tasks.Work
		if !t.Expired(now) {
			work = rework(t)
		}
		if work == nil {
			failed := restarted(t, tasks.RestartedMessage, now)
			if err := m.store.Put(failed); err != nil {
				m.log.Error("tasks: cannot fail a task left by a restart", "task", t.ID, "err", err)
				continue
			}
			m.noteEnded(failed)
			continue
		}
		rerun := *t.Rerun
		rerun.Resumed++
		t.Rerun, t.Status, t.Message, t.Input, t.Updated = &rerun, tasks.Working, resumedMessage, nil, now
		if _, err := m.launch(t, work, false); err != nil {
			m.log.Error("tasks: cannot resume a task", "task", t.ID, "err", err)
			continue
		}
		m.log.Info("tasks: resumed a task its tool declares resumable", "task", t.ID, "tool", t.Tool)
	}
}

// PollInterval is the interval suggested to clients.
func (m *Manager) PollInterval() time.Duration { return m.cfg.PollInterval }

// Create makes a task for r and starts work on its actor. It returns
// once the record is stored (durably, with a journal), so a Get for the id
// it returns succeeds. ttl is the client's wish (0: none), capped by
// MaxTTL.
func (m *Manager) Create(r tasks.Requestor, tool string, modern bool, ttl time.Duration, work tasks.Work) (tasks.Task, error) {
	return m.CreateResumable(r, tool, modern, ttl, nil, work)
}

// CreateResumable is Create for a task whose record keeps rerun (nil:
// none), so that Resume can run it again after a restart.
func (m *Manager) CreateResumable(r tasks.Requestor, tool string, modern bool, ttl time.Duration, rerun *tasks.Rerun, work tasks.Work) (tasks.Task, error) {
	if ttl <= 0 {
		ttl = m.cfg.TTL
	}
	ttl = min(ttl, m.cfg.MaxTTL)
	now := m.cfg.Now()
	t := tasks.Task{ID: tasks.NewID(m.cfg.Tag), Owner: r.Owner, Session: r.Session, Client: r.Client, Tool: tool, Modern: modern, Status: tasks.Working,
		Created: now, Updated: now, TTL: ttl, Rerun: rerun}
	return m.launch(t, work, true)
}

// launch stores t and starts its work on an actor of its own; bounded
// applies the bounds on live tasks.
func (m *Manager) launch(t tasks.Task, work tasks.Work, bounded bool) (tasks.Task, error) {
	client := t.Client
	ctx, cancel := context.WithCancel(tasks.WithID(context.Background(), t.ID))
	r := &runner{id: t.ID, client: client, session: t.Session, work: work, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), done: make(chan struct{}), status: t.Status}
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		cancel()
		return tasks.Task{}, tasks.ErrStopped
	}
	if n := m.cfg.MaxLive; bounded && n > 0 && len(m.live) >= n {
		m.mu.Unlock()
		cancel()
		m.counts.refused.Add(1)
		return tasks.Task{}, &tasks.LimitError{Limit: n}
	}
	if n := m.cfg.MaxLivePerOwner; bounded && n > 0 && m.owners[client] >= n {
		m.mu.Unlock()
		cancel()
		m.counts.refused.Add(1)
		return tasks.Task{}, &tasks.LimitError{PerOwner: true, Limit: n}
	}
	m.live[t.ID] = r
	m.owners[client]++
	m.running[r] = struct{}{}
	m.mu.Unlock()
	if err := m.store.Put(t); err != nil {
		m.forget(r)
		m.workDone(r)
		cancel()
		return tasks.Task{}, err
	}
	_, err := supervisor.StartChild(m.e, m.runs, supervisor.ChildSpec{
		ID:       t.ID,
		Start:    func() actor.Receiver { return &taskActor{m: m, r: r} },
		Restart:  supervisor.Temporary,
		Shutdown: m.cfg.ShutdownGrace,
		// A task's actor gets three messages in its life; hollywood's
		// default inbox (1024 slots) would be most of its memory.
		Options: []actor.OptFunc{actor.WithInboxSize(8)},
	})
	if err != nil {
		m.log.Error("tasks: cannot start a task's actor", "task", t.ID, "err", err)
		if err := m.finish(r, tasks.Outcome{Error: &tasks.Error{Code: -32603, Message: "Internal error: the task could not be started"}}); err != nil {
			m.log.Error("tasks: cannot store a task's outcome", "task", t.ID, "err", err)
		}
		m.workDone(r)
		return tasks.Task{}, fmt.Errorf("tasks: could not start the task: %w", err)
	}
	m.counts.created.Add(1)
	m.notify(t)
	return t, nil
}

// workDone records that r's work has returned (or will never run).
func (m *Manager) workDone(r *runner) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.running[r]; ok {
		delete(m.running, r)
		close(r.done)
	}
}

// forget drops a runner from the live set.
func (m *Manager) forget(r *runner) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live[r.id] != r {
		return
	}
	delete(m.live, r.id)
	if m.owners[r.client]--; m.owners[r.client] <= 0 {
		delete(m.owners, r.client)
	}
	m.changed.Broadcast()
}

// Get returns owner's task id. Another owner's task, an expired one and
// an unknown id are all tasks.ErrNotFound.
func (m *Manager) Get(owner, id string) (tasks.Task, error) {
	t, ok, err := m.store.Get(id)
	if err != nil {
		return tasks.Task{}, err
	}
	if !ok || ownerOf(t) != owner || t.Expired(m.cfg.Now()) {
		return tasks.Task{}, tasks.ErrNotFound
	}
	return t, nil
}

// List returns owner's tasks, newest first. Without an owner (no
// caller), only those made in session are: a task bound by its id alone
// is listed where it was made, and nowhere else, since listing every
// anonymous task would give any client every other client's ids, the one
// thing that guards them. A legacy HTTP client that initializes again
// (after a restart, or its session's end) lists none of its old tasks in
// its new session, and gets each back by its id (tasks/get,
// tasks/result); stdio's one session ("") lists what stdio made. The
// 2025-11-25 specification (tasks, Task Listing) has tasks/list return
// what tasks/get would for the same requestor; without an authorization
// context the requestor is whoever holds an id, and what it holds is
// what it made here.
func (m *Manager) List(owner, session string) ([]tasks.Task, error) {
	all, err := m.store.All()
	if err != nil {
		return nil, err
	}
	now := m.cfg.Now()
	out := all[:0]
	for _, t := range all {
		if ownerOf(t) == owner && (owner != "" || t.Session == session) && !t.Expired(now) {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.After(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Wait blocks until owner's task id is terminal (or ctx ends) and returns
// it: tasks/result.
func (m *Manager) Wait(ctx context.Context, owner, id string) (tasks.Task, error) {
	stop := context.AfterFunc(ctx, func() {
		m.mu.Lock()
		m.changed.Broadcast()
		m.mu.Unlock()
	})
	defer stop()
	for {
		// A task running on another replica (a shared store) is waited
		// for on its own wake, registered before the read so that a
		// change after it is not missed.
		var wake chan struct{}
		if m.shared != nil {
			wake = m.wakeOn(id)
		}
		t, err := m.Get(owner, id)
		if err != nil || t.Status.Terminal() {
			m.wakeOff(id, wake)
			return t, err
		}
		m.mu.Lock()
		_, live := m.live[id]
		if live && ctx.Err() == nil && !m.stopped {
			m.changed.Wait()
		}
		m.mu.Unlock()
		if !live && wake != nil {
			m.waitElsewhere(ctx, wake)
		}
		m.wakeOff(id, wake)
		if err := ctx.Err(); err != nil {
			return tasks.Task{}, err
		}
		if m.isStopped() {
			return tasks.Task{}, tasks.ErrStopped
		}
	}
}

func (m *Manager) broadcast() {
	m.mu.Lock()
	m.changed.Broadcast()
	m.mu.Unlock()
}

func (m *Manager) isStopped() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stopped
}

// Cancel moves owner's task id to cancelled, durably, and stops its work
// (its context is cancelled; what it returns afterwards is dropped). A
// task that already ended is tasks.ErrTerminal.
func (m *Manager) Cancel(owner, id string) (tasks.Task, error) {
	t, err := m.Get(owner, id)
	if err != nil {
		return tasks.Task{}, err
	}
	if t.Status.Terminal() {
		return t, tasks.ErrTerminal
	}
	m.mu.Lock()
	r := m.live[id]
	m.mu.Unlock()
	if r == nil && m.shared != nil {
		return m.cancelElsewhere(t)
	}
	if r == nil {
		return t, tasks.ErrTerminal // ended between the two looks
	}
	t, ok, err := m.settleRunner(r, func(t *tasks.Task) {
		t.Status, t.Message, t.Input = tasks.Cancelled, "cancelled by the client", nil
	})
	if err != nil {
		return tasks.Task{}, err
	}
	if !ok {
		return t, tasks.ErrTerminal
	}
	r.cancel()
	return t, nil
}

// Answer gives owner's task id the client's answers to its input requests
// (tasks/update). Answers to keys the task did not ask, or asked and got
// already, are ignored. Once every request of the round is answered the
// task runs again, with them.
func (m *Manager) Answer(owner, id string, answers map[string]json.RawMessage) error {
	t, err := m.Get(owner, id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	r := m.live[id]
	m.mu.Unlock()
	if r == nil && m.shared != nil && !t.Status.Terminal() {
		// Running on another replica: the answers go to it through
		// the store.
		return m.shared.Forward(id, answers)
	}
	if r == nil {
		return nil // ended: nothing to do with the answers
	}
	return m.answer(r, answers)
}

// answer gives r the answers to its input requests.
func (m *Manager) answer(r *runner, answers map[string]json.RawMessage) error {
	r.mu.Lock()
	if r.asked == nil {
		r.mu.Unlock()
		return nil // not asking now
	}
	for k, v := range answers {
		if _, ok := r.asked[k]; ok {
			if r.answers == nil {
				r.answers = map[string]json.RawMessage{}
			}
			r.answers[k] = v
			delete(r.asked, k)
		}
	}
	remaining := maps.Clone(r.asked)
	complete := len(remaining) == 0
	if complete {
		r.asked = nil
	}
	r.mu.Unlock()
	if complete {
		m.settleRunner(r, func(t *tasks.Task) { t.Status, t.Input, t.Message = tasks.Working, nil, "" })
		select {
		case r.wake <- struct{}{}:
		default:
		}
		return nil
	}
	raw, _ := json.Marshal(remaining)
	_, _, err := m.settleRunner(r, func(t *tasks.Task) { t.Input = raw })
	return err
}

// settleRunner applies change to r's record while r is live and stores it;
// ok is false when the task had ended already. A terminal change ends the
// runner. Changes of one task are serialized by its runner's lock (a
// cancel and the work's end never interleave); changes of different tasks
// are not, so their journal writes share fsyncs.
func (m *Manager) settleRunner(r *runner, change func(*tasks.Task)) (t tasks.Task, ok bool, err error) {
	r.mu.Lock()
	if r.ended {
		r.mu.Unlock()
		t, _, err = m.store.Get(r.id)
		return t, false, err
	}
	t, found, err := m.store.Get(r.id)
	if err != nil || !found {
		r.mu.Unlock()
		return t, false, err
	}
	change(&t)
	t.Updated = m.cfg.Now()
	if err := m.store.Put(t); err != nil {
		if errors.Is(err, tasks.ErrTerminal) || errors.Is(err, tasks.ErrTakenOver) {
			// A shared store: another replica ended the task first, or
			// holds it now. This run of it is over.
			r.ended = true
			r.mu.Unlock()
			r.cancel()
			m.forget(r)
			t, _, err = m.store.Get(r.id)
			return t, false, err
		}
		r.mu.Unlock()
		return t, false, err
	}
	r.status = t.Status
	if t.Status.Terminal() {
		r.ended = true
		m.counts.ended(t.Status)
	}
	r.mu.Unlock()
	m.mu.Lock()
	if t.Status.Terminal() && m.live[r.id] == r {
		delete(m.live, r.id)
		if m.owners[r.client]--; m.owners[r.client] <= 0 {
			delete(m.owners, r.client)
		}
	}
	m.changed.Broadcast()
	m.mu.Unlock()
	if t.Status.Terminal() {
		m.noteEnded(t)
	}
	m.notify(t)
	return t, true, nil
}

func (m *Manager) notify(t tasks.Task) {
	if m.shared != nil {
		m.wakeUp(t.ID)
	}
	if fns := m.onStatus.Load(); fns != nil {
		for _, fn := range *fns {
			(*fn)(t)
		}
	}
}

// OnStatus adds fn, to be called as Config.OnStatus is (after it), until
// stop: each server that serves the manager's tasks (a gateway's virtual
// endpoints share its manager) sends status notifications so.
func (m *Manager) OnStatus(fn func(tasks.Task)) (stop func()) {
	p := &fn
	m.mu.Lock()
	var fns []*func(tasks.Task)
	if old := m.onStatus.Load(); old != nil {
		fns = append(fns, *old...)
	}
	fns = append(fns, p)
	m.onStatus.Store(&fns)
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if old := m.onStatus.Load(); old != nil {
			rest := slices.DeleteFunc(slices.Clone(*old), func(q *func(tasks.Task)) bool { return q == p })
			m.onStatus.Store(&rest)
		}
	}
}

// finish records how r's work ended, unless the task ended already
// (cancelled).
func (m *Manager) finish(r *runner, out tasks.Outcome) error {
	_, _, err := m.settleRunner(r, func(t *tasks.Task) {
		switch {
		case out.Error != nil:
			t.Status, t.Error, t.Message = tasks.Failed, out.Error, out.Error.Message
		case out.Failed:
			t.Status, t.Result = tasks.Failed, out.Result
		default:
			t.Status, t.Result, t.Message = tasks.Completed, out.Result, ""
		}
		t.Input = nil
	})
	return err
}

// finishDurably is finish, tried again while the store refuses it (a full
// disk): the outcome is served only once it is stored, so a client never
// sees a completion that a restart would turn into a failure; until then
// the task reads as working. It gives up when the task's context ends
// (cancelled, expired, or the manager stopping: the next start fails the
// task, as for any work lost with its process).
func (m *Manager) finishDurably(r *runner, out tasks.Outcome) {
	wait := 50 * time.Millisecond
	for try := 0; ; try++ {
		err := m.finish(r, out)
		if err == nil {
			if try > 0 {
				m.log.Info("tasks: a task's outcome is stored after all", "task", r.id, "tries", try+1)
			}
			return
		}
		if try == 0 {
			m.log.Error("tasks: cannot store a task's outcome; it reads as working, and storing is tried again until the store takes it or the task ends",
				"task", r.id, "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-r.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// ask records that r's work needs input, and waits for the answers; it
// reports false when the task ended meanwhile.
func (m *Manager) ask(r *runner, input map[string]json.RawMessage) bool {
	r.mu.Lock()
	r.asked = maps.Clone(input)
	for k := range r.answers {
		delete(r.asked, k) // answered before; the work asks it again each run
	}
	pending := maps.Clone(r.asked)
	r.mu.Unlock()
	if len(pending) == 0 {
		return true // all answered already: run again
	}
	raw, _ := json.Marshal(pending)
	if _, ok, _ := m.settleRunner(r, func(t *tasks.Task) { t.Status, t.Input = tasks.InputRequired, raw }); !ok {
		return false
	}
	select {
	case <-r.wake:
		return true
	case <-r.ctx.Done():
		return false
	}
}

// sweep deletes expired tasks, once a minute or so, and cancels the work
// of expired live ones.
func (m *Manager) sweep() {
	defer close(m.sweepDone)
	tick := time.NewTicker(m.sweepEvery())
	defer tick.Stop()
	for {
		select {
		case <-m.stopSweep:
			return
		case <-tick.C:
			m.expire()
		}
	}
}

func (m *Manager) sweepEvery() time.Duration {
	return min(time.Minute, max(m.cfg.TTL/4, 100*time.Millisecond))
}

// expire deletes the records whose TTL has run out.
func (m *Manager) expire() {
	all, err := m.store.All()
	if err != nil {
		return
	}
	now := m.cfg.Now()
	for _, t := range all {
		if !t.Expired(now) {
			continue
		}
		m.mu.Lock()
		r := m.live[t.ID]
		m.mu.Unlock()
		if r == nil && m.shared != nil && !t.Status.Terminal() {
			continue // its replica's to end (or the adoption's)
		}
		if r != nil {
			m.settleRunner(r, func(t *tasks.Task) {
				t.Status, t.Input = tasks.Failed, nil
				t.Error = &tasks.Error{Code: -32603, Message: "Internal error: the task's ttl ran out before it finished"}
				t.Message = t.Error.Message
			})
			r.cancel()
			m.forget(r) // ended, even when its record could not be changed (a full disk)
		}
		if m.store.Delete(t.ID) == nil {
			m.ended.drop(t.ID)
		}
	}
}

// Stop stops the manager's tree (Start's root, or its ChildSpec's child
// under its parent, which it then leaves) and waits for it, or for ctx.
// The tree cancels every task's work, all at once, and waits for the
// handlers to return, all together, bounded by ShutdownGrace overall,
// not per task: many tasks whose handlers ignore their cancellation cost
// one grace, not one each. Those still running then are abandoned (Go
// cannot stop a goroutine; they are counted in one warning), and their
// actors stop without waiting again. Then the tasks' actors stop, and
// the store is closed, whose error Stop returns. Tasks
// still working are left as they are in the store: the next Start on it
// fails them with tasks.RestartedMessage (or resumes them).
func (m *Manager) Stop(ctx context.Context) error {
	switch {
	case m.root != nil:
		if err := m.root.Stop(ctx); err != nil {
			return err
		}
	case m.parent != nil:
		err := supervisor.TerminateChild(m.e, m.parent, m.cfg.Name)
		if err != nil && !errors.Is(err, supervisor.ErrUnknownChild) && !errors.Is(err, supervisor.ErrNotRunning) {
			return err
		}
	default: // never started: only the store is open
		m.drain()
		m.closeStore()
	}
	select {
	case <-m.storeClosed:
		return m.storeErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain is the sweep's stop: it refuses new tasks, cancels every running
// one and waits for their handlers, all together, up to ShutdownGrace,
// before the tree stops their actors.
func (m *Manager) drain() {
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return
	}
	m.stopped = true
	running := make([]*runner, 0, len(m.running))
	for r := range m.running {
		r.cancel()
		running = append(running, r)
	}
	m.changed.Broadcast()
	m.mu.Unlock()
	close(m.stopSweep)
	grace := time.NewTimer(m.cfg.ShutdownGrace)
	left := 0
wait:
	for i, r := range running {
		select {
		case <-r.done:
			continue
		case <-grace.C:
		}
		for _, r := range running[i:] {
			select {
			case <-r.done:
			default:
				left++
			}
		}
		break wait
	}
	grace.Stop()
	if left > 0 {
		m.log.Warn("tasks: task handlers still running after their cancellation and the shutdown grace; abandoned",
			"handlers", left, "grace", m.cfg.ShutdownGrace)
	}
	close(m.abandon)
	if m.sweeping.Load() {
		<-m.sweepDone
		<-m.adoptDone
	}
}

// closeStore is the store's stop: the last of the tasks' tree.
func (m *Manager) closeStore() {
	m.closeOnce.Do(func() {
		m.storeErr = m.store.Close()
		close(m.storeClosed)
	})
}

// Counts are a manager's tasks by state: those live now, and how many
// were created, ended in each terminal state, and refused at MaxLive or
// MaxLivePerOwner since it started.
type Counts struct {
	Working, InputRequired                         int
	Created, Completed, Failed, Cancelled, Refused uint64
}

// counters are the totals of Counts.
type counters struct {
	created, completed, failed, cancelled, refused atomic.Uint64
}

func (c *counters) ended(s tasks.Status) {
	switch s {
	case tasks.Completed:
		c.completed.Add(1)
	case tasks.Failed:
		c.failed.Add(1)
	case tasks.Cancelled:
		c.cancelled.Add(1)
	}
}

// Counts reports the tasks by state: a walk of the live ones, for a page
// or a scrape, not for a hot path.
func (m *Manager) Counts() Counts {
	m.mu.Lock()
	live := make([]*runner, 0, len(m.live))
	for _, r := range m.live {
		live = append(live, r)
	}
	m.mu.Unlock()
	c := Counts{Created: m.counts.created.Load(), Completed: m.counts.completed.Load(), Failed: m.counts.failed.Load(),
		Cancelled: m.counts.cancelled.Load(), Refused: m.counts.refused.Load()}
	for _, r := range live {
		r.mu.Lock()
		switch {
		case r.ended:
		case r.status == tasks.InputRequired:
			c.InputRequired++
		default:
			c.Working++
		}
		r.mu.Unlock()
	}
	return c
}

// liveCount returns the number of tasks working or waiting for input.
func (m *Manager) liveCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

// taskActor runs one task's work: on a goroutine it owns (started in
// Started, waited for in Stopped), so that a long handler never holds the
// supervisor. A panic in the work fails the task and ends the actor; it
// never reaches the process.
type taskActor struct {
	m       *Manager
	r       *runner
	started bool
}

// workEnded tells the actor its goroutine is done.
type workEnded struct{}

func (a *taskActor) Receive(c *actor.Context) {
	switch c.Message().(type) {
	case actor.Started:
		a.started = true
		e, self := c.Engine(), c.PID()
		go func() {
			defer e.Send(self, workEnded{})
			defer a.m.workDone(a.r)
			a.run()
		}()
	case workEnded:
		supervisor.Exit(c, nil)
	case actor.Stopped:
		if a.started {
			a.r.cancel()
			select {
			case <-a.r.done:
			case <-a.m.abandon: // Stop waited for every handler at once already
			}
		}
	}
}

// run runs the work until it ends, through its rounds of input.
func (a *taskActor) run() {
	m, r := a.m, a.r
	defer r.cancel()
	for {
		r.mu.Lock()
		answers := maps.Clone(r.answers)
		r.mu.Unlock()
		out, ok := a.once(answers)
		if r.ctx.Err() != nil {
			// Cancelled, expired or shutting down: the record says which
			// already (or, at shutdown, the next start will).
			return
		}
		if !ok {
			m.finishDurably(r, out)
			return
		}
		if len(out.Input) > 0 {
			if !m.ask(r, out.Input) {
				return
			}
			continue
		}
		m.finishDurably(r, out)
		return
	}
}

// once runs the work one time; ok is false when it panicked (out then
// holds the failure).
func (a *taskActor) once(answers map[string]json.RawMessage) (out tasks.Outcome, ok bool) {
	defer func() {
		if v := recover(); v != nil {
			a.m.log.Error("tasks: a task's handler panicked", "task", a.r.id, "panic", v, "stack", string(debug.Stack()))
			out, ok = tasks.Outcome{Error: &tasks.Error{Code: -32603, Message: "Internal error: the handler failed"}}, false
		}
	}()
	return a.r.work(a.r.ctx, answers), true
}

// Waiting moves a live task to input_required (on) or back to working: for
// work that asks its client directly and waits for the answer (2025-11-25).
func (m *Manager) Waiting(id string, on bool) {
	m.mu.Lock()
	r := m.live[id]
	m.mu.Unlock()
	if r == nil {
		return
	}
	m.settleRunner(r, func(t *tasks.Task) {
		if on {
			t.Status = tasks.InputRequired
		} else {
			t.Status = tasks.Working
		}
	})
}

// Manager is a tasks.Manager and a tasks.Resumer.
var (
	_ tasks.Manager = (*Manager)(nil)
	_ tasks.Resumer = (*Manager)(nil)
)
