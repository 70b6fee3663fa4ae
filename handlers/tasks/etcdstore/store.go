// Package etcdstore keeps tasks in etcd (through its v3 JSON gateway, no
// client library) for replicas that share them: a tasks.Shared store. Any
// replica reads any task; each holds the live tasks it runs with a lease
// it renews; when a replica dies its lease runs out and another takes its
// tasks over, exactly one by an etcd transaction.
//
// Under the prefix (Options.Prefix), a task id has three keys:
//
//	t/ID  the record (JSON), on a lease that ends a while after its ttl
//	e/ID  present once the record is terminal: the fence that makes the
//	      first end (a completion, a cancel from any replica) the only one
//	o/ID  the replica holding a live task, on that replica's hold lease
//
// Every write is one transaction, so nothing is written half: a record
// and its marks change together or not at all. A write of a live record
// by its holder requires its hold (o/ID on its lease); a terminal one
// requires no e/ID; a new record requires that none exists. A write
// refused is tasks.ErrTerminal (another replica ended the task first) or
// tasks.ErrTakenOver (another holds it now).
package etcdstore

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/handlers/tasks"
	"github.com/mcprt/mcprt/handlers/tasks/etcdstore/internal/etcdv3"
)

// Options configure Open.
type Options struct {
	// Endpoints are etcd's client URLs (http:// or https://).
	Endpoints []string
	// Prefix is the keys' prefix, one per deployment sharing tasks
	// ("": "mcprt/tasks/").
	Prefix string
	// Name names this replica in the holds it writes (for whoever reads
	// etcd); "": none.
	Name string
	// HoldTTL is the ttl of the replica's hold lease: how long after a
	// replica dies its tasks are taken over (0: 10 s; whole seconds).
	HoldTTL time.Duration
	// Timeout bounds each request to one member (0: 2 s).
	Timeout time.Duration
	// TLS for https endpoints (client certificates included).
	TLS *tls.Config
	// Username and Password authenticate to etcd when Username is set.
	Username, Password string
	Logger             *slog.Logger
}

// expiryGrace is how long past its ttl a record is left to the lease that
// deletes it: the replicas' sweep deletes it first, and the lease is the
// backstop for when none runs.
const expiryGrace = time.Minute

// store is the etcd task store: a tasks.Shared and tasks.Watchers.
type store struct {
	o   Options
	c   *etcdv3.Client
	pfx string
	log *slog.Logger

	ctx    context.Context // ended by Close
	stop   context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool
	broken atomic.Bool // tests: writes fail as with etcd down

	mu      sync.Mutex
	hold    int64               // this replica's hold lease
	mine    map[string]struct{} // live tasks held
	expiry  map[int64]int64     // expiry leases by their deadline (unix s)
	orphans map[string]int64    // Orphans' records, by id: their revision
	own     map[int64]struct{}  // revisions this store wrote, not reported as others'
	// writing counts the records being written here, by their hash; early
	// those of them the watch reported before their write returned (often:
	// on loopback more than half), which are not others' either.
	writing, early map[uint64]int
	lost           func()
}

// Open connects to etcd, takes a hold lease and keeps it alive until
// Close. It fails, naming the endpoints, when etcd does not answer.
func Open(o Options) (tasks.Store, error) {
	if o.Prefix == "" {
		o.Prefix = "mcprt/tasks/"
	}
	if o.HoldTTL <= 0 {
		o.HoldTTL = 10 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	c, err := etcdv3.New(etcdv3.Config{Endpoints: append([]string(nil), o.Endpoints...), Timeout: o.Timeout, TLS: o.TLS,
		Username: o.Username, Password: o.Password})
	if err != nil {
		return nil, fmt.Errorf("tasks: etcd store: %w", err)
	}
	s := &store{o: o, c: c, pfx: o.Prefix, log: o.Logger, mine: map[string]struct{}{}, expiry: map[int64]int64{},
		orphans: map[string]int64{}, own: map[int64]struct{}{}, writing: map[uint64]int{}, early: map[uint64]int{}}
	s.ctx, s.stop = context.WithCancel(context.Background())
	ctx, cancel := s.reqCtx()
	defer cancel()
	if s.hold, err = c.Grant(ctx, o.HoldTTL); err != nil {
		c.Close()
		return nil, s.fail(err)
	}
	s.wg.Add(1)
	go s.keepAlive() // owned: Close ends and waits for it
	return s, nil
}

// reqCtx bounds one request: each member once.
func (s *store) reqCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Duration(len(s.o.Endpoints))*s.o.Timeout+time.Second)
}

// fail names the store in err.
func (s *store) fail(err error) error {
	if errors.Is(err, tasks.ErrTerminal) || errors.Is(err, tasks.ErrTakenOver) || errors.Is(err, tasks.ErrClosed) {
		return err
	}
	if errors.Is(err, etcdv3.ErrUnreachable) {
		return fmt.Errorf("%w: %w", tasks.ErrUnavailable, err)
	}
	return fmt.Errorf("tasks: etcd store (%s): %w", s.c.Endpoints(), err)
}

func (s *store) key(kind, id string) []byte { return []byte(s.pfx + kind + "/" + id) }

// keepAlive renews the hold a few times per ttl. When the hold is gone
// (it ran out while etcd was unreachable) a new one is taken, and the
// tasks held under the old one are given up: another replica may have
// taken them over.
func (s *store) keepAlive() {
	defer s.wg.Done()
	every := max(s.o.HoldTTL/3, 100*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		hold := s.hold
		s.mu.Unlock()
		// Patient: through a member's loss and an election, until the
		// hold would have run out.
		ctx, cancel := context.WithTimeout(s.ctx, max(every, s.o.HoldTTL-time.Since(renewed)))
		_, err := s.c.KeepAlive(ctx, hold)
		cancel()
		if err == nil {
			renewed = time.Now()
			continue
		}
		if s.ctx.Err() != nil {
			return
		}
		if !errors.Is(err, etcdv3.ErrLeaseGone) && time.Since(renewed) < s.o.HoldTTL {
			continue // etcd unreachable for now; the hold may still stand
		}
		// The hold is gone, or may be: whatever it held may run
		// elsewhere now.
		ctx, cancel = context.WithTimeout(s.ctx, every)
		next, gerr := s.c.Grant(ctx, s.o.HoldTTL)
		cancel()
		s.mu.Lock()
		lost := len(s.mine) > 0 || errors.Is(err, etcdv3.ErrLeaseGone)
		s.mine = map[string]struct{}{}
		if gerr == nil {
			s.hold = next
			renewed = time.Now()
		}
		fn := s.lost
		s.mu.Unlock()
		if lost {
			s.log.Warn("tasks: etcd store: this server's hold on its tasks lapsed; they are stopped here and taken over elsewhere",
				"endpoints", s.c.Endpoints(), "err", err)
			if fn != nil {
				fn()
			}
		}
	}
}

// expiryLease returns the lease t's record is put on: one per deadline
// (rounded up to 10 s), shared by the tasks that end near each other.
func (s *store) expiryLease(ctx context.Context, t tasks.Task) (int64, error) {
	if t.TTL <= 0 {
		return 0, nil
	}
	now := time.Now()
	end := t.Created.Add(t.TTL)
	if end.Before(now) {
		end = now
	}
	deadline := (end.Add(expiryGrace).Unix()/10 + 1) * 10
	s.mu.Lock()
	for d := range s.expiry {
		if d < now.Unix()+5 {
			delete(s.expiry, d) // about to run out: not given to new writes
		}
	}
	id, ok := s.expiry[deadline]
	s.mu.Unlock()
	if ok {
		return id, nil
	}
	id, err := s.c.Grant(ctx, time.Duration(deadline-now.Unix())*time.Second)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.expiry[deadline] = id
	s.mu.Unlock()
	return id, nil
}

func (s *store) check() error {
	if s.closed.Load() {
		return tasks.ErrClosed
	}
	if s.broken.Load() {
		return s.fail(errors.New("writes broken (test)"))
	}
	return nil
}

// Put implements tasks.Store (see the package doc for what it requires).
func (s *store) Put(t tasks.Task) error {
	if err := s.check(); err != nil {
		return err
	}
	val, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("tasks: etcd store: %w", err)
	}
	ctx, cancel := s.reqCtx()
	defer cancel()
	for try := 0; ; try++ {
		lease, err := s.expiryLease(ctx, t)
		if err != nil {
			return s.fail(err)
		}
		err = s.put(ctx, t, val, lease)
		if try == 0 && etcdv3.IsLeaseNotFound(err) {
			s.mu.Lock()
			s.expiry = map[int64]int64{} // a lease ran out early: take new ones
			s.mu.Unlock()
			continue
		}
		return err
	}
}

func (s *store) put(ctx context.Context, t tasks.Task, val []byte, lease int64) error {
	tk, ek, ok := s.key("t", t.ID), s.key("e", t.ID), s.key("o", t.ID)
	s.mu.Lock()
	_, held := s.mine[t.ID]
	hold := s.hold
	s.mu.Unlock()
	reads := []etcdv3.Op{etcdv3.OpGet(ek), etcdv3.OpGet(ok)}
	var cmps []etcdv3.Cmp
	var then []etcdv3.Op
	switch {
	case t.Status.Terminal():
		// The first end wins; the holder's own end also needs its hold.
		cmps = []etcdv3.Cmp{etcdv3.VersionIs(ek, 0)}
		if held {
			cmps = append(cmps, etcdv3.LeaseIs(ok, hold))
		}
		then = []etcdv3.Op{etcdv3.OpPut(tk, val, lease), etcdv3.OpPut(ek, nil, lease), etcdv3.OpDelete(ok, nil)}
	case held:
		cmps = []etcdv3.Cmp{etcdv3.VersionIs(ek, 0), etcdv3.LeaseIs(ok, hold)}
		then = []etcdv3.Op{etcdv3.OpPut(tk, val, lease)}
	default:
		// A new task, held from its first write.
		cmps = []etcdv3.Cmp{etcdv3.VersionIs(tk, 0), etcdv3.VersionIs(ok, 0)}
		then = []etcdv3.Op{etcdv3.OpPut(tk, val, lease), etcdv3.OpPut(ok, []byte(s.o.Name), hold), etcdv3.OpDelete(ek, nil)}
	}
	res, err := s.writeOwn(val, func() (etcdv3.TxnResult, error) { return s.c.Txn(ctx, cmps, then, reads) })
	if err != nil {
		return s.fail(err)
	}
	if !res.Succeeded {
		if len(res.Gets) == 2 && len(res.Gets[0]) > 0 {
			return fmt.Errorf("task %s: %w", t.ID, tasks.ErrTerminal)
		}
		if !t.Status.Terminal() && !held && len(res.Gets) == 2 && len(res.Gets[1]) > 0 && res.Gets[1][0].Lease == hold {
			// A new task whose first write was applied though its answer
			// was lost (the request was sent again): ours.
			s.mu.Lock()
			s.mine[t.ID] = struct{}{}
			s.mu.Unlock()
			return nil
		}
		s.mu.Lock()
		delete(s.mine, t.ID)
		s.mu.Unlock()
		return fmt.Errorf("task %s: %w", t.ID, tasks.ErrTakenOver)
	}
	s.mu.Lock()
	if t.Status.Terminal() {
		delete(s.mine, t.ID)
	} else {
		s.mine[t.ID] = struct{}{}
	}
	s.mu.Unlock()
	return nil
}

// writeOwn runs txn, which writes the record val, so that the watch never
// reports that write as another replica's: by its revision once the write
// has returned, by its bytes while it is on its way (the watch may see it
// first). A task's status told twice, once by this replica and once as if
// from another, was the cost.
func (s *store) writeOwn(val []byte, txn func() (etcdv3.TxnResult, error)) (etcdv3.TxnResult, error) {
	h := maphash.Bytes(ownSeed, val)
	s.mu.Lock()
	s.writing[h]++
	s.mu.Unlock()
	res, err := txn()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writing[h]--; s.writing[h] <= 0 {
		delete(s.writing, h)
	}
	if err != nil || !res.Succeeded {
		return res, err
	}
	if s.early[h] > 0 {
		if s.early[h]--; s.early[h] == 0 {
			delete(s.early, h)
		}
		return res, nil
	}
	s.ownLocked(res.Revision)
	return res, nil
}

// ownSeed hashes the records being written (writeOwn).
var ownSeed = maphash.MakeSeed()

// mineLocked reports whether a record the watch brought is this store's
// own write, and forgets it.
func (s *store) mineLocked(kv etcdv3.KV) bool {
	if _, ok := s.own[kv.ModRevision]; ok {
		delete(s.own, kv.ModRevision)
		return true
	}
	if len(s.writing) == 0 {
		return false
	}
	h := maphash.Bytes(ownSeed, kv.Value)
	if s.writing[h] == 0 {
		return false
	}
	s.early[h]++
	return true
}

// ownLocked notes a revision this store wrote, so that its watch does not
// report it as another's.
func (s *store) ownLocked(rev int64) {
	if len(s.own) > 4096 {
		s.own = map[int64]struct{}{} // events lost to a compaction: forget them
	}
	s.own[rev] = struct{}{}
}

// Get implements tasks.Store.
func (s *store) Get(id string) (tasks.Task, bool, error) {
	if s.closed.Load() {
		return tasks.Task{}, false, tasks.ErrClosed
	}
	ctx, cancel := s.reqCtx()
	defer cancel()
	kvs, _, err := s.c.Range(ctx, s.key("t", id), nil)
	if err != nil {
		return tasks.Task{}, false, s.fail(err)
	}
	if len(kvs) == 0 {
		return tasks.Task{}, false, nil
	}
	var t tasks.Task
	if err := json.Unmarshal(kvs[0].Value, &t); err != nil {
		return tasks.Task{}, false, s.fail(fmt.Errorf("task %s: undecodable record: %w", id, err))
	}
	return t, true, nil
}

// Delete implements tasks.Store: the record and its marks, together.
func (s *store) Delete(id string) error {
	if err := s.check(); err != nil {
		return err
	}
	ctx, cancel := s.reqCtx()
	defer cancel()
	_, err := s.c.Txn(ctx, nil, []etcdv3.Op{etcdv3.OpDelete(s.key("t", id), nil), etcdv3.OpDelete(s.key("e", id), nil),
		etcdv3.OpDelete(s.key("o", id), nil)}, nil)
	if err != nil {
		return s.fail(err)
	}
	s.mu.Lock()
	delete(s.mine, id)
	s.mu.Unlock()
	return nil
}

// All implements tasks.Store: every record, read at one revision.
func (s *store) All() ([]tasks.Task, error) {
	if s.closed.Load() {
		return nil, tasks.ErrClosed
	}
	ctx, cancel := s.reqCtx()
	defer cancel()
	p := s.key("t", "")
	kvs, _, err := s.c.Range(ctx, p, etcdv3.PrefixEnd(p))
	if err != nil {
		return nil, s.fail(err)
	}
	out := make([]tasks.Task, 0, len(kvs))
	for _, kv := range kvs {
		var t tasks.Task
		if err := json.Unmarshal(kv.Value, &t); err != nil {
			s.log.Warn("tasks: etcd store: skipped an undecodable record", "key", string(kv.Key), "err", err)
			continue
		}
		out = append(out, t)
	}
	return out, nil
}

// Orphans implements tasks.Shared: the live records without a hold, read
// at one revision (a transaction of two ranges).
func (s *store) Orphans() ([]tasks.Task, error) {
	if s.closed.Load() {
		return nil, tasks.ErrClosed
	}
	ctx, cancel := s.reqCtx()
	defer cancel()
	tp, op := s.key("t", ""), s.key("o", "")
	res, err := s.c.Txn(ctx, nil, []etcdv3.Op{etcdv3.OpRange(tp, etcdv3.PrefixEnd(tp)), etcdv3.OpRange(op, etcdv3.PrefixEnd(op))}, nil)
	if err != nil {
		return nil, s.fail(err)
	}
	if len(res.Gets) != 2 {
		return nil, s.fail(errors.New("a transaction of two ranges answered otherwise"))
	}
	held := map[string]bool{}
	for _, kv := range res.Gets[1] {
		held[strings.TrimPrefix(string(kv.Key), string(op))] = true
	}
	var out []tasks.Task
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, kv := range res.Gets[0] {
		id := strings.TrimPrefix(string(kv.Key), string(tp))
		if held[id] {
			continue
		}
		var t tasks.Task
		if json.Unmarshal(kv.Value, &t) != nil || t.Status.Terminal() {
			continue
		}
		s.orphans[id] = kv.ModRevision
		out = append(out, t)
	}
	return out, nil
}

// Adopt implements tasks.Shared: one transaction, which only one replica
// wins, requires the record unchanged since Orphans read it, unheld and
// not ended.
func (s *store) Adopt(t tasks.Task) (bool, error) {
	if err := s.check(); err != nil {
		return false, err
	}
	s.mu.Lock()
	rev, ok := s.orphans[t.ID]
	delete(s.orphans, t.ID)
	hold := s.hold
	s.mu.Unlock()
	if !ok {
		return false, nil
	}
	val, err := json.Marshal(t)
	if err != nil {
		return false, fmt.Errorf("tasks: etcd store: %w", err)
	}
	ctx, cancel := s.reqCtx()
	defer cancel()
	lease, err := s.expiryLease(ctx, t)
	if err != nil {
		return false, s.fail(err)
	}
	tk, ek, ok2 := s.key("t", t.ID), s.key("e", t.ID), s.key("o", t.ID)
	then := []etcdv3.Op{etcdv3.OpPut(tk, val, lease)}
	if t.Status.Terminal() {
		then = append(then, etcdv3.OpPut(ek, nil, lease))
	} else {
		then = append(then, etcdv3.OpPut(ok2, []byte(s.o.Name), hold))
	}
	res, err := s.writeOwn(val, func() (etcdv3.TxnResult, error) {
		return s.c.Txn(ctx, []etcdv3.Cmp{etcdv3.ModRevisionIs(tk, rev), etcdv3.VersionIs(ok2, 0), etcdv3.VersionIs(ek, 0)}, then, nil)
	})
	if err != nil {
		return false, s.fail(err)
	}
	if !res.Succeeded {
		return false, nil
	}
	s.mu.Lock()
	if !t.Status.Terminal() {
		s.mine[t.ID] = struct{}{}
	}
	s.mu.Unlock()
	return true, nil
}

// Watch implements tasks.Shared. The watch starts from the revision now
// and resumes from where it broke (a member down); history compacted
// away is reported as orphans maybe (the caller looks again).
func (s *store) Watch(w tasks.Watchers) {
	s.mu.Lock()
	s.lost = w.Lost
	s.mu.Unlock()
	changed, orphaned := w.Changed, w.Orphaned
	if changed == nil {
		changed = func(tasks.Task) {}
	}
	if orphaned == nil {
		orphaned = func() {}
	}
	s.wg.Add(1)
	go func() { // owned: Close ends and waits for it
		defer s.wg.Done()
		tp, op, up, ep := s.key("t", ""), s.key("o", ""), s.key("u", ""), s.key("e", "")
		from := int64(0)
		for s.ctx.Err() == nil {
			if from == 0 {
				ctx, cancel := s.reqCtx()
				_, rev, err := s.c.Range(ctx, tp, nil)
				cancel()
				if err != nil {
					select {
					case <-s.ctx.Done():
					case <-time.After(s.o.Timeout):
					}
					continue
				}
				from = rev + 1
				orphaned() // whatever happened before the watch
			}
			err := s.c.Watch(s.ctx, []byte(s.pfx), etcdv3.PrefixEnd([]byte(s.pfx)), from, func(evs []etcdv3.Event) {
				// A hold deleted in the transaction that ended its task
				// (which puts the "ended" key at the same revision, so in
				// the same response) is no orphan; any other deletion is
				// a lease that ran out or was revoked. Looking for
				// orphans reads every record: done on every task's end,
				// it made a task's cost grow with the tasks kept.
				var released []string
				var ended map[string]bool
				for _, ev := range evs {
					from = max(from, ev.KV.ModRevision+1)
					key := string(ev.KV.Key)
					switch {
					case ev.Delete && strings.HasPrefix(key, string(op)):
						released = append(released, strings.TrimPrefix(key, string(op)))
					case !ev.Delete && strings.HasPrefix(key, string(ep)):
						if ended == nil {
							ended = map[string]bool{}
						}
						ended[strings.TrimPrefix(key, string(ep))] = true
					case !ev.Delete && strings.HasPrefix(key, string(up)):
						s.answered(w.Answered, key, strings.TrimPrefix(key, string(up)), ev.KV.Value)
					case !ev.Delete && strings.HasPrefix(key, string(tp)):
						s.mu.Lock()
						mine := s.mineLocked(ev.KV)
						s.mu.Unlock()
						var t tasks.Task
						if !mine && json.Unmarshal(ev.KV.Value, &t) == nil {
							changed(t)
						}
					}
				}
				for _, id := range released {
					if !ended[id] {
						orphaned()
						break
					}
				}
			}, nil)
			if errors.Is(err, etcdv3.ErrCompacted) {
				from = 0
			}
		}
	}()
}

// Forward implements tasks.Shared: the answers are a key of their own
// (u/ID/<random>), which the holder's watch reads and deletes. It lives a
// minute at most: answers for a task nobody runs are dropped with it.
func (s *store) Forward(id string, answers map[string]json.RawMessage) error {
	if err := s.check(); err != nil {
		return err
	}
	val, err := json.Marshal(answers)
	if err != nil {
		return fmt.Errorf("tasks: etcd store: %w", err)
	}
	ctx, cancel := s.reqCtx()
	defer cancel()
	lease, err := s.c.Grant(ctx, expiryGrace)
	if err != nil {
		return s.fail(err)
	}
	// Only while the task is held and live: else they would wait for no
	// one.
	k := s.key("u", id+"/"+tasks.NewID(""))
	res, err := s.c.Txn(ctx, []etcdv3.Cmp{{Key: s.key("o", id), Target: "VERSION", Result: "GREATER", Num: 0}},
		[]etcdv3.Op{etcdv3.OpPut(k, val, lease)}, nil)
	if err != nil {
		return s.fail(err)
	}
	// Not held: the task ended, or its replica was lost and whoever
	// takes it over runs it again from the start, asking again.
	_ = res.Succeeded
	return nil
}

// answered hands forwarded answers to the task's holder, when that is
// this replica, and deletes them.
func (s *store) answered(fn func(string, map[string]json.RawMessage), key, rest string, val []byte) {
	id, _, ok := strings.Cut(rest, "/")
	s.mu.Lock()
	_, mine := s.mine[id]
	s.mu.Unlock()
	if !ok || !mine {
		return
	}
	var answers map[string]json.RawMessage
	if json.Unmarshal(val, &answers) == nil && fn != nil {
		fn(id, answers)
	}
	ctx, cancel := s.reqCtx()
	defer cancel()
	s.c.Delete(ctx, []byte(key), nil)
}

// Close implements tasks.Store: it stops the keep-alive and the watch and
// revokes the hold, so that the live tasks left (the server stopping)
// are taken over by another replica at once rather than after the ttl.
func (s *store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.stop()
	s.wg.Wait()
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Timeout)
	defer cancel()
	err := s.c.Revoke(ctx, hold)
	s.c.Close()
	if err != nil {
		s.log.Warn("tasks: etcd store: could not revoke the hold at close; its tasks are taken over once it runs out",
			"ttl", s.o.HoldTTL, "err", err)
	}
	return nil
}

var _ tasks.Shared = (*store)(nil)
