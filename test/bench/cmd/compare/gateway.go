package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"time"
)

// runGateway measures the gateway's hop: mcprt bench against mcprt gateway
// with one mcprt serve backend (its tools unprefixed, so the timed call is
// the same echo), beside mcprt bench against mcprt serve alone and against
// relay (a process that copies lines between the client and mcprt serve:
// the floor of any hop), alternating round by round. The hop is measured
// with the backend in mcprt bench's era (legacy, "protocol": "legacy"), so
// that the backend does what the direct server does; the gateway's
// default, a 2026-07-28 backend ("protocol": "auto"), is measured too. Only
// the spawned process is mcprt bench's server: its CPU figures leave the
// backend out.
func runGateway(b built, dur time.Duration, rounds int, out string) error {
	config := func(name, protocol string) (string, error) {
		cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"ref": map[string]any{"command": b.path("mcprt"), "args": []string{"serve"}, "prefix": "", "protocol": protocol},
		}})
		if err != nil {
			return "", err
		}
		file := filepath.Join(b.bin, name)
		return file, os.WriteFile(file, cfg, 0o644)
	}
	legacyCfg, err := config("gateway-legacy.json", "legacy")
	if err != nil {
		return err
	}
	autoCfg, err := config("gateway-auto.json", "auto")
	if err != nil {
		return err
	}
	const k = 256
	flags := []string{"-json", "-q", "-duration", dur.String(), "-skip", "cold,payload", "-k", strconv.Itoa(k)}
	runs := []struct {
		name string
		argv []string
	}{
		{"direct", []string{b.path("mcprt"), "serve"}},
		{"relay", []string{b.path("relay"), b.path("mcprt"), "serve"}},
		{"gateway", []string{b.path("mcprt"), "gateway", "-config", legacyCfg}},
		{"gateway-auto", []string{b.path("mcprt"), "gateway", "-config", autoCfg}},
	}
	results := map[string][]*result{}
	started := time.Now()
	for r := range rounds {
		for i := range runs {
			run := runs[(i+r)%len(runs)]
			fmt.Fprintf(os.Stderr, "compare: round %d/%d: %s\n", r+1, rounds, run.name)
			res, raw, err := bench(b.path("mcprt"), flags, run.argv)
			if err != nil {
				return fmt.Errorf("%s: %w", run.name, err)
			}
			if res.Failure != "" {
				fmt.Fprintf(os.Stderr, "compare: %s failed: %s\n", run.name, res.Failure)
			}
			if out != "" {
				name := filepath.Join(out, fmt.Sprintf("gateway-%s-round%d.json", run.name, r+1))
				if err := os.WriteFile(name, raw, 0o644); err != nil {
					return err
				}
			}
			results[run.name] = append(results[run.name], res)
		}
	}

	fmt.Printf("mcprt %s, %s, %s/%s, %d CPUs; the gateway's hop over stdio: mcprt gateway (one mcprt serve backend, in the legacy era as the client) ÷ mcprt serve, beside a line relay in front of mcprt serve (the floor of any hop); %d round(s), %v per phase; %.0f s\n\n",
		commit(b.root), goruntime.Version(), goruntime.GOOS, goruntime.GOARCH, goruntime.NumCPU(),
		rounds, dur, time.Since(started).Seconds())
	type grow struct {
		label, unit string
		higher      bool
		goal        float64 // 0: none
		run         string  // the gateway's run ("": gateway)
		get         func(*result) (float64, bool)
	}
	seqP50 := func(r *result) (float64, bool) {
		return get(r.Sequential != nil, func() float64 { return r.Sequential.P50Us })
	}
	pipe := func(r *result) (float64, bool) {
		return get(len(r.Pipelined) > 0, func() float64 { return r.Pipelined[0].ReqPerSec })
	}
	cpu := func(r *result) (float64, bool) {
		return get(len(r.Pipelined) > 0 && r.Pipelined[0].CPUUsPerCall > 0, func() float64 { return r.Pipelined[0].CPUUsPerCall })
	}
	rs := []grow{
		{"sequential echo round trip, p50", "µs", false, 2, "", seqP50},
		{"sequential echo round trip, p99", "µs", false, 0, "", func(r *result) (float64, bool) {
			return get(r.Sequential != nil, func() float64 { return r.Sequential.P99Us })
		}},
		{fmt.Sprintf("pipelined echo, K=%d in flight", k), "req/s", true, 0.5, "", pipe},
		{fmt.Sprintf("CPU per call at K=%d (the spawned process's)", k), "µs", false, 0, "", cpu},
		{"peak RSS (the spawned process's)", "MiB", false, 0, "", func(r *result) (float64, bool) { return r.PeakRSSKiB / 1024, r.PeakRSSKiB > 0 }},
		{"sequential p50, backend in 2026-07-28 (the default)", "µs", false, 0, "gateway-auto", seqP50},
		{fmt.Sprintf("K=%d, backend in 2026-07-28 (the default)", k), "req/s", true, 0, "gateway-auto", pipe},
	}
	fmt.Println("| figure | better | mcprt serve | relay → mcprt serve | mcprt gateway → mcprt serve | gateway ÷ direct | relay ÷ direct | goal |")
	fmt.Println("|---|:-:|---:|---:|---:|---:|---:|---|")
	for _, rw := range rs {
		gw := cmp.Or(rw.run, "gateway")
		d, dok := median(results["direct"], rw.get)
		g, gok := median(results[gw], rw.get)
		l, lok := median(results["relay"], rw.get)
		better := "lower"
		if rw.higher {
			better = "higher"
		}
		if !dok || !gok {
			fmt.Printf("| %s | %s | — | — | — | — | — | |\n", rw.label, better)
			continue
		}
		goal := ""
		if rw.goal > 0 {
			op := "≤"
			if rw.higher {
				op = "≥"
			}
			goal = fmt.Sprintf("%s %s×: %s", op, ratio(rw.goal), map[bool]string{true: "met", false: "MISSED"}[rw.higher && g/d >= rw.goal || !rw.higher && g/d <= rw.goal])
		}
		relay, relayRatio := "—", "—"
		if lok {
			relay, relayRatio = num(l)+" "+rw.unit, ratio(l/d)+"×"
		}
		fmt.Printf("| %s | %s | %s %s | %s | %s %s | **%s×** | %s | %s |\n", rw.label, better, num(d), rw.unit, relay, num(g), rw.unit, ratio(g/d), relayRatio, goal)
	}
	for _, n := range []string{"direct", "relay", "gateway", "gateway-auto"} {
		for _, r := range results[n] {
			if r.Failure != "" {
				fmt.Printf("%s: FAILED: %s\n", n, r.Failure)
			} else if r.ExitAfterEOF != "" && r.ExitAfterEOF != "exit 0" {
				fmt.Printf("%s: after stdin EOF: %s\n", n, r.ExitAfterEOF)
			}
		}
	}
	return nil
}
