package session

import (
	"fmt"
	"time"
)

// CrashPolicy says what happens when one tool's handlers panic more often
// than Options.CrashIntensity times within Options.CrashPeriod.
//
// One panicking request is a failed request, not a failing server: it gets
// its -32603 and its actor is replaced, and no restart budget is spent. A
// tool that keeps panicking is different: it is crash-looping, and like an
// OTP child past its supervisor's intensity, it is taken out of service.
type CrashPolicy int

const (
	// Suspend answers calls of a crash-looping tool at once with an error,
	// for one CrashPeriod, then lets it run again. The rest of the server
	// is untouched. The default.
	Suspend CrashPolicy = iota
	// Escalate hands the crash loop to the tree: the handler supervisor
	// exits with a *CrashLoopError, its parent restarts it (requests running
	// in it are answered with an error), and if that happens more often than
	// the root's intensity allows, the root gives up and the process exits 1.
	Escalate
)

// CrashLoopError is the exit reason of a handler supervisor stopped because
// a tool crash-looped under the Escalate policy.
type CrashLoopError struct {
	Tool   string // "tools/call NAME", or the method for other requests
	Panics int
	Period time.Duration
}

func (e *CrashLoopError) Error() string {
	return fmt.Sprintf("%s crash-looping: %d panics within %v", e.Tool, e.Panics, e.Period)
}
