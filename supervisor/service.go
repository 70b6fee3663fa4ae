package supervisor

import "github.com/anthdm/hollywood/actor"

// Service returns a Producer of a child that is not an actor at heart: an
// HTTP server, a pool of processes, a journal. It lets such a piece take
// its place in a tree, so that it starts in order with its siblings and is
// stopped in reverse by the tree, rather than by hand around it.
//
// start runs when the child starts, on its supervisor's goroutine (as any
// child's Started does), so a service started after its siblings finds them
// running; it must not call this package's API on its own supervisor. An
// error from start is the child's exit reason. exit, given to start, ends
// the child later with a reason, from any goroutine: how a service that
// fails on its own (a listener that breaks) tells its supervisor.
//
// stop runs when the child stops, on the child's goroutine, and only if
// start succeeded; the supervisor waits for it up to the ChildSpec's
// Shutdown, then abandons it. A service that should end its supervisor when
// it fails is usually Temporary and Significant.
func Service(start func(exit func(reason error)) error, stop func()) actor.Producer {
	return func() actor.Receiver { return &service{start: start, stop: stop} }
}

type service struct {
	start   func(exit func(error)) error
	stop    func()
	started bool
}

// serviceExit is what exit sends the service's own actor.
type serviceExit struct{ reason error }

func (s *service) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		e, pid := c.Engine(), c.PID()
		if s.start != nil {
			if err := s.start(func(reason error) { e.Send(pid, serviceExit{reason}) }); err != nil {
				Exit(c, err)
				return
			}
		}
		s.started = true
	case serviceExit:
		Exit(c, m.reason)
	case actor.Stopped:
		if s.started && s.stop != nil {
			s.stop()
		}
	}
}
