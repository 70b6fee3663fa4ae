package supervisor

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// Restart says when a child that exited is started again.
type Restart int

const (
	// Permanent children are always restarted, whatever the reason.
	Permanent Restart = iota
	// Transient children are restarted only after an abnormal exit (see
	// IsAbnormal): a normal exit or a shutdown lets them go.
	Transient
	// Temporary children are never restarted, not even when a sibling's
	// failure makes the strategy stop them.
	Temporary
)

func (r Restart) String() string {
	switch r {
	case Permanent:
		return "permanent"
	case Transient:
		return "transient"
	case Temporary:
		return "temporary"
	}
	return fmt.Sprintf("Restart(%d)", int(r))
}

// restarts applies the restart type to an exit reason.
func (r Restart) restarts(reason error) bool {
	switch r {
	case Permanent:
		return true
	case Transient:
		return IsAbnormal(reason)
	}
	return false
}

// Strategy says which siblings are restarted along with a child that failed.
type Strategy int

const (
	// OneForOne restarts only the child that exited.
	OneForOne Strategy = iota
	// OneForAll stops every other child (in reverse start order) and then
	// restarts them all in start order: for children that cannot work
	// without each other.
	OneForAll
	// RestForOne stops the children started after the one that exited (in
	// reverse order) and restarts it and them in start order: for chains in
	// which later children depend on earlier ones.
	RestForOne
)

func (s Strategy) String() string {
	switch s {
	case OneForOne:
		return "one_for_one"
	case OneForAll:
		return "one_for_all"
	case RestForOne:
		return "rest_for_one"
	}
	return fmt.Sprintf("Strategy(%d)", int(s))
}

// Defaults applied to zero values in Spec and ChildSpec.
const (
	defaultIntensity = 3
	defaultPeriod    = 5 * time.Second
	defaultShutdown  = 5 * time.Second
)

// lastResortRestartDelay is hollywood's own restart delay. Our wrapper
// recovers every panic, so hollywood only restarts if this package itself
// has a bug; the delay keeps such a loop from burning a core.
const lastResortRestartDelay = 10 * time.Millisecond

// ChildSpec describes one child. The child's hollywood PID ID is
// "<supervisor PID ID>/<ID>", stable across restarts, so other actors can
// address it with ChildPID without asking anyone.
type ChildSpec struct {
	ID    string         // unique among siblings
	Start actor.Producer // called for every start: a fresh receiver each time
	// Restart is Permanent by default.
	Restart Restart
	// Shutdown bounds the wait for the child to stop when the supervisor
	// stops it; after that it is abandoned (EventStopTimeout). 0 means
	// 5s. For a child that is itself a supervisor, make it
	// larger than the sum of its own children's.
	Shutdown time.Duration
	// Significant makes the supervisor stop all children and exit with this
	// child's reason when it exits and is not restarted (OTP's
	// auto_shutdown = any_significant). Use it with Transient or Temporary.
	Significant bool
	// Options are extra hollywood options, such as actor.WithInboxSize. The
	// supervisor overrides WithID, WithMaxRestarts and WithRestartDelay.
	Options []actor.OptFunc
}

func (c ChildSpec) shutdown() time.Duration {
	if c.Shutdown <= 0 {
		return defaultShutdown
	}
	return c.Shutdown
}

func (c ChildSpec) validate() error {
	if c.ID == "" {
		return fmt.Errorf("supervisor: child spec has an empty ID")
	}
	if c.Start == nil {
		return fmt.Errorf("supervisor: child %q has a nil Start", c.ID)
	}
	return nil
}

// Spec describes a supervisor.
type Spec struct {
	Name     string // for logs and events; defaults to the supervisor's PID ID
	Strategy Strategy
	// Intensity is the most restarts allowed within Period before the
	// supervisor gives up. 0 means 3; negative means no
	// restart is allowed at all.
	Intensity int
	Period    time.Duration // 0 means 5s
	// Backoff delays restarts: the first within Period waits
	// Backoff.Initial, each one after twice the one before, up to
	// Backoff.Max (zero: restart at once, as OTP does). A child that
	// keeps failing for a reason outside it (a server that cannot reach
	// its database) then stops burning a core and flooding the log,
	// while the supervisor keeps answering.
	Backoff  Backoff
	Children []ChildSpec // started in order
	// EventHook is called synchronously on the supervisor's goroutine for
	// every event. It must not block, and must not call StartChild or
	// TerminateChild (they would wait on the very goroutine running it).
	EventHook func(Event)
	Logger    *slog.Logger // nil means slog.Default()

	now func() time.Time // injected clock for tests; nil means time.Now
	// after runs f once d has passed and returns what cancels it: the
	// injected timer for tests (nil means time.AfterFunc).
	after func(d time.Duration, f func()) (stop func() bool)
}

func (s Spec) validate() error {
	seen := make(map[string]bool, len(s.Children))
	for _, c := range s.Children {
		if err := c.validate(); err != nil {
			return err
		}
		if seen[c.ID] {
			return fmt.Errorf("supervisor: duplicate child ID %q", c.ID)
		}
		seen[c.ID] = true
	}
	return nil
}
