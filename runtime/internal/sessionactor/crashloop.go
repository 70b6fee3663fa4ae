package sessionactor

import (
	"encoding/json"
	"time"

	"github.com/mcprt/mcprt/handlers/jsonrpc"
	"github.com/mcprt/mcprt/session"
	"github.com/mcprt/mcprt/supervisor"
)

// Defaults for Config's zero values.
const (
	defaultCrashIntensity = 10
	defaultCrashPeriod    = 5 * time.Second
)

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
func (s *mcpSession) crashed(cl *call) {
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
	reason := &session.CrashLoopError{Tool: key, Panics: n, Period: s.cfg.CrashPeriod}
	w.Reset()
	if s.cfg.CrashPolicy == session.Escalate {
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
func (s *mcpSession) suspended(m *jsonrpc.Message) *jsonrpc.Error {
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
