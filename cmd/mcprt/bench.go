package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/cmd/mcprt/internal/loadgen"
	"github.com/mcprt/mcprt/cmd/mcprt/internal/svgchart"
	"github.com/mcprt/mcprt/runtime"
	"github.com/mcprt/mcprt/session/client"
)

const benchUsage = `Usage: mcprt bench [flags] -- CMD [ARGS...]
       mcprt bench [flags] -url URL

Measures any MCP server that speaks newline-delimited JSON-RPC on its stdin
and stdout. It spawns CMD, opens a session in the era -era names (default
legacy, the initialize handshake: a benchmark speaks one era throughout, so
-era auto settles it with one extra connect before the run) and runs these
phases, in order:

  cold     spawn → handshake reply, on -cold fresh processes: median, min, max
  idle     the server's VmRSS 300 ms after the handshake
  seq      one call at a time: round-trip p50, p90, p99; server CPU per call
  pipe     for each K of -k, K calls in flight at all times: req/s and
           server CPU per call
  payload  echo of each -payload size, one at a time: MiB/s = size / median
           round trip (each byte goes in and comes back)
  peak     the server's VmHWM once the phases are done; then stdin is
           closed and how the server exits is recorded

Each timed phase (seq, each K, each payload size) lasts -duration, of which
the first fifth is warm-up and not counted. Server CPU is utime+stime from
/proc/PID/stat (10 ms ticks) divided by the calls in the window; memory comes
from /proc/PID/status. Give the server binary itself, not a wrapper such as
sh -c or go run: /proc is read for the spawned PID. Linux only for CPU and
memory.

The timed call is tools/call echo {"text":"hi"} when the server lists echo,
otherwise ping (server/discover in the modern era, which has no ping). Every
response is checked: one JSON object per line, an id that was outstanding,
no error, no isError, and for echo the text sent.

With -url the server is a Streamable HTTP endpoint that is already running,
and only the -k phases are timed: for each K, K clients each make the
timed call one at a time (a closed loop) for -duration; the table gives
req/s, latency p50, p90, p99 and max, and, when -pid names the server's
process, its CPU per call. In the legacy era each client has its own
session (initialize before the phase, DELETE after it); 2026-07-28 clients
share the stateless endpoint. Answers may be JSON or SSE; each is checked
as above.

With -svg FILE the latency distribution of each phase timed call by call
(seq and each payload size; with -url each K) is also drawn, as its CDF on
a log scale, in an SVG file a browser shows.

Progress goes to stderr (one line rewritten in place on a terminal), the
table or the JSON to stdout. Exit status: 0 when every phase ran; 1 when the
server failed (exited, stalled past -timeout, answered wrongly), after
printing what was measured until then; 2 for a bad command line.

Flags:
`

func init() {
	register(verb{name: "bench", summary: "measure another MCP server's latency, throughput, CPU and memory", run: func(args []string, s streams) int {
		return bench(args, s.Stdout, s.Stderr)
	}})
}

// benchFlags turns the command line into a loadgen.Config. Anything wrong
// with it is a usage error.
func benchFlags(args []string, stdout, stderr io.Writer) (cfg loadgen.Config, hb httpBench, asJSON, quiet bool, err error) {
	cfg, hb, asJSON, quiet, _, err = benchFlagsSVG(args, stdout, stderr)
	return
}

// benchFlagsSVG is benchFlags and the -svg file.
func benchFlagsSVG(args []string, stdout, stderr io.Writer) (cfg loadgen.Config, hb httpBench, asJSON, quiet bool, svgPath string, err error) {
	fs := flags("bench", benchUsage, streams{Stdout: stdout, Stderr: stderr})
	pf := addProtocolFlags(fs, client.EraLegacy, loadgen.DefaultLegacyVersion+" in the legacy era, going on in the revision the server answers; "+loadgen.ModernVersion+" in the modern era")
	tool := fs.String("tool", "", "`tool` the seq and pipe phases call (default echo if the server lists it, else ping)")
	toolArgs := fs.String("args", "", "arguments of -tool, a JSON `object` (default {\"text\":\"hi\"} for echo, {} otherwise)")
	ping := fs.Bool("ping", false, "time ping (server/discover in the modern era) instead of a tool call")
	ks := fs.String("k", "1,16,256", "in-flight `depths` of the pipe phase, comma-separated")
	dur := fs.Duration("duration", loadgen.DefaultDuration, "length of each timed phase (seq, each K, each payload size)")
	cold := fs.Int("cold", loadgen.DefaultColdStarts, "fresh processes the cold phase spawns (0 skips it)")
	payload := fs.String("payload", "64K,1M", "echo text `sizes` of the payload phase, comma-separated, K and M suffixes allowed (empty skips it)")
	skip := fs.String("skip", "", "`phases` not to run, comma-separated: cold, seq, pipe, payload")
	timeout := fs.Duration("timeout", loadgen.DefaultTimeout, "fail when the server makes no progress for this long while an answer is due")
	fs.BoolVar(&asJSON, "json", false, "write the results as JSON instead of a table")
	fs.BoolVar(&quiet, "q", false, "no progress on stderr")
	fs.StringVar(&svgPath, "svg", "", "also draw the latency distribution (CDF per phase timed call by call) as SVG in `file`")
	fs.StringVar(&hb.url, "url", "", "measure the server at this Streamable HTTP endpoint instead of running CMD (see With -url above)")
	fs.IntVar(&hb.pid, "pid", 0, "with -url, the server's process `id`, for its CPU time per call (Linux)")
	var headers headerFlag
	fs.Var(&headers, "header", "with -url, send `Name: value` with every HTTP request (repeatable)")
	if err = fs.Parse(args); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			err = errReported // the flag package has printed it, with the usage
		}
		return
	}
	usage := func(format string, a ...any) error { return fmt.Errorf(format, a...) }
	era, version, err := pf.settle()
	if err != nil {
		return cfg, hb, false, false, "", err
	}
	// EraAuto stays "auto" here; bench settles it with a probe.
	cfg = loadgen.Config{Argv: fs.Args(), Era: era.String(), Version: version, RequireVersion: version != "",
		Tool: *tool, Ping: *ping, Duration: *dur, ColdStarts: *cold, Timeout: *timeout, Skip: map[string]bool{}}
	hb.header = http.Header(headers)
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case hb.url != "" && len(cfg.Argv) > 0:
		return cfg, hb, false, false, "", usage("-url and a server command after -- are two servers: give one")
	case hb.url != "" && (given["cold"] || given["payload"] || given["skip"]):
		return cfg, hb, false, false, "", usage("-cold, -payload and -skip are for a server command: -url times the -k phases only")
	case hb.url == "" && (given["pid"] || given["header"]):
		return cfg, hb, false, false, "", usage("-pid and -header are for -url")
	case hb.url == "" && len(cfg.Argv) == 0:
		return cfg, hb, false, false, "", usage("no server command: give it after --, or give -url URL")
	case *dur <= 0 || *timeout <= 0:
		return cfg, hb, false, false, "", usage("-duration and -timeout must be positive")
	case *cold < 0:
		return cfg, hb, false, false, "", usage("-cold must not be negative")
	case *ping && (*tool != "" || *toolArgs != ""):
		return cfg, hb, false, false, "", usage("-ping times ping: it takes no -tool or -args")
	}
	if *toolArgs != "" {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(*toolArgs), &obj) != nil || obj == nil {
			return cfg, hb, false, false, "", usage("-args %q: want a JSON object", *toolArgs)
		}
		cfg.Args, _ = json.Marshal(obj)
	}
	if cfg.Ks, err = sizes(*ks, false); err != nil || len(cfg.Ks) == 0 {
		return cfg, hb, false, false, "", usage("-k %q: want depths from 1 to %d, comma-separated", *ks, maxK)
	}
	for _, k := range cfg.Ks {
		if k < 1 || k > maxK {
			return cfg, hb, false, false, "", usage("-k %d: want 1 to %d", k, maxK)
		}
	}
	if cfg.Payloads, err = sizes(*payload, true); err != nil {
		return cfg, hb, false, false, "", usage("-payload %q: want sizes such as 64K,1M", *payload)
	}
	if len(cfg.Payloads) == 0 {
		cfg.Skip[loadgen.PhasePayload] = true
	}
	for _, s := range cfg.Payloads {
		if s < 1 || s > 1<<30 {
			return cfg, hb, false, false, "", usage("-payload %d: want 1 byte to 1 GiB", s)
		}
	}
	for p := range strings.SplitSeq(*skip, ",") {
		switch p = strings.TrimSpace(p); p {
		case "":
		case loadgen.PhaseCold, loadgen.PhaseSeq, loadgen.PhasePipe, loadgen.PhasePayload:
			cfg.Skip[p] = true
		default:
			return cfg, hb, false, false, "", usage("-skip %q: phases are cold, seq, pipe, payload", p)
		}
	}
	if *cold == 0 {
		cfg.Skip[loadgen.PhaseCold] = true
	}
	if hb.url != "" {
		// The phases that need a process of our own do not apply.
		cfg.Skip[loadgen.PhaseCold] = true
		cfg.Skip[loadgen.PhasePayload] = true
	}
	return cfg, hb, asJSON, quiet, svgPath, nil
}

var errReported = errors.New("bad flags")

// maxK bounds -k: far past any depth a stdio client uses, and it keeps the
// generator's own buffers small.
const maxK = 1 << 14

// sizes parses "1,16,256" or, with suffixes, "64K,1M".
func sizes(s string, suffixes bool) ([]int, error) {
	out := []int{}
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		mul := 1
		if suffixes {
			switch f[len(f)-1] {
			case 'K', 'k':
				mul, f = 1<<10, f[:len(f)-1]
			case 'M', 'm':
				mul, f = 1<<20, f[:len(f)-1]
			}
		}
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, v*mul)
	}
	return out, nil
}

func bench(args []string, stdout, stderr io.Writer) int {
	cfg, hb, asJSON, quiet, svgPath, err := benchFlagsSVG(args, stdout, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return runtime.ExitOK
		}
		if !errors.Is(err, errReported) {
			fmt.Fprintf(stderr, "mcprt bench: %v\nRun mcprt bench --help for usage.\n", err)
		}
		return runtime.ExitUsage
	}
	progress := newProgress(stderr, quiet)
	cfg.Progress = progress.show
	if hb.url != "" {
		return benchHTTP(hb, cfg, asJSON, quiet, svgPath, stdout, stderr, progress)
	}
	start := time.Now()
	if cfg.Era == client.EraAuto.String() {
		progress.show("-era auto: finding out which era the server speaks", false)
		era, v, err := probeEra(context.Background(), cfg.Argv, cfg.Env, cfg.Timeout)
		progress.clear()
		if err != nil {
			fmt.Fprintf(stderr, "mcprt bench: FAILED: %v\n", err)
			return runtime.ExitFailure
		}
		cfg.Era, cfg.Version = era.String(), v
	}
	res, runErr := loadgen.Run(cfg)
	progress.clear()
	if asJSON {
		b, _ := json.MarshalIndent(res, "", "  ")
		_, err = stdout.Write(append(b, '\n'))
	} else {
		err = loadgen.WriteTable(stdout, res)
	}
	if err == nil && svgPath != "" {
		err = writeLatencySVG(svgPath, strings.Join(cfg.Argv, " "), res.Latencies)
	}
	if err != nil {
		fmt.Fprintf(stderr, "mcprt bench: writing the results: %v\n", err)
		return runtime.ExitFailure
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "mcprt bench: FAILED after %.1f s: %v\n", time.Since(start).Seconds(), runErr)
		return runtime.ExitFailure
	}
	if !quiet {
		fmt.Fprintf(stderr, "mcprt bench: done in %.1f s\n", time.Since(start).Seconds())
	}
	return runtime.ExitOK
}

// progress shows what the benchmark is doing. On a terminal it rewrites
// one line, live figures included; elsewhere (logs, CI) it writes one plain
// line per phase and leaves the running figures out.
type progress struct {
	w     io.Writer
	quiet bool
	tty   bool
	shown bool
}

func newProgress(w io.Writer, quiet bool) *progress {
	return &progress{w: w, quiet: quiet, tty: isTerminal(w)}
}

// isTerminal reports whether w is a terminal (a character device), where a
// line can be redrawn in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) show(msg string, live bool) {
	switch {
	case p.quiet:
	case p.tty:
		io.WriteString(p.w, statusLine("mcprt bench: "+msg))
		p.shown = true
	case !live:
		fmt.Fprintf(p.w, "mcprt bench: %s\n", msg)
	}
}

// clear removes the rewritten line before the results are printed.
func (p *progress) clear() {
	if p.shown {
		io.WriteString(p.w, eraseLine)
		p.shown = false
	}
}

// writeLatencySVG draws each phase's latencies as a CDF, log scale, in
// the SVG file path.
func writeLatencySVG(path, server string, ls []loadgen.Latencies) error {
	c := svgchart.Chart{Title: "mcprt bench: " + server, XLabel: "latency (µs, log scale)", YLabel: "fraction of calls", LogX: true, Width: 720, Height: 400}
	for _, l := range ls {
		us := make([]float64, len(l.Sorted))
		for i, d := range l.Sorted {
			us[i] = float64(d) / float64(time.Microsecond)
		}
		c.Series = append(c.Series, svgchart.Series{Name: l.Phase, Points: svgchart.CDF(us, 200)})
	}
	return os.WriteFile(path, []byte(xml.Header+c.SVG()+"\n"), 0o644)
}
