package taskrun

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
)

// This file is the manager on a tasks.Shared store (etcd): replicas that
// answer for each other's tasks and take over those of a replica lost.

// adoptEvery is how often orphans are looked for besides when the store
// says a hold ended: a backstop for a watch that was down.
const adoptEvery = 2 * time.Second

// kickAdopt asks the adoption loop to look for orphans now.
func (m *Manager) kickAdopt() {
	select {
	case m.adoptKick <- struct{}{}:
	default:
	}
}

// adoptLoop takes over the orphans of lost replicas until the manager
// stops (drain waits for it).
func (m *Manager) adoptLoop() {
	defer close(m.adoptDone)
	tick := time.NewTicker(adoptEvery)
	defer tick.Stop()
	for {
		select {
		case <-m.stopSweep:
			return
		case <-tick.C:
		case <-m.adoptKick:
		}
		m.adoptOrphans()
	}
}

// adoptOrphans takes over each live task no replica holds, by a
// transaction only one replica wins: a resumable tool's task not run again
// yet is run again here (once: its record counts it); any other is failed
// with lostMessage. An expired one is deleted.
func (m *Manager) adoptOrphans() {
	orphans, err := m.shared.Orphans()
	if err != nil {
		m.log.Warn("tasks: cannot look for the tasks of lost servers", "err", err)
		return
	}
	for _, t := range orphans {
		m.mu.Lock()
		stopped, rework := m.stopped, m.rework
		_, local := m.live[t.ID]
		m.mu.Unlock()
		if stopped {
			return
		}
		if local {
			continue // ours, its hold being written again
		}
		now := m.cfg.Now()
		if t.Expired(now) {
			m.store.Delete(t.ID)
			continue
		}
		var work tasks.Work
		if t.Rerun != nil && t.Rerun.Resumed == 0 {
			if rework == nil {
				continue // the tools are not in place yet: Resume kicks again
			}
			work = rework(t)
		}
		if work == nil {
			failed := restarted(t, lostMessage, now)
			ok, err := m.shared.Adopt(failed)
			if err != nil || !ok {
				continue // another replica was first, or the store is down: the next look
			}
			m.log.Info("tasks: failed a task whose server was lost", "task", t.ID, "tool", t.Tool)
			m.noteEnded(failed)
			m.broadcast()
			m.notify(failed)
			continue
		}
		rerun := *t.Rerun
		rerun.Resumed++
		t.Rerun, t.Status, t.Message, t.Input, t.Updated = &rerun, tasks.Working, lostResumedMessage, nil, now
		if ok, err := m.shared.Adopt(t); err != nil || !ok {
			continue
		}
		if _, err := m.launch(t, work, false); err != nil {
			// Held here but not run: released when this server's hold
			// ends, and then failed by whoever adopts it (resumed once).
			m.log.Error("tasks: cannot run again a task whose server was lost", "task", t.ID, "err", err)
			continue
		}
		m.log.Info("tasks: took over and ran again a task whose server was lost", "task", t.ID, "tool", t.Tool)
	}
}

// remoteChange is the store's report of a record another replica wrote:
// waiters are woken; a task running here that another replica ended (a
// cancel) stops; the change is told to whoever listens here.
func (m *Manager) remoteChange(t tasks.Task) {
	m.mu.Lock()
	r := m.live[t.ID]
	m.changed.Broadcast()
	m.mu.Unlock()
	if r != nil && t.Status.Terminal() {
		r.mu.Lock()
		ended := r.ended
		r.ended = true
		r.mu.Unlock()
		if ended {
			return // our own end, reported before its write returned
		}
		r.cancel()
		m.forget(r)
		m.noteEnded(t)
	}
	m.notify(t)
}

// wake is the waiters of one task running elsewhere: ch is closed when
// it changes.
type wake struct {
	ch chan struct{}
	n  int
}

// wakeOn registers a waiter for task id's next change.
func (m *Manager) wakeOn(id string) chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.wakes[id]
	if w == nil {
		w = &wake{ch: make(chan struct{})}
		m.wakes[id] = w
	}
	w.n++
	return w.ch
}

// wakeOff unregisters a waiter of wakeOn (ch nil: none).
func (m *Manager) wakeOff(id string, ch chan struct{}) {
	if ch == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.wakes[id]; w != nil && w.ch == ch {
		if w.n--; w.n == 0 {
			delete(m.wakes, id)
		}
	}
}

// wakeUp wakes the waiters of task id: it changed.
func (m *Manager) wakeUp(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.wakes[id]; w != nil {
		close(w.ch)
		delete(m.wakes, id)
	}
}

// waitElsewhere blocks until wake is closed (the task changed: the
// store's watch said so), ctx ends, the manager stops, or a second has
// passed (a look again, should the watch be down).
func (m *Manager) waitElsewhere(ctx context.Context, wake chan struct{}) {
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-wake:
	case <-ctx.Done():
	case <-m.stopSweep:
	case <-t.C:
	}
}

// remoteAnswers are answers to a task running here, given at another
// replica (tasks/update) and forwarded through the store.
func (m *Manager) remoteAnswers(id string, answers map[string]json.RawMessage) {
	m.mu.Lock()
	r := m.live[id]
	m.mu.Unlock()
	if r != nil {
		m.answer(r, answers)
	}
}

// holdLost stops every task running here: the store says this replica's
// hold lapsed (etcd was out of reach past its ttl), so another replica
// may have taken them over, and two runs of one task must not go on.
func (m *Manager) holdLost() {
	m.mu.Lock()
	var runs []*runner
	for _, r := range m.live {
		runs = append(runs, r)
	}
	m.mu.Unlock()
	for _, r := range runs {
		r.mu.Lock()
		r.ended = true
		r.mu.Unlock()
		r.cancel()
		m.forget(r)
	}
	if len(runs) > 0 {
		m.log.Warn("tasks: this server's hold on its tasks lapsed; stopped them here, for another server to take over", "tasks", len(runs))
	}
	m.kickAdopt()
}

// cancelElsewhere cancels a live task that runs on another replica: its
// record is ended here, in one transaction that only the first end wins;
// that replica sees it and stops the work.
func (m *Manager) cancelElsewhere(t tasks.Task) (tasks.Task, error) {
	t.Status, t.Message, t.Input, t.Updated = tasks.Cancelled, "cancelled by the client", nil, m.cfg.Now()
	if err := m.store.Put(t); err != nil {
		if errors.Is(err, tasks.ErrTerminal) {
			now, _, gerr := m.store.Get(t.ID)
			if gerr != nil {
				return tasks.Task{}, gerr
			}
			return now, tasks.ErrTerminal
		}
		return tasks.Task{}, err
	}
	m.broadcast()
	m.notify(t)
	return t, nil
}
