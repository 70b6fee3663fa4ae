package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// Event is something a supervisor did or saw. The set is closed (sealed by
// an unexported method) so a type switch over it can be exhaustive.
type Event interface {
	fmt.Stringer
	isEvent()
	// level and attrs decide how the event is logged.
	level() slog.Level
	attrs() []slog.Attr
}

// EventChildStarted: a child was spawned (first start or restart). Its
// Initialized and Started have run already, so a panic there shows up as an
// EventChildExited right after this.
type EventChildStarted struct {
	Supervisor, Child string
	PID               *actor.PID
}

// EventChildExited: a child stopped, for whatever reason; the decision to
// restart it follows.
type EventChildExited struct {
	Supervisor, Child string
	Reason            error
}

// EventChildRestarted: a child is to be started again, once Delay (its
// Spec.Backoff) has passed: the event comes when the restart is decided.
// Restarts is the number of restarts within the current intensity window,
// including this one (the attempt), so it shows how close the supervisor
// is to giving up.
type EventChildRestarted struct {
	Supervisor, Child string
	Restarts          int
	Delay             time.Duration
}

// EventGaveUp: the restart intensity was exceeded; the supervisor is
// stopping its children and will exit with Reason (a *GaveUpError).
type EventGaveUp struct {
	Supervisor string
	Reason     error
}

// EventStopTimeout: a child did not stop within its Shutdown time and was
// abandoned. Hollywood cannot interrupt a Receive, so its goroutine lives on
// until that Receive returns.
type EventStopTimeout struct {
	Supervisor, Child string
	Timeout           time.Duration
}

func (EventChildStarted) isEvent()   {}
func (EventChildExited) isEvent()    {}
func (EventChildRestarted) isEvent() {}
func (EventGaveUp) isEvent()         {}
func (EventStopTimeout) isEvent()    {}

func (e EventChildStarted) String() string {
	return fmt.Sprintf("supervisor %s: child %s started as %v", e.Supervisor, e.Child, e.PID)
}

func (e EventChildExited) String() string {
	return fmt.Sprintf("supervisor %s: child %s exited: %s", e.Supervisor, e.Child, reasonString(e.Reason))
}

func (e EventChildRestarted) String() string {
	if e.Delay > 0 {
		return fmt.Sprintf("supervisor %s: child %s restarting in %v (%d in window)", e.Supervisor, e.Child, e.Delay, e.Restarts)
	}
	return fmt.Sprintf("supervisor %s: child %s restarting (%d in window)", e.Supervisor, e.Child, e.Restarts)
}

func (e EventGaveUp) String() string {
	return fmt.Sprintf("supervisor %s: gave up: %v", e.Supervisor, e.Reason)
}

func (e EventStopTimeout) String() string {
	return fmt.Sprintf("supervisor %s: child %s did not stop within %v; abandoned", e.Supervisor, e.Child, e.Timeout)
}

func (EventChildStarted) level() slog.Level   { return slog.LevelDebug }
func (EventChildRestarted) level() slog.Level { return slog.LevelInfo }
func (EventGaveUp) level() slog.Level         { return slog.LevelError }
func (EventStopTimeout) level() slog.Level    { return slog.LevelWarn }
func (e EventChildExited) level() slog.Level {
	if IsAbnormal(e.Reason) {
		return slog.LevelError
	}
	return slog.LevelDebug
}

func (e EventChildStarted) attrs() []slog.Attr {
	return []slog.Attr{slog.String("supervisor", e.Supervisor), slog.String("child", e.Child), slog.String("pid", pidString(e.PID))}
}

func (e EventChildExited) attrs() []slog.Attr {
	return withStack([]slog.Attr{slog.String("supervisor", e.Supervisor), slog.String("child", e.Child), slog.String("reason", reasonString(e.Reason))}, e.Reason)
}

func (e EventChildRestarted) attrs() []slog.Attr {
	attrs := []slog.Attr{slog.String("supervisor", e.Supervisor), slog.String("child", e.Child), slog.Int("restarts", e.Restarts)}
	if e.Delay > 0 {
		attrs = append(attrs, slog.Duration("delay", e.Delay))
	}
	return attrs
}

func (e EventGaveUp) attrs() []slog.Attr {
	return withStack([]slog.Attr{slog.String("supervisor", e.Supervisor), slog.String("reason", reasonString(e.Reason))}, e.Reason)
}

func (e EventStopTimeout) attrs() []slog.Attr {
	return []slog.Attr{slog.String("supervisor", e.Supervisor), slog.String("child", e.Child), slog.Duration("timeout", e.Timeout)}
}

// logEvent writes one event. Messages are fixed strings so logs can be
// grepped; the details are attributes.
func logEvent(l *slog.Logger, ev Event) {
	lvl := ev.level()
	if !l.Enabled(context.Background(), lvl) {
		return
	}
	var msg string
	switch ev.(type) {
	case EventChildStarted:
		msg = "child started"
	case EventChildExited:
		msg = "child exited"
	case EventChildRestarted:
		msg = "child restarting"
	case EventGaveUp:
		msg = "supervisor gave up"
	case EventStopTimeout:
		msg = "child stop timeout; abandoned"
	}
	l.LogAttrs(context.Background(), lvl, msg, ev.attrs()...)
}

func withStack(attrs []slog.Attr, reason error) []slog.Attr {
	var p *PanicError
	if errors.As(reason, &p) && len(p.Stack) > 0 {
		attrs = append(attrs, slog.String("stack", string(p.Stack)))
	}
	return attrs
}

func reasonString(reason error) string {
	if reason == nil {
		return "normal"
	}
	return reason.Error()
}

func pidString(pid *actor.PID) string {
	if pid == nil {
		return "<nil>"
	}
	return pid.String()
}
