package main

import (
	"cmp"
	"fmt"
	"io"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/statuspage"
	"github.com/mcprt/mcprt/runtime/gateway"
)

// processMetrics are what every serving verb reports: its version, how
// long it has run, and the Go runtime's goroutines, heap and collections.
func processMetrics(start time.Time) func(io.Writer) {
	samples := []metrics.Sample{
		{Name: "/sched/goroutines:goroutines"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/cycles/total:gc-cycles"},
	}
	var mu sync.Mutex // samples is read into
	v, goVersion := buildVersions()
	return func(w io.Writer) {
		mu.Lock()
		metrics.Read(samples)
		g, heap, gc := samples[0].Value.Uint64(), samples[1].Value.Uint64(), samples[2].Value.Uint64()
		mu.Unlock()
		family(w, "mcprt_info", "gauge", "mcprt's version and the Go version it was built with, as labels.")
		sample(w, "mcprt_info", labels("version", v, "go", goVersion), 1)
		family(w, "mcprt_uptime_seconds", "gauge", "Seconds since the process started serving.")
		sample(w, "mcprt_uptime_seconds", "", time.Since(start).Seconds())
		family(w, "go_goroutines", "gauge", "Goroutines that exist.")
		sample(w, "go_goroutines", "", float64(g))
		family(w, "go_heap_objects_bytes", "gauge", "Bytes of heap memory held by objects, live or not yet swept.")
		sample(w, "go_heap_objects_bytes", "", float64(heap))
		family(w, "go_gc_cycles_total", "counter", "Garbage collection cycles completed.")
		sample(w, "go_gc_cycles_total", "", float64(gc))
	}
}

// callStats counts the gateway's forwarded tool calls (Options.OnCall).
type callStats struct {
	mu sync.Mutex
	m  map[callKey]*callStat
	// recent are the calls minute by minute, for -http-status.
	recent statuspage.Calls
}

type callKey struct{ backend, tool, outcome string }

type callStat struct {
	n       uint64
	seconds float64
}

func (s *callStats) record(r gateway.CallRecord) {
	k := callKey{r.Backend, r.Tool, r.Outcome()}
	s.recent.Record(r.Backend, time.Now(), r.Took, k.outcome != "ok")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[callKey]*callStat{}
	}
	st := s.m[k]
	if st == nil {
		st = &callStat{}
		s.m[k] = st
	}
	st.n++
	st.seconds += r.Took.Seconds()
}

// gatewayMetrics adds to processMetrics each backend's state and restarts
// and the tool calls counted in calls.
func gatewayMetrics(g *gateway.Gateway, calls *callStats, start time.Time) func(io.Writer) {
	process := processMetrics(start)
	return func(w io.Writer) {
		process(w)
		backends := g.Backends()
		family(w, "mcprt_gateway_backend_state", "gauge", "1 for each backend's present state.")
		for _, b := range backends {
			sample(w, "mcprt_gateway_backend_state", labels("backend", b.Name, "state", string(b.State)), 1)
		}
		family(w, "mcprt_gateway_backend_restarts", "gauge", "Restarts of each backend since the gateway started.")
		for _, b := range backends {
			sample(w, "mcprt_gateway_backend_restarts", labels("backend", b.Name), float64(b.Restarts))
		}
		family(w, "mcprt_gateway_backend_restart_causes_total", "counter", "Restarts of each backend, by reason: its cause (exited, timeout, start_failed, connection_lost).")
		for _, b := range backends {
			for _, cause := range sortedKeys(b.RestartsByCause) {
				sample(w, "mcprt_gateway_backend_restart_causes_total", labels("backend", b.Name, "reason", cause), float64(b.RestartsByCause[cause]))
			}
		}
		now := time.Now()
		family(w, "mcprt_gateway_backend_restart_intensity_used", "gauge", "Restarts of each backend within its restart window: past mcprt_gateway_backend_restart_intensity_limit it is failed.")
		for _, b := range backends {
			sample(w, "mcprt_gateway_backend_restart_intensity_used", labels("backend", b.Name), float64(b.RestartsWithin(now)))
		}
		family(w, "mcprt_gateway_backend_restart_intensity_limit", "gauge", "Restarts each backend may make within its restart window (maxRestarts).")
		for _, b := range backends {
			sample(w, "mcprt_gateway_backend_restart_intensity_limit", labels("backend", b.Name), float64(b.MaxRestarts))
		}
		family(w, "mcprt_gateway_backend_gave_up_total", "counter", "Times each backend restarted too often within its window and was failed.")
		for _, b := range backends {
			sample(w, "mcprt_gateway_backend_gave_up_total", labels("backend", b.Name), float64(b.GaveUp))
		}
		family(w, "mcprt_gateway_backend_requests_in_flight", "gauge", "Requests forwarded to each backend and not yet answered: its queue.")
		for _, b := range backends {
			sample(w, "mcprt_gateway_backend_requests_in_flight", labels("backend", b.Name), float64(b.InFlight))
		}
		if calls == nil {
			return
		}
		calls.mu.Lock()
		keys := make([]callKey, 0, len(calls.m))
		for k := range calls.m {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b callKey) int {
			return cmp.Or(strings.Compare(a.backend, b.backend), strings.Compare(a.tool, b.tool), strings.Compare(a.outcome, b.outcome))
		})
		stats := make([]callStat, len(keys))
		for i, k := range keys {
			stats[i] = *calls.m[k]
		}
		calls.mu.Unlock()
		family(w, "mcprt_gateway_tool_calls_total", "counter", "Tool calls forwarded, by backend, tool and outcome (ok, is_error, error).")
		for i, k := range keys {
			sample(w, "mcprt_gateway_tool_calls_total", labels("backend", k.backend, "tool", k.tool, "outcome", k.outcome), float64(stats[i].n))
		}
		family(w, "mcprt_gateway_tool_call_seconds_total", "counter", "Seconds spent in tool calls forwarded, by backend, tool and outcome.")
		for i, k := range keys {
			sample(w, "mcprt_gateway_tool_call_seconds_total", labels("backend", k.backend, "tool", k.tool, "outcome", k.outcome), stats[i].seconds)
		}
	}
}

func family(w io.Writer, name, kind, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, kind)
}

func sample(w io.Writer, name, labels string, v float64) {
	fmt.Fprintf(w, "%s%s %s\n", name, labels, strconv.FormatFloat(v, 'g', -1, 64))
}

// labels writes {k="v",...}, each value escaped as the text format asks
// (backslash, double quote, line feed).
func labels(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(labelEscaper.Replace(kv[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
