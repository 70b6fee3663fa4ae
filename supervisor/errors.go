package supervisor

import (
	"errors"
	"fmt"
	"time"
)

// ErrShutdown is the exit reason of a child that was told to stop, by its
// supervisor or by Root.Stop. It is not a failure: a Transient child that
// exits with it is not restarted. Compare with errors.Is, because reasons
// made by Shutdown wrap it.
var ErrShutdown = errors.New("shutdown")

// ErrNotRunning is returned by StartChild and TerminateChild when the
// supervisor is unknown, has exited, or is shutting down, so that callers
// racing with a shutdown get an answer instead of waiting forever.
var ErrNotRunning = errors.New("supervisor: not running")

// ErrUnknownChild is returned by TerminateChild for an ID the supervisor
// does not (or no longer) hold.
var ErrUnknownChild = errors.New("supervisor: unknown child")

// errIDInUse is the start failure of a child whose hollywood ID is still
// held by an earlier incarnation that was abandoned after its stop timeout.
var errIDInUse = errors.New("supervisor: child ID still in use by an abandoned instance")

// Shutdown returns an exit reason that counts as a shutdown (not a failure)
// and still carries why, so logs can say what caused it. Shutdown(nil) is
// ErrShutdown itself.
func Shutdown(cause error) error {
	if cause == nil {
		return ErrShutdown
	}
	return fmt.Errorf("%w: %w", ErrShutdown, cause)
}

// IsAbnormal reports whether an exit reason is a failure: anything other
// than nil (normal) or a shutdown. Transient children are restarted exactly
// when this is true.
func IsAbnormal(reason error) bool {
	return reason != nil && !errors.Is(reason, ErrShutdown)
}

// PanicError is the exit reason of a child that panicked. The stack is
// captured where the panic was recovered, so it still shows the frames that
// panicked.
type PanicError struct {
	Value any
	Stack []byte
}

func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// Unwrap lets errors.Is/As see through a panic(err).
func (p *PanicError) Unwrap() error {
	if err, ok := p.Value.(error); ok {
		return err
	}
	return nil
}

// asPanicError keeps a *PanicError raised by handler code as is, so a
// re-panic after answering a request does not bury the original stack.
func asPanicError(v any, stack []byte) *PanicError {
	if p, ok := v.(*PanicError); ok && p != nil {
		return p
	}
	return &PanicError{Value: v, Stack: stack}
}

// GaveUpError is the exit reason of a supervisor whose restart intensity was
// exceeded. Its parent sees it as an abnormal exit, which is how a crash loop
// escalates up the tree instead of spinning forever.
type GaveUpError struct {
	Supervisor string
	Restarts   int           // restarts already made within Period
	Period     time.Duration // the intensity window
	Last       error         // the exit that would have needed one restart too many
}

func (g *GaveUpError) Error() string {
	return fmt.Sprintf("supervisor %s gave up after %d restarts in %v; last exit: %v",
		g.Supervisor, g.Restarts, g.Period, g.Last)
}

func (g *GaveUpError) Unwrap() error { return g.Last }
