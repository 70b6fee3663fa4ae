package gateway

import (
	"context"
	"errors"
	"reflect"
	"sync"
)

// Changes is what Reload did, each list of backend names in the order of
// the configuration it was given (Removed: of the one it replaced).
type Changes struct {
	// Added were not in the configuration before, and were started.
	Added []string
	// Removed are no longer in it, and were stopped.
	Removed []string
	// Restarted are in both with a configuration that changed: stopped,
	// then started with the new one.
	Restarted []string
	// Unchanged were left running as they were, with their calls in
	// flight.
	Unchanged []string
}

// errClosed is Reload's error once Close has begun.
var errClosed = errors.New("gateway: closed")

// Reload makes the gateway serve the backends of cfg from now on, as a
// supervisor's children change: a backend cfg no longer names is stopped
// (as Close stops one: its calls in flight are answered with an error)
// and what it offered is withdrawn; a new one is started; one whose
// configuration changed is stopped and started again with the new one;
// the others go on untouched, their calls in flight included. The
// client's lists change with it (it gets list_changed). Names are ranked
// as they were: where two backends offer one name, the one that was
// there first keeps it, and a restarted backend keeps its rank.
//
// cfg is checked first, as New checks it: an error leaves the gateway as
// it was. Reload then waits, as Start does, until each backend it started
// has been up or failed once, or ctx ends (they go on starting in the
// background). It must be called after Start; calls are serialised with
// each other and with Close.
func (g *Gateway) Reload(ctx context.Context, cfg *Config) (Changes, error) {
	bcs, err := checkBackends(cfg)
	if err != nil {
		return Changes{}, err
	}
	select {
	case <-g.startDone:
	default:
		return Changes{}, errors.New("gateway: Reload before Start has returned")
	}
	started, replaced, ch, err := g.reload(bcs)
	if err != nil {
		return ch, err
	}
	g.configureSearch(cfg)
	g.configureEndpoints(cfg)
	// Outside reloadMu: Close ends the wait (it settles every backend).
	waitSettled(ctx, started)
	// A restarted backend's names stayed with its stopped predecessor,
	// whose calls are told it is restarting, until its successor took
	// them; those it did not take go now.
	for _, b := range replaced {
		b.withdraw()
	}
	if len(replaced) > 0 {
		g.afterWithdraw()
	}
	return ch, nil
}

// reload is Reload's change, under reloadMu. It returns the backends it
// started, and the stopped ones they replace, which Reload withdraws once
// their successors have settled.
func (g *Gateway) reload(bcs []Backend) (started, replaced []*backend, ch Changes, err error) {
	g.reloadMu.Lock()
	defer g.reloadMu.Unlock()
	if g.closing.Load() || g.sup == nil {
		return nil, nil, ch, errClosed
	}
	old := g.all()
	byName := make(map[string]*backend, len(old))
	for _, b := range old {
		byName[b.name] = b
	}
	next := make([]*backend, 0, len(bcs))
	var gone []*backend
	kept := map[*backend]bool{}
	named := make(map[string]bool, len(bcs))
	for _, bc := range bcs {
		named[bc.Name] = true
		b := byName[bc.Name]
		switch {
		case b != nil && reflect.DeepEqual(b.cfg, bc):
			kept[b] = true
			next = append(next, b)
			ch.Unchanged = append(ch.Unchanged, b.name)
			continue
		case b != nil:
			ch.Restarted = append(ch.Restarted, bc.Name)
			nb := newBackend(g, b.index, g.nextID, bc)
			g.nextID++
			next = append(next, nb)
			started = append(started, nb)
		default:
			ch.Added = append(ch.Added, bc.Name)
			nb := newBackend(g, g.nextIndex, g.nextID, bc)
			g.nextIndex++
			g.nextID++
			next = append(next, nb)
			started = append(started, nb)
		}
	}
	var removed []*backend
	for _, b := range old {
		if kept[b] {
			continue
		}
		gone = append(gone, b)
		why := "was removed from the gateway's configuration"
		if named[b.name] {
			replaced = append(replaced, b)
			why = "is restarting with a new configuration; try again shortly"
		} else {
			removed = append(removed, b)
			ch.Removed = append(ch.Removed, b.name)
		}
		g.log.Info("gateway: reload: stopping a backend", "backend", b.name)
		b.removed.Store(true)
		b.closing(why)
	}
	g.stopBackends(gone)
	for _, b := range removed {
		b.withdraw()
	}
	g.backends.Store(&next)
	if len(removed) > 0 {
		g.afterWithdraw()
	}
	for _, b := range started {
		g.log.Info("gateway: reload: starting a backend", "backend", b.name)
		b.start()
	}
	return started, replaced, ch, nil
}

// afterWithdraw lets the backends take the names that withdrawn ones held
// (when two offer one), and gives the clients the instructions of those
// left.
func (g *Gateway) afterWithdraw() {
	for _, b := range g.all() {
		b.reapply()
	}
	g.instrMu.Lock()
	g.setInstructions()
	g.instrMu.Unlock()
}

// stopBackends stops the supervisors of bs, in parallel, and waits for
// them: each closes its server as client.Client.Close does.
func (g *Gateway) stopBackends(bs []*backend) {
	var wg sync.WaitGroup
	for _, b := range bs {
		wg.Go(func() { b.stopSupervisor("") })
	}
	wg.Wait()
}

// withdraw takes out of the gateway's server everything a removed backend
// put there, its instructions, and the resources it followed for the
// clients (the backend that offers them next follows them instead).
func (b *backend) withdraw() {
	b.regMu.Lock()
	b.apply(&lists{}, "")
	b.reg.last = nil
	b.regMu.Unlock()
	b.g.forgetInstructions(b)
	g := b.g
	g.subMu.Lock()
	for uri, via := range g.subVia {
		if via == b {
			delete(g.subVia, uri)
		}
	}
	g.subMu.Unlock()
}

// reapply registers the backend's last lists again, so that it takes the
// names a removed backend held before it.
func (b *backend) reapply() {
	b.mu.Lock()
	failed := b.state == Failed
	b.mu.Unlock()
	if failed {
		b.markUnavailable()
		return
	}
	b.regMu.Lock()
	if b.reg.last != nil && !b.removed.Load() {
		b.apply(b.reg.last, "")
	}
	b.regMu.Unlock()
	b.g.adoptSubscriptions()
}
