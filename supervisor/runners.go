package supervisor

import (
	"cmp"
	"sync"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// Runners lends goroutines to actors for a stretch of work: a handler's
// call, or a Loop's burst of messages (OnRunners).
//
// An actor needs a goroutine only while it works, and a goroutine that has
// worked keeps the stack it grew: starting a fresh one per stretch pays
// for that growth again each time (a third of a tools/call's CPU, by
// profile, before OwnGoroutine), while giving each actor one for life
// costs a stack per actor, most of them idle when actors are many and
// mostly waiting (a Streamable HTTP server's legacy sessions: 256 sessions
// held 512 stacks, about 4 KiB each, which the collector's pacing counts
// again in the heap goal). Runners keeps as many goroutines as stretches
// run at once: the most recently used goes first (its stack is the
// warmest), and one idle through a whole sweep (1–2 s) ends.
//
// A Runners is owned by the tree its actors run in: Actor is its child
// there, placed before them, so it stops after they have.
type Runners struct {
	mu     sync.Mutex
	idle   []*runner // idle runners, the longest idle first
	epoch  uint64    // sweeps so far
	closed bool
	sweep  *time.Timer   // armed while runners are idle
	every  time.Duration // the sweep period (0: sweepEvery)
	wg     sync.WaitGroup
}

// runner is one lent goroutine; it runs what reaches its channel.
type runner struct {
	jobs  chan Job
	epoch uint64 // the sweep count when it last went idle
}

// Job is a stretch of work for a Runners' goroutine. A pointer to the
// actor's own state makes a good one: lending a goroutine then allocates
// nothing.
type Job interface{ Run() }

// sweepEvery is how often idle runners are looked at; one idle through a
// whole sweep period ends at the next.
const sweepEvery = time.Second

// NewRunners returns an empty pool, open.
func NewRunners() *Runners { return &Runners{} }

// Go runs j on an idle goroutine of the pool, or on a new one. It reports
// false, and runs nothing, once the pool is closed.
func (p *Runners) Go(j Job) bool {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return false
	}
	if n := len(p.idle); n > 0 {
		r := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		r.jobs <- j // room for one: an idle runner's channel is empty
		return true
	}
	p.wg.Add(1) // under the lock: Close's Wait comes after it or sees closed
	p.mu.Unlock()
	r := &runner{jobs: make(chan Job, 1)}
	r.jobs <- j
	go p.loop(r)
	return true
}

func (p *Runners) loop(r *runner) {
	defer p.wg.Done()
	for j := range r.jobs {
		j.Run()
		if !p.rest(r) {
			return
		}
	}
}

// rest puts r back among the idle, unless the pool is closed.
func (p *Runners) rest(r *runner) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	r.epoch = p.epoch
	p.idle = append(p.idle, r)
	if p.sweep == nil {
		p.sweep = time.AfterFunc(p.period(), p.sweepIdle)
	}
	return true
}

// sweepIdle ends the runners idle since before the last sweep, and comes
// again while any are idle.
func (p *Runners) sweepIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.epoch++
	n := 0
	for n < len(p.idle) && p.idle[n].epoch+1 < p.epoch {
		close(p.idle[n].jobs)
		n++
	}
	p.idle = append(p.idle[:0], p.idle[n:]...)
	clear(p.idle[len(p.idle):cap(p.idle)])
	if len(p.idle) == 0 {
		p.sweep = nil
		return
	}
	p.sweep.Reset(p.period())
}

func (p *Runners) period() time.Duration { return cmp.Or(p.every, sweepEvery) }

// Close ends the idle goroutines and waits for every one to end: a busy
// one ends when its job returns (a handler that ignores its context holds
// this up, as it holds up its actor's stop; the owner's Shutdown time
// bounds it). Go runs nothing after it.
func (p *Runners) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		if p.sweep != nil {
			p.sweep.Stop()
		}
		for _, r := range p.idle {
			close(r.jobs)
		}
		p.idle = nil
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Actor returns a Producer for the pool's owner in a tree: an actor that
// closes the pool when it stops (and opens it again if the tree restarts
// it). Put it before the actors that use the pool, so that it stops after
// them.
func (p *Runners) Actor() actor.Producer {
	return func() actor.Receiver { return runnersOwner{p} }
}

type runnersOwner struct{ p *Runners }

func (o runnersOwner) Receive(c *actor.Context) {
	switch c.Message().(type) {
	case actor.Started: // again, if its tree restarted it
		o.p.mu.Lock()
		o.p.closed = false
		o.p.mu.Unlock()
	case actor.Stopped:
		o.p.Close()
	}
}
