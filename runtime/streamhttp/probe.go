package streamhttp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// healthHandler answers ServeOptions.HealthPath: GET (or HEAD) gets
// report's status code and JSON body, with no authentication, for probes
// and load balancers.
func healthHandler(report func() (int, any)) http.Handler {
	return probe(func(w http.ResponseWriter, r *http.Request) {
		code, body := report()
		b, _ := json.Marshal(body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		if r.Method == http.MethodGet {
			w.Write(append(b, '\n'))
		}
	})
}

// serving is the health report of a server with nothing to add: it
// answers, so it is up.
func serving() (int, any) { return http.StatusOK, map[string]string{"status": "ok"} }

// metricsHandler answers ServeOptions.MetricsPath: GET (or HEAD) gets the
// metrics write writes, in Prometheus's text format (version 0.0.4), on
// the terms of the health endpoint.
func metricsHandler(write func(w io.Writer)) http.Handler {
	return probe(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if r.Method == http.MethodGet {
			bw := bufio.NewWriter(w)
			write(bw)
			bw.Flush()
		}
	})
}

// probe serves h to GET and HEAD requests without an Origin header (a
// probe, a load balancer, a scraper); a page in a browser (DNS
// rebinding) gets 403, other methods 405.
func probe(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Origin") != "":
			http.Error(w, "Forbidden", http.StatusForbidden)
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		default:
			h(w, r)
		}
	})
}

// WriteMetrics writes the handler's counts in Prometheus's text format:
// the legacy sessions open, those evicted at MaxSessions, those refused
// there, the requests refused for their Origin, and the depth of the
// sessions' mailboxes.
func (h *Handler) WriteMetrics(w io.Writer) {
	st := h.Stats()
	for _, m := range []struct {
		name, kind, help string
		v                uint64
	}{
		{"mcprt_http_sessions", "gauge", "Legacy Streamable HTTP sessions open.", uint64(st.Sessions)},
		{"mcprt_http_sessions_evicted_total", "counter", "Idle legacy sessions closed to make room for a new one at the cap on sessions.", st.Evicted},
		{"mcprt_http_origin_refused_total", "counter", "Requests refused (403) for an Origin not allowed.", st.OriginRefused},
		{"mcprt_http_sessions_refused_total", "counter", "Legacy initializes refused (503) because every session was in use.", st.Full},
		{"mcprt_session_mailbox_messages", "gauge", "Messages waiting in the sessions' mailboxes, summed over every session.", uint64(st.Mailbox)},
		{"mcprt_session_mailbox_messages_max", "gauge", "Messages waiting in the deepest session mailbox.", uint64(st.MailboxMax)},
	} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", m.name, m.help, m.name, m.kind, m.name, strconv.FormatUint(m.v, 10))
	}
}
