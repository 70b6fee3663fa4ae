package main

import (
	"net/http"

	"github.com/mcprt/mcprt/runtime/gateway"
)

// gatewayHealth reports each backend's state: status "ok", "degraded"
// when some backend is failed, or "failed" with 503 when every one is
// (nothing could be served). Idle, starting and restarting backends are
// not failures: a request waits for them or is told.
func gatewayHealth(g *gateway.Gateway) func() (int, any) {
	type backend struct {
		Name     string        `json:"name"`
		State    gateway.State `json:"state"`
		Restarts int           `json:"restarts"`
		// Auth is a remote backend's credential mode, and Callers how
		// many callers reach an "exchange" one as themselves now.
		Auth    string `json:"auth,omitempty"`
		Callers int    `json:"callers,omitempty"`
	}
	return func() (int, any) {
		st := g.Backends()
		bs := make([]backend, len(st))
		failed := 0
		for i, s := range st {
			bs[i] = backend{s.Name, s.State, s.Restarts, s.Auth, s.Callers}
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
