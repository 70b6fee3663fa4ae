package main

import (
	"io"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/statuspage"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/runtime/gateway"
	"github.com/mcprt/mcprt/runtime/streamhttp"
	"github.com/mcprt/mcprt/runtime/taskrun"
	"github.com/mcprt/mcprt/session"
)

// inside is what -http-metrics and -http-status show beyond the verb's
// own metrics: the tasks (once their manager is made), the OAuth guard's
// refusals, the endpoint's sessions and, for the gateway, its backends.
type inside struct {
	verb     string
	started  time.Time
	own      func(io.Writer)
	backends func(time.Time) []statuspage.Backend
	sessions func() streamhttp.Stats
	tasks    atomic.Pointer[taskrun.Manager]
	refusals func() map[string]uint64 // nil: no OAuth guard
	overload session.Overload         // requests refused as busy
}

// seeInside makes the view of what l serves, o's tasks included (it
// asks to be given their manager) and so's sessions' refusals (it has
// them counted).
func (l *httpListener) seeInside(o *runtime.Options, so *streamhttp.ServeOptions, own func(io.Writer), backends func(time.Time) []statuspage.Backend, sessions func() streamhttp.Stats) *inside {
	in := &inside{verb: l.verb, started: time.Now(), own: own, backends: backends, sessions: sessions}
	o.Overload, so.Overload = &in.overload, &in.overload
	if o.Tasks != nil {
		to := *o.Tasks
		made := to.Made
		to.Made = func(m *taskrun.Manager) {
			in.tasks.Store(m)
			if made != nil {
				made(m)
			}
		}
		o.Tasks = &to
	}
	if l.guard != nil {
		in.refusals = l.guard.Refusals
	}
	return in
}

// metrics writes the verb's metrics, then the tasks' and the guard's.
func (in *inside) metrics(w io.Writer) {
	if in.own != nil {
		in.own(w)
	}
	family(w, "mcprt_requests_refused_busy_total", "counter", "Requests refused as server busy: past -max-in-flight in progress and -max-queued waiting.")
	sample(w, "mcprt_requests_refused_busy_total", "", float64(in.overload.Refused.Load()))
	family(w, "mcprt_requests_in_flight", "gauge", "Requests handlers are working on now, across sessions (at most -max-in-flight each).")
	sample(w, "mcprt_requests_in_flight", "", float64(in.overload.InFlight.Load()))
	family(w, "mcprt_requests_queued", "gauge", "Requests waiting for a slot now, across sessions (at most -max-queued each).")
	sample(w, "mcprt_requests_queued", "", float64(in.overload.Queued.Load()))
	if m := in.tasks.Load(); m != nil {
		c := m.Counts()
		family(w, "mcprt_tasks", "gauge", "Tasks in progress, by state (working, input_required).")
		sample(w, "mcprt_tasks", labels("state", "working"), float64(c.Working))
		sample(w, "mcprt_tasks", labels("state", "input_required"), float64(c.InputRequired))
		family(w, "mcprt_tasks_created_total", "counter", "Tasks created.")
		sample(w, "mcprt_tasks_created_total", "", float64(c.Created))
		family(w, "mcprt_tasks_ended_total", "counter", "Tasks ended, by state (completed, failed, cancelled).")
		sample(w, "mcprt_tasks_ended_total", labels("state", "completed"), float64(c.Completed))
		sample(w, "mcprt_tasks_ended_total", labels("state", "failed"), float64(c.Failed))
		sample(w, "mcprt_tasks_ended_total", labels("state", "cancelled"), float64(c.Cancelled))
		family(w, "mcprt_tasks_refused_total", "counter", "Tasks refused at the bounds on tasks in progress (overall or per client).")
		sample(w, "mcprt_tasks_refused_total", "", float64(c.Refused))
	}
	if in.refusals != nil {
		r := in.refusals()
		family(w, "mcprt_oauth_refusals_total", "counter", "Requests the OAuth guard refused, by reason (no_token, invalid_token, insufficient_scope, invalid_request, invalid_dpop_proof, use_dpop_nonce, rate_limited, unavailable).")
		for _, reason := range sortedKeys(r) {
			sample(w, "mcprt_oauth_refusals_total", labels("reason", reason), float64(r[reason]))
		}
	}
}

// page is the status page's snapshot now.
func (in *inside) page() statuspage.Page {
	now := time.Now()
	v, _ := buildVersions()
	p := statuspage.Page{Verb: in.verb, Version: v, Now: now, Started: in.started, Sessions: in.sessions(), Busy: in.overload.Refused.Load()}
	if in.backends != nil {
		p.Backends = in.backends(now)
	}
	if m := in.tasks.Load(); m != nil {
		c := m.Counts()
		p.Tasks = &c
	}
	if in.refusals != nil {
		p.OAuthRefusals = in.refusals()
	}
	return p
}

// gatewayBackends is the gateway's backends for the status page, with
// the calls counted in calls.
func gatewayBackends(g *gateway.Gateway, calls *callStats) func(time.Time) []statuspage.Backend {
	return func(now time.Time) []statuspage.Backend {
		st := g.Backends()
		out := make([]statuspage.Backend, len(st))
		for i, s := range st {
			out[i] = statuspage.Backend{Status: s}
			if calls != nil {
				out[i].Minutes = calls.recent.Recent(s.Name, now)
			}
		}
		return out
	}
}

// protectStatus puts the status page behind what guards the endpoint:
// the OAuth guard (-http-oauth-issuer) or the bearer token
// (-http-token-file); without either, it is served to loopback clients
// only. As for -http-metrics, a request from a page of another origin
// (an Origin header) is refused: what backends write to stderr is not for
// a site the operator happens to visit.
func (l *httpListener) protectStatus(h http.Handler) http.Handler {
	switch {
	case l.guard != nil:
		h = l.guard.Wrap(h)
	case l.so.Authorize != nil:
		authorize, page := l.so.Authorize, h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if authorize(r) != nil {
				w.Header().Set("WWW-Authenticate", "Bearer")
				http.Error(w, "Unauthorized: the status page takes the endpoint's bearer token", http.StatusUnauthorized)
				return
			}
			page.ServeHTTP(w, r)
		})
	default:
		page := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			host, _, err := net.SplitHostPort(r.RemoteAddr)
			if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
				http.Error(w, "Forbidden: the status page is served to loopback clients only (or give -http-token-file or -http-oauth-issuer)", http.StatusForbidden)
				return
			}
			page.ServeHTTP(w, r)
		})
	}
	guarded := h
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
