package main

import (
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
// the same echo), beside mcprt bench against mcprt serve alone, alternating
// round by round. Only the gateway's process is mcprt bench's server: its
// CPU figures leave the backend out, so the table gives none.
func runGateway(b built, dur time.Duration, rounds int, out string) error {
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"ref": map[string]any{"command": b.path("mcprt"), "args": []string{"serve"}, "prefix": ""},
	}})
	if err != nil {
		return err
	}
	cfgFile := filepath.Join(b.bin, "gateway.json")
	if err := os.WriteFile(cfgFile, cfg, 0o644); err != nil {
		return err
	}
	const k = 256
	flags := []string{"-json", "-q", "-duration", dur.String(), "-skip", "cold,payload", "-k", strconv.Itoa(k)}
	runs := []struct {
		name string
		argv []string
	}{
		{"direct", []string{b.path("mcprt"), "serve"}},
		{"gateway", []string{b.path("mcprt"), "gateway", "-config", cfgFile}},
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

	fmt.Printf("mcprt %s, %s, %s/%s, %d CPUs; the gateway's hop over stdio: mcprt gateway (one mcprt serve backend) ÷ mcprt serve, %d round(s), %v per phase; %.0f s\n\n",
		commit(b.root), goruntime.Version(), goruntime.GOOS, goruntime.GOARCH, goruntime.NumCPU(),
		rounds, dur, time.Since(started).Seconds())
	type grow struct {
		label, unit string
		higher      bool
		goal        float64 // 0: none
		get         func(*result) (float64, bool)
	}
	rs := []grow{
		{"sequential echo round trip, p50", "µs", false, 2, func(r *result) (float64, bool) {
			return get(r.Sequential != nil, func() float64 { return r.Sequential.P50Us })
		}},
		{"sequential echo round trip, p99", "µs", false, 0, func(r *result) (float64, bool) {
			return get(r.Sequential != nil, func() float64 { return r.Sequential.P99Us })
		}},
		{fmt.Sprintf("pipelined echo, K=%d in flight", k), "req/s", true, 0.5, func(r *result) (float64, bool) {
			return get(len(r.Pipelined) > 0, func() float64 { return r.Pipelined[0].ReqPerSec })
		}},
		{"peak RSS (the gateway's alone)", "MiB", false, 0, func(r *result) (float64, bool) { return r.PeakRSSKiB / 1024, r.PeakRSSKiB > 0 }},
	}
	fmt.Println("| figure | better | mcprt serve | mcprt gateway → mcprt serve | gateway ÷ direct | goal |")
	fmt.Println("|---|:-:|---:|---:|---:|---|")
	for _, rw := range rs {
		d, dok := median(results["direct"], rw.get)
		g, gok := median(results["gateway"], rw.get)
		better := "lower"
		if rw.higher {
			better = "higher"
		}
		if !dok || !gok {
			fmt.Printf("| %s | %s | — | — | — | |\n", rw.label, better)
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
		fmt.Printf("| %s | %s | %s %s | %s %s | **%s×** | %s |\n", rw.label, better, num(d), rw.unit, num(g), rw.unit, ratio(g/d), goal)
	}
	for _, n := range []string{"direct", "gateway"} {
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
