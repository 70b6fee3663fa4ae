package main

import (
	"encoding/json"
	"net/http"

	"github.com/mcprt/mcprt/handlers/gateway"
)

// healthHandler answers -http-health: GET (or HEAD) gets report's status
// code and JSON body, with no authentication, for probes and load
// balancers. A request with an Origin header is refused (403): probes send
// none, and a page in a browser (DNS rebinding) has no business there.
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

// serving is the report of a server that has nothing to add: it answers,
// so it is up.
func serving() (int, any) { return http.StatusOK, map[string]string{"status": "ok"} }

// gatewayHealth reports each backend's state: status "ok", "degraded"
// when some backend is failed, or "failed" with 503 when every one is
// (nothing could be served). Idle, starting and restarting backends are
// not failures: a request waits for them or is told.
func gatewayHealth(g *gateway.Gateway) func() (int, any) {
	type backend struct {
		Name     string        `json:"name"`
		State    gateway.State `json:"state"`
		Restarts int           `json:"restarts"`
	}
	return func() (int, any) {
		st := g.Backends()
		bs := make([]backend, len(st))
		failed := 0
		for i, s := range st {
			bs[i] = backend{s.Name, s.State, s.Restarts}
			if s.State == gateway.Failed {
				failed++
			}
		}
		status, code := "ok", http.StatusOK
		switch {
		case failed == len(st):
			status, code = "failed", http.StatusServiceUnavailable
		case failed > 0:
			status = "degraded"
		}
		return code, map[string]any{"status": status, "backends": bs}
	}
}
