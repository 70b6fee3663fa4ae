package supervisor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/anthdm/hollywood/actor"
)

type startChildRequest struct {
	spec  ChildSpec
	reply chan startChildReply
}

type startChildReply struct {
	pid *actor.PID
	err error
}

type terminateChildRequest struct {
	id    string
	reply chan error
}

// New returns a Producer for a supervisor, to be used as the Start of a
// ChildSpec so that supervisors nest. Each call of the Producer makes a
// fresh supervisor, so a restarted subtree starts from its Spec again. A
// Spec that fails validation makes the supervisor exit at once with the
// validation error. Use Start for the root of a tree: a supervisor spawned
// directly with Engine.Spawn has no one to recover its panics or hear its
// exit.
func New(spec Spec) actor.Producer {
	return func() actor.Receiver { return newSupervisor(spec) }
}

// Root is the handle of a supervision tree started with Start. It is how
// non-actor code (main, an oklog/run actor) waits for the tree and learns
// why it ended.
type Root struct {
	e        *actor.Engine
	pid      *actor.PID
	sig      *stopSignal
	err      error
	stopOnce sync.Once
}

// Start spawns a root supervisor on e and starts its children, in order,
// before returning: a tree is either fully started or its failures are
// already on their way through the normal restart path (a child that
// panics in Started is restarted like any other). The supervisor's PID ID
// is "/"+name (hollywood IDs are always kind/id; the kind is left empty),
// so its children are "/name/<child ID>".
func Start(e *actor.Engine, name string, spec Spec) (*Root, error) {
	if e == nil {
		return nil, errors.New("supervisor: nil engine")
	}
	if name == "" {
		return nil, errors.New("supervisor: empty root name")
	}
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if spec.Name == "" {
		spec.Name = name
	}
	if e.Registry.GetPID("", name) != nil {
		return nil, fmt.Errorf("supervisor: %q is already running", name)
	}
	r := &Root{e: e, sig: newStopSignal()}
	var ours atomic.Bool // hollywood answers a duplicate ID with the existing PID and no error
	producer := func() actor.Receiver {
		ours.Store(true)
		return &cell{
			start:  New(spec),
			sig:    r.sig,
			report: func(_ *actor.Context, reason error) { r.err = reason },
		}
	}
	r.pid = e.Spawn(producer, "", actor.WithID(name),
		actor.WithMaxRestarts(math.MaxInt32),
		actor.WithRestartDelay(lastResortRestartDelay))
	if !ours.Load() {
		return nil, fmt.Errorf("supervisor: %q is already running", name)
	}
	return r, nil
}

// PID is the root supervisor's PID, for StartChild, TerminateChild and
// ChildPID.
func (r *Root) PID() *actor.PID { return r.pid }

// Done is closed when the supervisor has exited, which it does only after
// all its children have stopped or been abandoned after their Shutdown time.
func (r *Root) Done() <-chan struct{} { return r.sig.ch }

// Err is the supervisor's exit reason once Done is closed (nil before): nil
// if a significant child exited normally, ErrShutdown after Stop, a
// *GaveUpError after a crash loop, or a significant child's reason. Use
// IsAbnormal to tell failure from orderly ends.
func (r *Root) Err() error {
	select {
	case <-r.sig.ch:
		return r.err
	default:
		return nil
	}
}

// Stop shuts the tree down in order (children in reverse start order, each
// bounded by its Shutdown time) and waits for Done or ctx. It returns nil
// when the tree ended normally or by shutdown, the exit reason when the tree
// had already failed on its own, and ctx.Err() if ctx ends first (the
// shutdown goes on in the background). After Stop, Err reports ErrShutdown.
// Stop may be called more than once and from any goroutine.
func (r *Root) Stop(ctx context.Context) error {
	r.stopOnce.Do(func() { r.e.Send(r.pid, shutdownRequest{}) })
	select {
	case <-r.sig.ch:
		if IsAbnormal(r.err) {
			return r.err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ChildPID returns the PID a child with this ID has (or will have) under
// sup. It does not say whether the child is running: a message sent to it
// while it restarts becomes a dead letter, as with any stopped actor.
func ChildPID(sup *actor.PID, id string) *actor.PID {
	return sup.Child(id)
}

// StartChild adds a child to a running supervisor and starts it, for
// children that come and go (simple_one_for_one style). It may be called
// from any goroutine except the supervisor's own; when it returns without an
// error the child has been spawned (its Started has run). The child then
// follows the supervisor's strategy like any other; a dynamic child is
// usually Temporary or Transient.
func StartChild(e *actor.Engine, sup *actor.PID, spec ChildSpec) (*actor.PID, error) {
	sh, err := reachable(e, sup, "StartChild")
	if err != nil {
		return nil, err
	}
	reply := make(chan startChildReply, 1)
	e.Send(sup, startChildRequest{spec: spec, reply: reply})
	select {
	case r := <-reply:
		return r.pid, r.err
	case <-sh.gone:
		return nil, ErrNotRunning
	}
}

// TerminateChild stops a child (bounded by its Shutdown time) and forgets
// it, so it is not restarted. It returns once the child has stopped, with an
// error if it had to be abandoned or the ID is unknown.
func TerminateChild(e *actor.Engine, sup *actor.PID, id string) error {
	sh, err := reachable(e, sup, "TerminateChild")
	if err != nil {
		return err
	}
	reply := make(chan error, 1)
	e.Send(sup, terminateChildRequest{id: id, reply: reply})
	select {
	case err := <-reply:
		return err
	case <-sh.gone:
		return ErrNotRunning
	}
}

func reachable(e *actor.Engine, sup *actor.PID, op string) (*shared, error) {
	sh := lookup(e, sup)
	if sh == nil {
		return nil, ErrNotRunning
	}
	// Only while the supervisor runs a callout can this be its goroutine;
	// otherwise there is no need to find out which goroutine this is.
	if g := sh.goid.Load(); g != 0 && g == goid() {
		return nil, fmt.Errorf("supervisor: %s called on %s's own goroutine (from a child's Initialized/Started or an EventHook); it would deadlock: send yourself a message and call it from Receive", op, sup.ID)
	}
	return sh, nil
}

// RootPID is the PID that Start(e, name, ...) gives the root supervisor,
// known before it starts: siblings in a tree can then be wired to each
// other's PIDs (ChildPID) when their producers are built.
func RootPID(e *actor.Engine, name string) *actor.PID {
	return actor.NewPID(e.Address(), "/"+name)
}

// ExitSignal, sent to a supervisor, makes it stop its children (in reverse
// start order) and exit with Reason, as Erlang's exit(Pid, Reason) does: an
// abnormal Reason is seen by its own supervisor as a failure, which restarts
// it or escalates by intensity. A nil Reason is ignored. This is how a
// component that detects a failure it cannot contain (a handler crash loop,
// say) hands it to the tree.
type ExitSignal struct{ Reason error }
