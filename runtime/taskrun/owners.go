package taskrun

import (
	"sort"
	"strings"
	"sync"

	"github.com/mcprt/mcprt/handlers/tasks"
)

// ownerOf is whom t is bound to. A record kept before tasks without a
// caller were bound by their ids has the owner "session:<id>" of the
// legacy HTTP session that made it, which did not outlive the server
// that wrote it: such a task is bound by its id now, as it would be if
// made today, so that an upgrade's restart loses none.
func ownerOf(t tasks.Task) string {
	if strings.HasPrefix(t.Owner, "session:") {
		return ""
	}
	return t.Owner
}

// EndSession cancels the tasks made in the legacy HTTP session id that
// are still running (tasks.Manager): its client DELETEd it, so nobody
// waits for their work; the records say why. Ended tasks are kept, for
// whoever holds their ids, until their ttl (or MaxEndedPerClient).
func (m *Manager) EndSession(id string) {
	if id == "" {
		return
	}
	m.mu.Lock()
	var ending []*runner
	for _, r := range m.live {
		if r.session == id {
			ending = append(ending, r)
		}
	}
	m.mu.Unlock()
	// All at once: their journal writes then share fsyncs.
	var wg sync.WaitGroup
	for _, r := range ending {
		wg.Go(func() {
			_, ok, err := m.settleRunner(r, func(t *tasks.Task) {
				t.Status, t.Message, t.Input = tasks.Cancelled, "cancelled: the client ended the session that made it (DELETE)", nil
			})
			if err != nil {
				m.log.Error("tasks: cannot cancel a task of an ended session", "task", r.id, "err", err)
				return
			}
			if ok {
				r.cancel()
			}
		})
	}
	wg.Wait()
}

// endedTasks are the ended tasks kept, per client, in the order they
// ended: the first to go when a client has more than MaxEndedPerClient.
type endedTasks struct {
	mu     sync.Mutex
	queue  map[string][]string // by client, oldest first; may hold ids dropped since
	client map[string]string   // the client of each id kept
	count  map[string]int      // ids kept, by client
}

// add records that id, of client, ended; it returns the ids to delete so
// that the client keeps at most max (none for max < 0).
func (e *endedTasks) add(client, id string, max int) (evict []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.client == nil {
		e.queue, e.client, e.count = map[string][]string{}, map[string]string{}, map[string]int{}
	}
	if _, ok := e.client[id]; ok {
		return nil
	}
	e.client[id] = client
	e.count[client]++
	q := append(e.queue[client], id)
	for max >= 0 && e.count[client] > max && len(q) > 0 {
		old := q[0]
		q[0] = ""
		q = q[1:]
		if e.client[old] == client {
			delete(e.client, old)
			e.count[client]--
			evict = append(evict, old)
		}
	}
	// Ids dropped by expiry stay in the queue until they reach its
	// front; past twice the live count it is compacted.
	if len(q) > 2*e.count[client]+16 {
		kept := make([]string, 0, e.count[client])
		for _, x := range q {
			if e.client[x] == client {
				kept = append(kept, x)
			}
		}
		q = kept
	}
	if e.count[client] == 0 {
		delete(e.count, client)
		delete(e.queue, client)
		return evict
	}
	e.queue[client] = q
	return evict
}

// drop forgets id, deleted (its ttl ran out).
func (e *endedTasks) drop(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.client[id]
	if !ok {
		return
	}
	delete(e.client, id)
	if e.count[c]--; e.count[c] <= 0 {
		delete(e.count, c)
		delete(e.queue, c)
	}
}

// noteEnded records that t ended, and deletes its client's oldest ended
// tasks past MaxEndedPerClient.
func (m *Manager) noteEnded(t tasks.Task) {
	for _, id := range m.ended.add(t.Client, t.ID, m.cfg.MaxEndedPerClient) {
		if err := m.store.Delete(id); err != nil {
			m.log.Error("tasks: cannot delete a client's oldest ended task", "task", id, "err", err)
			continue
		}
		m.log.Debug("tasks: a client's oldest ended task deleted (the bound on ended tasks per client)",
			"task", id, "client", t.Client, "max_ended_per_client", m.cfg.MaxEndedPerClient)
	}
}

// indexEnded records the ended tasks the store holds at start, oldest
// first, each client's past MaxEndedPerClient deleted (the bound may
// have been lowered since they were kept).
func (m *Manager) indexEnded() error {
	all, err := m.store.All()
	if err != nil {
		return err
	}
	ended := all[:0]
	for _, t := range all {
		if t.Status.Terminal() {
			ended = append(ended, t)
		}
	}
	sort.Slice(ended, func(i, j int) bool {
		if !ended[i].Updated.Equal(ended[j].Updated) {
			return ended[i].Updated.Before(ended[j].Updated)
		}
		return ended[i].ID < ended[j].ID
	})
	for _, t := range ended {
		m.noteEnded(t)
	}
	return nil
}
