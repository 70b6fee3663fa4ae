package session

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/supervisor"
)

// CrashPolicy says what happens when one tool's handlers panic more often
// than Config.CrashIntensity times within Config.CrashPeriod.
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

// Defaults for Config's zero values.
const (
	defaultCrashIntensity = 10
	defaultCrashPeriod    = 5 * time.Second
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

// crashKey names what crashed: the tool for tools/call, else the method.
func crashKey(method string, params json.RawMessage) string {
	if method != "tools/call" {
		return method
	}
	var name string
	if v, ok := jsonrpc.Member(params, "name"); ok {
		_ = json.Unmarshal(v, &name)
	}
	return "tools/call " + name
}

// crashed counts a handler panic against its tool and applies the policy
// when the tool is past its intensity.
func (s *session) crashed(cl *call) {
	key := crashKey(cl.method, cl.req.Params)
	now := time.Now()
	w := s.crashes[key]
	if w == nil {
		w = &supervisor.Window{Max: s.cfg.CrashIntensity, Period: s.cfg.CrashPeriod}
		s.crashes[key] = w
	}
	n, within := w.Add(now)
	if within {
		return
	}
	reason := &CrashLoopError{Tool: key, Panics: n, Period: s.cfg.CrashPeriod}
	w.Reset()
	if s.cfg.CrashPolicy == Escalate {
		s.cfg.Logger.Error("handler crash loop: failing the handler supervisor", "tool", key, "panics", reason.Panics, "period", reason.Period)
		s.env.engine.Send(s.cfg.Handlers, supervisor.ExitSignal{Reason: reason})
		return
	}
	until := now.Add(s.cfg.CrashPeriod)
	s.suspendedUntil[key] = until
	s.cfg.Logger.Error("handler crash loop: tool suspended", "tool", key, "panics", reason.Panics, "period", reason.Period, "until", until.Format(time.RFC3339Nano))
}

// suspended returns the error for a request to a suspended tool, or nil.
// Only while some tool is suspended does it cost more than a map length.
func (s *session) suspended(m *jsonrpc.Message) *jsonrpc.Error {
	if len(s.suspendedUntil) == 0 {
		return nil
	}
	key := crashKey(m.Method, m.Params)
	until, ok := s.suspendedUntil[key]
	if !ok {
		return nil
	}
	left := time.Until(until)
	if left <= 0 {
		delete(s.suspendedUntil, key)
		return nil
	}
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: "Internal error: " + key + " is crash-looping and suspended",
		Data:    map[string]int64{"retryAfterMs": left.Milliseconds()},
	}
}
